/**
 * Descriptors and walks of a server's folder tree: every name is opened relative to its parent's
 * descriptor (`/proc/self/fd/<fd>/<name>`, Linux's openat) and never through a symlink, so a
 * folder a running server swaps for a symlink is never followed and no depth is too deep.
 */
import type { FileHandle } from 'node:fs/promises';
import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { joinSegments } from '../../domain/paths.js';
import { AppError } from '../../errors.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** The path of an open descriptor, or of `name` inside the folder it is. */
export const at = (fd: number, name?: string): string =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

/** A path inside the server directory as messages show it: `"/a/b"`. */
export const shown = (segments: readonly string[]): string => `"/${joinSegments(segments)}"`;

export const changed = (segments: readonly string[]): AppError =>
  new AppError('CHANGED_CONCURRENTLY', `${shown(segments)} changed while being used`);

export function errnoOf(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** What a folder is, whatever its name: its device and inode. */
export interface Identity {
  readonly dev: bigint;
  readonly ino: bigint;
}

export const sameIdentity = (a: Identity, b: Identity): boolean =>
  a.dev === b.dev && a.ino === b.ino;

export interface Visitor {
  /** Skip folders that cannot be opened or read, instead of failing. */
  readonly tolerant?: boolean;
  /**
   * Each entry of a folder, with that folder open; answers whether to walk into it. `folder`:
   * the names from the top of the walk to that folder.
   */
  enter(dir: FileHandle, name: string, folder: readonly string[]): Promise<boolean>;
  /** A folder walked into, once its content is done, with its parent open again. */
  leave?(dir: FileHandle, name: string, folder: readonly string[]): Promise<void>;
}

/** Opens the folder `name` in `dir`, never through a symlink; null when gone or not a folder. */
export async function openFolder(dir: FileHandle, name: string): Promise<FileHandle | null> {
  try {
    return await open(at(dir.fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return null;
    throw error;
  }
}

/**
 * Walks the tree below the folder `top` depth first, at any depth, with three descriptors open
 * at most (the current folder's, the next one's while it is entered, and readdir's own): each
 * folder's names are read at once and its descriptor is closed on the way down; on the way up
 * the parent is opened again through `..` and must be the very folder that was left (device and
 * inode), else a folder was moved under the walk and it stops: 409 CHANGED_CONCURRENTLY naming
 * `segments`. Every name is relative to a descriptor, so no path ever nears PATH_MAX. Takes `top`
 * over and closes it.
 */
export async function walkBelow(
  top: FileHandle,
  visitor: Visitor,
  segments: readonly string[],
): Promise<void> {
  interface Level {
    readonly names: string[];
    index: number;
    readonly identity: Identity;
  }
  const levelOf = async (dir: FileHandle): Promise<Level> => {
    const names = await readdir(at(dir.fd));
    const { dev, ino } = await dir.stat({ bigint: true });
    return { names, index: 0, identity: { dev, ino } };
  };
  /** The folders above the current one, each with the name of the one entered from it. */
  const above: { readonly level: Level; readonly child: string }[] = [];
  let dir = top;
  try {
    let level = await levelOf(dir);
    for (;;) {
      const name = level.names[level.index];
      if (name !== undefined) {
        level.index += 1;
        const folder = above.map((up) => up.child);
        if (!(await visitor.enter(dir, name, folder))) continue;
        const child = await openFolder(dir, name).catch((error: unknown) => {
          if (visitor.tolerant) return null;
          throw error;
        });
        if (!child) continue;
        let inner: Level;
        try {
          inner = await levelOf(child);
        } catch (error) {
          await child.close();
          if (visitor.tolerant) continue;
          throw error;
        }
        above.push({ level, child: name });
        const parent = dir;
        dir = child;
        level = inner;
        await parent.close();
        continue;
      }
      const up = above.pop();
      if (!up) return;
      const parent = await reopenParent(dir, up.level.identity, segments);
      const done = dir;
      dir = parent;
      level = up.level;
      await done.close();
      await visitor.leave?.(
        dir,
        up.child,
        above.map((level) => level.child),
      );
    }
  } finally {
    await dir.close();
  }
}

/** The parent of the open folder `dir`, through `..`, if it is still the folder `expected`. */
async function reopenParent(
  dir: FileHandle,
  expected: Identity,
  segments: readonly string[],
): Promise<FileHandle> {
  const parent = await open(`${at(dir.fd)}/..`, O_RDONLY | O_DIRECTORY).catch(() => null);
  if (parent) {
    const identity = await parent.stat({ bigint: true }).catch(() => null);
    if (identity && sameIdentity(identity, expected)) return parent;
    await parent.close();
  }
  throw changed(segments);
}
