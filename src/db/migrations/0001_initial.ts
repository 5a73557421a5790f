/**
 * Users, servers, who may reach which server, and the ticket tables (their endpoints come later,
 * but profile statistics count them from the start). Frozen: later changes are new migrations.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;

  await db.schema
    .createTable('users')
    .addColumn('id', id)
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('username_key', 'text', (c) => c.unique())
    .addColumn('password_hash', 'text')
    .addColumn('role', 'text', (c) =>
      c.notNull().check(sql`role in ('admin', 'user', 'support', 'banned')`),
    )
    .addColumn('token_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_login_at', 'text')
    .addColumn('deleted_at', 'text')
    .execute();

  await db.schema
    .createTable('servers')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('start_command', 'text', (c) => c.notNull())
    .addColumn('stop_command', 'text')
    .addColumn('stop_timeout_seconds', 'integer', (c) => c.notNull().defaultTo(10))
    .addColumn('auto_restart', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('user_servers')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('server_name', 'text', (c) =>
      c.notNull().references('servers.name').onDelete('cascade'),
    )
    .addPrimaryKeyConstraint('user_servers_pk', ['user_id', 'server_name'])
    .execute();
  await db.schema
    .createIndex('user_servers_server_idx')
    .on('user_servers')
    .column('server_name')
    .execute();

  await db.schema
    .createTable('tickets')
    .addColumn('id', id)
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'in_progress', 'closed')`),
    )
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tickets_owner_idx').on('tickets').column('owner_id').execute();

  await db.schema
    .createTable('ticket_messages')
    .addColumn('id', id)
    .addColumn('ticket_id', 'integer', (c) =>
      c.notNull().references('tickets.id').onDelete('cascade'),
    )
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ticket_messages_ticket_idx')
    .on('ticket_messages')
    .column('ticket_id')
    .execute();
  await db.schema
    .createIndex('ticket_messages_author_idx')
    .on('ticket_messages')
    .column('author_id')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['ticket_messages', 'tickets', 'user_servers', 'servers', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
