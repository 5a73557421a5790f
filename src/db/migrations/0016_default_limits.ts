/**
 * Every server has a process limit (docs/security.md, "Defaults that bound a tenant"): a server
 * made before there was a default gets 512, the panel's default process limit at this version,
 * so that none is ever started without one. Frozen: the number is written here, not imported.
 */
import type { Kysely } from 'kysely';

const PIDS_LIMIT = 512;

export async function up(db: Kysely<unknown>): Promise<void> {
  const servers = db as Kysely<{ servers: { pids_limit: number | null } }>;
  await servers
    .updateTable('servers')
    .set({ pids_limit: PIDS_LIMIT })
    .where('pids_limit', 'is', null)
    .execute();
}

/** Which servers had no limit before is not kept: down leaves the limits as they are. */
export async function down(): Promise<void> {
  // Nothing to undo.
}
