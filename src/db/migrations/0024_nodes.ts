/**
 * Nodes (issue 30): the machines servers run on. `local` is the panel's own machine, recorded
 * here so it has settings like any node; `docker_host` and `secrets` are null for it, and its
 * `public_address` until an admin sets one (players are then told the allocation's address). `secrets`
 * is a JSON document sealed under a key derived from the JWT secret (SecretBox, purpose
 * 'node secrets'): PEM texts for TLS, or an SSH private key. Every server is on a node; the
 * servers of before are on `local`. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('nodes')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('docker_host', 'text')
    .addColumn('connection', 'text', (c) => c.notNull())
    .addColumn('secrets', 'text')
    .addColumn('public_address', 'text')
    .addColumn('memory_bytes', 'bigint')
    .addColumn('disk_bytes', 'bigint')
    .addColumn('memory_overallocate_percent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disk_overallocate_percent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('maintenance', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  const now = new Date().toISOString();
  await sql`insert into nodes (name, connection, created_at, updated_at)
    values ('local', 'local', ${now}, ${now})`.execute(db);
  await db.schema
    .alterTable('servers')
    .addColumn('node', 'text', (c) => c.notNull().defaultTo(sql`'local'`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('servers').dropColumn('node').execute();
  await db.schema.dropTable('nodes').execute();
}
