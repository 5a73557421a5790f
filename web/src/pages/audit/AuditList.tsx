import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import type { AuditEntry } from '../../hooks/useAudit';
import page from '../Page.module.css';
import { formatModified } from '../server/files/paths';
import { describeActor, detailPairs, OUTCOME_LABELS, VIA_LABELS } from './model';
import styles from './Audit.module.css';

/**
 * Entries of an audit log, newest first: when, what, who and how, where, the outcome, and the
 * details. `showServer` is false on a server's own Activity, where it is always that server.
 */
export function AuditList({
  label,
  entries,
  isPending,
  error,
  empty,
  showServer = true,
}: {
  /** The list's accessible name. */
  label: string;
  entries: readonly AuditEntry[] | undefined;
  isPending: boolean;
  error: unknown;
  /** What to say when there is nothing (no entries yet, or none matching the filters). */
  empty: { title: string; text: string };
  showServer?: boolean;
}) {
  if (isPending) {
    return (
      <p className={page.placeholder} role="status">
        Loading activity…
      </p>
    );
  }
  if (error != null) return <Alert tone="error">{errorMessage(error)}</Alert>;
  if (entries === undefined || entries.length === 0) {
    return (
      <div className={page.placeholder}>
        <p className={page.emptyTitle}>{empty.title}</p>
        <p>{empty.text}</p>
      </div>
    );
  }
  return (
    <ul className={styles.list} aria-label={label}>
      {entries.map((entry) => {
        const details = detailPairs(entry.details);
        return (
          <li key={entry.id} className={styles.entry}>
            <div className={styles.head}>
              <code className={styles.action}>{entry.action}</code>
              <span className={`${styles.outcome} ${styles[entry.outcome]}`}>
                {OUTCOME_LABELS[entry.outcome]}
                {entry.status !== null && ` (${entry.status})`}
              </span>
              <time className={styles.time} dateTime={entry.at}>
                {formatModified(entry.at)}
              </time>
            </div>
            <p className={styles.meta}>
              <span>
                By <strong>{describeActor(entry)}</strong>
              </span>
              <span className={styles.via}>{VIA_LABELS[entry.via]}</span>
              {showServer && entry.server !== null && (
                <span>
                  on <strong>{entry.server}</strong>
                </span>
              )}
              {entry.target !== null && (
                <span>
                  target <code>{entry.target}</code>
                </span>
              )}
              {entry.address !== null && <span>from {entry.address}</span>}
            </p>
            {details.length > 0 && (
              <dl className={styles.details}>
                {details.map(([key, value]) => (
                  <div key={key}>
                    <dt>{key}</dt>
                    <dd>{value}</dd>
                  </div>
                ))}
              </dl>
            )}
          </li>
        );
      })}
    </ul>
  );
}
