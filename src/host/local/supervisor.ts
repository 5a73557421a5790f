/**
 * Keeps each game server's process: start and stop under a per-server lock, crash detection and
 * automatic restart with back-off, the console (a ring buffer of the last 1000 lines plus live
 * listeners), and the panel's own life: servers outlive it (its shutdown lets go of them, and
 * the next panel takes each one back as it runs), what cannot be taken back is ended, and the
 * servers that should run but do not are started again. An image a start or install needs and
 * the engine lacks is pulled first without holding the lock (./image-pulls.ts).
 */
import { constants as osConstants } from 'node:os';
import {
  INSTALL_LAST_LINES,
  type RuntimeKind,
  type EventExit,
  type ServerEventKind,
  type ServerRecord,
  type ServerStatus,
} from '../../domain/server.js';
import type { FeatureNotice } from '../../domain/features.js';
import { neverPulled } from '../../domain/image.js';
import { stopMethodOf } from '../../domain/stop-command.js';
import type { TemplateDefinition } from '../../domain/template.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type {
  ConsoleEvent,
  ConsoleLine,
  LastExit,
  RegistryPolicy,
  ServerRecords,
  ServerState,
  TemplateSource,
  Usage,
} from '../host.js';
import {
  NO_LIMITS,
  RuntimeUnavailableError,
  StartError,
  StartRefusedError,
  type ExitInfo,
  type ImageStore,
  type LimitName,
  type Runtime,
  type RunningProcess,
} from '../runtime/runtime.js';
import { ConsoleFeed, ConsolePacer } from './console-feed.js';
import { FeatureWatch } from './feature-watch.js';
import { OutputTail } from './output-tail.js';
import { ImagePulls } from './image-pulls.js';
import { installLaunch, serverLaunch } from './launch.js';
import type { LineMatcher } from './line-watch.js';
import type { ServerStorage } from './storage/server-storage.js';
import type { FileOwner } from './storage/types.js';

/** At most this many automatic restarts inside the window; then the server stays crashed. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
/** The first automatic restart waits this long; each further one twice as long. */
const RESTART_BASE_DELAY_MS = 1_000;
/** How often running servers' disk use is compared with their quota. */
const DISK_CHECK_MS = 5_000;
/** Between SIGTERM and SIGKILL (DECISIONS.md §4). */
const TERM_GRACE_MS = 5_000;
/**
 * How long a start or install request waits for the registry's answer about an image being
 * pulled (a refusal is then its answer); the download itself is never waited for.
 */
const REGISTRY_ANSWER_MS = 10_000;

/** Runs one task at a time, in order of arrival. */
class Lock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

/** A start or install waiting for its image to be pulled (the server's lock is not held). */
interface PendingPull {
  readonly image: string;
  readonly kind: 'start' | 'install';
  /** Cancels the wait (the pull itself ends once nobody waits for it). */
  readonly controller: AbortController;
  /** Null once the registry gives the image, else its reason; never rejects. */
  readonly answered: Promise<string | null>;
  /** Settles once the pull's end has been handled (never rejects). */
  settled: Promise<void>;
}

