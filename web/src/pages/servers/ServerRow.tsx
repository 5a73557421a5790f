import { useState } from 'react';
import { Link } from 'react-router';
import { Confirm } from '../../components/Confirm';
import { StatusBadge, type ServerStatus } from '../../components/StatusBadge';
import { useServerStats } from '../../hooks/useServer';
import { useDeleteServer } from '../../hooks/useServerSettings';
import { formatBytes, formatCpu, formatLastExit, type LastExit } from '../server/format';
import styles from './ServersPage.module.css';

interface Listed {
  readonly name: string;
  readonly displayName: string;
  readonly status: ServerStatus;
  readonly installState?: 'installed' | 'not-installed' | 'installing' | 'failed';
  readonly lastExit?: LastExit | null;
  /** The node it is on (docs/nodes.md, "Placement"). */
  readonly node?: string;
}

const INSTALL_NOTES = { 'not-installed': 'Not installed', failed: 'Install failed' } as const;

/** CPU and memory of a server that runs, asked for while its row is shown. */
function Usage({ name }: { name: string }) {
  const stats = useServerStats(name);
  if (stats.data === undefined) return null;
  return (
    <dl className={styles.usage}>
      <div>
        <dt>CPU</dt>
        <dd>{formatCpu(stats.data.cpu.percent)}</dd>
      </div>
      <div>
        <dt>Memory</dt>
        <dd>{formatBytes(stats.data.memory.bytes)}</dd>
      </div>
    </dl>
  );
}

/**
 * One server of the list: its names (a link to its page), the node it is on, live status, CPU and memory while it
 * runs, and for admins "Delete" with an in-row confirmation.
 */
export function ServerRow({ server, canDelete }: { server: Listed; canDelete: boolean }) {
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteServer(server.name);
  const running = server.status === 'running' || server.status === 'starting';
  const title = server.displayName || server.name;
  return (
    <li className={styles.item}>
      <div className={styles.row}>
        <div className={styles.names}>
          <Link to={`/servers/${encodeURIComponent(server.name)}`} className={styles.displayName}>
            {title}
          </Link>
          <span className={styles.name}>{server.name}</span>
          {server.node !== undefined && <span className={styles.name}>Node: {server.node}</span>}
        </div>
        {running && <Usage name={server.name} />}
        {(server.installState === 'not-installed' || server.installState === 'failed') &&
          server.status !== 'installing' && (
            <span className={styles.note}>{INSTALL_NOTES[server.installState]}</span>
          )}
        {(server.status === 'stopped' || server.status === 'crashed') &&
          server.lastExit != null && (
            <span className={styles.note}>
              <time
                dateTime={server.lastExit.at}
                title={new Date(server.lastExit.at).toLocaleString()}
              >
                {formatLastExit(server.lastExit)}
              </time>
            </span>
          )}
        <StatusBadge status={server.status} />
        {canDelete && !confirming && (
          <button
            type="button"
            className={`button secondary ${styles.delete}`}
            aria-label={`Delete ${server.name}`}
            onClick={() => {
              remove.reset();
              setConfirming(true);
            }}
          >
            Delete
          </button>
        )}
      </div>
      {confirming && (
        <Confirm
          label={`Delete ${server.name}?`}
          action="Delete server"
          pendingAction="Deleting…"
          pending={remove.isPending}
          error={remove.isError ? remove.error : null}
          onConfirm={() => {
            remove.mutate();
          }}
          onCancel={() => {
            setConfirming(false);
          }}
        >
          Delete <strong>{title}</strong>? It is stopped if it runs, and its folder with every file
          in it is removed.
        </Confirm>
      )}
    </li>
  );
}
