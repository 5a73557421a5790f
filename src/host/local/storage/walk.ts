/**
 * Walks of a server's folder tree, and removal: every entry is reached through its parent's
 * descriptor (`walkBelow`, tree.ts), so a folder a running server swaps for a symlink is never
 * followed and no depth is too deep. What a removal frees is counted as `sizeOf` counts it, so
 * the books of disk use (usage.ts) move by what really left the disk.
 */
import { constants, type Stats } from 'node:fs';
import { lchown, lstat, open, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { AppError } from '../../../errors.js';
import { at, changed, errnoOf, openFolder, walkBelow, type Visitor } from '../tree.js';
import type { FileOwner } from './types.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** What a removal freed: the bytes of the files and symlinks it unlinked (as `sizeOf` counts). */
export interface Freed {
  bytes: number;
}

/**
 * Removes `name` in `parent`: a file or a symlink (never followed), or a folder with everything
 * in it, at any depth (`walkBelow`). What a running server adds meanwhile is removed too, for a
 * few rounds; past them: 409 CHANGED_CONCURRENTLY.
 */
export async function removeEntry(
  parent: FileHandle,
  name: string,
  segments: readonly string[],
  freed: Freed = { bytes: 0 },
): Promise<void> {
  for (let round = 1; ; round += 1) {
    const stat = await lstat(at(parent.fd, name)).catch(() => null);
    try {
      await unlink(at(parent.fd, name));
      if (stat && !stat.isDirectory()) freed.bytes += stat.size;
      return;
    } catch (error) {
      if (errnoOf(error) !== 'EISDIR') throw error;
    }
    const dir = await openFolder(parent, name);
    if (dir) await walkBelow(dir, remover(freed), segments);
    try {
      await rmdir(at(parent.fd, name));
      return;
    } catch (error) {
      const code = errnoOf(error);
      // ENOTDIR: swapped for a file or a symlink since; the next round unlinks it.
      if (code !== 'ENOTEMPTY' && code !== 'ENOTDIR') throw error;
      if (round === 3) throw changed(segments);
    }
  }
}

/**
 * For `walkBelow`: unlinks files and symlinks as met, adding their sizes to `freed`, and folders
 * once their content is gone.
 */
const remover = (freed: Freed): Visitor => ({
  async enter(dir, name) {
    const stat = await lstat(at(dir.fd, name)).catch(() => null);
    if (stat?.isDirectory()) return true;
    try {
      await unlink(at(dir.fd, name));
      freed.bytes += stat?.size ?? 0;
      return false;
    } catch (error) {
      if (errnoOf(error) === 'EISDIR') return true;
      if (errnoOf(error) === 'ENOENT') return false;
      throw error;
    }
  },
  async leave(dir, name) {
    await rmdir(at(dir.fd, name)).catch((error: unknown) => {
      if (errnoOf(error) !== 'ENOENT') throw error;
    });
  },
});
/** Removes without counting: the whole directory goes, and its figure with it. */
export const REMOVER = remover({ bytes: 0 });

/** Gives `directory` and everything under it (symlinks as themselves) to `owner`. */
export async function chownTree(directory: string, owner: FileOwner): Promise<void> {
  await walkTree(directory, (dir, name) =>
    lchown(at(dir.fd, name), owner.uid, owner.gid).catch(() => undefined),
  );
  await lchown(directory, owner.uid, owner.gid);
}

/**
 * Bytes of the files and symlinks under `directory`; folders' own entries are not counted (their
 * size depends on the file system and moves with every name added), nor this run's temporary
 * files and folders (extractions), whose bytes the writes under way have claimed already (usage.ts).
 */
export async function sizeOf(directory: string, ownTemporary: string): Promise<number> {
  let total = 0;
  await walkTree(directory, (_dir, name, stat) => {
    // An extraction under way (a temporary folder): its bytes are claimed already.
    if (name.startsWith(ownTemporary)) return Promise.resolve(false);
    if (!stat.isDirectory()) total += stat.size;
    return Promise.resolve();
  });
  return total;
}

/**
 * Visits every entry under `directory` (lstat: symlinks as themselves), through descriptors
 * (`walkBelow`), so a folder swapped for a symlink by a running server is never followed and no
 * depth is too deep. Entries that vanish meanwhile and folders that cannot be read are skipped; a
 * folder moved away under the walk ends it early.
 */
export async function walkTree(
  directory: string,
  /** Answers `false` for a folder not to be walked into. */
  visit: (dir: FileHandle, name: string, stat: Stats) => Promise<unknown>,
): Promise<void> {
  let root: FileHandle;
  try {
    root = await open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return;
  }
  const visitor: Visitor = {
    tolerant: true,
    async enter(dir, name) {
      const stat = await lstat(at(dir.fd, name)).catch(() => null);
      if (!stat) return false;
      const into = await visit(dir, name, stat);
      return into !== false && stat.isDirectory();
    },
  };
  await walkBelow(root, visitor, []).catch((error: unknown) => {
    if (!(error instanceof AppError)) throw error;
  });
}
