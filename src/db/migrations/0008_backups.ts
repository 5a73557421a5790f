/**
 * Backups of servers and each server's backup settings. Byte counts are `bigint`; lists (ignore
 * patterns, save commands) and the last restore's outcome are JSON text, read and written whole.
 * Deleting a server deletes its rows (its files are removed by the backups module). Frozen.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('backups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('server_name', 'text', (c) =>
      c.notNull().references('servers.name').onDelete('cascade'),
    )
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('locked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('ignore', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint')
    .addColumn('checksum', 'text')
    .addColumn('files', 'integer')
    .addColumn('entries', 'integer')
    .addColumn('unpacked_bytes', 'bigint')
    .addColumn('duration_ms', 'integer')
    .addColumn('consistency', 'text')
    .addColumn('message', 'text')
    .addColumn('last_restore', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('backups_server_idx')
    .on('backups')
    .columns(['server_name', 'created_at'])
    .execute();

  await db.schema
    .createTable('backup_settings')
    .addColumn('server_name', 'text', (c) =>
      c.primaryKey().references('servers.name').onDelete('cascade'),
    )
    .addColumn('keep_last', 'integer')
    .addColumn('keep_days', 'integer')
    .addColumn('max_count', 'integer')
    .addColumn('max_bytes', 'bigint')
    .addColumn('before_commands', 'text', (c) => c.notNull())
    .addColumn('after_commands', 'text', (c) => c.notNull())
    .addColumn('saved_line', 'text')
    .addColumn('wait_seconds', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('backup_settings').execute();
  await db.schema.dropTable('backups').execute();
}
