import { useMemo } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { useStatsHistory } from '../../../hooks/useStatsHistory';
import page from '../../Page.module.css';
import { formatBytes, formatCpu } from '../format';
import { useServerOutlet } from '../outlet';
import { UsageTerm } from '../Usage';
import { Chart } from './Chart';
import { columns, summarise, WINDOW_MS, type History, type Summary } from './history';
import styles from './Stats.module.css';

const MINUTES = WINDOW_MS / 60_000;

/** "now 12.5 %, min 0.3 %, max 48 % over 5 min": the chart's text alternative. */
function SummaryText({
  summary,
  format,
}: {
  summary: Summary | null;
  format: (v: number) => string;
}) {
  if (summary === null) return <>Waiting for the first reading…</>;
  return (
    <>
      Now <strong>{format(summary.latest)}</strong> · min {format(summary.min)} · max{' '}
      {format(summary.max)} <span className={page.muted}>(last {MINUTES} min)</span>
    </>
  );
}

/** CPU tops out at a round figure above what was seen, at least 5 %. */
const cpuTop = (max: number) => Math.max(5, Math.ceil((max * 1.2) / 5) * 5);
/** Memory: a fifth above the largest reading, at least 1 MiB. */
const memoryTop = (max: number) => Math.max(1024 * 1024, max * 1.2);

function Charts({ history }: { history: History }) {
  const cpu = useMemo(() => columns(history, 'cpu'), [history]);
  const memory = useMemo(() => columns(history, 'memory'), [history]);
  return (
    <div className={styles.charts}>
      <section aria-labelledby="cpu-title" className={styles.chartCard}>
        <h3 id="cpu-title">CPU</h3>
        <Chart
          name={`CPU use over the last ${MINUTES} minutes`}
          axisLabel="CPU (%)"
          axisSize={64}
          data={cpu}
          format={(value) => `${Math.round(value)} %`}
          top={cpuTop}
          colour="--accent"
        >
          <SummaryText summary={summarise(history, 'cpu')} format={formatCpu} />
        </Chart>
      </section>
      <section aria-labelledby="memory-title" className={styles.chartCard}>
        <h3 id="memory-title">Memory</h3>
        <Chart
          name={`Memory use over the last ${MINUTES} minutes`}
          axisLabel="Memory (resident)"
          axisSize={88}
          data={memory}
          format={formatBytes}
          top={memoryTop}
          colour="--focus"
        >
          <SummaryText summary={summarise(history, 'memory')} format={formatBytes} />
        </Chart>
      </section>
    </div>
  );
}

type Stats = NonNullable<ReturnType<typeof useStatsHistory>['stats']['data']>;

/** The latest reading of each use against its limit, with a meter where there is one. */
function NowAgainstLimits({ stats }: { stats: Stats }) {
  return (
    <dl className={styles.now}>
      {(['cpu', 'memory', 'pids'] as const).map((kind) => (
        <UsageTerm key={kind} stats={stats} kind={kind} />
      ))}
    </dl>
  );
}

/** "CPU 200 %, memory 512 MiB", or that there is none: the limits of a server not running. */
function limitsText(stats: Stats): string {
  const limits = [
    stats.cpu.limit === null ? null : `CPU ${formatCpu(stats.cpu.limit)}`,
    stats.memory.limit === null ? null : `memory ${formatBytes(stats.memory.limit)}`,
    stats.pids.limit === null ? null : `${stats.pids.limit} processes`,
  ].filter((limit) => limit !== null);
  return limits.length === 0
    ? 'It has no CPU, memory or process limit.'
    : `Its limits: ${limits.join(', ')}.`;
}

const NOT_RUNNING: Record<string, string> = {
  stopped: 'The server is stopped.',
  crashed: 'The server crashed.',
  starting: 'The server is starting…',
  stopping: 'The server is stopping.',
};

/** The server's Stats tab: live CPU and memory charts while it runs, and its disk use. */
export default function StatsTab() {
  const { name, status: liveStatus } = useServerOutlet();
  const { stats, history } = useStatsHistory(name);
  const status = liveStatus ?? stats.data?.status ?? null;

  return (
    <>
      <section className={page.card} aria-labelledby="usage-title">
        <h2 id="usage-title">CPU and memory</h2>
        {stats.isError ? (
          <Alert tone="error">{errorMessage(stats.error)}</Alert>
        ) : stats.data === undefined || status === null ? (
          <p className={page.muted} role="status">
            Loading stats…
          </p>
        ) : status === 'running' ? (
          <>
            <p className={page.muted}>
              Read every 3 seconds while this page is open; 100 % is one CPU core, the whole process
              tree counted.
            </p>
            <NowAgainstLimits stats={stats.data} />
            <Charts history={history} />
          </>
        ) : (
          <div className={styles.empty}>
            <p className={styles.emptyTitle}>
              {status === 'crashed' && stats.data.lastExit?.outOfMemory === true
                ? 'The server ran out of memory: the kernel ended it at its limit.'
                : (NOT_RUNNING[status] ?? `The server is ${status}.`)}
            </p>
            <p className={page.muted}>
              Its CPU and memory are charted here while it runs: start it to see them.
            </p>
            <p className={page.muted}>{limitsText(stats.data)}</p>
          </div>
        )}
      </section>
      <section className={page.card} aria-labelledby="disk-title">
        <h2 id="disk-title">Disk</h2>
        {stats.data === undefined ? (
          !stats.isError && (
            <p className={page.muted} role="status">
              Loading…
            </p>
          )
        ) : (
          <dl className={styles.disk}>
            <UsageTerm stats={stats.data} kind="disk" term="Server folder" />
          </dl>
        )}
        <p className={page.muted}>
          Everything in the server&apos;s folder (worlds, configuration, logs), measured at most
          every 10 seconds.
          {stats.data?.disk.limit != null &&
            ' Writes past the limit are refused; a server that passes it is stopped after a grace period.'}
        </p>
      </section>
    </>
  );
}
