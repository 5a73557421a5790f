/**
 * The files as a remote files session (SFTP) works on them: attributes, file channels at
 * offsets, folders read in batches, single-entry changes (ServerFileChannels, src/host/host.ts).
 */
import type {
  AttributeChanges,
  ChannelFlags,
  EntryStat,
  FileChannel,
  NamedStat,
  PathGuard,
} from '../../host.js';
import type { ServerFolder } from './folder.js';

const notYet = (): never => {
  throw new Error('not built yet');
};

export function stat(
  _folder: ServerFolder,
  _segments: readonly string[],
  _follow: boolean,
  _guard: PathGuard | null,
): Promise<EntryStat> {
  return notYet();
}

export function realPath(_folder: ServerFolder, _segments: readonly string[]): Promise<string[]> {
  return notYet();
}

export function openChannel(
  _folder: ServerFolder,
  _segments: readonly string[],
  _flags: ChannelFlags,
  _quota: number | null,
  _guard: PathGuard | null,
): Promise<FileChannel> {
  return notYet();
}

export function readFolder(
  _folder: ServerFolder,
  _segments: readonly string[],
  _batch: number,
  _guard: PathGuard | null,
): AsyncIterableIterator<readonly NamedStat[]> {
  return notYet();
}

export function makeFolder(
  _folder: ServerFolder,
  _segments: readonly string[],
  _guard: PathGuard | null,
): Promise<void> {
  return notYet();
}

export function removeFile(
  _folder: ServerFolder,
  _segments: readonly string[],
  _guard: PathGuard | null,
): Promise<void> {
  return notYet();
}

export function removeFolder(
  _folder: ServerFolder,
  _segments: readonly string[],
  _guard: PathGuard | null,
): Promise<void> {
  return notYet();
}

export function renamePath(
  _folder: ServerFolder,
  _from: readonly string[],
  _to: readonly string[],
  _replace: boolean,
  _guard: PathGuard | null,
): Promise<void> {
  return notYet();
}

export function readLink(
  _folder: ServerFolder,
  _segments: readonly string[],
  _guard: PathGuard | null,
): Promise<string[]> {
  return notYet();
}

export function makeLink(
  _folder: ServerFolder,
  _link: readonly string[],
  _target: readonly string[],
  _guard: PathGuard | null,
): Promise<void> {
  return notYet();
}

export function setAttributes(
  _folder: ServerFolder,
  _segments: readonly string[],
  _changes: AttributeChanges,
  _quota: number | null,
  _guard: PathGuard | null,
): Promise<void> {
  return notYet();
}
