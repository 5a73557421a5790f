import { Suspense, useState } from 'react';
import { Link, NavLink, Outlet, useParams } from 'react-router';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { StatusBadge, type ServerStatus } from '../../components/StatusBadge';
import { usePower, useServerConfig, useServerStats } from '../../hooks/useServer';
import { useServers } from '../../hooks/useServers';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { formatBytes, formatCpu, formatDuration, formatExit } from './format';
import type { ServerOutlet } from './outlet';
import styles from './ServerPage.module.css';

/** The tabs of a server's page, each with its own URL under /servers/<name>. */
const TABS = [
  { to: '', label: 'Console' },
  { to: 'stats', label: 'Stats' },
  { to: 'files', label: 'Files' },
  { to: 'settings', label: 'Settings' },
] as const;

const CAN_START: readonly ServerStatus[] = ['stopped', 'crashed'];
const CAN_STOP: readonly ServerStatus[] = ['starting', 'running'];

/**
 * A server: its status (kept live by the console), Start and Stop, a summary of its stats, and
 * its tabs: Console, Stats, Files, Settings.
 */
export default function ServerPage() {
  const name = useParams().name ?? '';
  const config = useServerConfig(name);
  const stats = useServerStats(name);
  const listed = useServers().data?.find((server) => server.name === name);
  const start = usePower(name, 'start');
  const stop = usePower(name, 'stop');
  // The console's status frames are the freshest word; the polled stats stand in until one comes.
  const [liveStatus, setLiveStatus] = useState<ServerStatus | null>(null);
  const status = liveStatus ?? stats.data?.status ?? listed?.status ?? null;
  const displayName =
    [config.data?.displayName, listed?.displayName].find(
      (candidate) => candidate !== undefined && candidate !== '',
    ) ?? name;
  useTitle(displayName);

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

  const power = start.isPending ? start : stop.isPending ? stop : null;
  const failed = start.isError ? start.error : stop.isError ? stop.error : null;
  const stopTimeout = config.data?.stopTimeoutSeconds;

  return (
    <>
      <div className={styles.header}>
        <div className={styles.names}>
          <h1 className={styles.title}>{displayName}</h1>
          <span className={styles.name}>{name}</span>
        </div>
        {status !== null && <StatusBadge status={status} />}
        <div className={styles.actions}>
          <button
            type="button"
            className="button primary"
            disabled={status === null || !CAN_START.includes(status) || power !== null}
            onClick={() => {
              stop.reset();
              start.mutate();
            }}
          >
            Start
          </button>
          <button
            type="button"
            className="button secondary"
            disabled={status === null || !CAN_STOP.includes(status) || power !== null}
            onClick={() => {
              start.reset();
              stop.mutate();
            }}
          >
            Stop
          </button>
        </div>
      </div>
      {stop.isPending && (
        <Alert tone="info">
          Stopping…
          {stopTimeout === undefined ? '' : ` this can take up to ${stopTimeout + 5} seconds`}
        </Alert>
      )}
      {start.isPending && <Alert tone="info">Starting…</Alert>}
      {failed !== null && <Alert tone="error">{errorMessage(failed)}</Alert>}

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
            <div>
              <dt>CPU</dt>
              <dd>{formatCpu(stats.data.cpu.percent)}</dd>
            </div>
            <div>
              <dt>Memory</dt>
              <dd>{formatBytes(stats.data.memory.bytes)}</dd>
            </div>
            <div>
              <dt>Disk</dt>
              <dd>{formatBytes(stats.data.disk.bytes)}</dd>
            </div>
            <div>
              <dt>Uptime</dt>
              <dd>
                {stats.data.status === 'stopped' || stats.data.status === 'crashed'
                  ? '—'
                  : formatDuration(stats.data.uptimeSeconds)}
              </dd>
            </div>
            {stats.data.lastExit !== null && (
              <div>
                <dt>Last exit</dt>
                <dd>
                  {formatExit(stats.data.lastExit)},{' '}
                  <time dateTime={stats.data.lastExit.at}>
                    {new Date(stats.data.lastExit.at).toLocaleString()}
                  </time>
                </dd>
              </div>
            )}
          </dl>
        )}
      </section>

      <nav aria-label="Server sections" className={styles.tabs}>
        {TABS.map((tab) => (
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
        <Outlet context={{ name, status, onStatus: setLiveStatus } satisfies ServerOutlet} />
      </Suspense>
    </>
  );
}
