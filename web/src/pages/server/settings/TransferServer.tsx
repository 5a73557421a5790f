import { useEffect, useRef, useState, type SyntheticEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { errorMessage, fieldError } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { SelectField } from '../../../components/Field';
import { FormButtons } from '../../../components/FormButtons';
import { useNodes } from '../../../hooks/useNodes';
import { useCancelTransfer, useStartTransfer, useTransfer } from '../../../hooks/useTransfer';
import { SERVERS_KEY } from '../../../hooks/useServers';
import page from '../../Page.module.css';
import styles from './Settings.module.css';

/** What each phase of a transfer is doing, in words. */
const PHASES = {
  stopping: 'Stopping the server',
  packing: 'Packing its folder on the old node',
  unpacking: 'Unpacking it on the new node',
  checking: 'Checking the copy on the new node',
  switched: 'Switching to the new node',
} as const;

/** Bytes in binary units, as the nodes page shows them. */
function bytesText(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'] as const;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit] ?? 'bytes'}`;
}

/**
 * Admins only: moves the server to another node (docs/nodes.md, "Transfers"). The node is
 * chosen, then confirmed; while it runs, its phase and progress are shown with a Cancel; its
 * end, or why it failed, stays in words.
 */
export function TransferServer({ server, node }: { server: string; node: string }) {
  const nodes = useNodes();
  const transfer = useTransfer(server);
  const start = useStartTransfer(server);
  const cancel = useCancelTransfer(server);
  const queries = useQueryClient();
  const [target, setTarget] = useState('');
  const [confirming, setConfirming] = useState(false);
  const current = transfer.data ?? null;
  const running = current?.status === 'running';

  // A transfer that ended while shown: the server's node and status changed.
  const lastStatus = useRef(current?.status);
  useEffect(() => {
    if (lastStatus.current === 'running' && current?.status !== 'running') {
      void queries.invalidateQueries({ queryKey: ['server', server] });
      void queries.invalidateQueries({ queryKey: SERVERS_KEY });
    }
    lastStatus.current = current?.status;
  }, [current?.status, queries, server]);

  const choices = (nodes.data ?? [])
    .filter((each) => each.name !== node)
    .map((each) => ({
      value: each.name,
      label: each.maintenance
        ? `${each.name} (in maintenance)`
        : each.health.status === 'unreachable'
          ? `${each.name} (unreachable)`
          : each.name,
    }));

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    if (target === '') return;
    if (!confirming) {
      setConfirming(true);
      return;
    }
    start.mutate(target, {
      onSettled: () => {
        setConfirming(false);
      },
    });
  };

  const progress = running ? current.progress : null;
  const percent =
    progress?.totalBytes != null && progress.totalBytes > 0
      ? Math.min(100, Math.round((progress.bytes / progress.totalBytes) * 100))
      : null;

  return (
    <section className={page.card} aria-labelledby="transfer-title">
      <h2 id="transfer-title">Transfer to another node</h2>
      <p>
        Moves the server and its folder from {node} to another node. A running server is stopped
        first and started again there; nobody can start it meanwhile. Its files on {node} are
        removed once it has started on the new node.
      </p>
      {running ? (
        <div role="status" aria-live="polite">
          <p>
            Transferring to {current.to}: {PHASES[current.phase]}
            {progress !== null && progress.bytes > 0 && (
              <>
                {' '}
                ({bytesText(progress.bytes)}
                {progress.totalBytes != null && ` of ${bytesText(progress.totalBytes)}`})
              </>
            )}
          </p>
          {percent !== null && (
            <progress
              max={100}
              value={percent}
              aria-label={`Transfer to ${current.to}`}
              className={styles.progress}
            >
              {percent}%
            </progress>
          )}
          {cancel.isError && <Alert tone="error">{errorMessage(cancel.error)}</Alert>}
          <div>
            <button
              type="button"
              className="button"
              disabled={cancel.isPending}
              onClick={() => {
                cancel.mutate();
              }}
            >
              {cancel.isPending ? 'Cancelling…' : 'Cancel transfer'}
            </button>
          </div>
        </div>
      ) : (
        <form onSubmit={submit}>
          {current !== null && current.status === 'done' && (
            <Alert tone="info">
              Last transfer: from {current.from} to {current.to}. {current.message}
            </Alert>
          )}
          {current !== null && (current.status === 'failed' || current.status === 'cancelled') && (
            <Alert tone="error">
              The last transfer to {current.to}{' '}
              {current.status === 'failed' ? 'failed' : 'was cancelled'}: {current.message}
            </Alert>
          )}
          {nodes.isError ? (
            <Alert tone="error">{errorMessage(nodes.error)}</Alert>
          ) : choices.length === 0 ? (
            <p className={page.muted}>
              {nodes.data === undefined ? 'Loading the nodes…' : 'There is no other node.'}
            </p>
          ) : (
            <>
              <SelectField
                label="Node to move it to"
                name="node"
                value={target}
                options={[{ value: '', label: 'Choose a node' }, ...choices]}
                error={
                  fieldError(start.error, 'node') ??
                  (start.isError ? errorMessage(start.error) : undefined)
                }
                onChange={(event) => {
                  setTarget(event.target.value);
                  setConfirming(false);
                  start.reset();
                }}
              />
              {confirming && (
                <Alert tone="info">
                  Move the server to {target}? A running server stops until the transfer ends.
                </Alert>
              )}
              <FormButtons
                submit={confirming ? `Transfer to ${target}` : 'Transfer…'}
                pendingSubmit="Starting…"
                pending={start.isPending}
                disabled={target === ''}
                {...(confirming
                  ? {
                      onCancel: () => {
                        setConfirming(false);
                      },
                    }
                  : {})}
              />
            </>
          )}
        </form>
      )}
    </section>
  );
}
