/**
 * Transfers of a server between nodes (docs/nodes.md, "Transfers"). `server_transfers` keeps the
 * last transfer of each server: `running` while it goes on (a panel that stops meanwhile finds it
 * so at its next start and rolls it back), then `done`, `failed` or `cancelled` with its reason.
 * It goes with its server. `server_old_copies` lists copies of a server's folder left on a node
 * it is no longer on, to be removed: `after-start` once the server has started on its new node,
 * `now` at the first chance (a rollback that could not reach the node). It outlives its server
 * on purpose: a deleted server's old copies are still removed. Frozen.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('server_transfers')
    .addColumn('server', 'text', (c) =>
      c.primaryKey().references('servers.name').onDelete('cascade'),
    )
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('from_node', 'text', (c) => c.notNull())
    .addColumn('to_node', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('phase', 'text', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('by_user', 'integer')
    .addColumn('files', 'integer')
    .addColumn('bytes', 'bigint')
    .addColumn('checksum', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createTable('server_old_copies')
    .addColumn('server', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('remove', 'text', (c) => c.notNull())
    .addColumn('since', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('server_old_copies_pk', ['server', 'node'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('server_old_copies').execute();
  await db.schema.dropTable('server_transfers').execute();
}
