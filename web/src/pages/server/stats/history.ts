/**
 * The rolling window of a server's CPU and memory the charts draw, no React. A reading of a
 * server that is not running is a gap (null), never a zero that would look measured; so is a
 * pause in the readings (the tab was elsewhere, the network dropped), so a line never bridges
 * time nobody measured.
 */

/** One reading; `cpu` and `memory` are null in a gap. */
export interface Sample {
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly cpu: number | null;
  readonly memory: number | null;
}

export type History = readonly Sample[];

/** Five minutes: a hundred readings at one every 3 s. */
export const WINDOW_MS = 5 * 60 * 1000;

/** Readings further apart than this have a gap between them. */
export const GAP_AFTER_MS = 10_000;

export interface Reading {
  readonly at: number;
  readonly status: string;
  readonly cpuPercent: number;
  readonly memoryBytes: number;
}

/**
 * The history with `reading` added: a gap when the server is not running (one, however many
 * such readings come), a gap first when the last reading is too long ago, readings older than
 * the window dropped, and a reading no newer than the last one ignored.
 */
export function append(history: History, reading: Reading, windowMs = WINDOW_MS): History {
  const last = history.at(-1);
  if (last !== undefined && reading.at <= last.at) return history;
  const next: Sample[] = [...history];
  if (reading.status !== 'running') {
    if (last === undefined || last.cpu === null) return history;
    next.push({ at: reading.at, cpu: null, memory: null });
  } else {
    if (last !== undefined && last.cpu !== null && reading.at - last.at > GAP_AFTER_MS) {
      next.push({ at: last.at + 1, cpu: null, memory: null });
    }
    next.push({ at: reading.at, cpu: reading.cpuPercent, memory: reading.memoryBytes });
  }
  const since = reading.at - windowMs;
  let first = next.findIndex((sample) => sample.at >= since);
  // A window that starts with a gap says nothing more than one without it.
  while (next[first]?.cpu === null) first += 1;
  return next.slice(first);
}

export interface Summary {
  readonly latest: number;
  readonly min: number;
  readonly max: number;
}

/** The latest value of one measure and its range over the window, or null without any. */
export function summarise(history: History, measure: 'cpu' | 'memory'): Summary | null {
  const values = history.flatMap((sample) => (sample[measure] === null ? [] : [sample[measure]]));
  const latest = values.at(-1);
  if (latest === undefined) return null;
  return { latest, min: Math.min(...values), max: Math.max(...values) };
}

/** Columns as uPlot takes them: times in seconds, then one measure (null: a gap). */
export function columns(
  history: History,
  measure: 'cpu' | 'memory',
): [number[], (number | null)[]] {
  return [history.map((sample) => sample.at / 1000), history.map((sample) => sample[measure])];
}
