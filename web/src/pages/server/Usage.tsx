import { formatBytes, formatCount, formatCpu, formatUsage } from './format';
import styles from './Usage.module.css';

/**
 * A use as text ("312 MiB of 512 MiB", or "312 MiB" with no limit) and, against a limit, a
 * meter named "<label> use" (or `meterLabel`) whose value text is that same text. The meter turns amber past
 * three quarters of the limit and red past nine tenths (`optimum` 0: less is better).
 */
export function Usage({
  label,
  value,
  limit,
  format,
  meterLabel = `${label} use`,
}: {
  label: string;
  value: number;
  limit: number | null;
  format: (value: number) => string;
  /** The meter's accessible name, when "<label> use" is not what it measures. */
  meterLabel?: string;
}) {
  const text = formatUsage(value, limit, format);
  return (
    <span className={styles.usage}>
      <span className={styles.text}>{text}</span>
      {limit !== null && (
        <meter
          className={styles.meter}
          aria-label={meterLabel}
          aria-valuetext={text}
          min={0}
          max={limit}
          low={limit * 0.75}
          high={limit * 0.9}
          optimum={0}
          value={Math.min(value, limit)}
        />
      )}
    </span>
  );
}

/** What `/stats` says of each use: the reading and its limit. */
interface Readings {
  readonly cpu: { readonly percent: number; readonly limit: number | null };
  readonly memory: { readonly bytes: number; readonly limit: number | null };
  readonly pids: { readonly count: number; readonly limit: number | null };
  readonly disk: { readonly bytes: number; readonly limit: number | null };
}

export type UsageKind = keyof Readings;

const KINDS: Record<
  UsageKind,
  {
    readonly label: string;
    readonly format: (value: number) => string;
    readonly read: (stats: Readings) => { value: number; limit: number | null };
  }
> = {
  cpu: {
    label: 'CPU',
    format: formatCpu,
    read: (s) => ({ value: s.cpu.percent, limit: s.cpu.limit }),
  },
  memory: {
    label: 'Memory',
    format: formatBytes,
    read: (s) => ({ value: s.memory.bytes, limit: s.memory.limit }),
  },
  pids: {
    label: 'Processes',
    format: formatCount,
    read: (s) => ({ value: s.pids.count, limit: s.pids.limit }),
  },
  disk: {
    label: 'Disk',
    format: formatBytes,
    read: (s) => ({ value: s.disk.bytes, limit: s.disk.limit }),
  },
};

/** One term of a description list: the use's name, then its {@link Usage}. */
export function UsageTerm({
  stats,
  kind,
  term,
}: {
  stats: Readings;
  kind: UsageKind;
  /** The term shown, when not the use's own name. */
  term?: string;
}) {
  const { label, format, read } = KINDS[kind];
  const { value, limit } = read(stats);
  return (
    <div>
      <dt>{term ?? label}</dt>
      <dd>
        <Usage label={label} value={value} limit={limit} format={format} />
      </dd>
    </div>
  );
}
