import { Suspense, useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link, NavLink, Outlet, useParams } from 'react-router';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { StatusBadge, type ServerStatus } from '../../components/StatusBadge';
import { configKey, usePower, useServerConfig, useServerStats } from '../../hooks/useServer';
import { useMe } from '../../hooks/useMe';
import { useServers } from '../../hooks/useServers';
import { useSession } from '../../hooks/useSession';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { formatBytes, formatDuration, formatExit } from './format';
import { InstallState } from './InstallState';
import type { ServerOutlet } from './outlet';
import { BACKUP_PERMISSIONS, heldFrom, type Permission } from './permissions';
import styles from './ServerPage.module.css';
import { UsageTerm } from './Usage';

/**
 * The tabs of a server's page, each with its own URL under /servers/<name>, and the permission
 * it needs (none for Stats): a tab the caller may not use is not shown.
 */
const TABS: readonly { to: string; label: string; needs: readonly Permission[] | null }[] = [
  { to: '', label: 'Console', needs: ['console.read'] },
  { to: 'stats', label: 'Stats', needs: null },
  { to: 'files', label: 'Files', needs: ['files.read'] },
  { to: 'schedules', label: 'Schedules', needs: ['schedules'] },
  // Any of the four backups permissions.
  { to: 'backups', label: 'Backups', needs: BACKUP_PERMISSIONS },
  { to: 'settings', label: 'Settings', needs: ['settings'] },
  { to: 'people', label: 'People', needs: ['users'] },
];

/** An `unknown` server (its node does not answer) may be asked anything: the panel tries it. */
const CAN_START: readonly ServerStatus[] = ['stopped', 'crashed', 'unknown'];
const CAN_STOP: readonly ServerStatus[] = ['starting', 'running', 'unknown'];
/** Kill ends whatever runs (an install too), also while a stop waits for a server that ignores it. */
const CAN_KILL: readonly ServerStatus[] = [
  'installing',
  'starting',
  'running',
  'stopping',
  'unknown',
];

/**
 * A server: its status (kept live by the console), Start and Stop, a summary of its stats, and
 * its tabs: Console, Stats, Files, Schedules, Backups, Settings, People. What the caller lacks
 * the permission for (docs/web.md, "Permissions in the UI") is not offered.
 */
