/**
 * Allocations are unique per node (docs/nodes.md, "Placement"): two servers on different nodes
 * may both have 0.0.0.0:30000. `server_allocations` gets the server's `node` and the key (node,
 * ip, port) in place of (ip, port). The node comes with the server through a foreign key on
 * (server_name, node), updated in cascade, so a server moved to another node takes its
 * allocations with it. The table is made again (SQLite cannot change a primary key) and its rows
 * copied. `down` fails when two servers on different nodes share an address and port. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The target of the composite foreign key below (name alone is the key already).
  await db.schema
    .createIndex('servers_name_node_idx')
    .on('servers')
    .columns(['name', 'node'])
    .unique()
    .execute();
  await db.schema
    .createTable('server_allocations_by_node')
    .addColumn('server_name', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('is_primary', 'integer', (c) => c.notNull())
    // One address and port, one server, on each node. 0.0.0.0 against a specific address is the
    // service's check.
    .addPrimaryKeyConstraint('server_allocations_node_pk', ['node', 'ip', 'port'])
    .addForeignKeyConstraint(
      'server_allocations_server_fk',
      ['server_name', 'node'],
      'servers',
      ['name', 'node'],
      (fk) => fk.onDelete('cascade').onUpdate('cascade'),
    )
    .execute();
  await sql`insert into server_allocations_by_node (server_name, node, ip, port, is_primary)
    select a.server_name, s.node, a.ip, a.port, a.is_primary
    from server_allocations a join servers s on s.name = a.server_name`.execute(db);
  await db.schema.dropTable('server_allocations').execute();
  await db.schema.alterTable('server_allocations_by_node').renameTo('server_allocations').execute();
  await db.schema
    .createIndex('server_allocations_server_idx')
    .on('server_allocations')
    .column('server_name')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('server_allocations_one_host')
    .addColumn('server_name', 'text', (c) =>
      c.notNull().references('servers.name').onDelete('cascade'),
    )
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('is_primary', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('server_allocations_pk', ['ip', 'port'])
    .execute();
  await sql`insert into server_allocations_one_host (server_name, ip, port, is_primary)
    select server_name, ip, port, is_primary from server_allocations`.execute(db);
  await db.schema.dropTable('server_allocations').execute();
  await db.schema
    .alterTable('server_allocations_one_host')
    .renameTo('server_allocations')
    .execute();
  await db.schema
    .createIndex('server_allocations_server_idx')
    .on('server_allocations')
    .column('server_name')
    .execute();
  await db.schema.dropIndex('servers_name_node_idx').execute();
}
