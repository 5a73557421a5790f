/**
 * The one containment function for paths a user gives, before anything touches the disk. A path
 * is relative to its server's directory: `""`, `"/"` and `"."` are the directory itself, a leading
 * `/` means its root, `\` is read as `/` (people type Windows paths), and `..` may go up but never
 * above the root. Query strings arrive decoded once by the HTTP layer and are not decoded again,
 * so `%2e%2e` is a file name, not a way up.
 *
 * This only checks the text. Symlinks are the storage module's concern: it resolves the segments
 * from the directory's own descriptor and checks every link it meets against the same root.
 */
import path from 'node:path';
import { AppError } from '../errors.js';

/** Longest name one directory entry may have on Linux, in bytes. */
export const MAX_NAME_BYTES = 255;
/**
 * Names of the panel's temporary files (see src/host/local/storage/atomic.ts), hidden, and removed after a restart:
 * no segment of a path a person gives may start with it, so nobody can make or reach one.
 */
export const RESERVED_PREFIX = '.panel-tmp-';

/** Longest path the panel accepts, in bytes. */
export const MAX_PATH_BYTES = 4096;

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

export const outside = (): AppError =>
  new AppError('PATH_OUTSIDE', 'That path leads outside the server directory');

const invalid = (message: string): AppError => new AppError('INVALID_PATH', message);

export const reserved = (): AppError =>
  invalid(`Names starting with "${RESERVED_PREFIX}" are reserved for the panel`);

/** Whether a name is one of the panel's own temporary names. */
export const isReserved = (name: string): boolean => name.startsWith(RESERVED_PREFIX);

/**
 * The segments of `input` inside the server directory; throws 400 or 403 (see module doc). A
 * reserved name is refused wherever it appears, even where a later `..` would take it away.
 */
export function userPath(input: string): string[] {
  if (CONTROL.test(input)) throw invalid('Paths may not contain NUL or control characters');
  if (Buffer.byteLength(input) > MAX_PATH_BYTES) {
    throw invalid(`Paths may be at most ${MAX_PATH_BYTES} bytes long`);
  }
  const segments: string[] = [];
  for (const part of input.replaceAll('\\', '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (segments.length === 0) throw outside();
      segments.pop();
      continue;
    }
    if (isReserved(part)) throw reserved();
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) {
      throw invalid(`Names may be at most ${MAX_NAME_BYTES} bytes long`);
    }
    segments.push(part);
  }
  // The same question asked the way the operating system would see the joined path.
  const root = '/server';
  const relative = path.posix.relative(root, path.posix.join(root, ...segments));
  if (relative === '..' || relative.startsWith('../') || path.posix.isAbsolute(relative)) {
    throw outside();
  }
  return segments;
}

/** A name for one new entry (create, rename): exactly one plain segment, or 400. */
export function entryName(input: string): string {
  if (CONTROL.test(input)) throw invalid('Names may not contain NUL or control characters');
  if (input === '' || input === '.' || input === '..' || /[/\\]/.test(input)) {
    throw invalid('A name is one path segment: not empty, ".", ".." or containing / or \\');
  }
  if (Buffer.byteLength(input) > MAX_NAME_BYTES) {
    throw invalid(`Names may be at most ${MAX_NAME_BYTES} bytes long`);
  }
  if (isReserved(input)) throw reserved();
  return input;
}

/**
 * An uploaded file's name reduced to a safe single segment: whatever a browser or a hostile
 * client sends (`../../x`, `/etc/x`, `C:\x`), only the last segment is kept; nothing usable is 400.
 */
export function uploadName(input: string): string {
  const last = input.replaceAll('\\', '/').split('/').pop() ?? '';
  return entryName(last);
}

/** The user-facing form of segments: `a/b/c`, or `` for the root. */
export const joinSegments = (segments: readonly string[]): string => segments.join('/');

/**
 * Where a symlink found at `at` (segments of the folder holding it) points, as segments inside
 * the root; `rootReal` is the real path of the server directory, for absolute targets that point
 * back inside it. Throws 403 when the target is outside.
 */
export function linkTarget(at: readonly string[], target: string, rootReal: string): string[] {
  if (path.posix.isAbsolute(target)) {
    const relative = path.posix.relative(rootReal, path.posix.normalize(target));
    if (relative === '..' || relative.startsWith('../') || path.posix.isAbsolute(relative)) {
      throw outside();
    }
    return relative === '' ? [] : relative.split('/');
  }
  const segments = [...at];
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (segments.length === 0) throw outside();
      segments.pop();
    } else segments.push(part);
  }
  return segments;
}
