/**
 * API keys: a user's long-lived credentials for scripts. Only the SHA-256 of a key is stored
 * (a key is 256 random bits, so a fast hash is enough); its first characters are kept to let its
 * owner recognise it. A key may be limited to some servers and to some server permissions
 * (JSON arrays; NULL: no limit). Frozen.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  await db.schema
    .createTable('api_keys')
    .addColumn('id', id)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('servers', 'text')
    .addColumn('permissions', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('last_used_address', 'text')
    .execute();
  await db.schema.createIndex('api_keys_user_idx').on('api_keys').column('user_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_keys').execute();
}
