/**
 * What an exit nobody asked for becomes. After the stop command a person typed (or stop, quit,
 * exit…), or a clean exit after any command, the server is stopped. Otherwise it crashed (or ran
 * out of memory), and a server with `autoRestart` is started again with back-off: the first
 * restart after RESTART_BASE_DELAY_MS, each further one twice as long, at most MAX_RESTARTS
 * within RESTART_WINDOW_MS; then it stays crashed. Never while the panel closes, nor while the
 * game waits for its EULA. A stop, kill or start cancels a restart that waits.
 */
import type { ServerStatus } from '../../domain/server.js';
import { AppError } from '../../errors.js';
import type { ExitInfo, RunningProcess } from '../runtime/runtime.js';
import { setStatus, tell, type Entry, type SupervisorDeps } from './server-entry.js';

/** At most this many automatic restarts inside the window; then the server stays crashed. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
/** The first automatic restart waits this long; each further one twice as long. */
const RESTART_BASE_DELAY_MS = 1_000;

type CrashDeps = Pick<SupervisorDeps, 'servers' | 'log' | 'now' | 'onEvent'>;

export interface RestartHooks {
  /** True once the panel is closing: nothing is restarted. */
  readonly closing: () => boolean;
  /** Starts the server again, automatically. Runs under the entry's lock. */
  readonly start: (name: string, entry: Entry) => Promise<unknown>;
}

export class CrashRestarts {
  readonly #deps: CrashDeps;
  readonly #hooks: RestartHooks;

  constructor(deps: CrashDeps, hooks: RestartHooks) {
    this.#deps = deps;
    this.#hooks = hooks;
  }

  /**
   * The running process ended; a requested stop is finished by the stop sequence, so only an
   * exit nobody asked for is handled here. Must run under the entry's lock.
   */
  async exited(name: string, entry: Entry, process: RunningProcess, exit: ExitInfo): Promise<void> {
    if (entry.process !== process || entry.stopRequested) return;
    entry.process = null;
    const how = exit.signal === null ? `code ${exit.code ?? 'unknown'}` : `signal ${exit.signal}`;
    // The stop command (or stop, quit, exit…) typed by a person: the server ended as asked,
    // whatever its exit code; a clean exit after any command, too.
    if (entry.stopTyped || (exit.code === 0 && entry.commandSent)) {
      entry.log.append(`[panel] the server exited (${how}) after a command; stopped`);
      setStatus(entry, 'stopped');
      tell(this.#deps, name, 'stopped');
      await this.#deps.servers.recordStopped(name, false);
      return;
    }
    if (exit.outOfMemory) {
      entry.log.append(
        `[panel] the server ran out of memory: the kernel ended it at its limit (${how})`,
      );
    } else entry.log.append(`[panel] the server exited unexpectedly (${how})`);
    setStatus(entry, 'crashed');
    tell(this.#deps, name, exit.outOfMemory ? 'out-of-memory' : 'crashed', {
      code: exit.code,
      signal: exit.signal,
    });
    const record = await this.#deps.servers.find(name);
    if (!record) return;
    if (this.#hooks.closing() || !record.autoRestart) {
      await this.#deps.servers.recordStopped(name, false);
      return;
    }
    // A game that ended asking for its EULA ends so again until someone accepts it.
    if (entry.features.raised().some((notice) => notice.feature === 'eula')) {
      entry.log.append('[panel] not restarting: the game waits for its EULA to be accepted');
      await this.#deps.servers.recordStopped(name, false);
      return;
    }
    const now = this.#deps.now().getTime();
    entry.restarts = entry.restarts.filter((at) => now - at < RESTART_WINDOW_MS);
    if (entry.restarts.length >= MAX_RESTARTS) {
      entry.log.append(`[panel] crashed ${MAX_RESTARTS + 1} times within 60 s; not restarting`);
      await this.#deps.servers.recordStopped(name, false);
      return;
    }
    const delay = RESTART_BASE_DELAY_MS * 2 ** entry.restarts.length;
    entry.restarts.push(now + delay);
    entry.log.append(`[panel] restarting in ${delay / 1000} s`);
    await this.#deps.servers.recordStopped(name, true);
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = null;
      entry.lock
        .run(() => this.#hooks.start(name, entry))
        .catch((error: unknown) => {
          this.#deps.log.error({ err: error, server: name }, 'automatic restart failed');
        });
    }, delay);
    entry.restartTimer.unref();
  }

  /** True when a pending automatic restart was cancelled. */
  cancel(entry: Entry): boolean {
    if (!entry.restartTimer) return false;
    clearTimeout(entry.restartTimer);
    entry.restartTimer = null;
    return true;
  }

  /**
   * Stop or kill of a server that does not run: a pending automatic restart is cancelled and the
   * server stays stopped; with none pending, 409. Must run under the entry's lock.
   */
  async cancelWaiting(name: string, entry: Entry): Promise<ServerStatus> {
    if (!this.cancel(entry)) throw new AppError('CONFLICT', 'The server is not running');
    setStatus(entry, 'stopped');
    await this.#deps.servers.recordStopped(name, false);
    return entry.status;
  }
}
