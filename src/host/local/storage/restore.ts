/**
 * Restoring a backup: the server's whole directory replaced by an archive's content, all or
 * nothing. The archive is unpacked beside the servers' folders (`RESTORING_NAME`), and only once
 * all of it is there is the old directory swapped for it by two renames; a crash between them is
 * undone at the next start (`finishRestores`), which also removes what restores left.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chown, lstat, mkdir, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../../errors.js';
import type { ArchiveLimits } from '../../host.js';
import { detectFormat } from '../archive-formats.js';
import { at, errnoOf } from '../tree.js';
import { fileSink, WRITE_BUFFER_BYTES } from './atomic.js';
import type { ServerFolder } from './folder.js';
import type { StorageLog } from './types.js';
import { unpack } from './unpack.js';
import { removeEntry } from './walk.js';

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW } = constants;

/** The folder beside the servers' where restores unpack, and put the content they replace. */
export const RESTORING_NAME = '.restoring~';

/**
 * Replaces the server's whole directory by the content of an archive (a backup's restore).
 * The archive is unpacked into a new folder beside the server's (`RESTORING_NAME` in
 * `serversDir`), with every check of `decompress`; only once all of it is there is the old
 * directory renamed away and the new one renamed into its place, the old one put back if that
 * fails. The old content is removed only after the swap. On any failure the server's directory
 * is as it was and the new folder is removed; a crash between the two renames is undone by
 * `finishRestores` at the next start. The caller makes sure the server does not run meanwhile.
 * `quota`: the most the new content may hold (413 QUOTA_EXCEEDED).
 */
export async function replaceFromArchive(
  serversDir: string,
  folder: ServerFolder,
  source: FileHandle,
  limits: ArchiveLimits,
  quota: number | null,
  progress: (written: number) => void,
): Promise<void> {
  const server = folder.server;
  const target = folder.directory();
  const restoring = path.join(serversDir, RESTORING_NAME);
  await mkdir(restoring, { recursive: true, mode: 0o700 });
  const tag = randomBytes(8).toString('hex');
  const fresh = path.join(restoring, `${server}.new-${tag}`);
  const old = path.join(restoring, `${server}.old-${tag}`);
  await mkdir(fresh, { mode: 0o700 });
  try {
    const owner = folder.owner();
    if (owner) await chown(fresh, owner.uid, owner.gid);
    const size = (await source.stat()).size;
    const head = Buffer.alloc(512);
    await source.read(head, 0, 512, 0);
    const format = detectFormat(head);
    const temp = await open(fresh, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    try {
      await unpack(source, format, size, temp, [], limits, 'kept', owner, (written) => {
        if (quota !== null && written > quota) {
          throw new AppError(
            'QUOTA_EXCEEDED',
            `The backup holds more than the server's disk limit of ${quota} bytes; nothing was restored`,
          );
        }
        progress(written);
      });
      await temp.sync().catch(() => undefined);
    } finally {
      await temp.close();
    }
    let hadOld = true;
    try {
      await rename(target, old);
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') throw error;
      hadOld = false;
    }
    try {
      await rename(fresh, target);
    } catch (error) {
      if (hadOld) await rename(old, target);
      throw error;
    }
    folder.forget();
    if (hadOld) {
      const handle = await open(restoring, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      try {
        await removeEntry(handle, path.basename(old), []);
      } catch (error) {
        folder.log.warn(
          { err: error, server },
          'could not remove the content a restore replaced; removed at the next start',
        );
      } finally {
        await handle.close();
      }
    }
  } finally {
    const handle = await open(restoring, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    try {
      if (await lstat(fresh).catch(() => null)) await removeEntry(handle, path.basename(fresh), []);
    } catch (error) {
      folder.log.warn(
        { err: error, server },
        'could not remove the folder of a restore that failed; removed at the next start',
      );
    } finally {
      await handle.close();
    }
  }
}

/**
 * The most an archive that arrives as a stream may hold beyond what it may unpack to: the
 * headers and padding of its entries (tar: 512 bytes and up to 511 of padding; zip: two headers
 * with the name), generously.
 */
const ARCHIVE_OVERHEAD_PER_ENTRY = 4096;

/**
 * `replaceFromArchive` for an archive that arrives as a stream (to a file agent on another
 * machine, docs/nodes.md): it is first written whole into the restoring folder, beside the
 * servers' folders and so on the same disk (never a small /tmp), then unpacked as there, and
 * removed in every case. A stream larger than the archive `limits` allow is 413 before it fills
 * the disk; a stream that fails leaves nothing.
 */
export async function replaceFromStream(
  serversDir: string,
  folder: ServerFolder,
  source: Readable,
  limits: ArchiveLimits,
  quota: number | null,
  progress: (written: number) => void,
): Promise<void> {
  const restoring = path.join(serversDir, RESTORING_NAME);
  await mkdir(restoring, { recursive: true, mode: 0o700 });
  const staged = path.join(restoring, `${folder.server}.archive-${randomBytes(8).toString('hex')}`);
  const most = limits.maxBytes + (limits.maxEntries + 2) * ARCHIVE_OVERHEAD_PER_ENTRY;
  const handle = await open(staged, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    let received = 0;
    await pipeline(
      source,
      // Not a file stream of Node's: one lent a FileHandle keeps it from closing.
      fileSink(handle, WRITE_BUFFER_BYTES, (bytes) => {
        received += bytes;
        if (received > most) {
          throw new AppError(
            'PAYLOAD_TOO_LARGE',
            'The archive is larger than what it may unpack to',
          );
        }
      }),
    );
    await replaceFromArchive(serversDir, folder, handle, limits, quota, progress);
  } finally {
    await handle.close().catch(() => undefined);
    await rm(staged, { force: true }).catch((error: unknown) => {
      folder.log.warn(
        { err: error, server: folder.server },
        'could not remove an archive a restore was given; removed at the next start',
      );
    });
  }
}

/**
 * Before servers start: a restore that an earlier run left between its two renames gets the
 * old directory put back (the server is as it was before the restore), and what restores left
 * (unpacked folders, replaced content) is removed. Never rejects; failures are logged.
 * `directoryOf`: a server's directory by its name.
 */
export async function finishRestores(
  serversDir: string,
  directoryOf: (name: string) => string,
  log: StorageLog,
): Promise<void> {
  const restoring = path.join(serversDir, RESTORING_NAME);
  let handle: FileHandle;
  try {
    handle = await open(restoring, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return;
  }
  try {
    for (const name of await readdir(at(handle.fd))) {
      const old = /^(.+)\.old-[0-9a-f]{16}$/.exec(name);
      try {
        if (old?.[1] !== undefined && !(await lstat(directoryOf(old[1])).catch(() => null))) {
          await rename(path.join(restoring, name), directoryOf(old[1]));
          log.warn(
            { server: old[1] },
            'a restore was cut short between its two renames: the directory from before it is back',
          );
          continue;
        }
        await removeEntry(handle, name, []);
      } catch (error) {
        log.warn({ err: error, entry: name }, 'could not remove what a restore left');
      }
    }
  } finally {
    await handle.close();
  }
}
