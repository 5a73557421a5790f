/**
 * Archives in a server's folder, for the file manager and backups: packing entries into a new
 * archive (`compress`; the whole folder for a backup, `pack`) and unpacking one into a folder
 * (`decompress`). Packing never follows a symlink (it is packed as a link), leaves out special
 * files and the panel's temporary files, and streams into a temporary file held to the quota,
 * linked into place only if nothing is there by then. Unpacking writes into a temporary folder
 * (unpack.ts) and moves its top-level entries in only once all of it is there. On any failure
 * nothing is left. Every operation that takes a `guard` refuses what it denies (403
 * FILE_DENIED, see guard.ts); packing stops and leaves nothing.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, type FileHandle } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isReserved, joinSegments } from '../../../domain/paths.js';
import { AppError } from '../../../errors.js';
import {
  archiveWriter,
  detectFormat,
  type ArchiveFormat,
  type ArchiveWriter,
} from '../archive-formats.js';
import { checkPaths, cursorAt, fileDenied } from '../guard.js';
import { at, openFolder } from '../tree.js';
import { fileSink, tempFile, WRITE_BUFFER_BYTES, writeAtomically } from './atomic.js';
import { alreadyExists, fsError } from './errors.js';
import type { ServerFolder } from './folder.js';
import { moveWithoutReplacing } from './moves.js';
import {
  entryOf,
  existingName,
  guardEntry,
  openRegular,
  statOf,
  withFolder,
  withPlace,
  type Place,
} from './resolve.js';
import type { ArchiveLimits, Entry, GuardCursor, PackOptions, PathGuard } from '../../host.js';
import type { SkipTest } from './ignore-lines.js';
import { unpack, type EntryCheck } from './unpack.js';
import { removeEntry } from './walk.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/**
 * Packs `sources` (files, folders with everything in them, symlinks as symlinks, never
 * followed; FIFOs, sockets and devices skipped) into a new archive at `destination`, each
 * under its own name (the server directory itself: its content). Streamed into a temporary
 * file beside the destination, held to `quota` as it grows (413 QUOTA_EXCEEDED), and linked
 * into place only if nothing is there by then (409 ALREADY_EXISTS); nothing is left on failure.
 */
export async function compress(
  folder: ServerFolder,
  sources: readonly (readonly string[])[],
  destination: readonly string[],
  format: 'zip' | 'tar.gz',
  quota: number | null,
  guard: PathGuard | null,
): Promise<Entry> {
  const names = new Set<string>();
  for (const source of sources) {
    await withPlace(folder, source, false, async (place) => {
      if (place.name !== null) existingName(place);
      const name = place.name ?? '';
      if (names.has(name)) {
        throw new AppError('VALIDATION_FAILED', `Two of the paths are named "${name}"`);
      }
      names.add(name);
      await guardEntry(guard, place, source);
    });
  }
  return withPlace(folder, destination, false, async (to) => {
    if (to.name === null || to.stat) throw alreadyExists(to.segments);
    checkPaths(guard, [destination, to.segments], false);
    const name = to.name;
    const reservation = await folder.reserve(quota);
    let written = 0;
    try {
      await writeAtomically(
        to.dir,
        name,
        to.segments,
        tempFile(folder, 0o644),
        async (handle) => {
          const sink = fileSink(handle, WRITE_BUFFER_BYTES, (bytes) => {
            written += bytes;
            reservation.growTo(written, true);
          });
          await writeArchive(format, sink, async (writer, add) => {
            for (const source of sources) {
              // Checked again while packing: what appeared since is refused too.
              await withPlace(folder, source, false, (place) =>
                pack(place, writer, add, {}, guard),
              );
            }
          });
        },
        false,
      );
    } catch (error) {
      reservation.release();
      throw error;
    }
    reservation.commit(written);
    return entryOf(to.segments, await statOf(to.dir, name, to.segments));
  });
}

