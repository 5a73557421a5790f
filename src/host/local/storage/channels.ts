/**
 * The files as a remote files session (SFTP) looks at them (ServerFileChannels,
 * src/host/host.ts): an entry's attributes, where a path really leads, a folder read in batches
 * as the client asks, and attribute changes by path. File channels are file-channel.ts's, the
 * single-entry changes entry-changes.ts's.
 *
 * Every path goes through the containment of the file manager (resolve.ts); the panel's
 * temporary names are never listed nor reachable. A `guard` refuses (403 FILE_DENIED) a path it
 * denies, as written and as resolved: a folder read, an entry stat'ed or changed; what a folder
 * holds is listed whatever the guard says, as the file manager's listing shows it.
 */
import { constants, lstatSync } from 'node:fs';
import { open, opendir, type FileHandle } from 'node:fs/promises';
import { isReserved } from '../../../domain/paths.js';
import { AppError, notFound } from '../../../errors.js';
import { checkPaths } from '../guard.js';
import { at, shown } from '../tree.js';
import {
  applyChanges,
  changesAnything,
  checkChanges,
  entryStatOf,
  withGrowth,
} from './attributes.js';
import { fsError, special } from './errors.js';
import type { ServerFolder } from './folder.js';
import { withFolder, withPlace } from './resolve.js';
import type { AttributeChanges, EntryStat, NamedStat, PathGuard } from '../../host.js';

const { O_RDONLY, O_WRONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Entries the folder's reader fetches from the kernel at a time, at most. */
const DIR_BUFFER = 128;

/**
 * An entry's attributes; `follow`: through a final symlink, which must stay inside (403), else
 * the symlink itself. A dangling symlink followed is 404.
 */
export async function stat(
  folder: ServerFolder,
  segments: readonly string[],
  follow: boolean,
  guard: PathGuard | null,
): Promise<EntryStat> {
  return withPlace(folder, segments, follow, async (place) => {
    const found = place.name === null ? await place.dir.stat() : place.stat;
    if (!found) throw notFound(shown(place.segments));
    checkPaths(guard, [segments, place.segments], found.isDirectory());
    return entryStatOf(found);
  });
}

/**
 * Where `segments` lead once every symlink on the way is followed (403 when one leads out). The
 * last one may be missing (a name about to be made), a folder on the way may not (404).
 */
export function realPath(folder: ServerFolder, segments: readonly string[]): Promise<string[]> {
  return withPlace(folder, segments, true, (place) => Promise.resolve([...place.segments]));
}

/**
 * The entries of a folder (symlinks as themselves, FIFOs, sockets and devices as `other`), in
 * batches of at most `batch`, each read and stat'ed only when the consumer asks for it, so a
 * folder of any size is never held whole. The folder is resolved at the first `next()`, which
 * rejects when it is missing (404), not a folder (400 NOT_A_FOLDER), outside (403) or denied;
 * `return()` ends the reading early and closes the folder.
 */
export async function* readFolder(
  folder: ServerFolder,
  segments: readonly string[],
  batch: number,
  guard: PathGuard | null,
): AsyncGenerator<readonly NamedStat[], void, undefined> {
  if (!Number.isSafeInteger(batch) || batch < 1) {
    throw new AppError('VALIDATION_FAILED', 'A batch holds at least one entry');
  }
  checkPaths(guard, [segments], true);
  // A descriptor of the reading's own: withFolder closes its own once resolving is done.
  const dir: FileHandle = await withFolder(folder, segments, async (resolved, real) => {
    checkPaths(guard, [real], true);
    try {
      return await open(at(resolved.fd), O_RDONLY | O_DIRECTORY);
    } catch (error) {
      throw fsError(error, real);
    }
  });
  try {
    const names = await opendir(at(dir.fd), { bufferSize: Math.min(batch, DIR_BUFFER) });
    try {
      let found: NamedStat[] = [];
      for (let entry = await names.read(); entry !== null; entry = await names.read()) {
        if (isReserved(entry.name)) continue;
        // A few microseconds on a local disk: a thread-pool round trip per entry costs more.
        const entryStat = lstatSync(at(dir.fd, entry.name), { throwIfNoEntry: false });
        if (!entryStat) continue; // removed meanwhile
        found.push({ name: entry.name, ...entryStatOf(entryStat) });
        if (found.length >= batch) {
          yield found;
          found = [];
        }
      }
      if (found.length > 0) yield found;
    } finally {
      await names.close();
    }
  } finally {
    await dir.close();
  }
}

/**
 * Changes an entry's size, mode or times (see attributes.ts), following a final symlink that
 * stays inside: through a descriptor opened without following, so nothing outside is ever
 * changed. Its size only for a regular file (growth counted against `quota`); a FIFO, socket or
 * device is never opened (400 SPECIAL_FILE); the server directory itself is not changed (400).
 */
export async function setAttributes(
  folder: ServerFolder,
  segments: readonly string[],
  changes: AttributeChanges,
  quota: number | null,
  guard: PathGuard | null,
): Promise<void> {
  checkChanges(changes);
  await withPlace(folder, segments, true, async (place) => {
    if (place.name === null) {
      if (!changesAnything(changes)) return;
      throw new AppError('VALIDATION_FAILED', 'The server directory itself cannot be changed');
    }
    const found = place.stat;
    if (!found) throw notFound(shown(place.segments));
    const isFolder = found.isDirectory();
    checkPaths(guard, [segments, place.segments], isFolder);
    if (!found.isFile() && !isFolder) throw special(place.segments);
    if (!changesAnything(changes)) return;
    const { size } = changes;
    if (size !== undefined && isFolder) {
      throw new AppError('NOT_A_FILE', `${shown(place.segments)} is a folder: it has no size`);
    }
    const flags = size !== undefined ? O_WRONLY : isFolder ? O_RDONLY | O_DIRECTORY : O_RDONLY;
    let handle: FileHandle;
    try {
      handle = await open(at(place.dir.fd, place.name), flags | O_NOFOLLOW | O_NONBLOCK);
    } catch (error) {
      throw fsError(error, place.segments);
    }
    try {
      const now = await handle.stat();
      // Swapped for something else since it was looked at.
      if (!now.isFile() && !now.isDirectory()) throw special(place.segments);
      await withGrowth(folder, quota, size === undefined ? 0 : size - now.size, () =>
        applyChanges(handle, changes),
      );
    } catch (error) {
      throw fsError(error, place.segments);
    } finally {
      await handle.close();
    }
  });
}
