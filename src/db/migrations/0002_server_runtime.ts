/**
 * What the panel must remember about a server's process across its own restarts: whether the
 * server should be running, and which process it is (pid plus identity, so that after a crash of
 * the panel the leftover is found and a reused pid is never killed). Frozen.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('servers')
    .addColumn('desired_running', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('servers').addColumn('pid', 'integer').execute();
  await db.schema.alterTable('servers').addColumn('pid_identity', 'text').execute();
  await db.schema.alterTable('servers').addColumn('started_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['started_at', 'pid_identity', 'pid', 'desired_running']) {
    await db.schema.alterTable('servers').dropColumn(column).execute();
  }
}
