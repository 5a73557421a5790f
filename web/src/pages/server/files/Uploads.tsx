import { Alert } from '../../../components/Alert';
import { formatBytes } from '../format';
import styles from './Files.module.css';
import type { UploadItem } from '../../../hooks/useUploads';

const percent = (item: UploadItem) =>
  item.total === 0 ? 100 : Math.floor((item.sent / item.total) * 100);

/** One bar per file being uploaded, with its Cancel, and how each one ended. */
export function Uploads({
  items,
  onCancel,
  onClear,
}: {
  items: readonly UploadItem[];
  onCancel: (id: number) => void;
  onClear: () => void;
}) {
  if (items.length === 0) return null;
  const finished = items.some((item) => item.state !== 'uploading');
  return (
    <section className={styles.uploads} aria-labelledby="uploads-title">
      <div className={styles.uploadsHeader}>
        <h3 id="uploads-title">Uploads</h3>
        {finished && (
          <button type="button" className={styles.action} onClick={onClear}>
            Clear finished
          </button>
        )}
      </div>
      <ul className={styles.uploadList}>
        {items.map((item) => (
          <li key={item.id} className={styles.upload} aria-label={item.name}>
            <div className={styles.uploadLine}>
              <span className={styles.uploadName}>{item.name}</span>
              <span className={styles.meta}>
                {item.state === 'uploading'
                  ? `${percent(item)} % of ${formatBytes(item.total)}`
                  : item.state === 'done'
                    ? 'Uploaded'
                    : item.state === 'cancelled'
                      ? 'Cancelled'
                      : 'Failed'}
              </span>
              {item.state === 'uploading' && (
                <button
                  type="button"
                  className={styles.action}
                  onClick={() => {
                    onCancel(item.id);
                  }}
                >
                  Cancel
                </button>
              )}
            </div>
            {(item.state === 'uploading' || item.state === 'done') && (
              <progress
                className={styles.progress}
                aria-label={`Uploading ${item.name}`}
                max={Math.max(1, item.total)}
                value={item.state === 'done' ? Math.max(1, item.total) : item.sent}
              />
            )}
            {item.error !== null && <Alert tone="error">{item.error}</Alert>}
          </li>
        ))}
      </ul>
    </section>
  );
}
