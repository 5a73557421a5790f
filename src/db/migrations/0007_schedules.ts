/**
 * Schedules of a server: when (a 5-field cron expression in a timezone), what (the tasks, one
 * JSON array, read and written whole) and how the last run went. Deleting a server deletes its
 * schedules. Frozen.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  await db.schema
    .createTable('schedules')
    .addColumn('id', id)
    .addColumn('server_name', 'text', (c) =>
      c.notNull().references('servers.name').onDelete('cascade'),
    )
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('only_when_running', 'integer', (c) => c.notNull())
    .addColumn('tasks', 'text', (c) => c.notNull())
    .addColumn('last_run_at', 'text')
    .addColumn('last_outcome', 'text')
    .addColumn('handled_until', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('schedules_server_idx')
    .on('schedules')
    .column('server_name')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('schedules').execute();
}
