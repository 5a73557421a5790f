/**
 * The audit log: who changed what, when, from where and through what. An entry never holds a
 * secret (password, token, key, code) or a file's content: only names, paths and settings.
 */

/** Through what a change was made. */
export type AuditVia =
  /** A signed-in session (the web UI, or a script with a session token). */
  | 'session'
  | 'api-key'
  | 'schedule'
  /** The panel itself: a server crashed, a backup ended. */
  | 'system'
  /**
   * The operator's command line on the panel's host (`game-panel user …`): the actor is the
   * name of the system account that ran it (`root`), no panel account.
   */
  | 'cli'
  /** The SFTP server (docs/sftp.md); the name is the API key's or SSH key's it signed in with. */
  | 'sftp';
export const AUDIT_VIAS: readonly AuditVia[] = [
  'session',
  'api-key',
  'schedule',
  'system',
  'cli',
  'sftp',
];

export type AuditOutcome = 'ok' | 'failed';
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ['ok', 'failed'];

export interface NewAuditEntry {
  readonly actorId: number | null;
  /** The actor's username at the time (or the name a failed sign-in tried). */
  readonly actor: string | null;
  readonly via: AuditVia;
  /** The API key's or the schedule's name. */
  readonly viaName: string | null;
  readonly address: string | null;
  /** A dotted name: `server.power`, `file.write`, `auth.login`… */
  readonly action: string;
  readonly server: string | null;
  /** What was acted on beside the server: a user, a path, a ticket, a backup. */
  readonly target: string | null;
  readonly outcome: AuditOutcome;
  /** The HTTP status answered, for changes made through the API. */
  readonly status: number | null;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface AuditEntry extends NewAuditEntry {
  readonly id: number;
  readonly at: string;
  /** The id of the server `server` named when it was written (null: none existed then). */
  readonly serverId: number | null;
}

export interface AuditFilter {
  readonly actor?: string | undefined;
  /** Entries written under this server name, whichever server had it. */
  readonly server?: string | undefined;
  /** Entries of this server (by id): not those of another server that had its name. */
  readonly serverId?: number | undefined;
  /** Exact, or a prefix when it ends with a dot (`file.`). */
  readonly action?: string | undefined;
  readonly via?: AuditVia | undefined;
  readonly outcome?: AuditOutcome | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
}
