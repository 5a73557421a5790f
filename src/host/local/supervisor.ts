/**
 * Keeps each game server's process: start and stop under a per-server lock, the console (a ring
 * buffer of the last 1000 lines plus live listeners), and the panel's own life: servers outlive
 * it (its shutdown lets go of them, and the next panel takes each one back as it runs), what
 * cannot be taken back is ended, and the servers that should run but do not are started again.
 * Its rooms beside it: a process made the server's running one (./attach.ts), the install runs
 * (./install-run.ts), the stop sequence (./stop-sequence.ts), crash handling and automatic
 * restarts with back-off (./crash-restart.ts), the image pulled before a start or install
 * without holding the lock (./pull-first.ts), the disk-quota watcher (./disk-quota.ts), and
 * what they share of each server (./server-entry.ts).
 */
import type { ServerRecord, ServerStatus } from '../../domain/server.js';
import type { FeatureNotice } from '../../domain/features.js';
import { AppError } from '../../errors.js';
import type { ConsoleEvent, ConsoleLine, ServerState, Usage } from '../host.js';
import {
  RuntimeUnavailableError,
  StartError,
  type LeftoverProcess,
  type RunningProcess,
} from '../runtime/runtime.js';
import { attach, settledAlready, watchLines } from './attach.js';
import { ConsolePacer } from './console-feed.js';
import { CrashRestarts } from './crash-restart.js';
import { DiskQuota } from './disk-quota.js';
import { InstallRuns, installFailure } from './install-run.js';
import { serverLaunch } from './launch.js';
import { PullFirst } from './pull-first.js';
import {
  newEntry,
  recordOf,
  refusal,
  refuseUnenforced,
  resourceLimits,
  setStatus,
  tell,
  type Entry,
  type SupervisorDeps,
} from './server-entry.js';
import { halt, reaching, stopped } from './stop-sequence.js';

export type { PortCheck, Runtimes } from './server-entry.js';

/**
 * How often the servers shown `unknown` (their engine stopped answering) are asked after, besides
 * at once when their node answers again (`reconnect`).
 */
const RECONNECT_MS = 15_000;

/** What a person types to stop a game server, whatever its configured stop command. */
const STOP_WORDS = new Set(['stop', 'quit', 'exit', 'end', 'shutdown', '/stop', '/quit']);

