/** The only code that queries the backups and backup_settings tables. */
import type { Kysely, Selectable } from 'kysely';
import { Type } from 'typebox';
import { withConstraints } from '../../db/database.js';
import { readJson } from '../../db/json-column.js';
import type { BackupSettingsTable, BackupsTable, Database } from '../../db/schema.js';
import {
  DEFAULT_BACKUP_SETTINGS,
  type Backup,
  type BackupConsistency,
  type BackupSettings,
  type BackupStatus,
  type RestoreOutcome,
} from '../../domain/backup.js';

const Texts = Type.Array(Type.String());
const Restore = Type.Object({
  status: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  message: Type.String(),
  at: Type.String(),
});

const count = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

const toBackup = (row: Selectable<BackupsTable>): Backup => ({
  id: row.id,
  server: row.server_name,
  name: row.name,
  status: row.status as BackupStatus,
  locked: row.locked === 1,
  ignore: readJson(row.ignore, Texts, 'backups.ignore'),
  bytes: count(row.bytes),
  checksum: row.checksum,
  files: row.files,
  entries: row.entries,
  unpackedBytes: count(row.unpacked_bytes),
  durationMs: row.duration_ms,
  consistency: row.consistency as BackupConsistency | null,
  message: row.message,
  lastRestore:
    row.last_restore === null ? null : readJson(row.last_restore, Restore, 'backups.last_restore'),
  createdAt: row.created_at,
  finishedAt: row.finished_at,
});

const toSettings = (row: Selectable<BackupSettingsTable>): BackupSettings => ({
  keepLast: row.keep_last,
  keepDays: row.keep_days,
  maxCount: row.max_count,
  maxBytes: count(row.max_bytes),
  beforeCommands: readJson(row.before_commands, Texts, 'backup_settings.before_commands'),
  afterCommands: readJson(row.after_commands, Texts, 'backup_settings.after_commands'),
  savedLine: row.saved_line,
  waitSeconds: row.wait_seconds,
  commandsBy: row.commands_by,
});

/** What a finished backup records. */
export interface BackupResult {
  readonly bytes: number;
  readonly checksum: string;
  readonly files: number;
  readonly entries: number;
  readonly unpackedBytes: number;
  readonly durationMs: number;
  readonly consistency: BackupConsistency;
  readonly message: string | null;
  readonly finishedAt: string;
}

export class BackupsRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The server's backups, newest first. */
  async list(server: string): Promise<Backup[]> {
    const rows = await this.#db
      .selectFrom('backups')
      .selectAll()
      .where('server_name', '=', server)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(toBackup);
  }

  async find(server: string, id: string): Promise<Backup | undefined> {
    const row = await this.#db
      .selectFrom('backups')
      .selectAll()
      .where('server_name', '=', server)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toBackup(row);
  }

  /** Throws NoLongerExists when the server is gone. */
  async insert(backup: {
    id: string;
    server: string;
    name: string;
    ignore: readonly string[];
    createdAt: string;
  }): Promise<Backup> {
    const row = await withConstraints(() =>
      this.#db
        .insertInto('backups')
        .values({
          id: backup.id,
          server_name: backup.server,
          name: backup.name,
          status: 'running',
          locked: 0,
          ignore: JSON.stringify(backup.ignore),
          bytes: null,
          checksum: null,
          files: null,
          entries: null,
          unpacked_bytes: null,
          duration_ms: null,
          consistency: null,
          message: null,
          last_restore: null,
          created_at: backup.createdAt,
          finished_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return toBackup(row);
  }

  async finish(id: string, result: BackupResult): Promise<void> {
    await this.#db
      .updateTable('backups')
      .set({
        status: 'done',
        bytes: result.bytes,
        checksum: result.checksum,
        files: result.files,
        entries: result.entries,
        unpacked_bytes: result.unpackedBytes,
        duration_ms: result.durationMs,
        consistency: result.consistency,
        message: result.message,
        finished_at: result.finishedAt,
      })
      .where('id', '=', id)
      .execute();
  }

  async fail(
    id: string,
    failure: { message: string; durationMs: number | null; finishedAt: string },
  ): Promise<void> {
    await this.#db
      .updateTable('backups')
      .set({
        status: 'failed',
        message: failure.message,
        duration_ms: failure.durationMs,
        finished_at: failure.finishedAt,
      })
      .where('id', '=', id)
      .execute();
  }

  async setLocked(server: string, id: string, locked: boolean): Promise<Backup | undefined> {
    const row = await this.#db
      .updateTable('backups')
      .set({ locked: locked ? 1 : 0 })
      .where('server_name', '=', server)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toBackup(row);
  }

  async recordRestore(id: string, outcome: RestoreOutcome): Promise<void> {
    await this.#db
      .updateTable('backups')
      .set({ last_restore: JSON.stringify(outcome) })
      .where('id', '=', id)
      .execute();
  }

  /** Deletes the row unless it is locked; true when it was deleted. */
  async deleteUnlocked(server: string, id: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('backups')
      .where('server_name', '=', server)
      .where('id', '=', id)
      .where('locked', '=', 0)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * What a previous run of the panel left under way: backups still `running` become `failed`,
   * restores still `running` too. Answers the backups whose file may be half-written.
   */
  async failInterrupted(at: string): Promise<void> {
    await this.#db
      .updateTable('backups')
      .set({
        status: 'failed',
        message: 'The panel stopped while the backup was being made',
        finished_at: at,
      })
      .where('status', '=', 'running')
      .execute();
    const restoring = await this.#db
      .selectFrom('backups')
      .select(['id', 'last_restore'])
      .where('last_restore', 'like', '{"status":"running"%')
      .execute();
    for (const row of restoring) {
      await this.recordRestore(row.id, {
        status: 'failed',
        message: 'The panel stopped during the restore; the server was left as it was before it',
        at,
      });
    }
  }

  async settings(server: string): Promise<BackupSettings> {
    const row = await this.#db
      .selectFrom('backup_settings')
      .selectAll()
      .where('server_name', '=', server)
      .executeTakeFirst();
    return row ? toSettings(row) : DEFAULT_BACKUP_SETTINGS;
  }

  /** Throws NoLongerExists when the server is gone. */
  async saveSettings(server: string, settings: BackupSettings): Promise<void> {
    const values = {
      keep_last: settings.keepLast,
      keep_days: settings.keepDays,
      max_count: settings.maxCount,
      max_bytes: settings.maxBytes,
      before_commands: JSON.stringify(settings.beforeCommands),
      after_commands: JSON.stringify(settings.afterCommands),
      saved_line: settings.savedLine,
      wait_seconds: settings.waitSeconds,
      commands_by: settings.commandsBy,
    };
    await withConstraints(() =>
      this.#db
        .insertInto('backup_settings')
        .values({ server_name: server, ...values })
        .onConflict((conflict) => conflict.column('server_name').doUpdateSet(values))
        .execute(),
    );
  }
}
