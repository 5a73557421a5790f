/**
 * SSH public keys a user signs in to SFTP with (issue 29). `public_key` is OpenSSH's one-line
 * form without its comment (`ssh-ed25519 AAAA…`); `fingerprint` is what `ssh-keygen -l` prints
 * (`SHA256:` and the unpadded base64 of the SHA-256 of the key's wire blob), unique per user: the
 * same key twice on one account is refused, while two accounts may hold the same key (the SFTP
 * username names the account). Frozen.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  await db.schema
    .createTable('ssh_keys')
    .addColumn('id', id)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('algorithm', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    // Also the index of a user's keys: user_id leads.
    .addUniqueConstraint('ssh_keys_user_fingerprint_unique', ['user_id', 'fingerprint'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ssh_keys').execute();
}