interface Entry {
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

/** The runtimes a server may be configured with. */
export type Runtimes = Readonly<Record<RuntimeKind, Runtime>>;

/** What a person types to stop a game server, whatever its configured stop command. */
const STOP_WORDS = new Set(['stop', 'quit', 'exit', 'end', 'shutdown', '/stop', '/quit']);

/** Checks, before a start, that no other program holds the server's ports. */
export type PortCheck = (record: ServerRecord) => Promise<void>;

type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL';

/**
 * Whether an exit is what a stop asks for: exit code 0, or the end by the signal it sent (`^C`
 * gives SIGINT), as the signal itself or as the shells' code 128 + its number (130, 143).
 */
function endedAsAsked(exit: ExitInfo, asked: StopSignal | null): boolean {
  if (exit.outOfMemory) return false;
  if (exit.code === 0) return true;
  if (asked === null) return false;
  return exit.signal === asked || exit.code === 128 + osConstants.signals[asked];
}

const LIMIT_LABELS: Record<LimitName, string> = {
  memoryBytes: 'memory',
  cpuPercent: 'CPU',
  pids: 'process count',
};

export class Supervisor {
  readonly #entries = new Map<string, Entry>();
  #closing = false;
  /** Shows every server's output in bounded slices, so that requests are answered meanwhile. */
  readonly #pacer = new ConsolePacer((error, server) => {
    this.#consoleFailed(error, server);
  });

  constructor(
    private readonly deps: {
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
    },
  ) {
    this.#diskTimer = setInterval(() => {
      void this.#watchDisks();
    }, deps.diskCheckMs ?? DISK_CHECK_MS);
    this.#diskTimer.unref();
  }

  readonly #diskTimer: NodeJS.Timeout;
  /** The pulls under way, for each runtime that has images. */
  readonly #pulls = new Map<ImageStore, ImagePulls>();

  state(name: string): ServerState {
    const entry = this.#entries.get(name);
    return {
      status: entry?.status ?? 'stopped',
      pid: entry?.process?.pid ?? null,
      startedAt: entry?.process?.startedAt ?? null,
      lastExit: entry?.lastExit ?? null,
    };
  }

  history(name: string): ConsoleLine[] {
    return this.#entries.get(name)?.log.history() ?? [];
  }

  /** See ServerConsole.notices (src/host/host.ts). */
  notices(name: string): readonly FeatureNotice[] {
    return this.#entries.get(name)?.features.raised() ?? [];
  }

  /** Calls `listener` with every console line and status change of `name` until unsubscribed. */
  subscribe(name: string, listener: (event: ConsoleEvent) => void): () => void {
    return this.#entry(name).log.subscribe(listener);
  }

  /** See ServerConsole.watch (src/host/host.ts). */
  watch(name: string, patterns: readonly string[], onMatch: () => void): () => void {
    return this.#watch(this.#entry(name), patterns, onMatch);
  }

  /**
   * Calls `onMatch` once, when a line of the server's own matches one of `patterns`; never a
   * line of the panel's, which may repeat what somebody typed. Answers the end of the watch.
   */
  #watch(entry: Entry, patterns: readonly string[], onMatch: () => void): () => void {
    const watch = this.deps.lines.watch(patterns, () => {
      unsubscribe();
      onMatch();
    });
    const unsubscribe = entry.log.subscribe((event) => {
      if (event.type === 'log') {
        watch.offer(event.lines.filter((line) => !line.startsWith('[panel] ')));
      }
    });
    return () => {
      unsubscribe();
      watch.close();
    };
  }

  /**
   * Starts the server. An image the engine lacks is pulled first, outside the lock: the answer
   * comes once its registry has answered (409 with its reason when it refuses), `starting` while
   * the download goes on; a stop or kill meanwhile cancels the start.
   */
  async start(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    return this.#registryAnswer(
      entry,
      await entry.lock.run(async () => {
        const status = await this.#start(name, entry, false);
        return { status, pulling: entry.pulling };
      }),
    );
  }

  /**
   * The answer to a start or install that began a pull: once the registry has answered (409
   * with its reason when it refused; `starting` or `installing` while the image comes), or after
   * REGISTRY_ANSWER_MS at most. Runs outside the lock, so a stop cancels the pull meanwhile.
   */
  async #registryAnswer(
    entry: Entry,
    begun: { status: ServerStatus; pulling: PendingPull | null },
  ): Promise<ServerStatus> {
    const pulling = begun.pulling;
    if (pulling === null) return begun.status;
    const reason = await answeredWithin(pulling.answered, REGISTRY_ANSWER_MS);
    if (reason === null || reason === undefined) return entry.status;
    await pulling.settled;
    throw new AppError('START_REFUSED', `Cannot pull ${pulling.image}: ${reason}`);
  }

  /**
   * Whether `image` is on the host for a start or install: its digest when it is, null when it
   * must be pulled first (409 when its registry is not allowed, 503 when the engine cannot be
   * reached).
   */
  async #imageOnHost(
    images: ImageStore,
    image: string,
    pulled: boolean,
  ): Promise<{ digest: string | null } | null> {
    let found: { digest: string | null } | null;
    try {
      found = await images.find(image);
    } catch (error) {
      throw refusal(error);
    }
    // Just pulled, and gone again: the runtime's own refusal says so.
    if (found !== null || pulled) return found;
    const refused = neverPulled(image) ?? (await this.deps.registries.refusal(image));
    if (refused !== null) throw new AppError('START_REFUSED', refused);
    return null;
  }

  /**
   * Pulls `image` for the server's start or install, then runs `then` under the lock, unless it
   * was cancelled meanwhile (a stop, kill, restart, its deletion, the panel's end). The lock is
   * not held while the image comes. Must run under the entry's lock.
   */
  #pullFirst(
    name: string,
    entry: Entry,
    images: ImageStore,
    image: string,
    kind: PendingPull['kind'],
    then: () => Promise<unknown>,
  ): void {
    let pulls = this.#pulls.get(images);
    if (pulls === undefined) {
      pulls = new ImagePulls({ images, registries: this.deps.registries, log: this.deps.log });
      this.#pulls.set(images, pulls);
    }
    const controller = new AbortController();
    const joined = pulls.join(image, {
      say: (line) => {
        entry.log.append(`[panel] ${line}`);
      },
      signal: controller.signal,
    });
    const pending: PendingPull = {
      image,
      kind,
      controller,
      answered: joined.answered,
      settled: Promise.resolve(),
    };
    entry.pulling = pending;
    pending.settled = joined.outcome
      .then((outcome) =>
        entry.lock.run(async () => {
          // Cancelled meanwhile: said by the cancel.
          if (entry.pulling !== pending) return;
          // The panel is closing: started again by the next one, as the shutdown's cancel does.
          if (this.#closing) {
            await this.#cancelPull(name, entry, true);
            return;
          }
          entry.pulling = null;
          if (outcome.kind !== 'pulled') {
            await this.#notRun(name, entry, kind, null);
            return;
          }
          try {
            await then();
          } catch (error) {
            if (!(error instanceof AppError)) throw error;
            // An install that could not start has said so, and is `failed` already.
            if (kind === 'install' && entry.status !== 'installing') return;
            await this.#notRun(name, entry, kind, error.message);
          }
        }),
      )
      .catch((error: unknown) => {
        this.deps.log.error({ err: error, server: name }, `could not ${kind} after a pull`);
      });
  }

  /**
   * A start or install that waited for its image does not run: the pull failed (`why` null: the
   * console said why) or a check refused it afterwards. Must run under the entry's lock.
   */
  async #notRun(
    name: string,
    entry: Entry,
    kind: PendingPull['kind'],
    why: string | null,
  ): Promise<void> {
    if (kind === 'install') {
      entry.log.append(`[panel] the install could not start${why === null ? '' : `: ${why}`}`);
      await this.deps.servers.setInstall(name, {
        state: 'failed',
        exitCode: null,
        finishedAt: this.deps.now().toISOString(),
      });
    } else {
      entry.log.append(`[panel] the server is not started${why === null ? '' : `: ${why}`}`);
      await this.deps.servers.recordStopped(name, false);
    }
    if (entry.process === null) this.#setStatus(entry, 'stopped');
  }

  /**
   * Cancels the start or install waiting for its image, if any: the server is stopped (an
   * install is `failed`, as a stopped install is). `desiredRunning`: the panel's next start
   * starts it again (the panel is closing). Must run under the entry's lock.
   */
  async #cancelPull(name: string, entry: Entry, desiredRunning = false): Promise<boolean> {
    const pending = entry.pulling;
    if (pending === null) return false;
    entry.pulling = null;
    pending.controller.abort();
    entry.log.append(
      `[panel] the ${pending.kind} is cancelled (it was waiting for ${pending.image})`,
    );
    this.#setStatus(entry, 'stopped');
    if (pending.kind === 'install') {
      await this.deps.servers.setInstall(name, {
        state: 'failed',
        exitCode: null,
        finishedAt: this.deps.now().toISOString(),
      });
    } else await this.deps.servers.recordStopped(name, desiredRunning);
    return true;
  }

  /**
   * Keeps the server from starting (by anybody, automatic restarts included: 409 with `reason`)
   * until the answered function is called: a restore replaces its files. 409 when it runs or is
   * held already.
   */
  hold(name: string, reason: string): Promise<() => void> {
    const entry = this.#entry(name);
    return entry.lock.run(() => {
      if (entry.held !== null) throw new AppError('BACKUP_IN_PROGRESS', entry.held);
      if (entry.process !== null || (entry.status !== 'stopped' && entry.status !== 'crashed')) {
        throw new AppError('CONFLICT', `Stop the server first (it is ${entry.status})`);
      }
      this.#cancelRestart(entry);
      entry.held = reason;
      return Promise.resolve(() => {
        entry.held = null;
      });
    });
  }

  /**
   * Runs the template's install script with the server's folder at /mnt/server, its output in
   * the console, as the server would run (same runtime, user and limits). Answers once it has
   * started, or, when its image is pulled first, once the registry has answered (see `start`);
   * its end sets the install state: `installed` on exit code 0, else `failed`.
   */
  async install(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    return this.#registryAnswer(
      entry,
      await entry.lock.run(async () => {
        const status = await this.#install(name, entry, false);
        return { status, pulling: entry.pulling };
      }),
    );
  }

  /** `pulled`: its image was just pulled for it. Must run under the entry's lock. */
  async #install(name: string, entry: Entry, pulled: boolean): Promise<ServerStatus> {
    if (this.#closing) throw new AppError('CONFLICT', 'The panel is shutting down');
    if (entry.held !== null) throw new AppError('BACKUP_IN_PROGRESS', entry.held);
    if (
      entry.process !== null ||
      (!pulled && entry.status !== 'stopped' && entry.status !== 'crashed')
    ) {
      throw new AppError(
        'CONFLICT',
        `Stop the server before installing it (it is ${entry.status})`,
      );
    }
    this.#cancelRestart(entry);
    const record = await this.#record(name);
    const template =
      record.template === null ? undefined : await this.deps.templates.find(record.template);
    const script = template?.install;
    if (!template || !script) {
      throw new AppError('CONFLICT', "The server's template has no install script");
    }
    const runtime = this.deps.runtimes[record.runtime];
    const launch = installLaunch(record, template);
    this.#refuseUnenforced(runtime, record, entry);
    const images = record.runtime === 'docker' ? runtime.images : undefined;
    if (images !== undefined && (await this.#imageOnHost(images, script.image, pulled)) === null) {
      this.#setStatus(entry, 'installing');
      await this.deps.servers.setInstall(name, {
        state: 'installing',
        reason: null,
        lastLines: [],
      });
      this.#pullFirst(name, entry, images, script.image, 'install', () =>
        this.#install(name, entry, true),
      );
      return entry.status;
    }
    entry.features.begin(record, template);
    this.#setStatus(entry, 'installing');
    await this.deps.servers.setInstall(name, {
      state: 'installing',
      reason: null,
      lastLines: [],
    });
    let process: RunningProcess;
    try {
      const user = this.deps.userOf(record);
      await this.deps.storage.create(name, user);
      entry.log.append(`[panel] installing with the ${launch.argv[0]} script of the template`);
      process = await runtime.start({
        name,
        argv: launch.argv,
        shells: launch.shells,
        cwd: this.deps.storage.directoryOf(name),
        limits: resourceLimits(record),
        image: record.runtime === 'docker' ? script.image : null,
        env: launch.env,
        ports: [],
        install: { script: script.script },
        user,
        say: (line) => {
          entry.log.append(`[panel] ${line}`);
        },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      entry.log.append(`[panel] the install could not start: ${message}`);
      await this.deps.servers.setInstall(name, {
        state: 'failed',
        exitCode: null,
        finishedAt: this.deps.now().toISOString(),
        reason: `it could not start: ${message}`,
        lastLines: [],
      });
      this.#setStatus(entry, 'stopped');
      if (error instanceof StartError) return entry.status;
      throw refusal(error);
    }
    entry.installing = process;
    entry.process = process;
    entry.stopRequested = false;
    const tail = new OutputTail(INSTALL_LAST_LINES);
    void this.#follow(
      name,
      entry,
      process,
      'the end of an install',
      (exit) => entry.lock.run(() => this.#installed(name, entry, process, exit, tail.lines())),
      tail,
    );
    return entry.status;
  }

  /**
   * The install script ended, having printed `lastLines` last (kept with a failure). Must run
   * under the entry's lock.
   */
  async #installed(
    name: string,
    entry: Entry,
    process: RunningProcess,
    exit: ExitInfo,
    lastLines: readonly string[],
  ) {
    // A stop or kill of the install has already ended it as a stop; its state is set here.
    if (entry.installing !== process) return;
    if (entry.process === process) entry.process = null;
    entry.installing = null;
    const ok = exit.code === 0 && !entry.stopRequested;
    const how = exit.signal === null ? `code ${exit.code ?? 'unknown'}` : `signal ${exit.signal}`;
    entry.log.append(
      ok
        ? '[panel] installed'
        : `[panel] the install failed (${how}); the server cannot start until an install succeeds`,
    );
    await this.deps.servers.setInstall(name, {
      state: ok ? 'installed' : 'failed',
      exitCode: exit.code,
      finishedAt: this.deps.now().toISOString(),
      reason: ok
        ? null
        : entry.stopRequested
          ? 'it was stopped before it ended'
          : exit.outOfMemory
            ? 'it ran out of memory'
            : exit.signal !== null
              ? `the script was ended by ${exit.signal}`
              : `the script exited with code ${exit.code ?? 'unknown'}`,
      lastLines: ok ? [] : lastLines,
    });
    this.#setStatus(entry, 'stopped');
  }

  stop(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    return entry.lock.run(async () => {
      if (await this.#cancelPull(name, entry)) return entry.status;
      if (entry.status === 'stopped' || entry.status === 'crashed') {
        return this.#cancelWaitingRestart(name, entry);
      }
      const record = await this.#record(name);
      await this.#halt(entry, record);
      return entry.status;
    });
  }

  /** Stops the server if it runs (the whole stop sequence), then starts it again. */
  async restart(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    return this.#registryAnswer(
      entry,
      await entry.lock.run(async () => {
        await this.#cancelPull(name, entry);
        // #start cancels a pending automatic restart itself.
        if (entry.process) await this.#halt(entry, await this.#record(name), { keepDesired: true });
        const status = await this.#start(name, entry, false);
        return { status, pulling: entry.pulling };
      }),
    );
  }

  /**
   * Ends every process of the server at once (SIGKILL), without the stop command. It does not
   * wait for a stop under way, which may be waiting for a server that ignores it: it ends the
   * processes, and that stop then finishes at once.
   */
  async kill(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    const stopping = entry.process;
    if (stopping && entry.stopRequested) {
      entry.log.append('[panel] killing the server');
      await stopping.kill();
      await stopping.exited;
      // The stop under way holds the lock until it has recorded the end; then answer.
      return entry.lock.run(() => Promise.resolve(entry.status));
    }
    return entry.lock.run(async () => {
      const process = entry.process;
      if (await this.#cancelPull(name, entry)) return entry.status;
      if (!process) return this.#cancelWaitingRestart(name, entry);
      entry.stopRequested = true;
      this.#setStatus(entry, 'stopping');
      entry.log.append('[panel] killing the server');
      await process.kill();
      await this.#stopped(entry, await this.#record(name), {});
      return entry.status;
    });
  }

  /**
   * Writes `command` and a newline to the server's standard input, and shows it in the console
   * as typed by `by`, so that everyone watching sees what was sent. When the server no longer
   * holds its input, the console says the command was not read.
   */
  command(name: string, command: string, by: string): void {
    const entry = this.#entries.get(name);
    const process = entry?.process;
    const status = entry?.status;
    if ((status !== 'running' && status !== 'starting' && status !== 'installing') || !process) {
      throw new AppError('CONFLICT', 'The server is not running');
    }
    entry.log.append(`[panel] ${by}> ${command}`);
    const written = process.writeLine(command);
    entry.commandSent = true;
    const typed = command.trim().toLowerCase();
    if (STOP_WORDS.has(typed) || typed === entry.stopCommand?.trim().toLowerCase())
      entry.stopTyped = true;
    void (written ? process.readsInput() : Promise.resolve(false))
      .then((reads) => {
        if (!reads && entry.process === process) {
          entry.log.append('[panel] the server does not read its input: the command was not read');
        }
      })
      .catch((error: unknown) => {
        this.deps.log.error(
          { err: error, server: name },
          'could not tell whether a server reads its input',
        );
      });
  }

  async usage(name: string): Promise<Usage> {
    const process = this.#entries.get(name)?.process;
    return process ? process.usage() : { cpuPercent: 0, memoryBytes: 0, pids: 0 };
  }

  /** Stops the server if it runs and forgets it; its listeners hear nothing more. */
  async forget(name: string): Promise<void> {
    const entry = this.#entries.get(name);
    if (entry) {
      await entry.lock.run(async () => {
        this.#cancelRestart(entry);
        await this.#cancelPull(name, entry);
        if (entry.process) await this.#halt(entry, await this.#record(name));
      });
      entry.log.close();
      this.#entries.delete(name);
    }
    for (const runtime of Object.values(this.deps.runtimes)) await runtime.discard?.(name);
  }

  /**
   * At the panel's start: takes back every server an earlier panel left running (it let go of
   * them at its close, or was killed), with the output they printed meanwhile; ends what cannot
   * be taken back (only processes whose identity matches: a reused pid is left alone); then
   * starts the servers that should be running and are not.
   */
  async recover(): Promise<void> {
    const records = await this.deps.servers.list();
    const adopted = new Set<string>();
    for (const record of records) {
      const runtime = this.deps.runtimes[record.runtime];
      const leftover = { name: record.name, pid: record.pid, identity: record.pidIdentity };
      const process = await runtime.adopt?.(leftover).catch((error: unknown) => {
        this.deps.log.error({ err: error, server: record.name }, 'could not take over a server');
        return null;
      });
      if (process) {
        const entry = this.#entry(record.name);
        const template =
          record.template === null ? null : await this.deps.templates.find(record.template);
        entry.features.begin(record, template ?? null);
        const ended = await settledAlready(process.exited);
        await entry.lock.run(() =>
          this.#attach(record.name, entry, process, ended ? 'ended while away' : 'took over'),
        );
        // Shown as it ended before the panel serves, never running for a moment.
        if (ended) await entry.exitHandled;
        adopted.add(record.name);
        continue;
      }
      const ended = await runtime.reap(leftover);
      if (ended)
        this.deps.log.warn(
          { server: record.name, pid: record.pid },
          'ended a leftover server process',
        );
      if (record.pid !== null)
        await this.deps.servers.recordStopped(record.name, record.desiredRunning);
      // An install the panel's end cut short did not finish.
      if (record.install.state === 'installing')
        await this.deps.servers.setInstall(record.name, {
          state: 'failed',
          exitCode: null,
          finishedAt: this.deps.now().toISOString(),
          reason: 'the panel stopped while it ran',
          lastLines: [],
        });
    }
    for (const record of records.filter((r) => r.desiredRunning && !adopted.has(r.name))) {
      try {
        // Not waiting for a registry's answer: a pull goes on in the background.
        const entry = this.#entry(record.name);
        await entry.lock.run(() => this.#start(record.name, entry, false));
      } catch (error) {
        this.deps.log.error({ err: error, server: record.name }, 'could not restart a server');
      }
    }
  }

  /**
   * The panel is closing: no more restarts. With `stopServers`, every server is stopped (the
   * stop sequence) and starts again at the panel's next start; otherwise every server runs on,
   * let go of as it is (the next panel takes it over: {@link recover}), and only install
   * scripts are stopped, since an install cut short is not resumed.
   */
  async shutdown(stopServers: boolean): Promise<void> {
    this.#closing = true;
    clearInterval(this.#diskTimer);
    await Promise.all(
      [...this.#entries].map(([name, entry]) =>
        entry.lock.run(async () => {
          this.#cancelRestart(entry);
          // A start waiting for its image starts again at the next panel's start.
          await this.#cancelPull(name, entry, true);
          const process = entry.process;
          if (!process) return;
          if (stopServers || entry.installing !== null) {
            await this.#halt(entry, await this.#record(name), { keepDesired: true });
            return;
          }
          entry.unwatch?.();
          entry.unwatch = null;
          entry.process = null;
          process.detach();
          entry.log.append('[panel] the panel is stopping; the server runs on');
        }),
      ),
    );
  }

  #entry(name: string): Entry {
    let entry = this.#entries.get(name);
    if (!entry) {
      entry = {
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
        log: new ConsoleFeed<ServerStatus>({
          name,
          pacer: this.#pacer,
          now: this.deps.now,
          onError: (error, server) => {
            this.#consoleFailed(error, server);
          },
        }),
        features: new FeatureWatch(),
        lock: new Lock(),
      };
      entry.features.follow(entry.log);
      this.#entries.set(name, entry);
    }
    return entry;
  }

  async #record(name: string): Promise<ServerRecord> {
    const record = await this.deps.servers.find(name);
    if (!record) throw new AppError('NOT_FOUND', 'Server not found');
    return record;
  }

  /**
   * `pulled`: its image was just pulled for this start, which keeps its `starting`. Must run
   * under the entry's lock.
   */
  async #start(
    name: string,
    entry: Entry,
    automatic: boolean,
    pulled = false,
  ): Promise<ServerStatus> {
    if (this.#closing) throw new AppError('CONFLICT', 'The panel is shutting down');
    if (entry.held !== null) throw new AppError('BACKUP_IN_PROGRESS', entry.held);
    if (
      (!pulled && entry.status === 'starting') ||
      entry.status === 'running' ||
      entry.status === 'stopping'
    ) {
      throw new AppError('CONFLICT', `The server is already ${entry.status}`);
    }
    if (!automatic) {
      this.#cancelRestart(entry);
      entry.restarts = [];
    }
    const record = await this.#record(name);
    const install = record.install;
    if (install.state !== 'installed') {
      throw new AppError(
        'NOT_INSTALLED',
        install.state === 'failed'
          ? `The server's install failed${installFailure(install)}: install it again, or an admin marks it installed`
          : install.state === 'installing'
            ? 'The server is being installed'
            : 'The server is not installed yet: run its install first',
      );
    }
    const template =
      record.template === null ? null : ((await this.deps.templates.find(record.template)) ?? null);
    const launch = serverLaunch(record, template);
    const runtime = this.deps.runtimes[record.runtime];
    const limits = resourceLimits(record);
    this.#refuseUnenforced(runtime, record, entry);
    await this.#checkDisk(name, record);
    entry.diskLimit = record.limits.diskBytes;

    await this.deps.checkPorts(record);

    const images = record.runtime === 'docker' ? runtime.images : undefined;
    if (images !== undefined && record.image !== null) {
      const found = await this.#imageOnHost(images, record.image, pulled);
      if (found === null) {
        this.#setStatus(entry, 'starting');
        this.#pullFirst(name, entry, images, record.image, 'start', () =>
          this.#start(name, entry, automatic, true),
        );
        return entry.status;
      }
      // What the container is made from, for the operator (`imageDigest` in the stats).
      await this.deps.servers.recordImageDigest(name, found.digest);
    }

    entry.features.begin(record, template);
    this.#setStatus(entry, 'starting');
    let process: RunningProcess;
    try {
      // Its own user, its folder re-owned if it is not yet (made before servers had users).
      const user = this.deps.userOf(record);
      await this.deps.storage.create(name, user);
      if (template !== null) {
        for (const line of await this.deps.prepareFiles(record, template, launch.env))
          entry.log.append(line);
      }
      if (launch.shown !== null) entry.log.append(`[panel] starting: ${launch.shown}`);
      process = await runtime.start({
        name,
        argv: launch.argv,
        ...(launch.shells === undefined ? {} : { shells: launch.shells }),
        cwd: this.deps.storage.directoryOf(name),
        limits,
        image: record.image,
        env: launch.env,
        ports: record.allocations,
        install: null,
        user,
        say: (line) => {
          entry.log.append(`[panel] ${line}`);
        },
      });
    } catch (error) {
      if (!(error instanceof StartError)) {
        this.#setStatus(entry, 'stopped');
        throw refusal(error);
      }
      entry.log.append(`[panel] ${error.message}`);
      this.#setStatus(entry, 'crashed');
      this.#tell(name, 'crashed');
      await this.deps.servers.recordStopped(name, false);
      return entry.status;
    }
    entry.stopCommand = record.stopCommand;
    return this.#attach(name, entry, process, 'started', launch.donePatterns);
  }

  /**
   * Refuses a start when a memory or CPU limit is set that the runtime cannot have the kernel
   * enforce. A process limit it cannot enforce (a panel that is not root has no cgroups) does
   * not stop the start, since every server has one (the panel's default): the console says the
   * server runs without it, as the start-up log does (docs/security.md, §10).
   */
  #refuseUnenforced(runtime: Runtime, record: ServerRecord, entry: Entry): void {
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

  /**
   * Makes `process` the server's running process: its output goes to the console, its exit is
   * handled, and it is recorded. Must run under the entry's lock.
   */
  async #attach(
    name: string,
    entry: Entry,
    process: RunningProcess,
    how: 'started' | 'took over' | 'ended while away',
    donePatterns: readonly string[] = [],
  ): Promise<ServerStatus> {
    entry.process = process;
    entry.overQuotaSince = null;
    entry.stopRequested = false;
    entry.stopSignal = null;
    entry.commandSent = false;
    entry.stopTyped = false;
    entry.unwatch?.();
    entry.unwatch = null;
    if (donePatterns.length > 0) {
      // Starting until a line of the server's own says it is done (never a line of the panel's,
      // which may repeat what somebody typed). Watched before the output is connected, so that a
      // done line printed while the start is being recorded is not missed.
      const unwatch = this.#watch(entry, donePatterns, () => {
        if (entry.unwatch === unwatch) entry.unwatch = null;
        if (entry.process !== process || entry.status !== 'starting') return;
        this.#setStatus(entry, 'running');
        this.#tell(name, 'started');
      });
      entry.unwatch = unwatch;
    }
    // Handled under the lock: an exit during this very start is seen once the start is
    // recorded, so the server never stays "running" with no process behind it.
    entry.exitHandled = this.#follow(name, entry, process, 'a server exit', async (exit) => {
      entry.unwatch?.();
      entry.unwatch = null;
      const lastExit = {
        code: exit.code,
        signal: exit.signal,
        outOfMemory: exit.outOfMemory,
        // Asked for by the panel's stop, or by the stop command a person typed.
        cleanStop: (entry.stopRequested || entry.stopTyped) && endedAsAsked(exit, entry.stopSignal),
        at: this.deps.now(),
      };
      entry.lastExit = lastExit;
      // Kept for the list after a restart of the panel; the exit is handled even if this fails.
      await this.deps.servers.recordExit(name, lastExit).catch((error: unknown) => {
        this.deps.log.error({ err: error, server: name }, 'could not record how a server ended');
      });
      await entry.lock.run(() => this.#exited(name, entry, process, exit));
    });
    if (how === 'ended while away') {
      // Never shown running: its exit, handled next, shows how it ended.
      entry.log.append('[panel] the server ended while the panel was not running');
      return entry.status;
    }
    await this.deps.servers.recordStarted(name, process);
    entry.log.append(
      how === 'started'
        ? `[panel] started (pid ${process.pid})`
        : `[panel] took the server back at the panel's start (pid ${process.pid})`,
    );
    // With done patterns it stays starting until the watcher above sees the line (it may have).
    if (donePatterns.length === 0) {
      this.#setStatus(entry, 'running');
      if (how === 'started') this.#tell(name, 'started');
    }
    return entry.status;
  }

  /**
   * Shows the process's output in the console and, once it has ended and its last line is
   * shown, calls `ended`; a failure there is logged as failing to record `what`. Answers when
   * that is done (it never rejects).
   */
  #follow(
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
        this.deps.log.error({ err: error, server: name }, `could not record ${what}`);
      });
  }

  /**
   * The stop sequence of DECISIONS.md §4; returns once every process of the server is gone.
   * Must run under the entry's lock.
   */
  async #halt(entry: Entry, record: ServerRecord, options: { keepDesired?: boolean } = {}) {
    const process = entry.process;
    if (!process) return;
    entry.stopRequested = true;
    this.#setStatus(entry, 'stopping');
    const exited = process.exited.then(() => true);
    // An install script is not the server: it gets no stop command, only the signals.
    const method = entry.installing ? null : stopMethodOf(record.stopCommand);
    // What the stop asks the server to end by: its signal, SIGTERM when it has no stop command.
    entry.stopSignal =
      method?.type === 'signal' ? method.signal : method === null ? 'SIGTERM' : null;
    if (method?.type === 'signal') {
      entry.log.append(
        method.signal === 'SIGKILL'
          ? '[panel] the stop is SIGKILL (^^C)'
          : `[panel] sent ${method.signal}; waiting up to ${record.stopTimeoutSeconds} s`,
      );
      if (method.signal === 'SIGKILL') await process.kill();
      else await process.terminate(method.signal);
      if (await within(exited, record.stopTimeoutSeconds * 1000))
        return this.#stopped(entry, record, options);
    } else if (method !== null && process.writeLine(method.command)) {
      entry.log.append(
        `[panel] sent the stop command; waiting up to ${record.stopTimeoutSeconds} s`,
      );
      if (await within(exited, record.stopTimeoutSeconds * 1000))
        return this.#stopped(entry, record, options);
    }
    await process.terminate();
    if (!(await within(exited, TERM_GRACE_MS))) {
      entry.log.append('[panel] the server did not end on SIGTERM; killing it');
      await process.kill();
      await exited;
    }
    return this.#stopped(entry, record, options);
  }

  async #stopped(entry: Entry, record: ServerRecord, options: { keepDesired?: boolean }) {
    await entry.process?.exited;
    entry.process = null;
    entry.log.append('[panel] stopped');
    this.#setStatus(entry, 'stopped');
    // A stopped install script is not a stop of the server.
    if (entry.installing === null) this.#tell(record.name, 'stopped');
    await this.deps.servers.recordStopped(record.name, options.keepDesired ?? false);
  }

  async #exited(
    name: string,
    entry: Entry,
    process: RunningProcess,
    exit: ExitInfo,
  ): Promise<void> {
    // A requested stop is finished by #halt; only an exit nobody asked for is handled here.
    if (entry.process !== process || entry.stopRequested) return;
    entry.process = null;
    const how = exit.signal === null ? `code ${exit.code ?? 'unknown'}` : `signal ${exit.signal}`;
    // The stop command (or stop, quit, exit…) typed by a person: the server ended as asked,
    // whatever its exit code; a clean exit after any command, too.
    if (entry.stopTyped || (exit.code === 0 && entry.commandSent)) {
      entry.log.append(`[panel] the server exited (${how}) after a command; stopped`);
      this.#setStatus(entry, 'stopped');
      this.#tell(name, 'stopped');
      await this.deps.servers.recordStopped(name, false);
      return;
    }
    if (exit.outOfMemory) {
      entry.log.append(
        `[panel] the server ran out of memory: the kernel ended it at its limit (${how})`,
      );
    } else entry.log.append(`[panel] the server exited unexpectedly (${how})`);
    this.#setStatus(entry, 'crashed');
    this.#tell(name, exit.outOfMemory ? 'out-of-memory' : 'crashed', {
      code: exit.code,
      signal: exit.signal,
    });
    const record = await this.deps.servers.find(name);
    if (!record) return;
    if (this.#closing || !record.autoRestart) {
      await this.deps.servers.recordStopped(name, false);
      return;
    }
    // A game that ended asking for its EULA ends so again until someone accepts it.
    if (entry.features.raised().some((notice) => notice.feature === 'eula')) {
      entry.log.append('[panel] not restarting: the game waits for its EULA to be accepted');
      await this.deps.servers.recordStopped(name, false);
      return;
    }
    const now = this.deps.now().getTime();
    entry.restarts = entry.restarts.filter((at) => now - at < RESTART_WINDOW_MS);
    if (entry.restarts.length >= MAX_RESTARTS) {
      entry.log.append(`[panel] crashed ${MAX_RESTARTS + 1} times within 60 s; not restarting`);
      await this.deps.servers.recordStopped(name, false);
      return;
    }
    const delay = RESTART_BASE_DELAY_MS * 2 ** entry.restarts.length;
    entry.restarts.push(now + delay);
    entry.log.append(`[panel] restarting in ${delay / 1000} s`);
    await this.deps.servers.recordStopped(name, true);
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = null;
      entry.lock
        .run(() => this.#start(name, entry, true))
        .catch((error: unknown) => {
          this.deps.log.error({ err: error, server: name }, 'automatic restart failed');
        });
    }, delay);
    entry.restartTimer.unref();
  }

  /** Refuses to start a server that already uses more disk than its quota. */
  async #checkDisk(name: string, record: ServerRecord): Promise<void> {
    const quota = record.limits.diskBytes;
    if (quota === null) return;
    const used = await this.deps.storage.diskUsage(name);
    if (used > quota) {
      throw new AppError(
        'OVER_QUOTA',
        `The server uses ${mebibytes(used)} of disk, more than its limit of ${mebibytes(quota)}: delete files before starting it`,
      );
    }
  }

  /**
   * Compares each running server's disk use with its quota: a server that passes it is warned in
   * its console, and stopped once it has stayed over for the grace period.
   */
  async #watchDisks(): Promise<void> {
    for (const [name, entry] of this.#entries) {
      const limit = entry.diskLimit;
      if (limit === null || entry.status !== 'running' || this.#closing) continue;
      try {
        const used = await this.deps.storage.diskUsage(name);
        if (used <= limit) {
          if (entry.overQuotaSince !== null) {
            entry.overQuotaSince = null;
            entry.log.append('[panel] the server is back within its disk limit');
          }
          continue;
        }
        const grace = this.deps.diskGraceSeconds;
        const now = this.deps.now().getTime();
        if (entry.overQuotaSince === null) {
          entry.overQuotaSince = now;
          entry.log.append(
            `[panel] the server uses ${mebibytes(used)} of disk, more than its limit of ${mebibytes(limit)}: it will be stopped in ${grace} s unless it gets back within it`,
          );
        }
        if (now - entry.overQuotaSince >= grace * 1000) {
          entry.log.append(`[panel] still over its disk limit after ${grace} s; stopping`);
          entry.overQuotaSince = null;
          await this.stop(name).catch((error: unknown) => {
            if (!(error instanceof AppError)) throw error;
          });
        }
      } catch (error) {
        this.deps.log.error({ err: error, server: name }, "could not check a server's disk use");
      }
    }
  }

  /**
   * Stop or kill of a server that does not run: a pending automatic restart is cancelled and the
   * server stays stopped; with none pending, 409. Must run under the entry's lock.
   */
  async #cancelWaitingRestart(name: string, entry: Entry): Promise<ServerStatus> {
    if (!this.#cancelRestart(entry)) throw new AppError('CONFLICT', 'The server is not running');
    this.#setStatus(entry, 'stopped');
    await this.deps.servers.recordStopped(name, false);
    return entry.status;
  }

  /** True when a pending automatic restart was cancelled. */
  #cancelRestart(entry: Entry): boolean {
    if (!entry.restartTimer) return false;
    clearTimeout(entry.restartTimer);
    entry.restartTimer = null;
    return true;
  }

  #setStatus(entry: Entry, status: ServerStatus): void {
    entry.status = status;
    entry.log.status(status);
  }

  /** Tells `onEvent`; what it does with it never disturbs the server's handling. */
  #tell(name: string, kind: ServerEventKind, exit?: EventExit): void {
    try {
      this.deps.onEvent?.(name, kind, exit);
    } catch (error) {
      this.deps.log.error({ err: error, server: name, kind }, 'a server event listener failed');
    }
  }

  /** A console listener or the console's own work failed, outside any request: it is logged. */
  #consoleFailed(error: unknown, server: string): void {
    this.deps.log.error({ err: error, server }, 'console output handling failed');
  }
}

