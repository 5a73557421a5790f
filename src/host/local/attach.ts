/**
 * Makes a process the server's running one: its output goes to the console, its exit is recorded
 * (how it ended, and whether that was the stop asked for) and handed to crash handling
 * (./crash-restart.ts) under the server's lock, and it is recorded started; or, taken back at
 * the panel's start, shown as taken back or as ended while no panel ran. A template's done
 * patterns keep the server `starting` until a line of the server's own matches one.
 */
import type { ServerStatus } from '../../domain/server.js';
import type { RunningProcess } from '../runtime/runtime.js';
import type { CrashRestarts } from './crash-restart.js';
import type { LineMatcher } from './line-watch.js';
import { follow, lose, setStatus, tell, type Entry, type SupervisorDeps } from './server-entry.js';
import { endedAsAsked } from './stop-sequence.js';

type AttachDeps = Pick<SupervisorDeps, 'servers' | 'lines' | 'log' | 'now' | 'onEvent'>;

/**
 * Makes `process` the server's running process: its output goes to the console, its exit is
 * handled, and it is recorded. Must run under the entry's lock.
 */
export async function attach(
  deps: AttachDeps,
  restarts: CrashRestarts,
  name: string,
  entry: Entry,
  process: RunningProcess,
  how: 'started' | 'took over' | 'ended while away' | 'reconnected' | 'ended while unreachable',
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
    const unwatch = watchLines(deps.lines, entry, donePatterns, () => {
      if (entry.unwatch === unwatch) entry.unwatch = null;
      if (entry.process !== process || entry.status !== 'starting') return;
      setStatus(entry, 'running');
      tell(deps, name, 'started');
    });
    entry.unwatch = unwatch;
  }
  // Handled under the lock: an exit during this very start is seen once the start is
  // recorded, so the server never stays "running" with no process behind it.
  entry.exitHandled = follow(deps.log, name, entry, process, 'a server exit', async (exit) => {
    // Its engine stopped answering: how it ends is not known yet, so nothing is recorded.
    if (exit.lost === true) {
      await entry.lock.run(() => {
        lose(entry, process);
        return Promise.resolve();
      });
      return;
    }
    entry.unwatch?.();
    entry.unwatch = null;
    const lastExit = {
      code: exit.code,
      signal: exit.signal,
      outOfMemory: exit.outOfMemory,
      // Asked for by the panel's stop, or by the stop command a person typed.
      cleanStop: (entry.stopRequested || entry.stopTyped) && endedAsAsked(exit, entry.stopSignal),
      at: deps.now(),
    };
    entry.lastExit = lastExit;
    // Kept for the list after a restart of the panel; the exit is handled even if this fails.
    await deps.servers.recordExit(name, lastExit).catch((error: unknown) => {
      deps.log.error({ err: error, server: name }, 'could not record how a server ended');
    });
    await entry.lock.run(() => restarts.exited(name, entry, process, exit));
  });
  if (how === 'ended while away' || how === 'ended while unreachable') {
    // Never shown running: its exit, handled next, shows how it ended.
    entry.log.append(
      how === 'ended while away'
        ? '[panel] the server ended while the panel was not running'
        : '[panel] its engine answers again: the server ended meanwhile',
    );
    return entry.status;
  }
  await deps.servers.recordStarted(name, process);
  entry.log.append(
    how === 'started'
      ? `[panel] started (pid ${process.pid})`
      : how === 'took over'
        ? `[panel] took the server back at the panel's start (pid ${process.pid})`
        : `[panel] its engine answers again: the server runs on (pid ${process.pid})`,
  );
  // With done patterns it stays starting until the watcher above sees the line (it may have).
  if (donePatterns.length === 0) {
    setStatus(entry, 'running');
    if (how === 'started') tell(deps, name, 'started');
  }
  return entry.status;
}

/**
 * Calls `onMatch` once, when a line of the server's own matches one of `patterns`; never a
 * line of the panel's, which may repeat what somebody typed. Answers the end of the watch.
 */
export function watchLines(
  lines: LineMatcher,
  entry: Entry,
  patterns: readonly string[],
  onMatch: () => void,
): () => void {
  const watch = lines.watch(patterns, () => {
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
 * True when `promise` has settled already (a runtime answers a server that ended while no panel
 * ran with its exit settled): what is settled is seen before the next turn of the event loop.
 */
export async function settledAlready(promise: Promise<unknown>): Promise<boolean> {
  const turn = new Promise<false>((resolve) => {
    setImmediate(() => {
      resolve(false);
    });
  });
  return Promise.race([promise.then(() => true), turn]);
}
