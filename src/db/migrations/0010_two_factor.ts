/**
 * Two-factor sign-in with TOTP: a user's secret (encrypted with a key derived from the panel's
 * JWT secret), the one being enrolled, when it was turned on and the last time step used (a code
 * is good once); hashed one-time recovery codes; and the panel's settings (which roles must use
 * a second factor). Frozen.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const [name, type] of [
    ['totp_secret', 'text'],
    ['totp_pending_secret', 'text'],
    ['totp_enabled_at', 'text'],
    ['totp_last_step', 'bigint'],
  ] as const) {
    await db.schema.alterTable('users').addColumn(name, type).execute();
  }
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  await db.schema
    .createTable('recovery_codes')
    .addColumn('id', id)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema
    .createIndex('recovery_codes_user_idx')
    .on('recovery_codes')
    .column('user_id')
    .execute();
  await db.schema
    .createTable('panel_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('panel_settings').execute();
  await db.schema.dropTable('recovery_codes').execute();
  for (const name of ['totp_last_step', 'totp_enabled_at', 'totp_pending_secret', 'totp_secret']) {
    await db.schema.alterTable('users').dropColumn(name).execute();
  }
}
