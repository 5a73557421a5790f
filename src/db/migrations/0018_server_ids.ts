/**
 * Servers get an id, unique among every server ever made: `server_ids` hands them out (an
 * autoincrement key, never reused on SQLite or PostgreSQL, even after the server is deleted), so
 * a server made again under an old name is another server. The id owns the server's audit
 * entries (`audit_log.server_id`) and gives the server its own uid (docs/security.md).
 * Existing servers are numbered in the order they were made; the audit entries of a server that
 * exists now, written since it was made, are given its id (older entries under its name were
 * another server's, and keep none). Frozen.
 *
 * Numbered 0018: 0014 to 0017 belong to work of the same issue on other branches.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  await db.schema
    .createTable('server_ids')
    .addColumn('id', id)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('servers').addColumn('id', 'integer').execute();
  const servers = await sql<{ name: string; created_at: string }>`
    select name, created_at from servers order by created_at, name`.execute(db);
  for (const server of servers.rows) {
    const made = await sql<{ id: number }>`
      insert into server_ids (name, created_at) values (${server.name}, ${server.created_at})
      returning id`.execute(db);
    const given = made.rows[0]?.id;
    if (given === undefined) throw new Error(`no id for server ${server.name}`);
    await sql`update servers set id = ${given} where name = ${server.name}`.execute(db);
  }
  await db.schema.createIndex('servers_id_idx').on('servers').column('id').unique().execute();

  await db.schema.alterTable('audit_log').addColumn('server_id', 'integer').execute();
  await sql`
    update audit_log set server_id = (
      select servers.id from servers
      where servers.name = audit_log.server and audit_log.at >= servers.created_at
    )
    where server is not null`.execute(db);
  await db.schema
    .createIndex('audit_log_server_id_idx')
    .on('audit_log')
    .columns(['server_id', 'at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_log_server_id_idx').execute();
  await db.schema.alterTable('audit_log').dropColumn('server_id').execute();
  await db.schema.dropIndex('servers_id_idx').execute();
  await db.schema.alterTable('servers').dropColumn('id').execute();
  await db.schema.dropTable('server_ids').execute();
}
