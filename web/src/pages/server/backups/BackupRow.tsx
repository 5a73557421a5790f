import { useState } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Confirm } from '../../../components/Confirm';
import type { ServerStatus } from '../../../components/StatusBadge';
import {
  useDeleteBackup,
  useDownloadBackup,
  useLockBackup,
  useRestoreBackup,
  isBusy,
  type Backup,
} from '../../../hooks/useBackups';
import { formatModified } from '../files/paths';
import { formatBytes, formatDuration } from '../format';
import cards from '../../../components/Cards.module.css';
import styles from './Backups.module.css';

type Mode = 'idle' | 'restore' | 'delete';

const STATUS: Record<Backup['status'], string> = {
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

const RESTORE: Record<NonNullable<Backup['lastRestore']>['status'], string> = {
  running: 'Restoring',
  done: 'Restored',
  failed: 'Failed',
};

/** How sure the copy is to be consistent, as the backup's facts say it. */
export function describeConsistency(consistency: Backup['consistency']): string | null {
  switch (consistency) {
    case null:
      return null;
    case 'stopped':
      return 'Server stopped: consistent';
    case 'saved':
      return 'Saved by the server first';
    case 'commands-sent':
      return 'Save commands sent, not confirmed';
    case 'timed-out':
      return 'Save not confirmed in time';
    case 'unprepared':
      return 'Copied while running, without saving first';
  }
}

/** "45 %" of a known total, or the bytes so far when the total is not known yet. */
export function progressText(progress: NonNullable<Backup['progress']>): string {
  const verb = progress.action === 'backup' ? 'Packing' : 'Restoring';
  const files = `${progress.files} ${progress.files === 1 ? 'file' : 'files'}`;
  if (progress.totalBytes === null || progress.totalBytes <= 0) {
    return `${verb}: ${formatBytes(progress.bytes)}, ${files}`;
  }
  return `${verb}: ${percentOf(progress)} % (${formatBytes(progress.bytes)} of ${formatBytes(progress.totalBytes)}), ${files}`;
}

const percentOf = (progress: NonNullable<Backup['progress']>): number =>
  progress.totalBytes === null || progress.totalBytes <= 0
    ? 0
    : Math.min(100, Math.floor((progress.bytes / progress.totalBytes) * 100));

/**
 * One backup: its status (with a progress bar while it is made or restored), its archive's
 * facts, its last restore, and Download, Restore, Lock and Delete.
 */
export function BackupRow({
  server,
  backup,
  status,
  may,
}: {
  server: string;
  backup: Backup;
  /** The server's status: a restore needs it stopped, which the confirmation says. */
  status: ServerStatus | null;
  /** What the caller's permissions allow (docs/api.md, "Per-server permissions"). */
  may: { readonly download: boolean; readonly restore: boolean; readonly delete: boolean };
}) {
  const [mode, setMode] = useState<Mode>('idle');
  const [restoring, setRestoring] = useState(false);
  const remove = useDeleteBackup(server);
  const lock = useLockBackup(server);
  const restore = useRestoreBackup(server);
  const download = useDownloadBackup(server);
  const open = (next: Mode) => {
    for (const mutation of [remove, lock, restore, download]) mutation.reset();
    setRestoring(false);
    setMode(next);
  };
  const done = backup.status === 'done';
  const progress = backup.progress;
  const consistency = describeConsistency(backup.consistency);
  const lastRestore = backup.lastRestore;
  const stopped = status === 'stopped' || status === 'crashed';
  const lockedNoteId = `backup-${backup.id}-locked`;
  const failed = lock.error ?? download.error;

  return (
    <li className={cards.row} aria-label={backup.name}>
      <div className={cards.head}>
        <h3 className={cards.name}>{backup.name}</h3>
        <span className={`${styles.badge} ${styles[backup.status]}`}>{STATUS[backup.status]}</span>
        {backup.locked && <span className={`${styles.badge} ${styles.locked}`}>Locked</span>}
      </div>

      {progress !== null && (
        <div className={styles.progress}>
          <progress
            aria-label={`${progress.action === 'backup' ? 'Backing up' : 'Restoring'} ${backup.name}`}
            max={100}
            // Without a total the bar is indeterminate: a value would claim a share.
            {...(progress.totalBytes === null ? {} : { value: percentOf(progress) })}
          />
          <span className={styles.progressText}>{progressText(progress)}</span>
        </div>
      )}

      <dl className={`${cards.facts} ${styles.facts}`}>
        <div>
          <dt>Size</dt>
          <dd>{backup.bytes === null ? '—' : formatBytes(backup.bytes)}</dd>
        </div>
        <div>
          <dt>Files</dt>
          <dd>{backup.files ?? '—'}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <time dateTime={backup.createdAt}>{formatModified(backup.createdAt)}</time>
            {backup.durationMs !== null && `, took ${formatDuration(backup.durationMs / 1000)}`}
          </dd>
        </div>
        {consistency !== null && (
          <div>
            <dt>Consistency</dt>
            <dd>{consistency}</dd>
          </div>
        )}
        <div className={cards.wide}>
          <dt>Last restore</dt>
          <dd>
            {lastRestore === null ? (
              'Never'
            ) : (
              <>
                <span className={lastRestore.status === 'failed' ? styles.problem : undefined}>
                  {RESTORE[lastRestore.status]}
                </span>
                {', '}
                <time dateTime={lastRestore.at}>{formatModified(lastRestore.at)}</time>
                {lastRestore.message !== '' ? `: ${lastRestore.message}` : ''}
              </>
            )}
          </dd>
        </div>
      </dl>
      {backup.message !== null && (
        <Alert tone={backup.status === 'failed' ? 'error' : 'info'}>
          {backup.status === 'failed' ? 'Failed: ' : 'Note: '}
          {backup.message}
        </Alert>
      )}

      {mode === 'idle' && (
        <div className={cards.buttons}>
          {may.download && (
            <button
              type="button"
              className="button secondary"
              aria-label={`Download ${backup.name}`}
              disabled={!done || download.isPending}
              onClick={() => {
                open('idle');
                download.mutate(backup.id);
              }}
            >
              Download
            </button>
          )}
          {may.restore && (
            <button
              type="button"
              className="button secondary"
              aria-label={`Restore ${backup.name}`}
              disabled={!done || isBusy(backup)}
              onClick={() => {
                open('restore');
              }}
            >
              Restore
            </button>
          )}
          {may.delete && (
            <>
              <button
                type="button"
                className="button secondary"
                aria-label={`${backup.locked ? 'Unlock' : 'Lock'} ${backup.name}`}
                disabled={lock.isPending}
                onClick={() => {
                  open('idle');
                  lock.mutate({ id: backup.id, locked: !backup.locked });
                }}
              >
                {backup.locked ? 'Unlock' : 'Lock'}
              </button>
              <button
                type="button"
                className="button secondary"
                aria-label={`Delete ${backup.name}`}
                aria-describedby={backup.locked ? lockedNoteId : undefined}
                disabled={backup.locked || backup.status === 'running'}
                onClick={() => {
                  open('delete');
                }}
              >
                Delete
              </button>
            </>
          )}
          {backup.locked && (
            <span id={lockedNoteId} className={styles.note}>
              Locked: unlock it to delete it. Retention keeps it too.
            </span>
          )}
        </div>
      )}
      {failed !== null && <Alert tone="error">{errorMessage(failed)}</Alert>}
      {restoring && (
        <Alert tone="success">Restore started; its outcome shows under Last restore</Alert>
      )}

      {mode === 'restore' && (
        <Confirm
          label={`Restore ${backup.name}?`}
          action="Restore backup"
          pendingAction="Starting…"
          pending={restore.isPending}
          error={restore.error}
          autoFocus
          onConfirm={() => {
            restore.mutate(backup.id, {
              onSuccess: () => {
                setMode('idle');
                setRestoring(true);
              },
            });
          }}
          onCancel={() => {
            open('idle');
          }}
        >
          Restore <strong>{backup.name}</strong>? The server&apos;s files are replaced by those of
          the backup: what changed since it was made is lost. The server must be stopped first
          {stopped ? '.' : '; stop it, then restore.'}
        </Confirm>
      )}
      {mode === 'delete' && (
        <Confirm
          label={`Delete ${backup.name}?`}
          action="Delete backup"
          pendingAction="Deleting…"
          pending={remove.isPending}
          error={remove.error}
          autoFocus
          onConfirm={() => {
            remove.mutate(backup.id);
          }}
          onCancel={() => {
            open('idle');
          }}
        >
          Delete the backup <strong>{backup.name}</strong> and its archive? This cannot be undone.
        </Confirm>
      )}
    </li>
  );
}
