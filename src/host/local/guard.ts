/**
 * What a caller may not touch in a server's folder: its template's file deny list, for everyone
 * but admins (src/templates/denylist.ts builds one; the files service decides who gets one). The
 * storage asks it about every path an operation reads or writes, as the caller wrote it and as
 * it resolves through symlinks, and about everything inside a folder that is renamed, moved,
 * deleted or packed, or that an archive would unpack: a refusal is 403 FILE_DENIED naming the
 * path and the rule, before anything is changed (packing stops and leaves nothing).
 */
import type { FileHandle } from 'node:fs/promises';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { isReserved, joinSegments } from '../../domain/paths.js';
import { AppError } from '../../errors.js';
import type { GuardCursor, PathGuard } from '../host.js';
import { at, openFolder, walkBelow, type Visitor } from './tree.js';

const { O_RDONLY, O_DIRECTORY } = constants;

/** 403: `config/secret.cfg is protected by the template's rule "config/*.cfg"`. */
export const fileDenied = (segments: readonly string[], rule: string): AppError =>
  new AppError(
    'FILE_DENIED',
    `${joinSegments(segments)} is protected by the template's rule ${JSON.stringify(rule)}`,
  );

/** Throws FILE_DENIED when `guard` denies any of `paths` (a folder when `folder`). */
export function checkPaths(
  guard: PathGuard | null,
  paths: readonly (readonly string[])[],
  folder: boolean,
): void {
  if (guard === null) return;
  for (const segments of paths) {
    const rule = guard.ruleFor(segments, folder);
    if (rule !== null) throw fileDenied(segments, rule);
  }
}

/** The cursor of `segments`, entered one name at a time from the top. */
export function cursorAt(guard: PathGuard, segments: readonly string[]): GuardCursor {
  let cursor = guard.root();
  for (const name of segments) cursor = cursor.enter(name);
  return cursor;
}

/**
 * Walks everything below the folder `name` in `dir` (`dir` itself when null; symlinks as
 * themselves, never followed) and
 * throws FILE_DENIED for the first entry `guard` denies at any of `places`: where the folder is
 * (`segments`), and where it is going to be, for a rename or a move. The folders themselves
 * are the caller's to check. Entries that vanish meanwhile are skipped.
 */
export async function checkBelow(
  guard: PathGuard | null,
  dir: FileHandle,
  name: string | null,
  places: readonly (readonly string[])[],
): Promise<void> {
  if (guard === null) return;
  const folder =
    name === null ? await open(at(dir.fd), O_RDONLY | O_DIRECTORY) : await openFolder(dir, name);
  if (!folder) return;
  const tops = places.map((segments) => ({ segments, cursor: cursorAt(guard, segments) }));
  if (!tops.some((top) => top.cursor.live)) {
    await folder.close();
    return;
  }
  /** Cursors of the folders being walked, by their names below the top. */
  const cursors = new Map<string, GuardCursor[]>([['', tops.map((top) => top.cursor)]]);
  const keyOf = (above: readonly string[], name: string): string =>
    above.length === 0 ? name : `${above.join('/')}/${name}`;
  const visitor: Visitor = {
    async enter(parent, child, above) {
      const key = above.join('/');
      const inside = cursors.get(key);
      // The panel's own temporary files are nobody's to reach.
      if (inside === undefined || isReserved(child)) return false;
      const stat = await lstat(at(parent.fd, child)).catch(() => null);
      if (!stat) return false;
      const isFolder = stat.isDirectory();
      const entered = inside.map((cursor) => cursor.enter(child));
      for (const [i, cursor] of entered.entries()) {
        const rule = cursor.rule(isFolder);
        if (rule !== null) throw fileDenied([...(tops[i]?.segments ?? []), ...above, child], rule);
      }
      if (!isFolder || !entered.some((cursor) => cursor.live)) return false;
      cursors.set(keyOf(above, child), entered);
      return true;
    },
    leave(_parent, child, above) {
      cursors.delete(keyOf(above, child));
      return Promise.resolve();
    },
  };
  await walkBelow(folder, visitor, places[0] ?? []);
}
