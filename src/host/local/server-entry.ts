/**
 * What the supervisor keeps of each server, shared by its rooms (./supervisor.ts, and beside it
 * the install runs, the stop sequence, crash restarts, pulls before a start and the disk quota):
 * the entry of one server and the lock that orders every change to it, what the supervisor is
 * given, and the small rules all of them follow: a status change reaches the console, an event
 * listener never disturbs a server's handling, a runtime's refusal becomes the request's answer,
 * a limit the runtime cannot enforce refuses the start. Whatever changes an entry runs under its
 * lock.
 */
import type {
  EventExit,
  RuntimeKind,
  ServerEventKind,
  ServerRecord,
  ServerStatus,
} from '../../domain/server.js';
import type { TemplateDefinition } from '../../domain/template.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { LastExit, RegistryPolicy, ServerRecords, TemplateSource } from '../host.js';
import {
  NO_LIMITS,
  RuntimeUnavailableError,
  StartRefusedError,
  type ExitInfo,
  type LimitName,
  type Runtime,
  type RunningProcess,
} from '../runtime/runtime.js';
import { ConsoleFeed, type ConsolePacer } from './console-feed.js';
import { FeatureWatch } from './feature-watch.js';
import type { LineMatcher } from './line-watch.js';
import type { OutputTail } from './output-tail.js';
import type { ServerStorage } from './storage/server-storage.js';
import type { FileOwner } from './storage/types.js';

/** The runtimes a server may be configured with. */
export type Runtimes = Readonly<Record<RuntimeKind, Runtime>>;

/** Checks, before a start, that no other program holds the server's ports. */
export type PortCheck = (record: ServerRecord) => Promise<void>;

/** What the supervisor is made from. */
export interface SupervisorDeps {
  readonly runtimes: Runtimes;
  readonly servers: ServerRecords;
  readonly templates: TemplateSource;
  /**
   * Applies the template's config-file rules before a start, with the start's environment;
   * its lines go to the console.
   */
  readonly prepareFiles: (
    record: ServerRecord,
    template: TemplateDefinition,
    env: Readonly<Record<string, string>>,
  ) => Promise<string[]>;
  readonly checkPorts: PortCheck;
  /** Watches consoles for done lines, off the main thread (src/host/local/line-watch.ts). */
  readonly lines: LineMatcher;
  readonly storage: Pick<ServerStorage, 'create' | 'directoryOf' | 'diskUsage'>;
  /** The server's own user (from its id), or null: servers run as the panel's user. */
  readonly userOf: (record: ServerRecord) => FileOwner | null;
  readonly log: Logger;
  readonly now: () => Date;
  /** How long a running server may stay over its disk quota before it is stopped. */
  readonly diskGraceSeconds: number;
  /** How often running servers' disk use is compared with their quota. */
  readonly diskCheckMs?: number;
  /** Hears each start, stop and crash of a server (`server-event` in src/events.ts). */
  readonly onEvent?: (server: string, kind: ServerEventKind, exit?: EventExit) => void;
  /** Which registries images may be pulled from, and their credentials. */
  readonly registries: RegistryPolicy;
  /**
   * Rejects while the servers here may not start (their node is in maintenance: 409
   * NODE_MAINTENANCE); asked before every start, so that no automatic one (a crash restart,
   * the panel's own start) is made then either.
   */
  readonly refuseStart?: (() => Promise<void>) | undefined;
}

/** Runs one task at a time, in order of arrival. */
export class Lock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

/** A start or install waiting for its image to be pulled (the server's lock is not held). */
export interface PendingPull {
  readonly image: string;
  readonly kind: 'start' | 'install';
  /** Cancels the wait (the pull itself ends once nobody waits for it). */
  readonly controller: AbortController;
  /** Null once the registry gives the image, else its reason; never rejects. */
  readonly answered: Promise<string | null>;
  /** Settles once the pull's end has been handled (never rejects). */
  settled: Promise<void>;
}

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL';

export interface Entry {
  status: ServerStatus;
  process: RunningProcess | null;
  stopRequested: boolean;
  restartTimer: NodeJS.Timeout | null;
  /** When the automatic restarts of the current window happened. */
  restarts: number[];
  /** A person sent the running process a command: a clean exit afterwards is a stop, not a crash. */
  commandSent: boolean;
  /** A person typed the stop command (or stop, quit, exit…): any exit afterwards is a stop. */
  stopTyped: boolean;
  /** The template's install script, while it runs (then also `process`). */
  installing: RunningProcess | null;
  /** Stops watching the console for the startup-done line. */
  unwatch: (() => void) | null;
  /** The stop command the running process was started with. */
  stopCommand: string | null;
  /**
   * The signal the stop under way asks the server to end by (its `^C`, or SIGTERM without a
   * stop command); null for a stop command, or when no stop is under way.
   */
  stopSignal: StopSignal | null;
  /** How the last process ended, since the panel started. */
  lastExit: LastExit | null;
  /** The disk quota the running process started with; null: none. */
  diskLimit: number | null;
  /** Since when the running server has been over its disk quota (its console was warned). */
  overQuotaSince: number | null;
  /** Why the server may not start now (a restore replaces its files), or null. */
  held: string | null;
  /** The start or install waiting for its image, or null. */
  pulling: PendingPull | null;
  /** Settles once the exit of the running server has been handled (never rejects). */
  exitHandled: Promise<void>;
  /** The console: its history, its listeners and the output waiting to be shown. */
  readonly log: ConsoleFeed<ServerStatus>;
  /** Watches the console for the lines of the template's features (a hook on every line). */
  readonly features: FeatureWatch;
  readonly lock: Lock;
}

