/**
 * The Files tab's paths and URLs, no React. A path is relative to the server directory, its
 * segments joined with `/`, "" for the root; the URL names it after `/files/`, one encoded
 * segment at a time, so a reload or a pasted link opens the same folder (or file, with `?edit`).
 */

/** "a/b/c" from "/a//b/c/": the canonical form of a path the UI shows and sends. */
export function normalise(path: string): string {
  return path
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

export function join(folder: string, name: string): string {
  return normalise(`${folder}/${name}`);
}

/** The folder a path is in ("" for an entry of the root). */
export function parent(path: string): string {
  const segments = normalise(path).split('/');
  return segments.slice(0, -1).join('/');
}

export function baseName(path: string): string {
  return normalise(path).split('/').pop() ?? '';
}

export interface Crumb {
  readonly name: string;
  readonly path: string;
}

/** The root ("Files") and then each folder down to `path`. */
export function breadcrumbs(path: string): Crumb[] {
  const crumbs: Crumb[] = [{ name: 'Files', path: '' }];
  let current = '';
  for (const segment of normalise(path).split('/')) {
    if (segment === '') continue;
    current = current === '' ? segment : `${current}/${segment}`;
    crumbs.push({ name: segment, path: current });
  }
  return crumbs;
}

/** The page of a folder, or of a file in the editor. */
export function filesUrl(server: string, path: string, edit = false): string {
  const tail = normalise(path).split('/').filter(Boolean).map(encodeURIComponent).join('/');
  const base = `/servers/${encodeURIComponent(server)}/files${tail === '' ? '' : `/${tail}`}`;
  return edit ? `${base}?edit` : base;
}

/** A name the person typed for a new entry: one segment, or why not. */
export function nameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (trimmed === '') return 'Enter a name';
  if (trimmed.includes('/') || trimmed.includes('\\')) return 'A name cannot contain / or \\';
  if (trimmed === '.' || trimmed === '..') return 'Choose another name';
  return null;
}

/** "23 Mar 2030, 14:05": a modification time in the person's own locale. */
export function formatModified(iso: string, locale?: string): string {
  return new Date(iso).toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'short' });
}
