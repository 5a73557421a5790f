/**
 * Single-entry changes of a remote files session (SFTP; ServerFileChannels, src/host/host.ts):
 * a folder made or removed, a file or symlink removed, an entry renamed anywhere in the server's
 * folder, a symlink read or made.
 *
 * The entry changed is never followed: a symlink is removed, renamed or replaced as itself, and
 * what it points to is untouched. Every path goes through the containment of the file manager
 * (resolve.ts); a `guard` refuses what it denies (403 FILE_DENIED) before anything is changed,
 * as written and as resolved, and for a renamed folder everything inside it at both places.
 * What a removal frees and what a new symlink holds move the books of disk use.
 */
import {
  lchown,
  mkdir,
  readlink,
  realpath,
  rename,
  rmdir,
  symlink,
  unlink,
} from 'node:fs/promises';
import path from 'node:path';
import { isReserved, linkTarget, outside, reserved } from '../../../domain/paths.js';
import { AppError, notFound } from '../../../errors.js';
import { checkPaths } from '../guard.js';
import { at, errnoOf, shown } from '../tree.js';
import { alreadyExists, fsError } from './errors.js';
import type { ServerFolder } from './folder.js';
import { moveWithoutReplacing } from './moves.js';
import { existingName, guardEntry, isPlainName, withPlace } from './resolve.js';
import type { PathGuard } from '../../host.js';

/** The mode the file manager gives the folders it makes (entries.ts). */
const NEW_FOLDER_MODE = 0o755;

const notASymlink = (segments: readonly string[]): AppError =>
  new AppError('VALIDATION_FAILED', `${shown(segments)} is not a symlink`);

/** Makes one folder, owned by the folder's owner; its parent must exist, nothing be there. */
export async function makeFolder(
  folder: ServerFolder,
  segments: readonly string[],
  guard: PathGuard | null,
): Promise<void> {
  checkPaths(guard, [segments], true);
  await withPlace(folder, segments, false, async (place) => {
    if (place.name === null || place.stat) throw alreadyExists(place.segments);
    checkPaths(guard, [place.segments], true);
    const made = at(place.dir.fd, place.name);
    try {
      await mkdir(made, { mode: NEW_FOLDER_MODE });
      const owner = folder.owner();
      if (owner) await lchown(made, owner.uid, owner.gid);
    } catch (error) {
      throw fsError(error, place.segments);
    }
  });
}

/** Removes a file, a symlink (never its target) or a FIFO, socket or device; never a folder. */
export async function removeFile(
  folder: ServerFolder,
  segments: readonly string[],
  guard: PathGuard | null,
): Promise<void> {
  await withPlace(folder, segments, false, async (place) => {
    if (place.name === null || place.stat?.isDirectory()) {
      throw new AppError('NOT_A_FILE', `${shown(place.segments)} is a folder`);
    }
    if (!place.stat) throw notFound(shown(place.segments));
    await guardEntry(guard, place, segments);
    try {
      await unlink(at(place.dir.fd, place.name));
    } catch (error) {
      throw fsError(error, place.segments);
    }
    folder.apply(-place.stat.size);
  });
}

/** Removes an empty folder (409 FOLDER_NOT_EMPTY otherwise); never a file or a symlink. */
export async function removeFolder(
  folder: ServerFolder,
  segments: readonly string[],
  guard: PathGuard | null,
): Promise<void> {
  await withPlace(folder, segments, false, async (place) => {
    const name = existingName(place);
    if (!place.stat?.isDirectory()) {
      throw new AppError('NOT_A_FOLDER', `${shown(place.segments)} is not a folder`);
    }
    checkPaths(guard, [segments, place.segments], true);
    try {
      await rmdir(at(place.dir.fd, name));
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOTEMPTY' || code === 'EEXIST') {
        throw new AppError('FOLDER_NOT_EMPTY', `${shown(place.segments)} is not empty`);
      }
      if (code === 'ENOTDIR') {
        throw new AppError('NOT_A_FOLDER', `${shown(place.segments)} is not a folder`);
      }
      throw fsError(error, place.segments);
    }
  });
}

/**
 * Renames `from` (itself, a symlink included) to the path `to`, in any folder of the server.
 * A folder never replaces anything (409 when anything is at `to`, even what appears meanwhile:
 * moves.ts). A file or symlink with `replace` takes the place of a file or symlink at `to` in one
 * rename (a folder there: 409); without, it never replaces anything either.
 */
