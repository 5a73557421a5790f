/**
 * Backups of a server's folder: a `.tar.gz` made by the panel, recorded with its size, checksum
 * and counts, restored only into a stopped server (docs/backups.md).
 */

export type BackupStatus = 'running' | 'done' | 'failed';
export const BACKUP_STATUSES: readonly BackupStatus[] = ['running', 'done', 'failed'];

/**
 * How consistent the files were when packed: `stopped` (the server did not run), `saved` (the
 * save commands were sent and the saved line was seen), `commands-sent` (sent; no saved line is
 * configured), `timed-out` (sent; the saved line did not come in time), `unprepared` (the server
 * ran and no save commands are configured: a file may have been packed mid-write).
 */
export type BackupConsistency = 'stopped' | 'saved' | 'commands-sent' | 'timed-out' | 'unprepared';
export const BACKUP_CONSISTENCIES: readonly BackupConsistency[] = [
  'stopped',
  'saved',
  'commands-sent',
  'timed-out',
  'unprepared',
];

/** How the last restore from a backup went. */
export interface RestoreOutcome {
  readonly status: 'running' | 'done' | 'failed';
  readonly message: string;
  readonly at: string;
}

export interface Backup {
  /** A random UUID: also the name of its file in the store. */
  readonly id: string;
  readonly server: string;
  readonly name: string;
  readonly status: BackupStatus;
  readonly locked: boolean;
  /** The ignore patterns given at creation (gitignore syntax). */
  readonly ignore: readonly string[];
  /** Bytes of the archive (once done). */
  readonly bytes: number | null;
  /** SHA-256 of the archive, hex (once done). */
  readonly checksum: string | null;
  /** Files and symlinks packed. */
  readonly files: number | null;
  /** Entries packed, folders included: a restore unpacking more is refused. */
  readonly entries: number | null;
  /** Bytes of the files and symlink targets packed: a restore unpacking more is refused. */
  readonly unpackedBytes: number | null;
  readonly durationMs: number | null;
  readonly consistency: BackupConsistency | null;
  /** Why it failed, or what a consistent copy could not be sure of. */
  readonly message: string | null;
  readonly lastRestore: RestoreOutcome | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

/** A server's backup rules: retention and save commands (its users), limits (admins). */
export interface BackupSettings {
  /** Keep this many newest finished backups; older unlocked ones are deleted. null: all. */
  readonly keepLast: number | null;
  /** Delete unlocked backups older than this many days. null: never. */
  readonly keepDays: number | null;
  /** Admins: at most this many backups (finished and running); null: no limit. */
  readonly maxCount: number | null;
  /** Admins: at most this many bytes of backups; null: no limit. */
  readonly maxBytes: number | null;
  /** Console lines sent before packing a running server (`save-off`, `save-all`). */
  readonly beforeCommands: readonly string[];
  /** Console lines sent after packing, if it still runs (`save-on`). */
  readonly afterCommands: readonly string[];
  /**
   * The line that says the world is saved: text a line contains, or `regex:<pattern>`, as a
   * template's done line. null: the before commands are sent and packing starts at once.
   */
  readonly savedLine: string | null;
  /** How long to wait for the saved line before packing anyway. */
  readonly waitSeconds: number;
  /**
   * The account that set the save commands: a backup types them in its name, only while it
   * holds `console.write` on the server. null: nobody (they are not typed).
   */
  readonly commandsBy: number | null;
}

export const DEFAULT_BACKUP_SETTINGS: BackupSettings = {
  keepLast: null,
  keepDays: null,
  maxCount: null,
  maxBytes: null,
  beforeCommands: [],
  afterCommands: [],
  savedLine: null,
  waitSeconds: 60,
  commandsBy: null,
};

export const MAX_SAVE_COMMANDS = 10;
export const MAX_WAIT_SECONDS = 600;
export const MAX_IGNORE_PATTERNS = 100;
/** The file in a server's folder whose lines are ignore patterns for every backup of it. */
export const IGNORE_FILE = '.backupignore';

/** What a backup or restore in progress has done so far. */
export interface BackupProgress {
  readonly backup: string;
  readonly action: 'backup' | 'restore';
  /** Bytes read (backup: of the server's files; restore: unpacked). */
  readonly bytes: number;
  /** Bytes to read in all, as far as known when it began. */
  readonly totalBytes: number | null;
  readonly files: number;
}
