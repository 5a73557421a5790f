/**
 * Moves inside a server's folder that never replace what is at the target, not even an entry
 * that appears meanwhile: files and symlinks move by a hard link (which fails if the target
 * exists and never follows a symlink) and an unlink; folders by a rename over an empty
 * placeholder claimed first with mkdir. Node has no renameat2 with RENAME_NOREPLACE.
 */
import { link, lstat, mkdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { AppError } from '../../../errors.js';
import { at, errnoOf, sameIdentity, type Identity } from '../tree.js';
import { alreadyExists, fsError } from './errors.js';

/**
 * Moves `fromName` in `fromDir` to `toName` in `toDir`, never replacing an entry there, not even
 * one that appears meanwhile: rename(2) alone would replace a file, a symlink or an empty folder,
 * and Node has no renameat2 with RENAME_NOREPLACE. Files and symlinks move by a hard link, which
 * fails if the target exists (and never follows a symlink), then the source is unlinked; folders
 * by `renameFolder`.
 */
export async function moveWithoutReplacing(
  fromDir: FileHandle,
  fromName: string,
  toDir: FileHandle,
  toName: string,
  source: readonly string[],
  target: readonly string[],
): Promise<void> {
  const from = at(fromDir.fd, fromName);
  const to = at(toDir.fd, toName);
  try {
    const stat = await lstat(from);
    if (stat.isDirectory()) {
      await renameFolder(from, to);
    } else {
      await link(from, to);
      await unlink(from);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    switch (errnoOf(error)) {
      case 'EEXIST':
      case 'ENOTEMPTY':
      case 'ENOTDIR': // the claimed target became a file or a symlink meanwhile
        throw alreadyExists(target);
      case 'EINVAL':
        throw new AppError('VALIDATION_FAILED', 'A folder cannot be moved into itself');
      default:
        throw fsError(error, source);
    }
  }
}

/**
 * Renames the folder `from` to `to` only where nothing is: `to` is claimed first with mkdir,
 * which fails with EEXIST if any entry is there, and the folder is renamed over that empty
 * placeholder, which rename(2) replaces. Two moves to one name cannot both claim it. When the
 * rename fails (a folder into itself, the placeholder filled meanwhile…), the placeholder is
 * removed again if it is still the empty folder made here.
 */
export async function renameFolder(from: string, to: string): Promise<void> {
  await mkdir(to, { mode: 0o700 });
  let placeholder: Identity | null = null;
  try {
    placeholder = await lstat(to, { bigint: true });
    await rename(from, to);
  } catch (error) {
    const now = await lstat(to, { bigint: true }).catch(() => null);
    if (placeholder && now?.isDirectory() && sameIdentity(now, placeholder)) {
      await rmdir(to).catch(() => undefined);
    }
    throw error;
  }
}
