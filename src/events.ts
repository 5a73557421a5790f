/**
 * Things that happen in one module and matter to another without either importing the other:
 * a user's access changed (role, server list, password, deletion), a server was deleted. The
 * console closes sockets that lost their right at once. The lifecycle events (`server-event`,
 * `ticket-event`, `backup-progress`) are what webhooks deliver and the audit log records: they
 * carry names and ids, never secrets or contents.
 */
import { EventEmitter } from 'node:events';
import type { BackupProgress } from './domain/backup.js';
import type { EventExit, ServerEventKind } from './domain/server.js';
import type { TicketStatus } from './domain/ticket.js';
import type { TransferProgress, TransferStatus } from './domain/transfer.js';

interface PanelEventMap {
  /** Re-check everything this user holds open. */
  'access-changed': [userId: number];
  'server-deleted': [name: string];
  /** A backup or restore of the server moved on, or ended (the console socket shows it). */
  'backup-progress': [server: string, progress: BackupFrame];
  /** A transfer of the server to another node moved on, or ended (the console socket shows it). */
  'transfer-progress': [server: string, progress: TransferFrame];
  /**
   * A transfer switched the server to another node: its console is now that node's (the console
   * sockets follow it).
   */
  'server-moved': [server: string, from: string, to: string];
  /**
   * A server's process changed state, once per change, emitted by the host's supervisor:
   * - `started`: it runs (after the startup-done line, when its template has one), whether a
   *   person, a schedule or an automatic restart started it; never when the panel takes over a
   *   server still running from before its own restart.
   * - `stopped`: it ended as asked (stop, kill, restart, the stop command typed, the panel's
   *   shutdown).
   * - `crashed`: it ended without being asked, or could not start; not for an exit at the memory
   *   limit, which is `out-of-memory` instead (subscribe to both to hear of every crash).
   * - `out-of-memory`: the kernel ended it at its memory limit.
   */
  'server-event': [server: string, kind: ServerEventKind, exit?: EventExit];
  /**
   * A ticket was opened (`created`), a staff member (admin or support) wrote on somebody else's
   * ticket (`answered`), or its status changed (`status-changed`, only when it really changed).
   * Emitted by the tickets service once the change is stored.
   */
  'ticket-event': [ticketId: number, kind: TicketEventKind, details: TicketEventDetails];
}

export type { ServerEventKind };
export type TicketEventKind = 'created' | 'answered' | 'status-changed';

/** What a ticket event says beside the ticket's id: names and statuses, never message text. */
export interface TicketEventDetails {
  readonly title: string;
  /** The ticket's owner. */
  readonly owner: string;
  /** Who did it: the owner (created), the staff member who wrote, or who changed the status. */
  readonly by: string;
  /** The status after the event. */
  readonly status: TicketStatus;
  /** `status-changed`: the status before. */
  readonly from?: TicketStatus;
}

/** What the console socket's `backup` frames carry. */
export interface BackupFrame extends BackupProgress {
  readonly status: 'running' | 'done' | 'failed';
  /** Why it failed. */
  readonly message: string | null;
}

/** What the console socket's `transfer` frames carry. */
export interface TransferFrame extends TransferProgress {
  readonly transfer: string;
  readonly from: string;
  readonly to: string;
  readonly status: TransferStatus;
  /** Why it failed or was cancelled. */
  readonly message: string | null;
}

export class PanelEvents extends EventEmitter<PanelEventMap> {}
