/**
 * Transfers of a server from one node to another (docs/nodes.md, "Transfers"): the server is
 * stopped and held stopped, its folder packed on the old node and streamed through the panel to
 * the new one, checked, and switched in one database transaction; the old copy is removed once
 * the server has started on its new node. Before the switch, a failure, a cancel or the panel's
 * restart leaves the server on its old node, whole, with nothing left on the new one.
 */

export type TransferStatus = 'running' | 'done' | 'failed' | 'cancelled';
export const TRANSFER_STATUSES: readonly TransferStatus[] = [
  'running',
  'done',
  'failed',
  'cancelled',
];

/**
 * How far a transfer got: `stopping` (the stop sequence of a running server), `packing` (the
 * old node's folder into the panel), `unpacking` (into the new node), `checking` (the copy on
 * the new node counted against the archive), `switched` (the server is on the new node).
 */
export type TransferPhase = 'stopping' | 'packing' | 'unpacking' | 'checking' | 'switched';
export const TRANSFER_PHASES: readonly TransferPhase[] = [
  'stopping',
  'packing',
  'unpacking',
  'checking',
  'switched',
];

/** The last transfer of a server, as recorded. */
export interface Transfer {
  readonly id: string;
  readonly server: string;
  readonly from: string;
  readonly to: string;
  readonly status: TransferStatus;
  readonly phase: TransferPhase;
  /** Why it failed or was cancelled, or what it did. */
  readonly message: string | null;
  /** Files and symlinks packed, once packing ended. */
  readonly files: number | null;
  /** Bytes of the files and symlink targets packed, once packing ended. */
  readonly bytes: number | null;
  /** SHA-256 of the archive streamed, hex, once packing ended. */
  readonly checksum: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

/** How far a running transfer is now: bytes of the phase under way, and its whole. */
export interface TransferProgress {
  readonly phase: TransferPhase;
  readonly bytes: number;
  /** null while unknown. */
  readonly totalBytes: number | null;
  readonly files: number;
}

/** When an old copy of a server's folder on a node is removed. */
export type OldCopyRemoval = 'after-start' | 'now';

export interface OldCopy {
  readonly server: string;
  readonly node: string;
  readonly remove: OldCopyRemoval;
  readonly since: string;
}
