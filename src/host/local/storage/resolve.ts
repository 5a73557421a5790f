/**
 * Resolution and containment: the one way a user path reaches an entry of a server's folder.
 *
 * Every user path is first reduced to segments by `userPath` (domain/paths.ts); then it is
 * resolved from a descriptor of the server directory, one segment at a time: each folder is
 * opened relative to its parent's descriptor (`/proc/self/fd/<fd>/<name>`, Linux's openat) with
 * O_NOFOLLOW, so a folder swapped for a symlink mid-way is never followed, and no check can be
 * outrun by a change on disk. Symlinks are read and followed by this code only, and only while
 * their target stays inside the directory. Files are opened with O_NOFOLLOW and O_NONBLOCK (a
 * FIFO never hangs) and checked to be regular files. A caller's guard (guard.ts) is asked about
 * every path as written and as resolved, and about what is inside a folder an operation takes.
 *
 * Errors carry the user's own paths only, never the host's.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isReserved, joinSegments, linkTarget, outside, reserved } from '../../../domain/paths.js';
import { AppError, notFound } from '../../../errors.js';
import { checkBelow, checkPaths } from '../guard.js';
import { at, changed, errnoOf, shown } from '../tree.js';
import { fsError, special } from './errors.js';
import type { ServerFolder } from './folder.js';
import type { Entry, EntryType, PathGuard } from '../../host.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Symlinks followed while resolving one path before it counts as a loop. */
const MAX_LINK_HOPS = 40;

/** A resolved place: the open folder that holds `name` (`null`: the folder is the target). */
export interface Place {
  readonly dir: FileHandle;
  readonly name: string | null;
  /** Segments of the place inside the server directory, for messages. */
  readonly segments: readonly string[];
  /** lstat of the entry, when it exists. */
  readonly stat: Stats | null;
}

