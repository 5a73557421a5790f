/**
 * A server's owner (docs/api.md, "A server's owner"): `servers.owner_id`, the user who holds every
 * permission on it and whom no sub-user may remove or narrow; NULL: no owner (the admins'). The
 * owner always has the server in their list (a `user_servers` row).
 *
 * Existing servers get, as their owner, the live non-admin user with the lowest id whose grant on
 * the server holds every permission: what an admin's assignment gave before sub-users existed,
 * so the person the server was made for. A server without such a grant gets none. "Every
 * permission" is read as every permission of 0009 where `backups` may also be spelled as its four
 * parts (`backups.create`, `backups.download`, `backups.restore`, `backups.delete`), so this step
 * gives the same answer whether or not the split of `backups` ran before it. Frozen: the lists
 * are written out here, not imported.
 */
import { sql, type Kysely } from 'kysely';

const EVERY_BUT_BACKUPS = [
  'console.read',
  'console.write',
  'power',
  'files.read',
  'files.write',
  'settings',
  'schedules',
  'users',
];
const BACKUP_PARTS = ['backups.create', 'backups.download', 'backups.restore', 'backups.delete'];

function holdsEvery(text: string): boolean {
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch {
    return false;
  }
  if (!Array.isArray(stored)) return false;
  const held = new Set(stored.filter((item): item is string => typeof item === 'string'));
  return (
    EVERY_BUT_BACKUPS.every((permission) => held.has(permission)) &&
    (held.has('backups') || BACKUP_PARTS.every((permission) => held.has(permission)))
  );
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('servers')
    .addColumn('owner_id', 'integer', (c) => c.references('users.id'))
    .execute();

  const { rows } = await sql<{ user_id: number; server_name: string; permissions: string }>`
    select user_servers.user_id, user_servers.server_name, user_servers.permissions
    from user_servers join users on users.id = user_servers.user_id
    where users.deleted_at is null and users.role <> 'admin'
    order by user_servers.server_name, user_servers.user_id`.execute(db);
  const owners = new Map<string, number>();
  for (const row of rows) {
    if (!owners.has(row.server_name) && holdsEvery(row.permissions)) {
      owners.set(row.server_name, row.user_id);
    }
  }
  for (const [server, owner] of owners) {
    await sql`update servers set owner_id = ${owner} where name = ${server}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('servers').dropColumn('owner_id').execute();
}
