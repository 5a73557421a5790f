/**
 * What one signed-in SFTP session may do with its server's files (docs/sftp.md). Paths are
 * segments from the server's root (the session's `/`). Every call checks the caller's rights as
 * they are now, not as they were at sign-in: reading needs `files.read`, every change
 * `files.write` (403 FORBIDDEN); the template's deny list and the server's disk quota apply as in
 * the file manager; every change is written to the audit log with `via: sftp`. Refusals are
 * AppErrors (src/errors.ts), which the protocol turns into SFTP status codes.
 */
import type {
  AttributeChanges,
  ChannelFlags,
  EntryStat,
  FileChannel,
  NamedStat,
} from '../../host/host.js';

/** The quota as SFTP's statvfs shows it. */
export interface SessionSpace {
  /** The server's disk limit in bytes; null: none (the disk's own free space is shown). */
  readonly limitBytes: number | null;
  /** Bytes the server's folder holds. */
  readonly usedBytes: number;
  /** Free bytes of the disk the folder is on. */
  readonly diskFreeBytes: number;
  readonly diskTotalBytes: number;
}

export interface SessionFiles {
  stat(segments: readonly string[], follow: boolean): Promise<EntryStat>;
  realPath(segments: readonly string[]): Promise<string[]>;
  /**
   * A channel whose every read checks `files.read` and every write `files.write` as they are
   * then; a written file is audited when its channel is closed.
   */
  open(segments: readonly string[], flags: ChannelFlags): Promise<FileChannel>;
  readFolder(
    segments: readonly string[],
    batch: number,
  ): Promise<AsyncIterableIterator<readonly NamedStat[]>>;
  makeFolder(segments: readonly string[]): Promise<void>;
  removeFile(segments: readonly string[]): Promise<void>;
  removeFolder(segments: readonly string[]): Promise<void>;
  rename(from: readonly string[], to: readonly string[], replace: boolean): Promise<void>;
  readLink(segments: readonly string[]): Promise<string[]>;
  makeLink(link: readonly string[], target: readonly string[]): Promise<void>;
  setAttributes(segments: readonly string[], changes: AttributeChanges): Promise<void>;
  space(): Promise<SessionSpace>;
}
