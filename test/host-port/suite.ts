/**
 * The frame of the conformance suite of ServerHost (src/host/host.ts): `conformance` runs a
 * group of tests once against every implementation (implementations.ts), each on a fresh machine
 * of its own; the helpers below wait and check through the port only.
 */
import assert from 'node:assert/strict';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe } from 'node:test';
import type { ConsoleEvent, ServerHost } from '../../src/host/host.js';
import type { ServerStatus } from '../../src/domain/server.js';
import { AppError, type ErrorCode } from '../../src/errors.js';
import { tarOf, type TarEntry } from '../helpers/archives.js';
import { eventually } from '../helpers/factories.js';
import { implementations, type Machine } from './implementations.js';

/** What one extraction may unpack (the port's `decompress` and `replaceFromArchive`). */
export type ArchiveLimits = Parameters<ServerHost['files']['decompress']>[3];

/**
 * Declares `title`'s tests once per implementation; `machine()` is that implementation's machine,
 * opened before the tests and closed after them (every server stopped, its data removed).
 */
export function conformance(
  title: string,
  body: (machine: () => Machine) => void,
  concern: 'files' | 'runtime' = 'files',
): void {
  for (const implementation of implementations) {
    const skip =
      implementation.skip ||
      (concern === 'runtime' ? (implementation.skipRuntime ?? false) : false);
    describe(`${title} [${implementation.name}]`, { skip }, () => {
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

/**
 * `conformance` for the suites of the runtime (lifecycle, console, recovery), which an
 * implementation that differs from another only in its files leaves out (`skipRuntime`).
 */
export const runtimeConformance = (title: string, body: (machine: () => Machine) => void): void => {
  conformance(title, body, 'runtime');
};

/** Polls `probe` until it answers something other than undefined (the helpers' `eventually`). */
export const until = <T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  ms = 20_000,
): Promise<T> => eventually(probe, what, ms);

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

/** Every byte of `stream`. */
export async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A stream of `text`, for uploads. */
export const body = (text: string): Readable => Readable.from([Buffer.from(text)]);

/** Entries of a tar archive (helpers/archives.ts writes them header by header). */
export const file = (path: string, text: string): TarEntry => ({
  path,
  type: 'File',
  body: Buffer.from(text),
});
export const folder = (path: string): TarEntry => ({ path, type: 'Directory', mode: 0o755 });
export const link = (path: string, linkpath: string): TarEntry => ({
  path,
  type: 'SymbolicLink',
  linkpath,
  mode: 0o777,
});

/** Limits that let any archive of a test through. */
export const ANY_ARCHIVE: ArchiveLimits = {
  maxBytes: 1024 * 1024,
  maxEntries: 100,
  maxRatio: Number.POSITIVE_INFINITY,
  ratioFloorBytes: 0,
};

/** Puts `archive` into the folder of the server `staging` (made if need be); answers its path. */
export async function staged(machine: Machine, name: string, archive: Buffer): Promise<string[]> {
  const { host } = machine;
  if ((await machine.records.find('staging')) === undefined) await machine.addServer('staging');
  await host.files.upload('staging', [], name, Readable.from([archive]), null);
  return [name];
}

/**
 * Replaces the server's files by `archive` (`backupFiles.replaceFromArchive`, which keeps every
 * symlink as it was: how a server's own links get into its folder without the server running),
 * from a file of the panel's own machine, as a backup in the store is; answers the progress it
 * reported.
 */
export async function restoreArchive(
  machine: Machine,
  name: string,
  archive: Buffer,
  limits: ArchiveLimits = ANY_ARCHIVE,
  quota: number | null = null,
): Promise<number[]> {
  const { host } = machine;
  const dir = await mkdtemp(path.join(tmpdir(), 'host-port-archive-'));
  const file = path.join(dir, `${name}.tar`);
  await writeFile(file, archive);
  const handle = await open(file, 'r');
  const progress: number[] = [];
  try {
    await host.backupFiles.replaceFromArchive(name, handle, limits, quota, (written) =>
      progress.push(written),
    );
  } finally {
    await handle.close();
    await rm(dir, { recursive: true, force: true });
  }
  return progress;
}

/** Replaces the server's files by a tar of `entries` (see `restoreArchive`). */
export const restoreTar = (machine: Machine, name: string, entries: TarEntry[]) =>
  restoreArchive(machine, name, tarOf(entries)).then(() => undefined);