export default function ServerPage() {
  const name = useParams().name ?? '';
  const config = useServerConfig(name);
  const stats = useServerStats(name);
  const listed = useServers().data?.find((server) => server.name === name);
  const me = useMe();
  const { session } = useSession();
  const role = me.data?.role ?? session?.role;
  const start = usePower(name, 'start');
  const stop = usePower(name, 'stop');
  const restart = usePower(name, 'restart');
  const kill = usePower(name, 'kill');
  const actions = [start, stop, restart, kill];
  /** Forgets what the other buttons' last calls said, as one of them is pressed. */
  const only = (action: typeof start) => {
    for (const other of actions) if (other !== action) other.reset();
    action.mutate();
  };
  // The console's status frames are the freshest word; the polled stats stand in until one comes.
  // Stats saying `unknown` win: the server's node stopped answering, which its console, fed by
  // that node, cannot tell at once (docs/nodes.md, "When a node fails").
  const [liveStatus, setLiveStatus] = useState<ServerStatus | null>(null);
  const polled = stats.data?.status;
  const status = (polled === 'unknown' ? polled : liveStatus) ?? polled ?? listed?.status ?? null;
  const displayName =
    [config.data?.displayName, listed?.displayName].find(
      (candidate) => candidate !== undefined && candidate !== '',
    ) ?? name;
  useTitle(displayName);
  // The node it is on, shown on every server as in the list (docs/web.md).
  const node = config.data?.node ?? listed?.node;
  const permissions = heldFrom(config.data?.permissions ?? listed?.permissions);
  const canPower = permissions?.has('power') === true;
  // The install state lives in the config, which is not polled: a status change (an install
  // begun or ended, here or elsewhere) is when it may have changed.
  const queries = useQueryClient();
  useEffect(() => {
    if (status !== null) void queries.invalidateQueries({ queryKey: configKey(name) });
  }, [queries, name, status]);

  const gone = config.error instanceof ApiError && [403, 404].includes(config.error.status);
  if (gone) {
    return (
      <section className={page.card} aria-labelledby="server-title">
        <h1 id="server-title">{name}</h1>
        <Alert tone="error">{errorMessage(config.error)}</Alert>
        <p>
          <Link to="/servers">Back to the servers</Link>
        </p>
      </section>
    );
  }

  const power = actions.find((action) => action.isPending) ?? null;
  const failed = actions.find((action) => action.isError)?.error ?? null;
  const stopTimeout = config.data?.stopTimeoutSeconds;
  const lastExit = stats.data?.lastExit ?? null;
  // The status list is the spec's five: an out-of-memory end is a crash whose reason is lastExit.
  const outOfMemory = status === 'crashed' && lastExit?.outOfMemory === true;
  const memoryLimit = stats.data?.memory.limit ?? config.data?.limits.memoryBytes ?? null;

  return (
    <>
      <div className={styles.header}>
        <div className={styles.names}>
          <h1 className={styles.title}>{displayName}</h1>
          <span className={styles.name}>{name}</span>
          {node !== undefined && <span className={styles.name}>Node: {node}</span>}
        </div>
        {status !== null && <StatusBadge status={status} />}
        {outOfMemory && <span className={styles.reason}>Out of memory</span>}
        {permissions !== null && !canPower && (
          <p className={`${page.muted} ${styles.actions}`}>
            You don&apos;t have permission to start or stop this server.
          </p>
        )}
        {canPower && (
          <div className={styles.actions}>
            <button
              type="button"
              className="button primary"
              disabled={status === null || !CAN_START.includes(status) || power !== null}
              onClick={() => {
                only(start);
              }}
            >
              Start
            </button>
            <button
              type="button"
              className="button secondary"
              disabled={status === null || !CAN_STOP.includes(status) || power !== null}
              onClick={() => {
                only(stop);
              }}
            >
              Stop
            </button>
            <button
              type="button"
              className="button secondary"
              disabled={status === null || !CAN_STOP.includes(status) || power !== null}
              onClick={() => {
                only(restart);
              }}
            >
              Restart
            </button>
            <button
              type="button"
              className="button secondary"
              title="End every process of the server at once, without its stop command"
              disabled={
                status === null ||
                !CAN_KILL.includes(status) ||
                (power !== null && power !== stop) ||
                kill.isPending
              }
              onClick={() => {
                only(kill);
              }}
            >
              Kill
            </button>
          </div>
        )}
      </div>
      {stop.isPending && (
        <Alert tone="info">
          Stopping…
          {stopTimeout === undefined ? '' : ` this can take up to ${stopTimeout + 5} seconds`}
        </Alert>
      )}
      {start.isPending && <Alert tone="info">Starting…</Alert>}
      {restart.isPending && <Alert tone="info">Restarting…</Alert>}
      {failed !== null && <Alert tone="error">{errorMessage(failed)}</Alert>}
      {status === 'unknown' && (
        <Alert tone="info">
          <strong>Status unknown:</strong> the node this server runs on does not answer, so whether
          it still runs is not known. The panel takes it back as soon as the node answers again.
        </Alert>
      )}
      {config.data !== undefined && config.data.install.state !== 'installed' && (
        <InstallState
          server={name}
          install={config.data.install}
          status={status}
          isAdmin={role === 'admin'}
          canInstall={permissions?.has('settings') === true}
        />
      )}
      {outOfMemory && failed === null && (
        <Alert tone="error">
          <strong>Out of memory:</strong> the kernel ended the server at its memory limit.{' '}
          {/* The limit now, which may have been changed since the end (lastExit does not say). */}
          {memoryLimit === null ? '' : `The limit is now ${formatBytes(memoryLimit)}. `}
          {role === 'admin' ? (
            <>
              Raise the <Link to="settings">memory limit in Settings</Link>, then start it again.
            </>
          ) : (
            'Ask an admin to raise its memory limit, then start it again.'
          )}
        </Alert>
      )}

      <section className={`${page.card} ${styles.statsCard}`} aria-labelledby="stats-title">
        <h2 id="stats-title" className={styles.statsTitle}>
          Stats
        </h2>
        {stats.isError ? (
          <Alert tone="error">{errorMessage(stats.error)}</Alert>
        ) : stats.data === undefined ? (
          <p className={page.muted} role="status">
            Loading stats…
          </p>
        ) : (
          <dl className={styles.stats}>
            {(['cpu', 'memory', 'pids', 'disk'] as const).map((kind) => (
              <UsageTerm key={kind} stats={stats.data} kind={kind} />
            ))}
            <div>
              <dt>Uptime</dt>
              <dd>
                {stats.data.status === 'stopped' ||
                stats.data.status === 'crashed' ||
                stats.data.status === 'unknown'
                  ? '—'
                  : formatDuration(stats.data.uptimeSeconds)}
              </dd>
            </div>
            {lastExit !== null && (
              <div className={styles.wide}>
                <dt>Last exit</dt>
                <dd>
                  {formatExit(lastExit)},{' '}
                  <time dateTime={lastExit.at}>{new Date(lastExit.at).toLocaleString()}</time>
                </dd>
              </div>
            )}
            {stats.data.imageDigest !== null && (
              <div className={styles.digest}>
                <dt>Image digest</dt>
                <dd>{stats.data.imageDigest}</dd>
              </div>
            )}
          </dl>
        )}
      </section>

      <nav aria-label="Server sections" className={styles.tabs}>
        {TABS.filter(
          (tab) =>
            tab.needs === null ||
            permissions === null ||
            tab.needs.some((permission) => permissions.has(permission)),
        ).map((tab) => (
          <NavLink
            key={tab.label}
            to={tab.to === '' ? `/servers/${encodeURIComponent(name)}` : tab.to}
            end={tab.to === ''}
            className={styles.tab}
          >
            {tab.label}
          </NavLink>
        ))}
      </nav>
      <Suspense
        fallback={
          <p className={page.muted} role="status">
            Loading…
          </p>
        }
      >
        <Outlet
          context={{ name, status, onStatus: setLiveStatus, permissions } satisfies ServerOutlet}
        />
      </Suspense>
    </>
  );
}
