/**
 * The stop sequence (docs/api.md, "Processes and isolation"): the server's stop command or stop
 * signal, up to its `stopTimeoutSeconds`; then SIGTERM, and SIGKILL after TERM_GRACE_MS. An
 * install script gets no stop command, only the signals. It returns once every process of the
 * server is gone, the server recorded stopped; and it says how an exit counts: as the stop asked
 * for, or not.
 */
import { constants as osConstants } from 'node:os';
import type { ServerRecord } from '../../domain/server.js';
import { RuntimeUnavailableError, type ExitInfo, type RunningProcess } from '../runtime/runtime.js';
import { stopMethodOf } from '../../domain/stop-command.js';
import {
  lose,
  setStatus,
  tell,
  type Entry,
  type StopSignal,
  type SupervisorDeps,
} from './server-entry.js';

/** Between SIGTERM and SIGKILL (docs/api.md, "Processes and isolation"). */
const TERM_GRACE_MS = 5_000;

type StopDeps = Pick<SupervisorDeps, 'servers' | 'onEvent' | 'log'>;

export interface StopOptions {
  /** The server is started again at the panel's next start (a restart, the panel's end). */
  readonly keepDesired?: boolean;
}

/**
 * Runs the stop sequence; returns once every process of the server is gone. Must run under the
 * entry's lock. An engine that cannot be reached rejects it with RuntimeUnavailableError: the
 * server keeps the status it had, or is `unknown` when its engine went away during the stop.
 */
export async function halt(
  deps: StopDeps,
  entry: Entry,
  record: ServerRecord,
  options: StopOptions = {},
): Promise<void> {
  const process = entry.process;
  if (!process) return;
  await reaching(entry, process, 'stop', () => haltProcess(deps, entry, record, options, process));
}

/**
 * Runs `ending` (a stop or a kill of `process`); when its engine cannot be reached
 * (RuntimeUnavailableError, rethrown), nothing reached the server, which keeps the status it had.
 */
export async function reaching(
  entry: Entry,
  process: RunningProcess,
  what: 'stop' | 'kill',
  ending: () => Promise<void>,
): Promise<void> {
  const before = entry.status;
  try {
    await ending();
  } catch (error) {
    if (error instanceof RuntimeUnavailableError && entry.process === process) {
      entry.stopRequested = false;
      entry.stopSignal = null;
      entry.log.append(`[panel] the ${what} did not reach the server: ${error.message}`);
      setStatus(entry, before);
    }
    throw error;
  }
}

async function haltProcess(
  deps: StopDeps,
  entry: Entry,
  record: ServerRecord,
  options: StopOptions,
  process: RunningProcess,
): Promise<void> {
  entry.stopRequested = true;
  setStatus(entry, 'stopping');
  const exited = process.exited.then(() => true);
  // An install script is not the server: it gets no stop command, only the signals.
  const method = entry.installing ? null : stopMethodOf(record.stopCommand);
  // What the stop asks the server to end by: its signal, SIGTERM when it has no stop command.
  entry.stopSignal = method?.type === 'signal' ? method.signal : method === null ? 'SIGTERM' : null;
  if (method?.type === 'signal') {
    entry.log.append(
      method.signal === 'SIGKILL'
        ? '[panel] the stop is SIGKILL (^^C)'
        : `[panel] sent ${method.signal}; waiting up to ${record.stopTimeoutSeconds} s`,
    );
    if (method.signal === 'SIGKILL') await process.kill();
    else await process.terminate(method.signal);
    if (await within(exited, record.stopTimeoutSeconds * 1000))
      return stopped(deps, entry, record, options);
  } else if (method !== null && process.writeLine(method.command)) {
    entry.log.append(`[panel] sent the stop command; waiting up to ${record.stopTimeoutSeconds} s`);
    if (await within(exited, record.stopTimeoutSeconds * 1000))
      return stopped(deps, entry, record, options);
  }
  await process.terminate();
  if (!(await within(exited, TERM_GRACE_MS))) {
    entry.log.append('[panel] the server did not end on SIGTERM; killing it');
    await process.kill();
    await exited;
  }
  return stopped(deps, entry, record, options);
}

/**
 * The end of a stop (or kill): once the process has exited, the server is stopped and recorded
 * so. Must run under the entry's lock.
 */
export async function stopped(
  deps: StopDeps,
  entry: Entry,
  record: ServerRecord,
  options: StopOptions,
): Promise<void> {
  const process = entry.process;
  const exit = await process?.exited;
  if (process && exit?.lost === true) {
    lose(entry, process);
    throw new RuntimeUnavailableError(
      'the engine the server runs on stopped answering during the stop: whether it ended is not known',
    );
  }
  entry.process = null;
  entry.log.append('[panel] stopped');
  setStatus(entry, 'stopped');
  // A stopped install script is not a stop of the server.
  if (entry.installing === null) tell(deps, record.name, 'stopped');
  await deps.servers.recordStopped(record.name, options.keepDesired ?? false);
}

/**
 * Whether an exit is what a stop asks for: exit code 0, or the end by the signal it sent (`^C`
 * gives SIGINT), as the signal itself or as the shells' code 128 + its number (130, 143).
 */
export function endedAsAsked(exit: ExitInfo, asked: StopSignal | null): boolean {
  if (exit.outOfMemory) return false;
  if (exit.code === 0) return true;
  if (asked === null) return false;
  return exit.signal === asked || exit.code === 128 + osConstants.signals[asked];
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
