import { Field, Unit } from '../../components/Field';
import type { SettingsDraft, SettingsField } from './model';
import styles from './Nodes.module.css';

type CapacityField = Exclude<SettingsField, 'publicAddress'>;

/** Each field: its label, whether it takes decimals, its unit and its hint. */
const FIELDS: readonly (readonly [CapacityField, string, 'decimal' | 'numeric', string, string])[] =
  [
    [
      'memoryGiB',
      'Memory for servers',
      'decimal',
      'GiB',
      "What the servers' memory limits may add up to; empty: not counted",
    ],
    [
      'memoryOverallocate',
      'Memory overallocation',
      'numeric',
      '%',
      'How far past it the limits may go; 0: not at all',
    ],
    [
      'diskGiB',
      'Disk for servers',
      'decimal',
      'GiB',
      "What the servers' disk limits may add up to; empty: not counted",
    ],
    [
      'diskOverallocate',
      'Disk overallocation',
      'numeric',
      '%',
      'How far past it the limits may go; 0: not at all',
    ],
  ];

/** Memory and disk in GiB (empty: not counted) and their overallocation in percent. */
export function CapacityFields({
  draft,
  problem,
  onChange,
}: {
  draft: SettingsDraft;
  problem: (field: CapacityField) => string | undefined;
  onChange: (changes: Partial<SettingsDraft>) => void;
}) {
  return (
    <div className={styles.pairs}>
      {FIELDS.map(([field, label, inputMode, unit, hint]) => (
        <Field
          key={field}
          label={label}
          inputMode={inputMode}
          autoComplete="off"
          hint={hint}
          after={<Unit label="Unit" value={unit} />}
          value={draft[field]}
          error={problem(field)}
          onChange={(event) => {
            onChange({ [field]: event.target.value });
          }}
        />
      ))}
    </div>
  );
}
