/**
 * Things that happen in one module and matter to another without either importing the other:
 * a user's access changed (role, server list, password, deletion), a server was deleted. The
 * console closes sockets that lost their right at once.
 */
import { EventEmitter } from 'node:events';
import type { BackupProgress } from './domain/backup.js';

interface PanelEventMap {
  /** Re-check everything this user holds open. */
  'access-changed': [userId: number];
  'server-deleted': [name: string];
  /** A backup or restore of the server moved on, or ended (the console socket shows it). */
  'backup-progress': [server: string, progress: BackupFrame];
}

/** What the console socket's `backup` frames carry. */
export interface BackupFrame extends BackupProgress {
  readonly status: 'running' | 'done' | 'failed';
  /** Why it failed. */
  readonly message: string | null;
}

export class PanelEvents extends EventEmitter<PanelEventMap> {}
