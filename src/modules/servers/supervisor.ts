/**
 * Keeps each game server's process: start and stop under a per-server lock, crash detection and
 * automatic restart with back-off, the console (a ring buffer of the last 1000 lines plus live
 * listeners), and the panel's own life: leftovers of a killed panel are ended and the servers
 * that should run are started again; the panel's shutdown stops every server gracefully.
 */
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../errors.js';
import type { ServerStorage } from '../../files/storage.js';
import type {
  ProcessRuntime,
  RunningProcess,
  Usage,
} from '../../servers/runtime/process-runtime.js';
import { StartError } from '../../servers/runtime/process-runtime.js';
import { ConsoleFeed, ConsolePacer, type FeedEvent } from '../console/console-feed.js';
import type { ConsoleLine } from '../console/console-log.js';
import { parseCommand } from './command.js';
import type { ServerRecord, ServersRepository } from './servers.repository.js';

export type ServerStatus = 'stopped' | 'starting' | 'running' | 'stopping' | 'crashed';

/** What a console listener hears: batches of lines, status changes and lines nobody will see. */
export type ConsoleEvent = FeedEvent<ServerStatus>;

/** At most this many automatic restarts inside the window; then the server stays crashed. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
/** The first automatic restart waits this long; each further one twice as long. */
const RESTART_BASE_DELAY_MS = 1_000;
/** Between SIGTERM and SIGKILL (DECISIONS.md §4). */
const TERM_GRACE_MS = 5_000;

/** Runs one task at a time, in order of arrival. */
class Lock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
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
  /** How the last process ended, since the panel started. */
  lastExit: LastExit | null;
  /** The console: its history, its listeners and the output waiting to be shown. */
  readonly log: ConsoleFeed<ServerStatus>;
  readonly lock: Lock;
}

export interface LastExit {
  readonly code: number | null;
  readonly signal: string | null;
  readonly at: Date;
}

export interface ServerState {
  readonly status: ServerStatus;
  readonly pid: number | null;
  readonly startedAt: Date | null;
  readonly lastExit: LastExit | null;
}