/** A stopped server's entry, its console shown through `pacer`, its features watched. */
export function newEntry(
  name: string,
  pacer: ConsolePacer,
  now: () => Date,
  onError: (error: unknown, server: string) => void,
): Entry {
  const entry: Entry = {
    status: 'stopped',
    process: null,
    stopRequested: false,
    restartTimer: null,
    restarts: [],
    commandSent: false,
    stopTyped: false,
    installing: null,
    unwatch: null,
    stopCommand: null,
    stopSignal: null,
    lastExit: null,
    diskLimit: null,
    overQuotaSince: null,
    held: null,
    pulling: null,
    exitHandled: Promise.resolve(),
    log: new ConsoleFeed<ServerStatus>({ name, pacer, now, onError }),
    features: new FeatureWatch(),
    lock: new Lock(),
  };
  entry.features.follow(entry.log);
  return entry;
}

export function setStatus(entry: Entry, status: ServerStatus): void {
  entry.status = status;
  entry.log.status(status);
}

/**
 * The running `process`'s end is not known: its engine stopped answering (`ExitInfo.lost`, or a
 * stop that cannot reach it). The server is `unknown`, recorded as still running (its pid and
 * whether it should run are kept, no exit is recorded, no crash restart), until its engine
 * answers and the supervisor takes it back (./supervisor.ts `reconnect`). Must run under the
 * entry's lock.
 */
export function lose(entry: Entry, process: RunningProcess): void {
  if (entry.process !== process) return;
  entry.process = null;
  entry.unwatch?.();
  entry.unwatch = null;
  entry.stopRequested = false;
  entry.stopSignal = null;
  entry.log.append(
    '[panel] the engine the server runs on does not answer: whether the server still runs is not known until it answers again',
  );
  setStatus(entry, 'unknown');
}

/** Tells `onEvent`; what it does with it never disturbs the server's handling. */
export function tell(
  deps: Pick<SupervisorDeps, 'onEvent' | 'log'>,
  name: string,
  kind: ServerEventKind,
  exit?: EventExit,
): void {
  try {
    deps.onEvent?.(name, kind, exit);
  } catch (error) {
    deps.log.error({ err: error, server: name, kind }, 'a server event listener failed');
  }
}

/** The server's record; 404 when it is gone. */
export async function recordOf(servers: ServerRecords, name: string): Promise<ServerRecord> {
  const record = await servers.find(name);
  if (!record) throw new AppError('NOT_FOUND', 'Server not found');
  return record;
}

/**
 * Shows the process's output in the console and, once it has ended and its last line is
 * shown, calls `ended`; a failure there is logged as failing to record `what`. Answers when
 * that is done (it never rejects).
 */
export function follow(
  log: Logger,
  name: string,
  entry: Entry,
  process: RunningProcess,
  what: string,
  ended: (exit: ExitInfo) => Promise<void>,
  tail?: OutputTail,
): Promise<void> {
  const output = entry.log.output();
  process.onOutput((chunk, stream) => {
    output.write(chunk, stream);
    tail?.write(chunk, stream);
  });
  return process.exited
    .then((exit) => {
      output.end();
      tail?.end();
      return ended(exit);
    })
    .catch((error: unknown) => {
      log.error({ err: error, server: name }, `could not record ${what}`);
    });
}

/** A runtime's refusal to start, as the answer to the request: 409 or 503, else as it is. */
export function refusal(error: unknown): unknown {
  if (error instanceof StartRefusedError) return new AppError('START_REFUSED', error.message);
  if (error instanceof RuntimeUnavailableError)
    return new AppError('RUNTIME_UNAVAILABLE', error.message);
  return error;
}

export const resourceLimits = (record: ServerRecord) => ({
  memoryBytes: record.limits.memoryBytes,
  cpuPercent: record.limits.cpuPercent,
  pids: record.limits.pids,
});

const LIMIT_LABELS: Record<LimitName, string> = {
  memoryBytes: 'memory',
  cpuPercent: 'CPU',
  pids: 'process count',
};

/**
 * Refuses a start when a memory or CPU limit is set that the runtime cannot have the kernel
 * enforce. A process limit it cannot enforce (a panel that is not root has no cgroups) does
 * not stop the start, since every server has one (the panel's default): the console says the
 * server runs without it, as the start-up log does (docs/security.md, §10).
 */
export function refuseUnenforced(runtime: Runtime, record: ServerRecord, entry: Entry): void {
  const limits = resourceLimits(record);
  const unenforced = (Object.keys(NO_LIMITS) as LimitName[]).filter(
    (limit) => limits[limit] !== null && !runtime.enforces.has(limit),
  );
  const reason = runtime.limitsUnavailableReason ?? 'not supported';
  const refused = unenforced.filter((limit) => limit !== 'pids');
  if (refused.length > 0) {
    throw new AppError(
      'LIMITS_UNAVAILABLE',
      `This host cannot enforce the server's ${refused.map((limit) => LIMIT_LABELS[limit]).join(', ')} limit (${reason}); it is not started without it`,
    );
  }
  if (unenforced.includes('pids')) {
    entry.log.append(
      `[panel] this host cannot enforce the process limit (${reason}): the server runs without it`,
    );
  }
}