/**
 * Writes an archive of `format` into `into`: `fill` adds the entries, each through `add`, which
 * waits for its writing and fails as soon as `into` does (the archive's limit, a full disk).
 * Resolves once `into` has taken the last byte; on a failure the archive is abandoned and the
 * failure thrown, whichever side it came from.
 */
export async function writeArchive(
  format: 'zip' | 'tar.gz',
  into: Writable,
  fill: (writer: ArchiveWriter, add: (work: Promise<void>) => Promise<void>) => Promise<void>,
): Promise<void> {
  const writer = archiveWriter(format);
  const done = pipeline(writer.output, into);
  const failed = done.then(() => new Promise<never>(() => undefined));
  // `into` may fail before any entry waits on `failed`: its failure is handled by `await done`.
  failed.catch(() => undefined);
  const add = async (work: Promise<void>): Promise<void> => {
    await Promise.race([work, failed]);
  };
  try {
    await fill(writer, add);
    writer.end();
  } catch (error) {
    writer.output.destroy();
    await done.catch(() => undefined);
    throw error;
  }
  await done;
}

/**
 * Adds one resolved source to an archive being written (see `compress`); an entry `guard`
 * denies stops it (FILE_DENIED). `add` waits for each entry's writing.
 */
export async function pack(
  place: Place,
  writer: ArchiveWriter,
  add: (work: Promise<void>) => Promise<void>,
  options: {
    readonly skip?: SkipTest | null;
    readonly packed?: PackOptions['packed'] | undefined;
  } = {},
  guard: PathGuard | null = null,
): Promise<void> {
  // Where the archive's names start inside the server directory.
  const base = place.name === null ? place.segments : place.segments.slice(0, -1);
  const visit = async (
    dir: FileHandle,
    name: string,
    inArchive: string[],
    above: GuardCursor | null,
  ): Promise<void> => {
    if (isReserved(name)) return; // the panel's temporary files, this archive's own among them
    const stat = await lstat(at(dir.fd, name)).catch(() => null);
    if (!stat) return; // gone meanwhile
    if (options.skip?.(inArchive, stat.isDirectory())) return;
    const cursor = above?.enter(name) ?? null;
    const rule = cursor?.rule(stat.isDirectory()) ?? null;
    if (rule !== null) throw fileDenied([...base, ...inArchive], rule);
    const archived = joinSegments(inArchive);
    if (stat.isSymbolicLink()) {
      const target = await readlink(at(dir.fd, name)).catch(() => null);
      if (target !== null) {
        await add(writer.symlink(archived, target, stat.mtime));
        options.packed?.('symlink', Buffer.byteLength(target));
      }
    } else if (stat.isFile()) {
      const handle = await openRegular(dir, name, inArchive).catch(() => null);
      if (!handle) return;
      try {
        const size = (await handle.stat()).size;
        const body =
          size === 0
            ? Readable.from([])
            : handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
        await add(writer.file(archived, stat.mode & 0o777, stat.mtime, size, body));
        options.packed?.('file', size);
      } finally {
        await handle.close();
      }
    } else if (stat.isDirectory()) {
      await add(writer.folder(archived, stat.mode & 0o777, stat.mtime));
      options.packed?.('folder', 0);
      const folder = await openFolder(dir, name);
      if (!folder) return;
      try {
        for (const child of await readdir(at(folder.fd))) {
          await visit(folder, child, [...inArchive, child], cursor?.live ? cursor : null);
        }
      } finally {
        await folder.close();
      }
    }
  };
  const top = guard && cursorAt(guard, base);
  if (place.name !== null) {
    await visit(place.dir, place.name, [place.name], top);
    return;
  }
  for (const child of await readdir(at(place.dir.fd))) {
    await visit(place.dir, child, [child], top);
  }
}