/**
 * True when `promise` has settled already (a runtime answers a server that ended while no panel
 * ran with its exit settled): what is settled is seen before the next turn of the event loop.
 */
async function settledAlready(promise: Promise<unknown>): Promise<boolean> {
  const turn = new Promise<false>((resolve) => {
    setImmediate(() => {
      resolve(false);
    });
  });
  return Promise.race([promise.then(() => true), turn]);
}

/** What `promise` resolves to if it settles within `ms`, else undefined; the timer never outlives the wait. */
async function answeredWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      resolve(undefined);
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** True if `promise` settles within `ms`; the timer never outlives the wait. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A runtime's refusal to start, as the answer to the request: 409 or 503, else as it is. */
function refusal(error: unknown): unknown {
  if (error instanceof StartRefusedError) return new AppError('START_REFUSED', error.message);
  if (error instanceof RuntimeUnavailableError)
    return new AppError('RUNTIME_UNAVAILABLE', error.message);
  return error;
}

const resourceLimits = (record: ServerRecord) => ({
  memoryBytes: record.limits.memoryBytes,
  cpuPercent: record.limits.cpuPercent,
  pids: record.limits.pids,
});

const mebibytes = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** ` (the script exited with code 2)`: why an install failed, as far as it is known. */
function installFailure(install: ServerRecord['install']): string {
  if (install.reason !== null) return ` (${install.reason})`;
  return install.exitCode === null ? '' : ` (exit code ${install.exitCode})`;
}
