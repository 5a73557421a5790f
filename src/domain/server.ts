/** A game server as the panel knows it: its configuration, its limits and where it stands. */

/**
 * `installing`: the template's install script runs; `starting`: the server runs but has not yet
 * printed the template's startup-done line; `crashed`: it ended without anybody asking;
 * `unknown`: it ran on an engine that no longer answers (its node went away), so whether it
 * still runs is not known until the engine answers again (docs/nodes.md, "When a node fails").
 */
export type ServerStatus =
  'stopped' | 'installing' | 'starting' | 'running' | 'stopping' | 'crashed' | 'unknown';

export const SERVER_STATUSES: readonly ServerStatus[] = [
  'stopped',
  'installing',
  'starting',
  'running',
  'stopping',
  'crashed',
  'unknown',
];

/**
 * Whether the server's files are ready to run: `not-installed` until its template's install
 * script has succeeded (or an admin marked it installed), `failed` after an install that did not.
 */
export type InstallState = 'installed' | 'not-installed' | 'installing' | 'failed';

export const INSTALL_STATES: readonly InstallState[] = [
  'installed',
  'not-installed',
  'installing',
  'failed',
];

export interface InstallInfo {
  readonly state: InstallState;
  /** The exit code of the last install, when one ended. */
  readonly exitCode: number | null;
  readonly finishedAt: string | null;
  /**
   * Why the last install failed, in words (`the script exited with code 2`, `it could not
   * start: …`); null when it did not fail.
   */
  readonly reason: string | null;
  /**
   * The last lines the failed install printed (at most {@link INSTALL_LAST_LINES}): console
   * output, so shown only to those who may read the console.
   */
  readonly lastLines: readonly string[];
}

/** How many of a failed install's last lines are kept with its state. */
export const INSTALL_LAST_LINES = 5;

/** An address and port of the host given to a server; the first of a server's is its primary. */
export interface Allocation {
  readonly ip: string;
  readonly port: number;
}

/** Resource limits of a server; null: none. */
export interface ServerLimits {
  readonly memoryBytes: number | null;
  /** 100 = one core. */
  readonly cpuPercent: number | null;
  readonly pids: number | null;
  readonly diskBytes: number | null;
}

export const NO_SERVER_LIMITS: ServerLimits = {
  memoryBytes: null,
  cpuPercent: null,
  pids: null,
  diskBytes: null,
};

/** What runs a server: a sandboxed local process, or a container. */
export type RuntimeKind = 'process' | 'docker';

export interface ServerConfig {
  readonly name: string;
  readonly displayName: string;
  readonly startCommand: string;
  readonly stopCommand: string | null;
  readonly stopTimeoutSeconds: number;
  readonly autoRestart: boolean;
  readonly limits: ServerLimits;
  readonly runtime: RuntimeKind;
  /** The container image (docker runtime); null for the process runtime. */
  readonly image: string | null;
  /** The template the server was made from; its start is rendered from it and `variables`. */
  readonly template: string | null;
  readonly install: InstallInfo;
  /** Primary first; empty when the server has none. */
  readonly allocations: readonly Allocation[];
  /**
   * The node the server is on (docs/nodes.md, "Placement"): its host runs it, its allocations
   * are unique there. `local` is the panel's own machine.
   */
  readonly node: string;
  readonly createdAt: string;
}

/** How the server's last process ended, as recorded (kept across panel restarts). */
export interface RecordedExit {
  readonly code: number | null;
  readonly signal: string | null;
  readonly outOfMemory: boolean;
  /**
   * The end of a stop, the way the stop asks: exit code 0, or the signal the stop sends (`^C`:
   * SIGINT) ending it, by code 128 + its number (130) or killed by it. Shown as a clean stop.
   */
  readonly cleanStop: boolean;
  readonly at: string;
}

/** The configuration and what the panel recorded of the server's process, to find it again. */
export interface ServerRecord extends ServerConfig {
  /** Unique among every server ever made, never reused: its audit entries and its uid. */
  readonly id: number;
  /** The values of the template's variables, by environment name (every one, viewable or not). */
  readonly variables: Readonly<Record<string, string>>;
  readonly lastExit: RecordedExit | null;
  readonly desiredRunning: boolean;
  readonly pid: number | null;
  readonly pidIdentity: string | null;
  /**
   * The registry digest (`sha256:…`) of the image the server's container was last made from
   * (docker runtime); null before its first docker start, or for an image built on the host.
   */
  readonly imageDigest: string | null;
}

/**
 * What happened to a server's process, as told to the rest of the panel (webhooks, the audit
 * log): see `server-event` in src/events.ts.
 */
export type ServerEventKind = 'started' | 'stopped' | 'crashed' | 'out-of-memory';

/** How the process of a server that crashed or ran out of memory ended (none: it never started). */
export interface EventExit {
  readonly code: number | null;
  readonly signal: string | null;
}
