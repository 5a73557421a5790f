/**
 * Per-server resource limits (null: none) and the runtime a server runs in: `process` (a local,
 * sandboxed process) or `docker` (a container of `image`). Byte counts are `bigint`: a limit of
 * several GiB does not fit in 32 bits. Frozen.
 */
import type { Kysely } from 'kysely';

const COLUMNS = [
  ['memory_limit_bytes', 'bigint'],
  ['cpu_limit_percent', 'integer'],
  ['pids_limit', 'integer'],
  ['disk_limit_bytes', 'bigint'],
  ['image', 'text'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, type] of COLUMNS) {
    await db.schema.alterTable('servers').addColumn(name, type).execute();
  }
  await db.schema
    .alterTable('servers')
    .addColumn('runtime', 'text', (c) => c.notNull().defaultTo('process'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of ['runtime', ...COLUMNS.map(([column]) => column)].reverse()) {
    await db.schema.alterTable('servers').dropColumn(name).execute();
  }
}
