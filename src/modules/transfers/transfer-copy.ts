/**
 * The copy of a transfer (docs/nodes.md, "Transfers"), through the host port only: the old
 * node's host packs the server's folder into a file of the panel's (hashed and counted as it is
 * written), the file is read back and hashed again (what the panel holds is what was packed),
 * the new node's host replaces the server's folder there by its content, all or nothing, and
 * the copy there is packed again into nothing, counted, and compared with the first packing.
 * Each step stops when `signal` aborts: packing is cut short, unpacking loses its archive.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../errors.js';
import type { ServerBackupFiles } from '../../host/host.js';

/** What packing the server's folder measured. */
export interface PackCount {
  /** Files and symlinks. */
  readonly files: number;
  /** Entries, folders included. */
  readonly entries: number;
  /** Bytes of the files and symlink targets. */
  readonly bytes: number;
}

/** What packing into the panel's file measured, with the archive's size and SHA-256. */
export interface PackedArchive extends PackCount {
  readonly archiveBytes: number;
  readonly checksum: string;
}

/** A transfer stopped by its cancel or the panel's close. */
export class TransferAborted extends Error {}

const aborted = (signal: AbortSignal): TransferAborted =>
  signal.reason instanceof TransferAborted ? signal.reason : new TransferAborted('aborted');

/** Rejects with the abort's reason when `signal` aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw aborted(signal);
}

/** `work`, or the abort's reason as soon as `signal` aborts (what `work` does then is its own). */
export async function unlessAborted<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  throwIfAborted(signal);
  let listener: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    listener = () => {
      reject(aborted(signal));
    };
    signal.addEventListener('abort', listener, { once: true });
  });
  try {
    return await Promise.race([work, stopped]);
  } finally {
    if (listener !== undefined) signal.removeEventListener('abort', listener);
  }
}

/** Counts what `files` packs of the server's folder into `into`, telling each entry. */
async function packCounting(
  files: ServerBackupFiles,
  server: string,
  into: Writable,
  told: (count: PackCount) => void,
): Promise<PackCount> {
  let count = { files: 0, entries: 0, bytes: 0 };
  await files.packServer(server, into, {
    packed: (kind, bytes) => {
      count = {
        files: count.files + (kind === 'folder' ? 0 : 1),
        entries: count.entries + 1,
        bytes: count.bytes + bytes,
      };
      told(count);
    },
  });
  return count;
}

/** Packs the server's folder on `from` into the file `file` of the panel's own disk. */
export async function packToFile(
  from: ServerBackupFiles,
  server: string,
  file: string,
  signal: AbortSignal,
  told: (count: PackCount) => void,
): Promise<PackedArchive> {
  throwIfAborted(signal);
  const hash = createHash('sha256');
  let archiveBytes = 0;
  const counter = new Transform({
    transform: (chunk: Buffer, _encoding, callback) => {
      archiveBytes += chunk.length;
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const written = pipeline(counter, createWriteStream(file, { mode: 0o600 }));
  // Awaited below; packing sees a failure of the file too.
  written.catch(() => undefined);
  const abort = () => counter.destroy(aborted(signal));
  signal.addEventListener('abort', abort, { once: true });
  try {
    const count = await packCounting(from, server, counter, told);
    await written;
    throwIfAborted(signal);
    return { ...count, archiveBytes, checksum: hash.digest('hex') };
  } catch (error) {
    counter.destroy();
    await written.catch(() => undefined);
    throw signal.aborted ? aborted(signal) : error;
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/** The SHA-256 of the file `file`, hex. */
export async function checksumOf(file: string, signal: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(file, 'r');
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false, start: 0, signal })) {
      hash.update(chunk as Buffer);
    }
  } catch (error) {
    throw signal.aborted ? aborted(signal) : error;
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/**
 * Replaces the server's folder on `to` by the archive `file`, which must unpack to exactly what
 * was packed (`packed`: no more bytes nor entries). An abort closes the archive under the
 * unpacking, which then fails and leaves the folder there as it was.
 */
export async function unpackFromFile(
  to: ServerBackupFiles,
  server: string,
  file: string,
  packed: PackedArchive,
  signal: AbortSignal,
  progress: (written: number) => void,
): Promise<void> {
  throwIfAborted(signal);
  const handle = await open(file, 'r');
  const abort = () => {
    void handle.close().catch(() => undefined);
  };
  signal.addEventListener('abort', abort, { once: true });
  try {
    await to.replaceFromArchive(
      server,
      handle,
      {
        maxBytes: packed.bytes,
        maxEntries: packed.entries,
        maxRatio: Number.POSITIVE_INFINITY,
        ratioFloorBytes: 0,
      },
      null,
      progress,
    );
    throwIfAborted(signal);
  } catch (error) {
    throw signal.aborted ? aborted(signal) : error;
  } finally {
    signal.removeEventListener('abort', abort);
    await handle.close().catch(() => undefined);
  }
}

/**
 * Counts the server's folder on `to` (packed into nothing) and compares it with what was packed
 * on the old node: 409 INVALID_ARCHIVE naming what differs.
 */
export async function checkCopy(
  to: ServerBackupFiles,
  server: string,
  packed: PackCount,
  signal: AbortSignal,
  told: (count: PackCount) => void,
): Promise<PackCount> {
  throwIfAborted(signal);
  const sink = new Writable({
    write: (_chunk, _encoding, callback) => {
      callback();
    },
  });
  const abort = () => sink.destroy(aborted(signal));
  signal.addEventListener('abort', abort, { once: true });
  let found: PackCount;
  try {
    found = await packCounting(to, server, sink, told);
  } catch (error) {
    throw signal.aborted ? aborted(signal) : error;
  } finally {
    signal.removeEventListener('abort', abort);
  }
  const differences = (['files', 'entries', 'bytes'] as const)
    .filter((key) => found[key] !== packed[key])
    .map((key) => `${key}: ${found[key]} there, ${packed[key]} packed`);
  if (differences.length > 0) {
    throw new AppError(
      'INVALID_ARCHIVE',
      `The copy on the new node does not match the server's folder (${differences.join('; ')}): nothing was switched`,
    );
  }
  return found;
}
