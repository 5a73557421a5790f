import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field } from '../../../components/Field';
import { useUpdateAllocations, type Allocation } from '../../../hooks/useServerVariables';
import page from '../../Page.module.css';
import styles from './Settings.module.css';

interface Row {
  /** A key that survives removals above it. */
  readonly key: number;
  readonly ip: string;
  readonly port: string;
}

let nextKey = 0;
const row = (ip: string, port: string): Row => ({ key: nextKey++, ip, port });
const rowsFrom = (allocations: readonly Allocation[]) =>
  allocations.map((allocation) => row(allocation.ip, String(allocation.port)));

/**
 * Admins only: the server's addresses and ports, one row each, the first its primary
 * (SERVER_IP, SERVER_PORT). Saved as a whole; a port typed as something else than a number is
 * sent as it is, for the API to refuse in its own words.
 */
export function AllocationsForm({
  server,
  allocations,
}: {
  server: string;
  allocations: readonly Allocation[];
}) {
  const save = useUpdateAllocations(server);
  const [rows, setRows] = useState<readonly Row[]>(() => rowsFrom(allocations));
  const [saved, setSaved] = useState(false);
  const update = (key: number, change: Partial<Pick<Row, 'ip' | 'port'>>) => {
    setSaved(false);
    setRows((current) => current.map((r) => (r.key === key ? { ...r, ...change } : r)));
  };

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setSaved(false);
    save.mutate(
      rows.map((r) => ({ ip: r.ip.trim(), port: Number(r.port.trim()) })),
      {
        onSuccess: (answer) => {
          setRows(rowsFrom(answer.allocations));
          setSaved(true);
        },
      },
    );
  };

  return (
    <section className={page.card} aria-labelledby="allocations-title">
      <h2 id="allocations-title">Allocations</h2>
      <form className={styles.allocations} onSubmit={submit} noValidate>
        <p className={page.muted}>
          The addresses and ports the server may use; the first is its primary. Changes apply the
          next time it starts.
        </p>
        {rows.length === 0 ? (
          <p className={page.muted}>No allocations: the server has no port of its own.</p>
        ) : (
          <ol className={styles.allocationList}>
            {rows.map((r, index) => {
              const which = index === 0 ? 'Primary' : `Allocation ${index + 1}`;
              return (
                <li key={r.key} className={styles.allocation}>
                  <Field
                    label={`${which} address`}
                    autoComplete="off"
                    spellCheck={false}
                    value={r.ip}
                    onChange={(event) => {
                      update(r.key, { ip: event.target.value });
                    }}
                  />
                  <Field
                    label={`${which} port`}
                    inputMode="numeric"
                    autoComplete="off"
                    value={r.port}
                    onChange={(event) => {
                      update(r.key, { port: event.target.value });
                    }}
                  />
                  <button
                    type="button"
                    className="button secondary"
                    aria-label={`Remove ${which.toLowerCase()}`}
                    onClick={() => {
                      setSaved(false);
                      setRows((current) => current.filter((other) => other.key !== r.key));
                    }}
                  >
                    Remove
                  </button>
                </li>
              );
            })}
          </ol>
        )}
        <div>
          <button
            type="button"
            className="button secondary"
            onClick={() => {
              setSaved(false);
              setRows((current) => [...current, row('0.0.0.0', '')]);
            }}
          >
            Add allocation
          </button>
        </div>
        {save.isError && <Alert tone="error">{errorMessage(save.error)}</Alert>}
        {saved && <Alert tone="success">Allocations saved</Alert>}
        <div>
          <button type="submit" className="button primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : 'Save allocations'}
          </button>
        </div>
      </form>
    </section>
  );
}