/** Resolves `segments` (see {@link resolve}) and runs `work`, closing what was opened. */
export async function withPlace<T>(
  folder: ServerFolder,
  segments: readonly string[],
  followLast: boolean,
  work: (place: Place) => Promise<T>,
): Promise<T> {
  const root = folder.directory();
  let rootReal: string;
  let rootHandle: FileHandle;
  try {
    rootReal = await realpath(root);
    rootHandle = await open(rootReal, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    throw notFound('Server directory');
  }
  try {
    const place = await resolve(rootHandle, rootReal, segments, followLast);
    try {
      return await work(place);
    } finally {
      if (place.dir !== rootHandle) await place.dir.close();
    }
  } finally {
    await rootHandle.close();
  }
}

/** Resolves `segments` to a folder and runs `work` with its open descriptor. */
export async function withFolder<T>(
  folder: ServerFolder,
  segments: readonly string[],
  work: (dir: FileHandle, folder: readonly string[]) => Promise<T>,
): Promise<T> {
  return withPlace(folder, segments, true, async (place) => {
    if (place.name === null) return work(place.dir, place.segments);
    if (!place.stat) throw notFound(`Folder ${shown(place.segments)}`);
    if (!place.stat.isDirectory()) {
      throw new AppError('NOT_A_FOLDER', `${shown(place.segments)} is not a folder`);
    }
    let dir: FileHandle;
    try {
      dir = await open(at(place.dir.fd, place.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (error) {
      throw fsError(error, place.segments);
    }
    try {
      return await work(dir, place.segments);
    } finally {
      await dir.close();
    }
  });
}

/** One plain name of an entry: not empty, `.` or `..`, without a `/` or a NUL. */
export const isPlainName = (name: string): boolean =>
  name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');

/**
 * Walks `segments` from the root's descriptor. Every folder on the way is opened relative to the
 * one before with O_DIRECTORY | O_NOFOLLOW; a symlink met on the way (or last, with `followLast`)
 * is read and its target walked again from the root, only while it stays inside. A missing last
 * segment is fine (it may be created); a missing folder on the way is 404.
 */
async function resolve(
  root: FileHandle,
  rootReal: string,
  segments: readonly string[],
  followLast: boolean,
): Promise<Place> {
  // One plain name per segment, whoever the caller: `userPath` makes them so, and a caller
  // that did not use it is refused before anything is looked at (docs/testing.md).
  if (!segments.every(isPlainName)) throw outside();
  let pending = [...segments];
  let done: string[] = [];
  let dir = root;
  let hops = 0;
  const enter = async (next: FileHandle | null) => {
    if (dir !== root) await dir.close();
    dir = next ?? root;
  };
  try {
    while (pending.length > 0) {
      const name = pending[0] ?? '';
      const last = pending.length === 1;
      // The panel's temporary names, reached through a symlink (userPath refuses them as text).
      if (isReserved(name)) throw reserved();
      let stat: Stats | null;
      try {
        stat = await lstat(at(dir.fd, name));
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT') throw fsError(error, [...done, name]);
        if (!last) throw notFound(`Folder ${shown([...done, name])}`);
        stat = null;
      }
      if (stat?.isSymbolicLink() && (!last || followLast)) {
        hops += 1;
        if (hops > MAX_LINK_HOPS) {
          throw new AppError('SYMLINK_LOOP', `Too many symlinks at ${shown([...done, name])}`);
        }
        const target = await readlink(at(dir.fd, name)).catch((error: unknown) => {
          // EINVAL: no longer a symlink since the lstat above; it changed under us.
          if (errnoOf(error) === 'EINVAL') throw changed([...done, name]);
          throw fsError(error, [...done, name]);
        });
        pending = [...linkTarget(done, target, rootReal), ...pending.slice(1)];
        done = [];
        await enter(null);
        continue;
      }
      if (last) return { dir, name, segments: [...done, name], stat };
      if (!stat?.isDirectory()) {
        throw new AppError('NOT_A_FOLDER', `${shown([...done, name])} is not a folder`);
      }
      let next: FileHandle;
      try {
        next = await open(at(dir.fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        throw fsError(error, [...done, name]);
      }
      await enter(next);
      done.push(name);
      pending = pending.slice(1);
    }
    return { dir, name: null, segments: done, stat: null };
  } catch (error) {
    await enter(null);
    throw error;
  }
}

/**
 * Refuses (FILE_DENIED) an existing entry `guard` denies: at `place` and as `asked`, or where it
 * goes (`to`, for a rename or a move); for a folder, anything inside it, at both places.
 */
export async function guardEntry(
  guard: PathGuard | null,
  place: Place,
  asked: readonly string[],
  to?: { readonly asked: readonly string[]; readonly resolved: readonly string[] },
): Promise<void> {
  if (guard === null) return;
  // The server directory itself (packed whole): what is in it.
  if (place.name === null) return checkBelow(guard, place.dir, null, [place.segments]);
  const folder = place.stat?.isDirectory() ?? false;
  checkPaths(guard, [asked, place.segments], folder);
  if (to) checkPaths(guard, [to.asked, to.resolved], folder);
  if (folder) {
    await checkBelow(
      guard,
      place.dir,
      place.name,
      to ? [place.segments, to.resolved] : [place.segments],
    );
  }
}

/** The name of the existing entry at `place`: 400 for the server directory, 404 if missing. */
export function existingName(place: Place): string {
  if (place.name === null) {
    throw new AppError('VALIDATION_FAILED', 'The server directory itself cannot be changed');
  }
  if (!place.stat) throw notFound(shown(place.segments));
  return place.name;
}

/** Opens `name` in `dir` for reading if it is a regular file; never follows, never blocks. */
export async function openRegular(
  dir: FileHandle,
  name: string,
  segments: readonly string[],
): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(at(dir.fd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw fsError(error, segments);
  }
  const stat = await handle.stat();
  if (stat.isFile()) return handle;
  await handle.close();
  if (stat.isDirectory()) throw new AppError('NOT_A_FILE', `${shown(segments)} is a folder`);
  throw special(segments);
}

export function entryOf(segments: readonly string[], stat: Stats): Entry {
  const type: EntryType = stat.isSymbolicLink()
    ? 'symlink'
    : stat.isDirectory()
      ? 'folder'
      : 'file';
  return {
    name: segments.at(-1) ?? '',
    path: joinSegments(segments),
    type,
    size: type === 'folder' ? 0 : stat.size,
    modified: stat.mtime.toISOString(),
  };
}

/** lstat of an entry just written, for the answer; it may already be gone again. */
export async function statOf(
  dir: FileHandle,
  name: string,
  segments: readonly string[],
): Promise<Stats> {
  try {
    return await lstat(at(dir.fd, name));
  } catch (error) {
    throw fsError(error, segments);
  }
}
