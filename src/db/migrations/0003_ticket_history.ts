/** Every status change of a ticket: who, when, from and to. Frozen. */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const id = postgres ? sql`serial primary key` : sql`integer primary key autoincrement`;
  const status = (column: string) =>
    sql`check (${sql.ref(column)} in ('pending', 'in_progress', 'closed'))`;
  await db.schema
    .createTable('ticket_status_changes')
    .addColumn('id', id)
    .addColumn('ticket_id', 'integer', (c) =>
      c.notNull().references('tickets.id').onDelete('cascade'),
    )
    .addColumn('changed_by', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('from_status', 'text', (c) => c.notNull().modifyEnd(status('from_status')))
    .addColumn('to_status', 'text', (c) => c.notNull().modifyEnd(status('to_status')))
    .addColumn('changed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ticket_status_changes_ticket_idx')
    .on('ticket_status_changes')
    .column('ticket_id')
    .execute();
  await db.schema.createIndex('tickets_updated_idx').on('tickets').column('updated_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tickets_updated_idx').execute();
  await db.schema.dropTable('ticket_status_changes').execute();
}
