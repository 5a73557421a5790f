/**
 * Atomic writes into a server's folder: content goes to a temporary file in the same folder
 * (created with O_EXCL and O_NOFOLLOW, named `<TEMP_PREFIX><run>-<random>`), is flushed, and
 * only then renamed over its name, or linked to it when nothing may be replaced; on any failure
 * the temporary file is removed and the old file is intact. `fileSink` is the one way bytes
 * flow into an open file: batched writes, each announced first so a quota can refuse it.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { RESERVED_PREFIX } from '../../../domain/paths.js';
import { at } from '../tree.js';
import { fsError } from './errors.js';
import type { ServerFolder } from './folder.js';
import type { FileOwner } from './types.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/**
 * Temporary files of uploads and saves: `<TEMP_PREFIX><run>-<random>`, where `run` is new for
 * every ServerStorage (every start of the panel). Never listed; the ones an earlier run left are
 * removed once the panel serves (`removeLeftovers`).
 */
export const TEMP_PREFIX = RESERVED_PREFIX;

/**
 * What an upload may hold in memory on its way to the disk (beside the parser's own buffer):
 * gathered while a write is under way, then written in one go.
 */
export const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;

/** A temporary file to be: its name's prefix, and the mode and owner it is given. */
export interface TempFile {
  readonly prefix: string;
  readonly mode: number;
  readonly owner: FileOwner | null;
}

/** How `writeAtomically` makes its temporary file in the server's folder. */
export const tempFile = (folder: ServerFolder, mode: number): TempFile => ({
  prefix: folder.tempPrefix,
  mode,
  owner: folder.owner(),
});

/**
 * A Writable into an open file, for `pipeline`: what arrives while a write is under way is
 * gathered, up to `highWaterMark` bytes (then the source waits), and written with one writev.
 * Short writes are continued. It never closes the handle (its owner does, after the last
 * write); Node's own file streams close the descriptor when destroyed, whatever `autoClose`
 * says, and a FileHandle lent to one cannot be closed while the stream lives.
 */
export function fileSink(
  handle: FileHandle,
  highWaterMark: number,
  beforeWrite: (bytes: number) => void = () => undefined,
): Writable {
  const writeAll = async (buffers: readonly Buffer[]): Promise<void> => {
    let pending = buffers.filter((buffer) => buffer.length > 0);
    while (pending.length > 0) {
      const { bytesWritten } = await handle.writev(pending);
      if (bytesWritten === 0) throw new Error('the file took no bytes');
      let skipped = bytesWritten;
      const rest: Buffer[] = [];
      for (const buffer of pending) {
        if (skipped >= buffer.length) skipped -= buffer.length;
        else {
          rest.push(skipped > 0 ? buffer.subarray(skipped) : buffer);
          skipped = 0;
        }
      }
      pending = rest;
    }
  };
  /** Each batch is announced to `beforeWrite` first, which may refuse it by throwing. */
  const claimed = async (buffers: readonly Buffer[]): Promise<void> => {
    beforeWrite(buffers.reduce((sum, buffer) => sum + buffer.length, 0));
    await writeAll(buffers);
  };
  const settle = (work: Promise<void>, callback: (error?: Error | null) => void): void => {
    work.then(
      () => {
        callback();
      },
      (error: unknown) => {
        callback(error instanceof Error ? error : new Error(String(error)));
      },
    );
  };
  return new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      settle(claimed([chunk]), callback);
    },
    writev(chunks, callback) {
      settle(claimed(chunks.map(({ chunk }) => chunk as Buffer)), callback);
    },
  });
}

/**
 * Writes through a temporary file in `dir`, renamed over `name` once `write` succeeded; with
 * `replace` false, an existing `name` is never replaced (409).
 */
export async function writeAtomically(
  dir: FileHandle,
  name: string,
  segments: readonly string[],
  { prefix, mode, owner }: TempFile,
  write: (handle: FileHandle) => Promise<void>,
  replace = true,
): Promise<void> {
  const temp = `${prefix}${randomBytes(8).toString('hex')}`;
  let handle: FileHandle;
  try {
    handle = await open(at(dir.fd, temp), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, mode);
  } catch (error) {
    throw fsError(error, segments);
  }
  try {
    try {
      // The server's, so that the server can change what the panel wrote for it.
      if (owner) await handle.chown(owner.uid, owner.gid);
      await write(handle);
      await handle.chmod(mode); // the umask may have taken bits away
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (replace) await rename(at(dir.fd, temp), at(dir.fd, name));
    else {
      // Never over an entry that appeared meanwhile: link(2) fails with EEXIST.
      await link(at(dir.fd, temp), at(dir.fd, name));
      await unlink(at(dir.fd, temp));
    }
    // The rename itself is only durable once the folder is flushed (a power cut, not a crash).
    await dir.sync();
  } catch (error) {
    await unlink(at(dir.fd, temp)).catch(() => undefined);
    throw fsError(error, segments);
  }
}
