/**
 * Unpacking an archive below an open, empty folder, entry by entry, safe by construction: every
 * entry is written through descriptors, never through a symlink (O_NOFOLLOW at every step,
 * O_EXCL for files); hard links, devices and FIFOs are refused, and so is an archive past its
 * limits (entries, bytes, compression ratio). Where the folder goes once complete is the
 * caller's: `decompress` (archives.ts) moves it into the user's folder, `replaceFromArchive`
 * (restore.ts) swaps it for the server's whole directory.
 */
import { constants } from 'node:fs';
import { lchown, mkdir, open, symlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { linkTarget } from '../../../domain/paths.js';
import { AppError } from '../../../errors.js';
import {
  entrySegments,
  invalidArchive,
  MAX_LINK_TARGET_BYTES,
  readArchive,
  type ArchiveFormat,
} from '../archive-formats.js';
import type { ArchiveLimits } from '../../host.js';
import { at, errnoOf } from '../tree.js';
import { fileSink, WRITE_BUFFER_BYTES } from './atomic.js';
import { fsError } from './errors.js';
import type { FileOwner } from './types.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW } = constants;

/** Refuses an archive entry (its segments inside the archive) by throwing. */
export type EntryCheck = (segments: readonly string[], folder: boolean) => void;

/**
 * Unpacks every entry of the archive below the open folder `temp` (see `decompress` for what
 * is refused); `folder`: where `temp`'s content will be, inside the server directory, for the
 * symlink check and messages. Calls `claimed` with the bytes unpacked so far as they grow;
 * answers them at the end. `links`: `inside` refuses symlinks whose target is absolute or leads
 * outside the server directory (an archive a user uploads); `kept` restores every symlink as
 * the link it was (a backup holds what the folder held, SteamCMD's absolute links included).
 * A link is only ever written as a link: nothing is written through one (O_NOFOLLOW at every
 * step), and every reader of the folder refuses to follow one out (`resolve`), so a link
 * pointing out reaches nothing the server's own processes could not reach anyway.
 * Folders get their archived mode with the owner's rwx added; files theirs with rw added.
 * `check` is called with each entry's segments (below `folder`) before it is written, and may
 * refuse it by throwing.
 */
export async function unpack(
  source: FileHandle,
  format: ArchiveFormat,
  archiveSize: number,
  temp: FileHandle,
  folder: readonly string[],
  limits: ArchiveLimits,
  links: 'inside' | 'kept',
  owner: FileOwner | null,
  claimed: (written: number) => void,
  check: EntryCheck = () => undefined,
): Promise<number> {
  let written = 0;
  let entries = 0;
  const tooMany = (): AppError =>
    new AppError(
      'PAYLOAD_TOO_LARGE',
      `The archive has more than ${limits.maxEntries} entries; nothing was extracted`,
    );
  await readArchive(
    source,
    format,
    archiveSize,
    async (entry, consumed) => {
      const segments = entrySegments(entry.name);
      if (segments.length === 0) return;
      entries += 1;
      if (entries > limits.maxEntries) throw tooMany();
      check(segments, entry.type === 'folder');
      const label = JSON.stringify(entry.name);
      const refuse = (why: string): AppError =>
        invalidArchive(`Entry ${label} ${why}; nothing was extracted`);
      const tooBig = (): AppError =>
        new AppError(
          'PAYLOAD_TOO_LARGE',
          `The archive unpacks to more than ${limits.maxBytes} bytes (at ${label}); nothing was extracted`,
        );
      const claim = (bytes: number): void => {
        written += bytes;
        // A bomb is hostile (400) before it is merely too big (413).
        if (
          written > limits.ratioFloorBytes &&
          written / Math.max(1, consumed()) > limits.maxRatio
        ) {
          throw refuse(`unpacks to over ${limits.maxRatio} times the archive's size`);
        }
        if (written > limits.maxBytes) throw tooBig();
        claimed(written);
      };
      switch (entry.type) {
        case 'hardlink':
          throw refuse('is a hard link, which is never extracted');
        case 'special':
          throw refuse('is a device, FIFO or other special file, which is never extracted');
        case 'folder': {
          const made = await makeFolders(temp, segments, refuse, owner);
          try {
            if (entry.mode !== null) await made.chmod(entry.mode | 0o700);
          } finally {
            await made.close();
          }
          return;
        }
        case 'symlink': {
          const target = await entry.target();
          if (target === '' || target.includes('\0')) {
            throw refuse('is a symlink with an empty target');
          }
          if (Buffer.byteLength(target) > MAX_LINK_TARGET_BYTES) {
            throw refuse('is a symlink with a target too long');
          }
          if (links === 'inside') {
            if (path.posix.isAbsolute(target)) {
              throw refuse('is a symlink with an absolute target');
            }
            try {
              linkTarget([...folder, ...segments.slice(0, -1)], target, '/');
            } catch {
              throw refuse('is a symlink that points outside the server directory');
            }
          }
          const parent = await makeFolders(temp, segments.slice(0, -1), refuse, owner);
          const name = segments.at(-1) ?? '';
          try {
            await symlink(target, at(parent.fd, name));
            if (owner) await lchown(at(parent.fd, name), owner.uid, owner.gid);
          } catch (error) {
            if (errnoOf(error) === 'EEXIST') throw refuse('appears twice');
            throw fsError(error, folder);
          } finally {
            await parent.close();
          }
          claim(Buffer.byteLength(target));
          return;
        }
        case 'file': {
          if (
            entry.compressedSize !== null &&
            entry.size > limits.ratioFloorBytes &&
            entry.size / Math.max(1, entry.compressedSize) > limits.maxRatio
          ) {
            throw refuse(`unpacks to over ${limits.maxRatio} times its packed size`);
          }
          if (written + entry.size > limits.maxBytes) throw tooBig();
          const parent = await makeFolders(temp, segments.slice(0, -1), refuse, owner);
          const name = segments.at(-1) ?? '';
          const mode = (entry.mode ?? 0o644) | 0o600;
          let handle: FileHandle;
          try {
            handle = await open(
              at(parent.fd, name),
              O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW,
              mode,
            );
          } catch (error) {
            const code = errnoOf(error);
            if (code === 'EEXIST' || code === 'EISDIR') throw refuse('appears twice');
            throw fsError(error, folder);
          } finally {
            await parent.close();
          }
          try {
            if (owner) await handle.chown(owner.uid, owner.gid);
            await handle.chmod(mode);
            await pipeline(
              Readable.from(await entry.body()),
              fileSink(handle, WRITE_BUFFER_BYTES, claim),
            );
          } finally {
            await handle.close();
          }
          return;
        }
      }
    },
    (declared) => {
      if (declared > limits.maxEntries) throw tooMany();
    },
  );
  return written;
}

/**
 * Opens, from the extraction folder `top`, the folder `segments`, making what is missing (mode
 * 0755, given to `owner`); never through a symlink or a file (400 from `refuse`). The caller
 * closes the answer.
 */
async function makeFolders(
  top: FileHandle,
  segments: readonly string[],
  refuse: (why: string) => AppError,
  owner: FileOwner | null,
): Promise<FileHandle> {
  let dir = await open(at(top.fd), O_RDONLY | O_DIRECTORY);
  try {
    for (const name of segments) {
      let next: FileHandle | null = null;
      for (let attempt = 0; next === null; attempt += 1) {
        try {
          next = await open(at(dir.fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        } catch (error) {
          const code = errnoOf(error);
          if (code === 'ELOOP' || code === 'ENOTDIR') {
            throw refuse('would be written through a symlink or into a file');
          }
          if (code !== 'ENOENT' || attempt > 0) throw error;
          await mkdir(at(dir.fd, name), { mode: 0o755 }).catch((made: unknown) => {
            if (errnoOf(made) !== 'EEXIST') throw made;
          });
          if (owner) await lchown(at(dir.fd, name), owner.uid, owner.gid);
        }
      }
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (error) {
    await dir.close();
    throw error;
  }
}
