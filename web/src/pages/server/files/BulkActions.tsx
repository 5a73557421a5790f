import { useEffect, useRef, useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Confirm } from '../../../components/Confirm';
import { Field } from '../../../components/Field';
import { FormButtons } from '../../../components/FormButtons';
import { useDeleteEntries, useMoveEntries, type FileEntry } from '../../../hooks/useFiles';
import { normalise } from './paths';
import styles from './Files.module.css';

type Mode = 'idle' | 'move' | 'delete';

const entries = (count: number) => `${count} ${count === 1 ? 'entry' : 'entries'}`;

/**
 * The folder's selection: Select all, how many are chosen, and Delete selected and Move
 * selected… through the API's bulk routes (all checked before any is touched).
 */
export function BulkActions({
  server,
  folder,
  listed,
  selected,
  onSelect,
}: {
  server: string;
  folder: string;
  /** The folder's entries, as listed. */
  listed: readonly FileEntry[];
  /** The chosen ones, in the listing's order. */
  selected: readonly FileEntry[];
  onSelect: (paths: readonly string[]) => void;
}) {
  const [mode, setMode] = useState<Mode>('idle');
  const [destination, setDestination] = useState(folder);
  const [done, setDone] = useState<string | null>(null);
  const remove = useDeleteEntries(server);
  const move = useMoveEntries(server);
  const all = useRef<HTMLInputElement>(null);
  const count = selected.length;
  const everything = count > 0 && count === listed.length;
  useEffect(() => {
    if (all.current !== null) all.current.indeterminate = count > 0 && !everything;
  }, [count, everything]);

  const open = (next: Mode) => {
    remove.reset();
    move.reset();
    setDone(null);
    setDestination(folder);
    setMode(next);
  };
  const paths = () => selected.map((entry) => entry.path);
  const submitMove = (event: SyntheticEvent) => {
    event.preventDefault();
    // The root is "/", which the API reads as the server directory.
    const into = `/${normalise(destination)}`;
    move.mutate(
      { paths: paths(), destination: into },
      {
        onSuccess: () => {
          setDone(`Moved ${entries(count)} to ${into}`);
          setMode('idle');
          onSelect([]);
        },
      },
    );
  };
  const failed = remove.error ?? move.error;
  const outcome = (
    <>
      {failed !== null && <Alert tone="error">{errorMessage(failed)}</Alert>}
      {done !== null && <Alert tone="success">{done}</Alert>}
    </>
  );
  // An emptied folder has nothing to choose, but says how the last bulk action went.
  if (listed.length === 0) return outcome;

  return (
    <div className={styles.bulk}>
      <div className={styles.bulkBar} role="group" aria-label="Selection">
        <label className={styles.selectAll}>
          <input
            ref={all}
            type="checkbox"
            checked={everything}
            onChange={(event) => {
              onSelect(event.target.checked ? listed.map((entry) => entry.path) : []);
            }}
          />
          Select all
        </label>
        <span className={styles.meta} aria-live="polite">
          {count === 0 ? 'None selected' : `${entries(count)} selected`}
        </span>
        <div className={styles.bulkButtons}>
          <button
            type="button"
            className={styles.action}
            disabled={count === 0 || move.isPending}
            onClick={() => {
              open('move');
            }}
          >
            Move selected…
          </button>
          <button
            type="button"
            className={`${styles.action} ${styles.dangerText}`}
            disabled={count === 0 || remove.isPending}
            onClick={() => {
              open('delete');
            }}
          >
            Delete selected
          </button>
        </div>
      </div>

      {mode === 'move' && count > 0 && (
        <form className={styles.inlineForm} onSubmit={submitMove} aria-label="Move selected">
          <Field
            label={`Move ${entries(count)} into the folder`}
            name="bulk-destination"
            autoFocus
            autoCapitalize="none"
            spellCheck={false}
            hint="An existing folder (empty for the top folder)"
            value={destination}
            onChange={(event) => {
              setDestination(event.target.value);
            }}
          />
          <FormButtons
            submit="Move"
            pendingSubmit="Moving…"
            pending={move.isPending}
            onCancel={() => {
              open('idle');
            }}
          />
        </form>
      )}
      {mode === 'delete' && count > 0 && (
        <Confirm
          label={`Delete ${entries(count)}?`}
          action="Delete selected"
          pendingAction="Deleting…"
          pending={remove.isPending}
          autoFocus
          onConfirm={() => {
            remove.mutate(paths(), {
              onSuccess: (result) => {
                setDone(`Deleted ${entries(result.paths.length)}`);
                setMode('idle');
                onSelect([]);
              },
            });
          }}
          onCancel={() => {
            open('idle');
          }}
        >
          Delete <strong>{selected.map((entry) => entry.name).join(', ')}</strong>
          {selected.some((entry) => entry.type === 'folder') ? ', folders with their content' : ''}?
          This cannot be undone.
        </Confirm>
      )}
      {outcome}
    </div>
  );
}
