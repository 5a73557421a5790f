// Small helpers shared by the benchmark: time, ports, bounded waiting, child processes.
import process from 'node:process';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

/** Milliseconds on the monotonic clock. */
export const nowMs = () => performance.now();

/** A TCP port that is free on loopback right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => {
        resolve(port);
      });
    });
  });
}

/**
 * Calls `check` until it returns something other than undefined, at most until `timeoutMs`;
 * throws with `what` on timeout. Every wait in the benchmark is bounded this way.
 */
export async function waitFor(what, check, { timeoutMs, intervalMs = 20 }) {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (nowMs() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Resolves with the exit of `child`, or false after `ms`. */
export function exitWithin(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves with how long the exit took, in ms. */
export async function stopChild(child, graceMs = 10_000) {
  const started = nowMs();
  if (child.exitCode !== null || child.signalCode !== null) return 0;
  child.kill('SIGTERM');
  if (!(await exitWithin(child, graceMs))) {
    child.kill('SIGKILL');
    await exitWithin(child, 5_000);
    return null;
  }
  return nowMs() - started;
}

/** Runs `tasks` (functions returning promises) with at most `limit` at once. */
export async function pool(limit, tasks) {
  const results = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

export const round = (value, digits = 1) =>
  value === null || value === undefined || Number.isNaN(value)
    ? null
    : Math.round(value * 10 ** digits) / 10 ** digits;

export const MiB = 1024 * 1024;

/** Progress goes to standard error, so standard output stays clean for a results dump. */
export function log(message) {
  const seconds = (process.uptime() | 0).toString().padStart(3);
  process.stderr.write(`[bench ${seconds}s] ${message}\n`);
}
