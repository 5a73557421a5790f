/** Accounts at OpenID Connect providers, linked by (provider, subject). Frozen. */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  await db.schema
    .createTable('oidc_identities')
    .addColumn('id', id)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('oidc_identities_subject_unique', ['provider', 'subject'])
    .execute();
  await db.schema
    .createIndex('oidc_identities_user_idx')
    .on('oidc_identities')
    .column('user_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oidc_identities').execute();
}