export async function renamePath(
  folder: ServerFolder,
  from: readonly string[],
  to: readonly string[],
  replace: boolean,
  guard: PathGuard | null,
): Promise<void> {
  await withPlace(folder, from, false, async (source) => {
    const name = existingName(source);
    const moving = source.stat;
    if (!moving) throw notFound(shown(source.segments));
    await withPlace(folder, to, false, async (target) => {
      if (target.name === null) throw alreadyExists(target.segments);
      await guardEntry(guard, source, from, { asked: to, resolved: target.segments });
      if (!replace || moving.isDirectory()) {
        if (target.stat) throw alreadyExists(target.segments);
        await moveWithoutReplacing(
          source.dir,
          name,
          target.dir,
          target.name,
          source.segments,
          target.segments,
        );
        return;
      }
      const replaced = target.stat;
      if (replaced?.isDirectory()) {
        throw new AppError('ALREADY_EXISTS', `${shown(target.segments)} is a folder`);
      }
      try {
        await rename(at(source.dir.fd, name), at(target.dir.fd, target.name));
      } catch (error) {
        switch (errnoOf(error)) {
          case 'EISDIR': // a folder appeared at `to` meanwhile
          case 'ENOTEMPTY':
          case 'EEXIST':
            throw alreadyExists(target.segments);
          default:
            throw fsError(error, source.segments);
        }
      }
      // Another name of the very same file is left as it was (rename(2) does nothing then).
      const same = replaced !== null && replaced.dev === moving.dev && replaced.ino === moving.ino;
      if (replaced && !same) folder.apply(-replaced.size);
    });
  });
}

/**
 * A symlink's target as segments from the server's root: a relative target is taken from the
 * link's folder, an absolute one must name a place inside the server's directory; one leading
 * out is 403 PATH_OUTSIDE, one naming a temporary file 400. Not a symlink: 400.
 */
export async function readLink(
  folder: ServerFolder,
  segments: readonly string[],
  guard: PathGuard | null,
): Promise<string[]> {
  let rootReal: string;
  try {
    rootReal = await realpath(folder.directory());
  } catch {
    throw notFound('Server directory');
  }
  return withPlace(folder, segments, false, async (place) => {
    if (place.name === null) throw notASymlink(place.segments);
    if (!place.stat) throw notFound(shown(place.segments));
    if (!place.stat.isSymbolicLink()) throw notASymlink(place.segments);
    checkPaths(guard, [segments, place.segments], false);
    let target: string;
    try {
      target = await readlink(at(place.dir.fd, place.name));
    } catch (error) {
      if (errnoOf(error) === 'EINVAL') throw notASymlink(place.segments);
      throw fsError(error, place.segments);
    }
    const leadsTo = linkTarget(place.segments.slice(0, -1), target, rootReal);
    if (leadsTo.some(isReserved)) throw reserved();
    return leadsTo;
  });
}

/**
 * Makes a symlink at `link` to `target` (segments from the server's root, plain names, which
 * need not exist), stored relative to the link's folder so that it leads to the same place
 * wherever the server's folder is; it belongs to the folder's owner. Nothing may be at `link`.
 */
export async function makeLink(
  folder: ServerFolder,
  link: readonly string[],
  target: readonly string[],
  guard: PathGuard | null,
): Promise<void> {
  if (!target.every(isPlainName)) throw outside();
  if (target.some(isReserved)) throw reserved();
  checkPaths(guard, [link], false);
  await withPlace(folder, link, false, async (place) => {
    if (place.name === null || place.stat) throw alreadyExists(place.segments);
    checkPaths(guard, [place.segments], false);
    const from = `/${place.segments.slice(0, -1).join('/')}`;
    const stored = path.posix.relative(from, `/${target.join('/')}`) || '.';
    const made = at(place.dir.fd, place.name);
    try {
      await symlink(stored, made);
    } catch (error) {
      throw fsError(error, place.segments);
    }
    folder.apply(Buffer.byteLength(stored));
    const owner = folder.owner();
    try {
      if (owner) await lchown(made, owner.uid, owner.gid);
    } catch (error) {
      throw fsError(error, place.segments);
    }
  });
}
