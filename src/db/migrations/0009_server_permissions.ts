/**
 * Per-server permissions: each server in a user's list carries the permissions the user holds on
 * it, a JSON array of names. Existing grants keep what they allowed: every permission. Frozen:
 * the list is written out here, not imported, so a later permission does not change this step.
 */
import type { Kysely } from 'kysely';

const ALL = JSON.stringify([
  'console.read',
  'console.write',
  'power',
  'files.read',
  'files.write',
  'settings',
  'backups',
  'schedules',
  'users',
]);

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('user_servers')
    .addColumn('permissions', 'text', (c) => c.notNull().defaultTo(ALL))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('user_servers').dropColumn('permissions').execute();
}
