/**
 * Who set what the panel later does on someone's behalf, and `backups` split in four.
 *
 * - `schedules.changed_by`: the account that last made or changed the schedule; each run is
 *   checked against that account's rights at the time (docs/api.md, "Schedules").
 * - `backup_settings.commands_by`: the account that set the save commands; a backup types them
 *   in its name, only while it still holds `console.write` (docs/backups.md).
 * - Every stored grant of `backups` (a server in a user's list, an API key's permission list)
 *   becomes `backups.create`, `backups.download`, `backups.restore` and `backups.delete`: what
 *   `backups` allowed before.
 *
 * Schedules and save commands made before this step have no recorded author: they are credited
 * to the oldest admin account that is not deleted (an admin holds every right they use, so they
 * go on as before; the admin sees them under their name and can review them). Without any admin
 * they stay without an author: a schedule without one does not run (it is disabled, saying why)
 * and save commands without one are not typed, until someone who may saves them again.
 *
 * Frozen: the permission names are written out here. Numbered 0014: the numbers 0015 to 0018
 * belong to work of the same issue on other branches; this step does not depend on them.
 */
import { sql, type Kysely } from 'kysely';

const SPLIT = ['backups.create', 'backups.download', 'backups.restore', 'backups.delete'];

/** The JSON list with `backups` replaced by its four parts (each once), or null if unchanged. */
function split(text: string | null): string | null {
  if (text === null) return null;
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(list) || !list.includes('backups')) return null;
  const names = list.flatMap((name: unknown) => (name === 'backups' ? SPLIT : [name]));
  return JSON.stringify([...new Set(names)]);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('schedules')
    .addColumn('changed_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await db.schema
    .alterTable('backup_settings')
    .addColumn('commands_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .execute();

  const admin = await sql<{ id: number }>`
    select id from users where role = 'admin' and deleted_at is null order by id limit 1
  `.execute(db);
  const author = admin.rows[0]?.id;
  if (author !== undefined) {
    await sql`update schedules set changed_by = ${author}`.execute(db);
    await sql`update backup_settings set commands_by = ${author}
      where before_commands <> '[]' or after_commands <> '[]'`.execute(db);
  }

  const grants = await sql<{ user_id: number; server_name: string; permissions: string }>`
    select user_id, server_name, permissions from user_servers
  `.execute(db);
  for (const grant of grants.rows) {
    const permissions = split(grant.permissions);
    if (permissions === null) continue;
    await sql`update user_servers set permissions = ${permissions}
      where user_id = ${grant.user_id} and server_name = ${grant.server_name}`.execute(db);
  }
  const keys = await sql<{ id: number; permissions: string | null }>`
    select id, permissions from api_keys
  `.execute(db);
  for (const key of keys.rows) {
    const permissions = split(key.permissions);
    if (permissions === null) continue;
    await sql`update api_keys set permissions = ${permissions} where id = ${key.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('backup_settings').dropColumn('commands_by').execute();
  await db.schema.alterTable('schedules').dropColumn('changed_by').execute();
}
