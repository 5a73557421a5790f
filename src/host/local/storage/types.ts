/**
 * The language of a server's storage as its callers see it: entries, opened files, what a pack
 * leaves out, who owns files, where background work reports. Types only, and no import from the
 * other rooms of the storage, so that the port (src/host/host.ts) can take them over whole.
 */
import type { FileHandle } from 'node:fs/promises';

/** Where work done in the background reports what it did and what went wrong: the logger. */
export interface StorageLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** A user and group to own files, by number. */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}

export type EntryType = 'file' | 'folder' | 'symlink';

/** What a walk packing a folder leaves out, and what it reports. */
export interface PackOptions {
  /** True: leave the entry out (a folder with everything in it). `segments`: from the root. */
  readonly skip?: (segments: readonly string[], folder: boolean) => boolean;
  /** Called once an entry is written: its kind and its bytes (a symlink's: its target). */
  readonly packed?: (kind: EntryType, bytes: number) => void;
}

export interface Entry {
  readonly name: string;
  readonly path: string;
  readonly type: EntryType;
  readonly size: number;
  readonly modified: string;
}

export interface OpenedFile {
  readonly handle: FileHandle;
  readonly name: string;
  readonly size: number;
  readonly modified: Date;
}