/**
 * Unpacks the archive at `archive` (zip, tar or tar.gz, told by its content) into the existing
 * folder `destination`. Safe by construction: every entry is written below a temporary folder
 * made there, through descriptors, never through a symlink (O_NOFOLLOW at every step, O_EXCL
 * for files); absolute names, `..`, hard links, devices and FIFOs, and symlinks whose target
 * is absolute or leaves the server directory are refused (400 naming the entry), and so is an
 * archive past `limits` (413, or 400 for the compression ratio) or the quota (413). Only when
 * all is unpacked are its top-level entries moved into `destination`, if none of their names
 * is taken there (409, nothing moved). On any failure nothing is left: the temporary folder
 * is removed (a crash leaves it to `cleanTemporaryFiles`). Answers the entries moved in.
 */
export async function decompress(
  folder: ServerFolder,
  archive: readonly string[],
  destination: readonly string[],
  limits: ArchiveLimits,
  quota: number | null,
  guard: PathGuard | null,
): Promise<Entry[]> {
  checkPaths(guard, [archive], false);
  return withPlace(folder, archive, true, async (place) => {
    if (place.name === null) throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
    checkPaths(guard, [place.segments], false);
    const source = await openRegular(place.dir, place.name, place.segments);
    try {
      const size = (await source.stat()).size;
      const head = Buffer.alloc(512);
      await source.read(head, 0, 512, 0);
      const format = detectFormat(head);
      return await withFolder(folder, destination, (dir, real) => {
        // Every entry where it would land, before it is written.
        const check = (segments: readonly string[], isFolder: boolean): void => {
          const landing = [
            [...destination, ...segments],
            [...real, ...segments],
          ];
          try {
            checkPaths(guard, landing, isFolder);
          } catch (error) {
            if (!(error instanceof AppError)) throw error;
            throw new AppError(error.code, `${error.message}; nothing was extracted`);
          }
        };
        return extract(folder, source, format, size, dir, real, limits, quota, check);
      });
    } finally {
      await source.close().catch(() => undefined);
    }
  });
}

/** The second half of `decompress`: unpacked into a temporary folder in `dir`, then moved in. */
async function extract(
  server: ServerFolder,
  source: FileHandle,
  format: ArchiveFormat,
  archiveSize: number,
  dir: FileHandle,
  folder: readonly string[],
  limits: ArchiveLimits,
  quota: number | null,
  check: EntryCheck,
): Promise<Entry[]> {
  const tempName = `${server.tempPrefix}${randomBytes(8).toString('hex')}`;
  try {
    await mkdir(at(dir.fd, tempName), { mode: 0o700 });
  } catch (error) {
    throw fsError(error, folder);
  }
  const reservation = await server.reserve(quota);
  let written = 0;
  try {
    const temp = await open(at(dir.fd, tempName), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    try {
      written = await unpack(
        source,
        format,
        archiveSize,
        temp,
        folder,
        limits,
        'inside',
        server.owner(),
        (bytes) => {
          reservation.growTo(bytes, true);
        },
        check,
      );
      // Nothing of it is moved in if one of its names is taken.
      const names = await readdir(at(temp.fd));
      for (const name of names) {
        if (await lstat(at(dir.fd, name)).catch(() => null)) {
          throw alreadyExists([...folder, name]);
        }
      }
      const moved: string[] = [];
      try {
        for (const name of names) {
          await moveWithoutReplacing(temp, name, dir, name, [...folder, name], [...folder, name]);
          moved.push(name);
        }
      } catch (error) {
        // Another write took a name meanwhile: what was moved in goes back, to be removed.
        for (const name of moved) {
          await moveWithoutReplacing(dir, name, temp, name, [], []).catch(() => undefined);
        }
        throw error;
      }
      await dir.sync().catch(() => undefined);
      reservation.commit(written);
      const result: Entry[] = [];
      for (const name of names) {
        const stat = await lstat(at(dir.fd, name)).catch(() => null);
        if (stat) result.push(entryOf([...folder, name], stat));
      }
      return result;
    } finally {
      await temp.close();
    }
  } catch (error) {
    reservation.release();
    throw error;
  } finally {
    await removeEntry(dir, tempName, folder).catch((error: unknown) => {
      server.log.warn(
        { err: error, server: server.server },
        'could not remove the temporary folder of an extraction; removed at the next start',
      );
    });
  }
}