export class Supervisor {
  readonly #entries = new Map<string, Entry>();
  #closing = false;
  /** Shows every server's output in bounded slices, so that requests are answered meanwhile. */
  readonly #pacer = new ConsolePacer((error, server) => {
    this.#consoleFailed(error, server);
  });
  readonly #deps: SupervisorDeps;
  readonly #pulls: PullFirst;
  readonly #restarts: CrashRestarts;
  readonly #installs: InstallRuns;
  readonly #disk: DiskQuota;
  /** Asks after the `unknown` servers every RECONNECT_MS. */
  readonly #reconnectTimer: NodeJS.Timeout;
  /** The round of `reconnect` under way, which a second call joins. */
  #reconnecting: Promise<void> | null = null;

  constructor(deps: SupervisorDeps) {
    this.#deps = deps;
    this.#reconnectTimer = setInterval(() => void this.reconnect(), RECONNECT_MS);
    this.#reconnectTimer.unref();
    const closing = () => this.#closing;
    this.#pulls = new PullFirst(deps, closing);
    this.#restarts = new CrashRestarts(deps, {
      closing,
      start: (name, entry) => this.#start(name, entry, true),
    });
    this.#installs = new InstallRuns(deps, {
      closing,
      pulls: this.#pulls,
      restarts: this.#restarts,
    });
    this.#disk = new DiskQuota(deps, {
      entries: () => this.#entries,
      closing,
      stop: (name) => this.stop(name),
    });
  }

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
    return watchLines(this.#deps.lines, this.#entry(name), patterns, onMatch);
  }

  /**
   * Starts the server. An image the engine lacks is pulled first, outside the lock: the answer
   * comes once its registry has answered (409 with its reason when it refuses), `starting` while
   * the download goes on; a stop or kill meanwhile cancels the start.
   */
  async start(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    // Taken back first: it may run on (409, as any running server), or be gone.
    await this.#takeBack(name, entry, false);
    return this.#pulls.answer(
      entry,
      await entry.lock.run(async () => {
        const status = await this.#start(name, entry, false);
        return { status, pulling: entry.pulling };
      }),
    );
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
      this.#restarts.cancel(entry);
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
    return this.#pulls.answer(
      entry,
      await entry.lock.run(async () => {
        const status = await this.#installs.run(name, entry, false);
        return { status, pulling: entry.pulling };
      }),
    );
  }

  async stop(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    const ended = await this.#takeBack(name, entry, false);
    return entry.lock.run(async () => {
      if (await this.#pulls.cancel(name, entry)) return entry.status;
      if (entry.status === 'stopped' || entry.status === 'crashed') {
        return ended
          ? this.#stoppedMeanwhile(name, entry)
          : this.#restarts.cancelWaiting(name, entry);
      }
      const record = await recordOf(this.#deps.servers, name);
      await halt(this.#deps, entry, record).catch((error: unknown) => {
        throw refusal(error);
      });
      return entry.status;
    });
  }

  /** Stops the server if it runs (the whole stop sequence), then starts it again. */
  async restart(name: string): Promise<ServerStatus> {
    const entry = this.#entry(name);
    await this.#takeBack(name, entry, false);
    return this.#pulls.answer(
      entry,
      await entry.lock.run(async () => {
        await this.#pulls.cancel(name, entry);
        // #start cancels a pending automatic restart itself.
        if (entry.process)
          await halt(this.#deps, entry, await recordOf(this.#deps.servers, name), {
            keepDesired: true,
          }).catch((error: unknown) => {
            throw refusal(error);
          });
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
    const ended = await this.#takeBack(name, entry, false);
    const stopping = entry.process;
    if (stopping && entry.stopRequested) {
      entry.log.append('[panel] killing the server');
      await stopping.kill().catch((error: unknown) => {
        throw refusal(error);
      });
      await stopping.exited;
      // The stop under way holds the lock until it has recorded the end; then answer.
      return entry.lock.run(() => Promise.resolve(entry.status));
    }
    return entry.lock.run(async () => {
      const process = entry.process;
      if (await this.#pulls.cancel(name, entry)) return entry.status;
      if (!process) {
        return ended
          ? this.#stoppedMeanwhile(name, entry)
          : this.#restarts.cancelWaiting(name, entry);
      }
      const record = await recordOf(this.#deps.servers, name);
      await reaching(entry, process, 'kill', async () => {
        entry.stopRequested = true;
        setStatus(entry, 'stopping');
        entry.log.append('[panel] killing the server');
        await process.kill();
        await stopped(this.#deps, entry, record, {});
      }).catch((error: unknown) => {
        throw refusal(error);
      });
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
        this.#deps.log.error(
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
        this.#restarts.cancel(entry);
        await this.#pulls.cancel(name, entry);
        if (entry.process) await halt(this.#deps, entry, await recordOf(this.#deps.servers, name));
      });
      entry.log.close();
      this.#entries.delete(name);
    }
    for (const runtime of Object.values(this.#deps.runtimes)) await runtime.discard?.(name);
  }

  /**
   * At the panel's start: takes back every server an earlier panel left running (it let go of
   * them at its close, or was killed), with the output they printed meanwhile; ends what cannot
   * be taken back (only processes whose identity matches: a reused pid is left alone); then
   * starts the servers that should be running and are not.
   */
  async recover(): Promise<void> {
    const records = await this.#deps.servers.list();
    const adopted = new Set<string>();
    for (const record of records) {
      const runtime = this.#deps.runtimes[record.runtime];
      const leftover = { name: record.name, pid: record.pid, identity: record.pidIdentity };
      // Its engine does not answer: whether it runs there is not known until it does. A server
      // that should run is shown `unknown` too, and started once its engine answers.
      const unreachable = (error: unknown): boolean => {
        if (!(error instanceof RuntimeUnavailableError)) return false;
        if (record.pid === null && !record.desiredRunning) return false;
        const entry = this.#entry(record.name);
        entry.log.append(`[panel] the server's engine does not answer: ${error.message}`);
        setStatus(entry, 'unknown');
        adopted.add(record.name);
        return true;
      };
      let process: RunningProcess | null | undefined;
      try {
        process = await runtime.adopt?.(leftover);
      } catch (error) {
        if (unreachable(error)) continue;
        this.#deps.log.error({ err: error, server: record.name }, 'could not take over a server');
      }
      if (process) {
        const entry = this.#entry(record.name);
        const ended = await entry.lock.run(() =>
          this.#takeOver(record, entry, process, 'the panel started'),
        );
        // Shown as it ended before the panel serves, never running for a moment.
        if (ended) await entry.exitHandled;
        adopted.add(record.name);
        continue;
      }
      let ended: boolean;
      try {
        ended = await runtime.reap(leftover);
      } catch (error) {
        if (unreachable(error)) continue;
        throw error;
      }
      if (ended)
        this.#deps.log.warn(
          { server: record.name, pid: record.pid },
          'ended a leftover server process',
        );
      if (record.pid !== null)
        await this.#deps.servers.recordStopped(record.name, record.desiredRunning);
      // An install the panel's end cut short did not finish.
      if (record.install.state === 'installing')
        await this.#deps.servers.setInstall(record.name, {
          state: 'failed',
          exitCode: null,
          finishedAt: this.#deps.now().toISOString(),
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
        this.#deps.log.error({ err: error, server: record.name }, 'could not restart a server');
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
    clearInterval(this.#reconnectTimer);
    this.#disk.close();
    await Promise.all(
      [...this.#entries].map(([name, entry]) =>
        entry.lock.run(async () => {
          this.#restarts.cancel(entry);
          // A start waiting for its image starts again at the next panel's start.
          await this.#pulls.cancel(name, entry, true);
          const process = entry.process;
          if (!process) return;
          if (stopServers || entry.installing !== null) {
            await halt(this.#deps, entry, await recordOf(this.#deps.servers, name), {
              keepDesired: true,
            });
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

  /**
   * Asks after every server shown `unknown` (docs/nodes.md, "When a node fails"): each whose
   * engine answers is taken back (see #takeBack), and one gone from it that should run is
   * started again. Called every RECONNECT_MS, and at once when a node answers again. Never
   * rejects.
   */
  reconnect(): Promise<void> {
    this.#reconnecting ??= (async () => {
      for (const [name, entry] of this.#entries) {
        if (this.#closing) break;
        if (entry.status !== 'unknown') continue;
        await this.#takeBack(name, entry, true).catch((error: unknown) => {
          this.#deps.log.debug({ err: error, server: name }, 'a server is still unknown');
        });
      }
    })().finally(() => {
      this.#reconnecting = null;
    });
    return this.#reconnecting;
  }

  /**
   * Takes back server `name` if it is `unknown`, once its engine answers: the very container,
   * running on or ended meanwhile (then its end is handled as any exit); or, gone from its
   * engine, stopped, and started again with `restartGone` when it should run. Rejects with 503
   * RUNTIME_UNAVAILABLE while its engine does not answer (it stays `unknown`). True when it was
   * unknown and is now found not running.
   */
  async #takeBack(name: string, entry: Entry, restartGone: boolean): Promise<boolean> {
    if (entry.status !== 'unknown') return false;
    const ended = await entry.lock.run(async () => {
      if (entry.status !== 'unknown' || this.#closing) return null;
      const record = await recordOf(this.#deps.servers, name);
      const runtime = this.#deps.runtimes[record.runtime];
      const leftover: LeftoverProcess = { name, pid: record.pid, identity: record.pidIdentity };
      let process: RunningProcess | null;
      try {
        process = (await runtime.adopt?.(leftover)) ?? null;
        if (process === null) await runtime.reap(leftover);
      } catch (error) {
        throw refusal(error);
      }
      if (process !== null) return this.#takeOver(record, entry, process, 'its engine answered');
      entry.log.append('[panel] its engine answers again: the server is not there any more');
      setStatus(entry, 'stopped');
      await this.#deps.servers.recordStopped(name, record.desiredRunning);
      if (restartGone && record.desiredRunning) await this.#start(name, entry, true);
      return true;
    });
    // Its end is handled under the lock: seen before the caller goes on.
    if (ended === true && entry.process !== null) await entry.exitHandled;
    return ended === true && entry.process === null;
  }

  /**
   * Makes `process`, found running by the runtime's `adopt` when `when`, the server's running
   * one, its template's features watched; one that ended meanwhile is attached with its exit
   * settled, handled next. Answers whether it had ended. Must run under the entry's lock.
   */
  async #takeOver(
    record: ServerRecord,
    entry: Entry,
    process: RunningProcess,
    when: 'the panel started' | 'its engine answered',
  ): Promise<boolean> {
    const template =
      record.template === null ? null : await this.#deps.templates.find(record.template);
    entry.features.begin(record, template ?? null);
    const ended = await settledAlready(process.exited);
    const how =
      when === 'the panel started'
        ? ended
          ? 'ended while away'
          : 'took over'
        : ended
          ? 'ended while unreachable'
          : 'reconnected';
    await attach(this.#deps, this.#restarts, record.name, entry, process, how);
    return ended;
  }

  /**
   * A stop or kill of an `unknown` server found ended when its engine answered: it is stopped,
   * as asked, without an automatic restart. Must run under the entry's lock.
   */
  async #stoppedMeanwhile(name: string, entry: Entry): Promise<ServerStatus> {
    this.#restarts.cancel(entry);
    setStatus(entry, 'stopped');
    await this.#deps.servers.recordStopped(name, false);
    return entry.status;
  }

  #entry(name: string): Entry {
    let entry = this.#entries.get(name);
    if (!entry) {
      entry = newEntry(name, this.#pacer, this.#deps.now, (error, server) => {
        this.#consoleFailed(error, server);
      });
      this.#entries.set(name, entry);
    }
    return entry;
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
    try {
      await this.#deps.refuseStart?.();
    } catch (error) {
      // A person who asked is answered; an automatic start is told in the console.
      if (automatic && error instanceof Error)
        entry.log.append(`[panel] not started: ${error.message}`);
      throw error;
    }
    if (
      (!pulled && entry.status === 'starting') ||
      entry.status === 'running' ||
      entry.status === 'stopping'
    ) {
      throw new AppError('CONFLICT', `The server is already ${entry.status}`);
    }
    if (!automatic) {
      this.#restarts.cancel(entry);
      entry.restarts = [];
    }
    const record = await recordOf(this.#deps.servers, name);
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
      record.template === null
        ? null
        : ((await this.#deps.templates.find(record.template)) ?? null);
    const launch = serverLaunch(record, template);
    const runtime = this.#deps.runtimes[record.runtime];
    const limits = resourceLimits(record);
    refuseUnenforced(runtime, record, entry);
    await this.#disk.refuseOver(name, record);
    entry.diskLimit = record.limits.diskBytes;

    await this.#deps.checkPorts(record);

    const images = record.runtime === 'docker' ? runtime.images : undefined;
    if (images !== undefined && record.image !== null) {
      const found = await this.#pulls.onHost(images, record.image, pulled);
      if (found === null) {
        setStatus(entry, 'starting');
        this.#pulls.begin(name, entry, images, record.image, 'start', () =>
          this.#start(name, entry, automatic, true),
        );
        return entry.status;
      }
      // What the container is made from, for the operator (`imageDigest` in the stats).
      await this.#deps.servers.recordImageDigest(name, found.digest);
    }

    entry.features.begin(record, template);
    setStatus(entry, 'starting');
    let process: RunningProcess;
    try {
      // Its own user, its folder re-owned if it is not yet (made before servers had users).
      const user = this.#deps.userOf(record);
      await this.#deps.storage.create(name, user);
      if (template !== null) {
        for (const line of await this.#deps.prepareFiles(record, template, launch.env))
          entry.log.append(line);
      }
      if (launch.shown !== null) entry.log.append(`[panel] starting: ${launch.shown}`);
      process = await runtime.start({
        name,
        argv: launch.argv,
        ...(launch.shells === undefined ? {} : { shells: launch.shells }),
        cwd: this.#deps.storage.directoryOf(name),
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
        setStatus(entry, 'stopped');
        throw refusal(error);
      }
      entry.log.append(`[panel] ${error.message}`);
      setStatus(entry, 'crashed');
      tell(this.#deps, name, 'crashed');
      await this.#deps.servers.recordStopped(name, false);
      return entry.status;
    }
    entry.stopCommand = record.stopCommand;
    return attach(this.#deps, this.#restarts, name, entry, process, 'started', launch.donePatterns);
  }

  /** A console listener or the console's own work failed, outside any request: it is logged. */
  #consoleFailed(error: unknown, server: string): void {
    this.#deps.log.error({ err: error, server }, 'console output handling failed');
  }
}
