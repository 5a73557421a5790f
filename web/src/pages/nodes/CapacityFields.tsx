import { Field, Unit } from '../../components/Field';
import type { SettingsDraft, SettingsField } from './model';
import styles from './Nodes.module.css';

/** Memory and disk in GiB (empty: not counted) and their overallocation in percent. */
export function CapacityFields({
  draft,
  problem,
  onChange,
}: {
  draft: SettingsDraft;
  problem: (field: Exclude<SettingsField, 'publicAddress'>) => string | undefined;
  onChange: (changes: Partial<SettingsDraft>) => void;
}) {
  return (
    <div className={styles.pairs}>
      <Field
        label="Memory for servers"
        inputMode="decimal"
        autoComplete="off"
        hint="What the servers' memory limits may add up to; empty: not counted"
        after={<Unit label="Unit" value="GiB" />}
        value={draft.memoryGiB}
        error={problem('memoryGiB')}
        onChange={(event) => {
          onChange({ memoryGiB: event.target.value });
        }}
      />
      <Field
        label="Memory overallocation"
        inputMode="numeric"
        autoComplete="off"
        hint="How far past it the limits may go; 0: not at all"
        after={<Unit label="Unit" value="%" />}
        value={draft.memoryOverallocate}
        error={problem('memoryOverallocate')}
        onChange={(event) => {
          onChange({ memoryOverallocate: event.target.value });
        }}
      />
      <Field
        label="Disk for servers"
        inputMode="decimal"
        autoComplete="off"
        hint="What the servers' disk limits may add up to; empty: not counted"
        after={<Unit label="Unit" value="GiB" />}
        value={draft.diskGiB}
        error={problem('diskGiB')}
        onChange={(event) => {
          onChange({ diskGiB: event.target.value });
        }}
      />
      <Field
        label="Disk overallocation"
        inputMode="numeric"
        autoComplete="off"
        hint="How far past it the limits may go; 0: not at all"
        after={<Unit label="Unit" value="%" />}
        value={draft.diskOverallocate}
        error={problem('diskOverallocate')}
        onChange={(event) => {
          onChange({ diskOverallocate: event.target.value });
        }}
      />
    </div>
  );
}
