/**
 * A file's content, for the file manager: opened for download, read as text, saved, uploaded.
 * Reads follow symlinks that stay inside and open regular files only (a FIFO never hangs);
 * writes go through a temporary file renamed into place when complete (atomic.ts), so a failed
 * or aborted write leaves the old file intact and nothing behind, and are held to the server's
 * disk quota before the bytes reach the disk. Every operation that takes a `guard` refuses what
 * it denies (403 FILE_DENIED, see guard.ts) before changing anything; null: nothing is denied.
 */
import { lstat, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../../errors.js';
import { openedFile } from '../../../range-stream.js';
import { checkPaths } from '../guard.js';
import { at, shown } from '../tree.js';
import { fileSink, tempFile, WRITE_BUFFER_BYTES, writeAtomically } from './atomic.js';
import { binary, special } from './errors.js';
import type { ServerFolder } from './folder.js';
import { entryOf, openRegular, statOf, withFolder, withPlace } from './resolve.js';
import type { Entry, OpenedFile, PathGuard } from '../../host.js';

/** A regular file opened on this machine: its handle, for the caller to close. */
interface OpenHandle {
  readonly handle: FileHandle;
  readonly name: string;
  readonly size: number;
  readonly modified: Date;
}

/** Opens a regular file for reading (following symlinks that stay inside), as the port says. */
export async function openFile(
  folder: ServerFolder,
  segments: readonly string[],
  guard: PathGuard | null,
): Promise<OpenedFile> {
  const { handle, ...file } = await openHandle(folder, segments, guard);
  return openedFile(handle, file);
}

/** Opens a regular file (following symlinks that stay inside); the caller closes the handle. */
async function openHandle(
  folder: ServerFolder,
  segments: readonly string[],
  guard: PathGuard | null,
): Promise<OpenHandle> {
  checkPaths(guard, [segments], false);
  return withPlace(folder, segments, true, async (place) => {
    if (place.name === null) throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
    checkPaths(guard, [place.segments], false);
    const handle = await openRegular(place.dir, place.name, place.segments);
    const stat = await handle.stat().catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    return { handle, name: place.name, size: stat.size, modified: stat.mtime };
  });
}

/** A text file's content: UTF-8 only (else 400), at most `maxBytes` (else 413). */
export async function readText(
  folder: ServerFolder,
  segments: readonly string[],
  maxBytes: number,
  guard: PathGuard | null,
): Promise<string> {
  const file = await openHandle(folder, segments, guard);
  try {
    if (file.size > maxBytes) {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `The file is larger than ${maxBytes} bytes; download it instead`,
      );
    }
    const buffer = Buffer.alloc(file.size);
    const { bytesRead } = await file.handle.read(buffer, 0, file.size, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (bytes.includes(0)) throw binary();
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw binary();
    }
  } finally {
    await file.handle.close();
  }
}

/**
 * Replaces (or creates) a file's content atomically: a temporary file in the same folder,
 * written, given the old file's mode, flushed, then renamed over it. The folder must exist.
 * Held to `quota` bytes for the whole folder (null: none), counting only the growth (new size
 * − old size): past it, 413 QUOTA_EXCEEDED before anything is written. A save that does not
 * grow the file is never refused.
 */
export async function writeText(
  folder: ServerFolder,
  segments: readonly string[],
  content: string,
  quota: number | null,
  guard: PathGuard | null,
): Promise<Entry> {
  checkPaths(guard, [segments], false);
  return withPlace(folder, segments, true, async (place) => {
    const name = place.name;
    if (name === null) throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
    if (place.stat?.isDirectory()) throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
    if (place.stat && !place.stat.isFile()) throw special(place.segments);
    checkPaths(guard, [place.segments], false);
    const mode = place.stat ? place.stat.mode & 0o7777 : 0o644;
    const growth = Buffer.byteLength(content, 'utf8') - (place.stat?.size ?? 0);
    const reservation = await folder.reserve(quota);
    try {
      reservation.growTo(growth);
      await writeAtomically(
        place.dir,
        name,
        place.segments,
        tempFile(folder, mode),
        async (handle) => {
          await handle.writeFile(content, 'utf8');
        },
      );
    } catch (error) {
      reservation.release();
      throw error;
    }
    reservation.commit(growth);
    return entryOf(place.segments, await statOf(place.dir, name, place.segments));
  });
}

/**
 * Streams `source` into the file `name` in the folder `parent`, replacing an existing file only
 * once the upload is complete. Over `maxBytes`: 413 and nothing is left behind; an aborted
 * source leaves nothing behind either, and the previous file intact. Held to `quota` bytes for
 * the whole folder (null: none): the growth over the replaced file is claimed as the bytes
 * arrive, before they are written, and the first byte past it aborts the upload with 413
 * QUOTA_EXCEEDED, leaving nothing behind.
 */
export async function upload(
  folder: ServerFolder,
  parent: readonly string[],
  name: string,
  source: Readable,
  maxBytes: number | null,
  quota: number | null,
  guard: PathGuard | null,
): Promise<Entry> {
  checkPaths(guard, [[...parent, name]], false);
  return withFolder(folder, parent, async (dir, folderSegments) => {
    const segments = [...folderSegments, name];
    checkPaths(guard, [segments], false);
    const existing = await lstat(at(dir.fd, name)).catch(() => null);
    if (existing?.isDirectory()) throw new AppError('NOT_A_FILE', `${shown(segments)} is a folder`);
    if (existing && !existing.isFile() && !existing.isSymbolicLink()) throw special(segments);
    const mode = existing?.isFile() ? existing.mode & 0o7777 : 0o644;
    // What the upload replaces: a file, or a symlink (itself, never its target).
    const replaced = existing?.size ?? 0;
    let written = 0;
    const reservation = await folder.reserve(quota);
    const claim = (bytes: number): void => {
      written += bytes;
      reservation.growTo(written - replaced, true);
    };
    let cutShort = false;
    source.once('error', () => {
      cutShort = true;
    });
    await writeAtomically(dir, name, segments, tempFile(folder, mode), async (handle) => {
      // Piped straight into the temporary file: while one write is on its way to the disk,
      // what arrives meanwhile is gathered (up to WRITE_BUFFER_BYTES, then the source waits)
      // and written with the next single writev, so the network and the disk overlap and a
      // gigabyte takes a few thousand writes, not one per socket read.
      if (maxBytes !== null) {
        const limit = maxBytes;
        let written = 0;
        source.on('data', (chunk: Buffer) => {
          written += chunk.length;
          if (written > limit) {
            source.destroy(
              new AppError('PAYLOAD_TOO_LARGE', `Files may be at most ${limit} bytes`),
            );
          }
        });
      }
      await pipeline(source, fileSink(handle, WRITE_BUFFER_BYTES, claim));
      // A parser that stopped at its own limit ends the stream early instead of failing.
      if ((source as { truncated?: boolean }).truncated === true) {
        throw new AppError('PAYLOAD_TOO_LARGE', 'The file is larger than the upload limit');
      }
    }).catch((error: unknown) => {
      reservation.release();
      if (cutShort && !(error instanceof AppError)) {
        throw new AppError('INVALID_UPLOAD', 'The upload ended before the file was complete');
      }
      throw error;
    });
    reservation.commit(written - replaced);
    return entryOf(segments, await statOf(dir, name, segments));
  });
}
