/**
 * One server's folder as the rooms of the storage are given it by the front (ServerStorage,
 * server-storage.ts): its directory, who owns what the panel writes there, this run's temporary
 * names, its books of disk use and the log. The rooms hold no state of their own; all they know
 * of a server comes through here, asked for at the moment it is needed.
 */
import type { Reservation } from '../usage.js';
import type { FileOwner, StorageLog } from './types.js';

export interface ServerFolder {
  /** The server's name, for the log. */
  readonly server: string;
  /** Its directory (`DATA_DIR/servers/<name>`); throws on a name no server can have. */
  directory(): string;
  /** Who what the panel writes into the folder belongs to; null: the panel. */
  owner(): FileOwner | null;
  /** How this run's temporary names begin: `TEMP_PREFIX`, then a tag new at every start. */
  readonly tempPrefix: string;
  /** A write about to grow the folder, held to `quota` bytes (null: none); see usage.ts. */
  reserve(quota: number | null): Promise<Reservation>;
  /** The panel changed the folder by `delta` bytes (negative: freed). */
  apply(delta: number): void;
  /** The folder is gone or replaced: its measured size no longer holds. */
  forget(): void;
  readonly log: StorageLog;
}
