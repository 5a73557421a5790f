/** Sizes and durations as a person reads them on the server page. */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** "0 B", "512 B", "1.5 KiB", "230 MiB", "12.4 GiB": three significant digits at most. */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = unit === 0 || value >= 100 ? Math.round(value) : Number(value.toPrecision(3));
  return `${shown} ${UNITS[unit]}`;
}

/** "45 s", "3 min 20 s", "2 h 5 min", "3 d 4 h": the two largest units. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  if (minutes > 0) return `${minutes} min ${rest} s`;
  return `${rest} s`;
}

/** "12.5 %": the whole process tree, 100 % being one core. */
export const formatCpu = (percent: number): string =>
  `${percent.toFixed(percent >= 100 ? 0 : 1)} %`;

/** A count of processes as the summary reads it: "Processes 12 of 64". */
export const formatCount = (count: number): string => String(count);

/**
 * A use against its limit: "312 MiB of 512 MiB", "143 % of 200 %", "12 of 64"; with no limit,
 * the use alone.
 */
export function formatUsage(
  value: number,
  limit: number | null,
  format: (value: number) => string,
): string {
  return limit === null ? format(value) : `${format(value)} of ${format(limit)}`;
}

export interface LastExit {
  readonly at: string;
  readonly code: number | null;
  readonly signal: string | null;
  /** The kernel ended the server at its memory limit. */
  readonly outOfMemory?: boolean;
  /**
   * A stop ended it the way the stop asks (exit code 0, or 130 after the SIGINT of `^C`): not
   * worth its exit code, which reads as a crash.
   */
  readonly cleanStop?: boolean;
}

/**
 * "stopped cleanly", "exit code 3", "signal SIGKILL", "out of memory (signal SIGKILL)": a stop
 * that ended as asked is never shown by its code (130 reads as a crash).
 */
export function formatExit(exit: LastExit): string {
  if (exit.cleanStop === true) return 'stopped cleanly';
  const how =
    exit.signal !== null
      ? `signal ${exit.signal}`
      : exit.code === null
        ? 'ended'
        : `exit code ${exit.code}`;
  return exit.outOfMemory === true ? `out of memory (${how})` : how;
}

/** "just now", "5 min ago", "3 h ago", "2 d ago": how long ago, to the coarsest unit. */
export function formatAgo(at: string, now: Date = new Date()): string {
  const seconds = Math.max(0, (now.getTime() - Date.parse(at)) / 1000);
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/**
 * The servers list's short word on a last exit: "exited 3, 5 min ago", "SIGKILL, just now",
 * "stopped, 1 h ago".
 */
export function formatLastExit(exit: LastExit, now: Date = new Date()): string {
  const how =
    exit.cleanStop === true
      ? 'stopped'
      : exit.outOfMemory === true
        ? 'out of memory'
        : (exit.signal ?? (exit.code === null ? 'ended' : `exited ${exit.code}`));
  return `${how}, ${formatAgo(exit.at, now)}`;
}
