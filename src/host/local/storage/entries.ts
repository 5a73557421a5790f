/**
 * Entries of a server's folder, for the file manager: listed, created, renamed, moved and
 * deleted, one at a time or several. Nothing is ever replaced: a rename or a move onto an
 * existing entry is 409 and leaves both as they were (moves.ts); a symlink is renamed, moved or
 * deleted as itself, never its target. Bulk operations check every path before changing
 * anything, and a failure part-way says what was done before it. Every operation that takes a
 * `guard` refuses what it denies (403 FILE_DENIED, see guard.ts) before changing anything; null:
 * nothing is denied.
 */
import { constants, lstatSync, type Stats } from 'node:fs';
import { lchown, lstat, mkdir, open, readdir } from 'node:fs/promises';
import { joinSegments } from '../../../domain/paths.js';
import { AppError } from '../../../errors.js';
import { checkPaths } from '../guard.js';
import { at, shown } from '../tree.js';
import { TEMP_PREFIX } from './atomic.js';
import { alreadyExists, fsError, partly } from './errors.js';
import type { ServerFolder } from './folder.js';
import { moveWithoutReplacing } from './moves.js';
import { entryOf, existingName, guardEntry, statOf, withFolder, withPlace } from './resolve.js';
import type { Entry, EntryType, PathGuard } from '../../host.js';
import { removeEntry } from './walk.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** Entries stat'ed between two yields to the event loop while listing a folder. */
const LIST_BATCH = 500;

/** The entries of a folder: folders first, then by name; temporary files are not shown. */
export async function list(folder: ServerFolder, segments: readonly string[]): Promise<Entry[]> {
  return withFolder(folder, segments, async (dir, real) => {
    const names = (await readdir(at(dir.fd))).filter((name) => !name.startsWith(TEMP_PREFIX));
    const entries: Entry[] = [];
    // lstat is a few microseconds on a local disk; done synchronously in batches it is many
    // times faster than a thread-pool round trip per entry, and the pauses between batches
    // keep other requests flowing while a folder of 10,000 files is listed.
    for (let start = 0; start < names.length; start += LIST_BATCH) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const name of names.slice(start, start + LIST_BATCH)) {
        let stat: Stats;
        try {
          stat = lstatSync(at(dir.fd, name));
        } catch {
          continue; // removed meanwhile
        }
        const type: EntryType | null = stat.isSymbolicLink()
          ? 'symlink'
          : stat.isDirectory()
            ? 'folder'
            : stat.isFile()
              ? 'file'
              : null; // FIFOs, sockets and devices are not shown
        if (type === null) continue;
        entries.push({
          name,
          path: joinSegments([...real, name]),
          type,
          size: type === 'folder' ? 0 : stat.size,
          modified: stat.mtime.toISOString(),
        });
      }
    }
    return entries.sort(
      (a, b) =>
        Number(b.type === 'folder') - Number(a.type === 'folder') ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
  });
}

/** Creates an empty file or a folder named `name` in the folder `parent`. */
export async function createEntry(
  folder: ServerFolder,
  parent: readonly string[],
  name: string,
  type: 'file' | 'folder',
  guard: PathGuard | null,
): Promise<Entry> {
  const owner = folder.owner();
  checkPaths(guard, [[...parent, name]], type === 'folder');
  return withFolder(folder, parent, async (dir, real) => {
    const segments = [...real, name];
    checkPaths(guard, [segments], type === 'folder');
    try {
      if (type === 'folder') {
        await mkdir(at(dir.fd, name), { mode: 0o755 });
        if (owner) await lchown(at(dir.fd, name), owner.uid, owner.gid);
      } else {
        const handle = await open(
          at(dir.fd, name),
          O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW,
          0o644,
        );
        try {
          if (owner) await handle.chown(owner.uid, owner.gid);
        } finally {
          await handle.close();
        }
      }
    } catch (error) {
      throw fsError(error, segments);
    }
    const stat = await statOf(dir, name, segments);
    return {
      name,
      path: joinSegments(segments),
      type,
      size: 0,
      modified: stat.mtime.toISOString(),
    };
  });
}

/** Renames an entry inside its folder (a symlink is renamed, not its target). */
export async function renameEntry(
  folder: ServerFolder,
  segments: readonly string[],
  newName: string,
  guard: PathGuard | null,
): Promise<Entry> {
  return withPlace(folder, segments, false, async (place) => {
    const name = existingName(place);
    const target = [...place.segments.slice(0, -1), newName];
    await guardEntry(guard, place, segments, {
      asked: [...segments.slice(0, -1), newName],
      resolved: target,
    });
    await moveWithoutReplacing(place.dir, name, place.dir, newName, place.segments, target);
    return entryOf(target, await statOf(place.dir, newName, target));
  });
}

/**
 * Moves an entry with `mv` meaning: into `destination` when that is an existing folder (a
 * symlink to a folder inside counts), else to that path (its folder must exist). An existing
 * entry at the target, a symlink included: 409 (403 for a symlink that points outside), and it
 * is left as it is; a symlink is never replaced nor written through.
 */
