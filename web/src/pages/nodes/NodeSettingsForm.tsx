import { useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { FormButtons } from '../../components/FormButtons';
import { useUpdateNode, type Node } from '../../hooks/useNodes';
import { CapacityFields } from './CapacityFields';
import {
  refusalByField,
  settingsChanges,
  settingsDraftOf,
  type Problems,
  type SettingsField,
} from './model';
import styles from './Nodes.module.css';

const FIELDS: readonly SettingsField[] = [
  'publicAddress',
  'memoryGiB',
  'diskGiB',
  'memoryOverallocate',
  'diskOverallocate',
];

/**
 * A node's settings: its public address, capacity and overallocation. How it is reached is not
 * offered here (`local`'s is the panel's configuration; another node's would need its
 * certificates or key sent again). Only what changed is sent.
 */
export function NodeSettingsForm({ node, onDone }: { node: Node; onDone: () => void }) {
  const update = useUpdateNode(node.name);
  const [draft, setDraft] = useState(() => settingsDraftOf(node));
  const [problems, setProblems] = useState<Problems<SettingsField>>({});
  const refusal = update.error instanceof ApiError ? refusalByField(FIELDS, update.error) : null;
  const problem = (field: SettingsField) => problems[field] ?? refusal?.fields[field];
  const isLocal = node.connection === 'local';

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const result = settingsChanges(node, draft);
    if ('problems' in result) {
      update.reset();
      setProblems(result.problems);
      return;
    }
    setProblems({});
    if (Object.keys(result.body).length === 0) {
      onDone();
      return;
    }
    update.mutate(result.body, { onSuccess: onDone });
  };

  return (
    <form
      className={styles.form}
      onSubmit={submit}
      aria-label={`Settings of ${node.name}`}
      noValidate
    >
      <div className={styles.fields}>
        <Field
          label="Public address"
          autoComplete="off"
          spellCheck={false}
          autoCapitalize="none"
          hint={
            isLocal
              ? "The host name or address players connect to; empty: each server's allocation's address"
              : 'The host name or address players connect to'
          }
          value={draft.publicAddress}
          error={problem('publicAddress')}
          onChange={(event) => {
            setDraft({ ...draft, publicAddress: event.target.value });
          }}
        />
      </div>
      <CapacityFields
        draft={draft}
        problem={problem}
        onChange={(changes) => {
          setDraft({ ...draft, ...changes });
        }}
      />
      {(refusal?.rest === true || (update.isError && refusal === null)) && (
        <Alert tone="error">{errorMessage(update.error)}</Alert>
      )}
      {refusal?.top != null && <Alert tone="error">{refusal.top}</Alert>}
      <FormButtons
        submit="Save settings"
        pendingSubmit="Saving…"
        pending={update.isPending}
        onCancel={onDone}
        lockCancel
      />
    </form>
  );
}
