/**
 * The audit log: one row per change made in the panel, with who made it (their id and the name
 * they had then), through what (a session, an API key, a schedule, the panel itself), from which
 * address, what was done to what, and how it ended. Never a secret or a file's content. Frozen.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  await db.schema
    .createTable('audit_log')
    .addColumn('id', id)
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .addColumn('actor_name', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('via_name', 'text')
    .addColumn('address', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('server', 'text')
    .addColumn('target', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_at_idx').on('audit_log').column('at').execute();
  await db.schema
    .createIndex('audit_log_server_idx')
    .on('audit_log')
    .columns(['server', 'at'])
    .execute();
  await db.schema
    .createIndex('audit_log_actor_idx')
    .on('audit_log')
    .columns(['actor_id', 'at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
}