export class Supervisor {
  readonly #entries = new Map<string, Entry>();
  #closing = false;
  /** Shows every server's output in bounded slices, so that requests are answered meanwhile. */
  readonly #pacer = new ConsolePacer((error, server) => {
    this.#consoleFailed(error, server);
  });

  constructor(
    private readonly deps: {
      readonly runtime: ProcessRuntime;
      readonly servers: ServersRepository;
      readonly storage: ServerStorage;
      readonly log: FastifyBaseLogger;
      readonly now: () => Date;
    },
  ) {}

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

  /** Calls `listener` with every console line and status change of `name` until unsubscribed. */
  subscribe(name: string, listener: (event: ConsoleEvent) => void): () => void {
    return this.#entry(name).log.subscribe(listener);
  }

  start(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    return entry.lock.run(() => this.#start(name, entry, false));
  }

  stop(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    return entry.lock.run(async () => {
      if (entry.status === 'stopped' || entry.status === 'crashed') {
        if (!this.#cancelRestart(entry)) {
          throw new AppError('CONFLICT', 'The server is not running');
        }
        this.#setStatus(entry, 'stopped');
        await this.deps.servers.recordStopped(name, false);
        return entry.status;
      }
      const record = await this.#record(name);
      await this.#halt(entry, record);
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
    if (entry?.status !== 'running' || !process) {
      throw new AppError('CONFLICT', 'The server is not running');
    }
    entry.log.append(`[panel] ${by}> ${command}`);
    const written = process.writeLine(command);
    entry.commandSent = true;
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
    return process ? process.usage() : { cpuPercent: 0, memoryBytes: 0 };
  }

  /** Stops the server if it runs and forgets it; its listeners hear nothing more. */
  async forget(name: string): Promise<void> {
    const entry = this.#entries.get(name);
    if (!entry) return;
    await entry.lock.run(async () => {
      this.#cancelRestart(entry);
      if (entry.process) await this.#halt(entry, await this.#record(name));
    });
    entry.log.close();
    this.#entries.delete(name);
  }

  /**
   * At the panel's start: ends what a killed panel left running (only processes whose identity
   * matches: a reused pid is left alone), then starts the servers that should be running.
   */
  async recover(): Promise<void> {
    const records = await this.deps.servers.list();
    for (const record of records) {
      const ended = await this.deps.runtime.reap({
        name: record.name,
        pid: record.pid,
        identity: record.pidIdentity,
      });
      if (ended)
        this.deps.log.warn(
          { server: record.name, pid: record.pid },
          'ended a leftover server process',
        );
      if (record.pid !== null)
        await this.deps.servers.recordStopped(record.name, record.desiredRunning);
    }
    for (const record of records.filter((r) => r.desiredRunning)) {
      try {
        await this.start(record.name);
      } catch (error) {
        this.deps.log.error({ err: error, server: record.name }, 'could not restart a server');
      }
    }
  }

  /** The panel is closing: no more restarts; every server is stopped and will start next time. */
  async shutdown(): Promise<void> {
    this.#closing = true;
    await Promise.all(
      [...this.#entries].map(([name, entry]) =>
        entry.lock.run(async () => {
          this.#cancelRestart(entry);
          if (!entry.process) return;
          await this.#halt(entry, await this.#record(name), { keepDesired: true });
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
        lastExit: null,
        log: new ConsoleFeed<ServerStatus>({
          name,
          pacer: this.#pacer,
          now: this.deps.now,
          onError: (error, server) => {
            this.#consoleFailed(error, server);
          },
        }),
        lock: new Lock(),
      };
      this.#entries.set(name, entry);
    }
    return entry;
  }

  async #record(name: string): Promise<ServerRecord> {
    const record = await this.deps.servers.find(name);
    if (!record) throw new AppError('NOT_FOUND', 'Server not found');
    return record;
  }

  /** Must run under the entry's lock. */
  async #start(name: string, entry: Entry, automatic: boolean): Promise<ServerStatus> {
    if (this.#closing) throw new AppError('CONFLICT', 'The panel is shutting down');
    if (entry.status === 'running' || entry.status === 'starting' || entry.status === 'stopping') {
      throw new AppError('CONFLICT', `The server is already ${entry.status}`);
    }
    if (!automatic) {
      this.#cancelRestart(entry);
      entry.restarts = [];
    }
    const record = await this.#record(name);
    const command = parseCommand(record.startCommand);
    if (!command.ok) throw new AppError('VALIDATION_FAILED', `startCommand: ${command.reason}`);

    this.#setStatus(entry, 'starting');
    let process: RunningProcess;
    try {
      await this.deps.storage.create(name);
      process = await this.deps.runtime.start({
        name,
        argv: command.argv,
        cwd: this.deps.storage.directoryOf(name),
      });
    } catch (error) {
      if (!(error instanceof StartError)) {
        this.#setStatus(entry, 'stopped');
        throw error;
      }
      entry.log.append(`[panel] ${error.message}`);
      this.#setStatus(entry, 'crashed');
      await this.deps.servers.recordStopped(name, false);
      return entry.status;
    }

    entry.process = process;
    entry.stopRequested = false;
    entry.commandSent = false;
    const output = entry.log.output();
    process.onOutput((chunk, stream) => {
      output.write(chunk, stream);
    });
    // Handled under the lock: an exit during this very start is seen once the start is
    // recorded, so the server never stays "running" with no process behind it.
    void process.exited
      .then((exit) => {
        output.end();
        entry.lastExit = { ...exit, at: this.deps.now() };
        return entry.lock.run(() => this.#exited(name, entry, process, exit));
      })
      .catch((error: unknown) => {
        this.deps.log.error({ err: error, server: name }, 'could not record a server exit');
      });
    await this.deps.servers.recordStarted(name, process);
    entry.log.append(`[panel] started (pid ${process.pid})`);
    this.#setStatus(entry, 'running');
    return entry.status;
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
    if (record.stopCommand !== null && process.writeLine(record.stopCommand)) {
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
    await this.deps.servers.recordStopped(record.name, options.keepDesired ?? false);
  }

  async #exited(
    name: string,
    entry: Entry,
    process: RunningProcess,
    exit: { code: number | null; signal: string | null },
  ): Promise<void> {
    // A requested stop is finished by #halt; only an exit nobody asked for is handled here.
    if (entry.process !== process || entry.stopRequested) return;
    entry.process = null;
    const how = exit.signal === null ? `code ${exit.code ?? 'unknown'}` : `signal ${exit.signal}`;
    // `stop`, `quit` or `exit` typed by a person: the server ended as asked.
    if (exit.code === 0 && entry.commandSent) {
      entry.log.append(`[panel] the server exited (${how}) after a command; stopped`);
      this.#setStatus(entry, 'stopped');
      await this.deps.servers.recordStopped(name, false);
      return;
    }
    entry.log.append(`[panel] the server exited unexpectedly (${how})`);
    this.#setStatus(entry, 'crashed');
    const record = await this.deps.servers.find(name);
    if (!record) return;
    if (this.#closing || !record.autoRestart) {
      await this.deps.servers.recordStopped(name, false);
      return;
    }
    const now = Date.now();
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

  /** A console listener or the console's own work failed, outside any request: it is logged. */
  #consoleFailed(error: unknown, server: string): void {
    this.deps.log.error({ err: error, server }, 'console output handling failed');
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