export async function move(
  folder: ServerFolder,
  source: readonly string[],
  destination: readonly string[],
  guard: PathGuard | null,
): Promise<Entry> {
  return withPlace(folder, source, false, async (from) => {
    const name = existingName(from);
    return withPlace(folder, destination, true, async (followed) => {
      if (followed.name === null || followed.stat?.isDirectory()) {
        return withFolder(folder, destination, async (dir, real) => {
          const target = [...real, name];
          await guardEntry(guard, from, source, {
            asked: [...destination, name],
            resolved: target,
          });
          await moveWithoutReplacing(from.dir, name, dir, name, from.segments, target);
          return entryOf(target, await statOf(dir, name, target));
        });
      }
      // A new path: the destination itself, never a place a symlink there points to.
      return withPlace(folder, destination, false, async (to) => {
        if (to.name === null || to.stat) throw alreadyExists(to.segments);
        await guardEntry(guard, from, source, { asked: destination, resolved: to.segments });
        await moveWithoutReplacing(from.dir, name, to.dir, to.name, from.segments, to.segments);
        return entryOf(to.segments, await statOf(to.dir, to.name, to.segments));
      });
    });
  });
}

/**
 * Deletes a file, a symlink (not its target) or a folder with everything in it; what it frees
 * comes off the server's disk use, also when it stops part-way.
 */
export async function deleteEntry(
  folder: ServerFolder,
  segments: readonly string[],
  guard: PathGuard | null,
): Promise<void> {
  await withPlace(folder, segments, false, async (place) => {
    const name = existingName(place);
    await guardEntry(guard, place, segments);
    const freed = { bytes: 0 };
    try {
      await removeEntry(place.dir, name, place.segments, freed);
    } catch (error) {
      throw fsError(error, place.segments);
    } finally {
      folder.apply(-freed.bytes);
    }
  });
}

/**
 * Deletes several entries: every path is checked first (it exists and is not the server
 * directory: else 404 or 400 and nothing is deleted), then they are deleted in order. A path
 * inside another one of the list goes with it. A failure part-way is thrown with what was
 * deleted before it in its message; what was deleted stays deleted.
 */
export async function deleteMany(
  folder: ServerFolder,
  paths: readonly (readonly string[])[],
  guard: PathGuard | null,
): Promise<string[]> {
  const kept = withoutNested(paths);
  for (const segments of kept) {
    await withPlace(folder, segments, false, async (place) => {
      existingName(place);
      await guardEntry(guard, place, segments);
    });
  }
  const done: string[] = [];
  for (const segments of kept) {
    try {
      await deleteEntry(folder, segments, guard);
    } catch (error) {
      throw partly(error, 'deleted', done);
    }
    done.push(joinSegments(segments));
  }
  return done;
}

/**
 * Moves several entries into the existing folder `destination`. Checked first: each exists,
 * none is the server directory, two never share a name, none would land on an existing entry
 * (409) and the destination is not inside one of them (400); then moved in order. A failure
 * part-way is thrown with what was moved before it in its message; what was moved stays.
 */
export async function moveMany(
  folder: ServerFolder,
  sources: readonly (readonly string[])[],
  destination: readonly string[],
  guard: PathGuard | null,
): Promise<Entry[]> {
  const into = await withFolder(folder, destination, async (dir, real) => {
    const names = new Set<string>();
    for (const source of sources) {
      await withPlace(folder, source, false, async (place) => {
        const name = existingName(place);
        const inside = place.segments.every((segment, i) => real[i] === segment);
        if (inside) {
          throw new AppError(
            'VALIDATION_FAILED',
            `${shown(place.segments)} cannot be moved into itself`,
          );
        }
        if (names.has(name)) {
          throw new AppError('VALIDATION_FAILED', `Two of the paths are named "${name}"`);
        }
        names.add(name);
        if (await lstat(at(dir.fd, name)).catch(() => null)) throw alreadyExists([...real, name]);
        await guardEntry(guard, place, source, {
          asked: [...destination, name],
          resolved: [...real, name],
        });
      });
    }
    return real;
  });
  const moved: Entry[] = [];
  for (const source of sources) {
    try {
      moved.push(await move(folder, source, into, guard));
    } catch (error) {
      throw partly(
        error,
        'moved',
        moved.map((entry) => entry.path),
      );
    }
  }
  return moved;
}

/** The paths of a list, without those inside another one of it (they go with it). */
function withoutNested(paths: readonly (readonly string[])[]): (readonly string[])[] {
  const within = (inner: readonly string[], outer: readonly string[]): boolean =>
    inner.length >= outer.length && outer.every((segment, i) => inner[i] === segment);
  const kept: (readonly string[])[] = [];
  for (const candidate of paths) {
    if (
      paths.some(
        (other) =>
          other !== candidate && other.length < candidate.length && within(candidate, other),
      )
    )
      continue;
    if (kept.some((other) => within(candidate, other) && within(other, candidate))) continue;
    kept.push(candidate);
  }
  return kept;
}
