/**
 * Attributes as a remote files session (SFTP) sees and changes them: an entry's stat in the
 * port's words (EntryStat), and changes of size, mode and times. Changes are made through an
 * open descriptor, never through a path, so an entry a running server swaps for a symlink
 * meanwhile is never followed out; growth of a file's size is claimed from the quota first.
 */
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { AppError } from '../../../errors.js';
import type { ServerFolder } from './folder.js';
import type { AttributeChanges, EntryStat, EntryType } from '../../host.js';

/** The permission bits a session may set: the server's user may have no more. */
const SETTABLE_MODE = 0o777;

/** The mode the file manager gives the files it makes (entries.ts), and so do channels. */
export const NEW_FILE_MODE = 0o644;

export function entryStatOf(stat: Stats): EntryStat {
  const type: EntryType | 'other' = stat.isSymbolicLink()
    ? 'symlink'
    : stat.isDirectory()
      ? 'folder'
      : stat.isFile()
        ? 'file'
        : 'other';
  return {
    type,
    size: stat.size,
    mode: stat.mode & 0o7777,
    accessed: stat.atime,
    modified: stat.mtime,
  };
}

/** Whether `changes` asks for anything at all. */
export const changesAnything = (changes: AttributeChanges): boolean =>
  changes.mode !== undefined ||
  changes.size !== undefined ||
  changes.accessed !== undefined ||
  changes.modified !== undefined;

/**
 * Refuses what no entry may be given, before anything is changed: a mode with bits past 0o777
 * (setuid, setgid, sticky, or a file type: 403 MODE_REFUSED), a size that is not a whole number
 * of bytes, a time that is not one (400).
 */
export function checkChanges(changes: AttributeChanges): void {
  const { mode, size, accessed, modified } = changes;
  if (
    mode !== undefined &&
    (!Number.isInteger(mode) || mode < 0 || (mode & ~SETTABLE_MODE) !== 0)
  ) {
    const shownMode = Number.isInteger(mode) && mode >= 0 ? `0${mode.toString(8)}` : String(mode);
    throw new AppError(
      'MODE_REFUSED',
      `Mode ${shownMode} may not be set: only the permission bits (0777 at most) may be`,
    );
  }
  if (size !== undefined && (!Number.isSafeInteger(size) || size < 0)) {
    throw new AppError('VALIDATION_FAILED', 'A size is a whole number of bytes, 0 or more');
  }
  for (const time of [accessed, modified]) {
    if (time !== undefined && Number.isNaN(time.getTime())) {
      throw new AppError('VALIDATION_FAILED', 'A time must be a valid date');
    }
  }
}

/**
 * Applies checked `changes` to the open entry `handle`: the size first (a regular file opened
 * for writing), then the mode, then the times, so that cutting the file does not move the
 * modification time it is given.
 */
export async function applyChanges(handle: FileHandle, changes: AttributeChanges): Promise<void> {
  if (changes.size !== undefined) await handle.truncate(changes.size);
  if (changes.mode !== undefined) await handle.chmod(changes.mode);
  if (changes.accessed !== undefined || changes.modified !== undefined) {
    const now = await handle.stat();
    await handle.utimes(changes.accessed ?? now.atime, changes.modified ?? now.mtime);
  }
}

/**
 * Runs `work`, which changes the folder by `growth` bytes: a growth is claimed from `quota`
 * first (413 QUOTA_EXCEEDED, `work` not run), a shrink is booked once done.
 */
export async function withGrowth(
  folder: ServerFolder,
  quota: number | null,
  growth: number,
  work: () => Promise<void>,
): Promise<void> {
  if (growth <= 0) {
    await work();
    folder.apply(growth);
    return;
  }
  const reservation = await folder.reserve(quota);
  try {
    reservation.growTo(growth);
    await work();
  } catch (error) {
    reservation.release();
    throw error;
  }
  reservation.commit(growth);
}
