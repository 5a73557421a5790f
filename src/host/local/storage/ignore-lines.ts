/**
 * What packing a whole server leaves out (a backup: PackOptions.ignore in src/host/host.ts):
 * gitignore lines, the backup's patterns and the server's ignore file, matched with git's own
 * meaning (the `ignore` package) against each entry's path from the folder's top. The lines are
 * data so that they cross to another machine; each packing compiles them once, here.
 */
import ignore from 'ignore';

/** True: the entry at `segments` (a folder when `folder`) is left out, with all inside it. */
export type SkipTest = (segments: readonly string[], folder: boolean) => boolean;

/** The test `lines` make; null when there are none. */
export function ignoreTest(lines: readonly string[]): SkipTest | null {
  if (lines.length === 0) return null;
  const matcher = ignore().add([...lines]);
  return (segments, folder) => matcher.ignores(`${segments.join('/')}${folder ? '/' : ''}`);
}
