import { Field, Unit } from '../../../components/Field';
import type { DiskUnit, LimitErrors, LimitField, LimitsForm } from './settingsForm';

const DISK_UNITS: readonly DiskUnit[] = ['MiB', 'GiB'];

const PIDS_HINT = 'Processes and threads together (a sandbox counts 2)';

/**
 * The four limit fields, memory (MiB), CPU (% of one core), processes and disk (MiB or GiB):
 * the Settings tab's Resources and the servers page's create form (docs/web.md). Text inputs,
 * so what is typed is what is read (a number input reads "12abc" as empty); each error is
 * shown under its field. The caller gives the surrounding fieldset and its legend.
 */
export function LimitFields({
  values,
  errors,
  readOnly = false,
  pidsNote,
  onChange,
}: {
  values: LimitsForm;
  errors: LimitErrors;
  readOnly?: boolean;
  /** What the process limit's hint adds: what an empty one stands for. */
  pidsNote?: string | undefined;
  onChange: <K extends keyof LimitsForm>(key: K, value: LimitsForm[K]) => void;
}) {
  const limit = (key: LimitField) => ({
    name: key,
    value: values[key],
    readOnly,
    error: errors[key],
    inputMode: 'decimal' as const,
    autoComplete: 'off',
    placeholder: readOnly ? 'No limit' : 'No limit (empty)',
    onChange: (event: { target: { value: string } }) => {
      onChange(key, event.target.value);
    },
  });
  return (
    <>
      <Field
        label="Memory limit"
        hint="In MiB, at least 8; above it the kernel ends the server"
        after={<Unit label="Memory unit" value="MiB" />}
        {...limit('memoryMiB')}
      />
      <Field
        label="CPU limit"
        hint="In % of one core: 100 is one core, 250 two and a half"
        after={<Unit label="CPU unit" value="%" />}
        {...limit('cpuPercent')}
      />
      <Field
        label="Process limit"
        hint={pidsNote === undefined ? PIDS_HINT : `${PIDS_HINT}; ${pidsNote}`}
        {...limit('pids')}
        placeholder={undefined}
      />
      <Field
        label="Disk limit"
        hint="The size of the server's folder; writes past it are refused"
        after={
          <Unit
            label="Disk limit unit"
            value={values.diskUnit}
            units={readOnly ? undefined : DISK_UNITS}
            onChange={(unit) => {
              onChange('diskUnit', unit === 'GiB' ? 'GiB' : 'MiB');
            }}
          />
        }
        {...limit('disk')}
      />
    </>
  );
}
