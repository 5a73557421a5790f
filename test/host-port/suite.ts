/**
 * The frame of the conformance suite of ServerHost (src/host/host.ts): `conformance` runs a
 * group of tests once against every implementation (implementations.ts), each on a fresh machine
 * of its own; the helpers below wait and check through the port only.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe } from 'node:test';
import type { ConsoleEvent, ServerHost } from '../../src/host/host.js';
import type { ServerStatus } from '../../src/domain/server.js';
import { AppError, type ErrorCode } from '../../src/errors.js';
import { implementations, type Machine } from './implementations.js';

/**
 * Declares `title`'s tests once per implementation; `machine()` is that implementation's machine,
 * opened before the tests and closed after them (every server stopped, its data removed).
 */
export function conformance(title: string, body: (machine: () => Machine) => void): void {
  for (const implementation of implementations) {
    describe(`${title} [${implementation.name}]`, { skip: implementation.skip }, () => {
      let opened: Machine | undefined;
      before(async () => {
        opened = await implementation.open();
      });
      after(() => opened?.close());
      body(() => {
        if (opened === undefined) throw new Error('the machine is not open');
        return opened;
      });
    });
  }
}

/** Polls `probe` until it answers something other than undefined; fails after `ms`. */
export async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Asserts that `work` rejects with an AppError of `code`. */
export async function rejectsWith(work: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof AppError, `expected an AppError ${code}, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

/** The lines of the server's console history. */
export const historyOf = (host: ServerHost, name: string): string[] =>
  host
    .console(name)
    .history()
    .map((line) => line.line);

/** Waits for a line of the server's console history that contains `text`; answers it. */
export const printed = (host: ServerHost, name: string, text: string, ms?: number) =>
  until(
    () => historyOf(host, name).find((line) => line.includes(text)),
    `"${text}" in the console of ${name}`,
    ms,
  );

/** Waits until the server's status is `status`. */
export const reaches = (host: ServerHost, name: string, status: ServerStatus) =>
  until(
    () => (host.state(name).status === status ? true : undefined),
    `${name} to be ${status} (it is ${host.state(name).status})`,
  );

/** Starts the server and waits until it runs and its stand-in game server said it is up. */
export async function started(host: ServerHost, name: string): Promise<void> {
  const answer = await host.start(name);
  assert.ok(answer === 'starting' || answer === 'running', `start answered ${answer}`);
  await reaches(host, name, 'running');
  await printed(host, name, 'Done! pid=');
}

/** What a console listener hears until `stop` is called. */
export interface Heard {
  readonly events: ConsoleEvent[];
  /** The statuses heard, in order. */
  statuses(): ServerStatus[];
  /** The lines heard, every batch's in order. */
  lines(): string[];
  stop(): void;
}

export function listen(host: ServerHost, name: string): Heard {
  const events: ConsoleEvent[] = [];
  const stop = host.console(name).subscribe((event) => events.push(event));
  return {
    events,
    statuses: () => events.flatMap((event) => (event.type === 'status' ? [event.status] : [])),
    lines: () => events.flatMap((event) => (event.type === 'log' ? event.lines : [])),
    stop,
  };
}

/** Waits until `heard` has heard `status` (listeners hear in batches, after the change). */
export const hears = (heard: Heard, status: ServerStatus) =>
  until(() => (heard.statuses().includes(status) ? true : undefined), `${status} heard`);
