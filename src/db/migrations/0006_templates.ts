/**
 * Server templates (imported eggs), the template and variable values of a server, its install
 * state and last exit, and its port allocations. A template's definition is kept as one JSON
 * text: it is read and written whole. Frozen.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('uuid', 'text', (c) => c.unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('warnings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // Without ON DELETE: a template some server uses cannot be deleted.
  await db.schema
    .alterTable('servers')
    .addColumn('template_id', 'text', (c) => c.references('templates.id'))
    .execute();
  await db.schema
    .alterTable('servers')
    .addColumn('variables', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .alterTable('servers')
    .addColumn('install_state', 'text', (c) => c.notNull().defaultTo('installed'))
    .execute();
  for (const [name, type] of [
    ['install_exit_code', 'integer'],
    ['install_finished_at', 'text'],
    ['last_exit_code', 'integer'],
    ['last_exit_signal', 'text'],
    ['last_exit_out_of_memory', 'integer'],
    ['last_exit_at', 'text'],
  ] as const) {
    await db.schema.alterTable('servers').addColumn(name, type).execute();
  }

  await db.schema
    .createTable('server_allocations')
    .addColumn('server_name', 'text', (c) =>
      c.notNull().references('servers.name').onDelete('cascade'),
    )
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('is_primary', 'integer', (c) => c.notNull())
    // One address and port, one server. 0.0.0.0 against a specific address is the service's check.
    .addPrimaryKeyConstraint('server_allocations_pk', ['ip', 'port'])
    .execute();
  await db.schema
    .createIndex('server_allocations_server_idx')
    .on('server_allocations')
    .column('server_name')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('server_allocations').execute();
  for (const name of [
    'last_exit_at',
    'last_exit_out_of_memory',
    'last_exit_signal',
    'last_exit_code',
    'install_finished_at',
    'install_exit_code',
    'install_state',
    'variables',
    'template_id',
  ]) {
    await db.schema.alterTable('servers').dropColumn(name).execute();
  }
  await db.schema.dropTable('templates').execute();
}
