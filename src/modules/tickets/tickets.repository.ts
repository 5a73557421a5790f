/**
 * The only code that queries the ticket tables. People are shown as they are now (current name
 * and role), and a deleted user as the name they last had, flagged deleted.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { TicketActivity, TicketStatus } from '../../domain/ticket.js';
import type { Role } from '../../domain/user.js';

export interface Person {
  readonly username: string;
  readonly role: Role;
  readonly deleted: boolean;
}

export interface Ticket {
  readonly id: number;
  readonly title: string;
  readonly description: string;
  readonly status: TicketStatus;
  readonly owner: Person;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface TicketSummary extends Ticket {
  readonly messageCount: number;
}

export interface TicketMessage {
  readonly id: number;
  readonly author: Person;
  readonly text: string;
  readonly createdAt: string;
}

export interface StatusChange {
  readonly by: Person;
  readonly from: TicketStatus;
  readonly to: TicketStatus;
  readonly at: string;
}

/** A window on one of a ticket's lists, newest entries last. */
export interface Page<T> {
  readonly items: readonly T[];
  /** How many entries the whole list holds. */
  readonly total: number;
  /** The id of the page's oldest entry when older ones exist, else `null`. */
  readonly olderThan: number | null;
}

/** A ticket and its owner as they are now; shared by one ticket and the list. */
const TICKET_COLUMNS = [
  'tickets.id',
  'tickets.title',
  'tickets.description',
  'tickets.status',
  'tickets.created_at',
  'tickets.updated_at',
  'users.username',
  'users.role',
  'users.deleted_at',
] as const;

const person = (row: { username: string; role: Role; deleted_at: string | null }): Person => ({
  username: row.username,
  role: row.role,
  deleted: row.deleted_at !== null,
});

const ticketOf = (row: {
  id: number;
  title: string;
  description: string;
  status: TicketStatus;
  created_at: string;
  updated_at: string;
  username: string;
  role: Role;
  deleted_at: string | null;
}): Ticket => ({
  id: row.id,
  title: row.title,
  description: row.description,
  status: row.status,
  owner: person(row),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class TicketsRepository {
  readonly #db: Kysely<Database>;
  readonly #dialect: Dialect;

  constructor(db: Kysely<Database>, dialect: Dialect) {
    this.#db = db;
    this.#dialect = dialect;
  }

  async insert(ticket: {
    ownerId: number;
    title: string;
    description: string;
    now: Date;
  }): Promise<number> {
    const at = ticket.now.toISOString();
    const row = await this.#db
      .insertInto('tickets')
      .values({
        owner_id: ticket.ownerId,
        title: ticket.title,
        description: ticket.description,
        status: 'pending',
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Who owns a ticket, for visibility checks; undefined when there is no such ticket. */
  async ownerOf(id: number): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('tickets')
      .select('owner_id')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.owner_id;
  }

  /** One ticket and its owner, without its messages or history. */
  async ticket(id: number): Promise<Ticket | undefined> {
    const row = await this.#db
      .selectFrom('tickets')
      .innerJoin('users', 'users.id', 'tickets.owner_id')
      .select(TICKET_COLUMNS)
      .where('tickets.id', '=', id)
      .executeTakeFirst();
    return row && ticketOf(row);
  }

  /**
   * The newest messages of a ticket stored before message `before` (or all), oldest first: at
   * most `limit`, and at most `maxTextBytes` of text in all but always one when there is one, so
   * that messages stored before any limit existed are still read, one page each. Only the chosen
   * messages are loaded: the sizes are read first.
   */
  async messagePage(
    ticketId: number,
    window: { before?: number | undefined; limit: number; maxTextBytes: number },
  ): Promise<Page<TicketMessage>> {
    let newest = this.#db
      .selectFrom('ticket_messages')
      .select((eb) => ['id', eb.fn<number | string>('octet_length', ['text']).as('bytes')])
      .where('ticket_id', '=', ticketId);
    if (window.before !== undefined) newest = newest.where('id', '<', window.before);
    const [sizes, total] = await Promise.all([
      newest
        .orderBy('id', 'desc')
        .limit(window.limit + 1)
        .execute(),
      this.#count('ticket_messages', ticketId),
    ]);
    const chosen: number[] = [];
    let bytes = 0;
    for (const row of sizes.slice(0, window.limit)) {
      const size = Number(row.bytes);
      if (chosen.length > 0 && bytes + size > window.maxTextBytes) break;
      chosen.push(row.id);
      bytes += size;
    }
    const rows =
      chosen.length === 0
        ? []
        : await this.#db
            .selectFrom('ticket_messages')
            .innerJoin('users', 'users.id', 'ticket_messages.author_id')
            .select([
              'ticket_messages.id',
              'ticket_messages.text',
              'ticket_messages.created_at',
              'users.username',
              'users.role',
              'users.deleted_at',
            ])
            .where('ticket_messages.id', 'in', chosen)
            .orderBy('ticket_messages.id')
            .execute();
    return {
      items: rows.map((row) => ({
        id: row.id,
        author: person(row),
        text: row.text,
        createdAt: row.created_at,
      })),
      total,
      olderThan: chosen.length < sizes.length ? (chosen.at(-1) ?? null) : null,
    };
  }

  /** The newest status changes of a ticket made before change `before` (or all), oldest first. */
  async historyPage(
    ticketId: number,
    window: { before?: number | undefined; limit: number },
  ): Promise<Page<StatusChange>> {
    let newest = this.#db
      .selectFrom('ticket_status_changes')
      .innerJoin('users', 'users.id', 'ticket_status_changes.changed_by')
      .select([
        'ticket_status_changes.id',
        'ticket_status_changes.from_status',
        'ticket_status_changes.to_status',
        'ticket_status_changes.changed_at',
        'users.username',
        'users.role',
        'users.deleted_at',
      ])
      .where('ticket_status_changes.ticket_id', '=', ticketId);
    if (window.before !== undefined) {
      newest = newest.where('ticket_status_changes.id', '<', window.before);
    }
    const [rows, total] = await Promise.all([
      newest
        .orderBy('ticket_status_changes.id', 'desc')
        .limit(window.limit + 1)
        .execute(),
      this.#count('ticket_status_changes', ticketId),
    ]);
    const page = rows.slice(0, window.limit).reverse();
    return {
      items: page.map((row) => ({
        by: person(row),
        from: row.from_status,
        to: row.to_status,
        at: row.changed_at,
      })),
      total,
      olderThan: rows.length > window.limit ? (page[0]?.id ?? null) : null,
    };
  }

  /** Tickets, newest activity first; only `ownerId`'s when given; and how many match in all. */
  async list(filter: {
    ownerId?: number | undefined;
    status?: TicketStatus | undefined;
    limit: number;
    offset: number;
  }): Promise<{ tickets: TicketSummary[]; total: number }> {
    let base = this.#db.selectFrom('tickets');
    if (filter.ownerId !== undefined) base = base.where('tickets.owner_id', '=', filter.ownerId);
    if (filter.status !== undefined) base = base.where('tickets.status', '=', filter.status);
    const [rows, count] = await Promise.all([
      base
        .innerJoin('users', 'users.id', 'tickets.owner_id')
        .select((eb) => [
          ...TICKET_COLUMNS,
          eb
            .selectFrom('ticket_messages')
            .select(eb.fn.countAll().as('count'))
            .whereRef('ticket_messages.ticket_id', '=', 'tickets.id')
            .as('message_count'),
        ])
        .orderBy('tickets.updated_at', 'desc')
        .orderBy('tickets.id', 'desc')
        .limit(filter.limit)
        .offset(filter.offset)
        .execute(),
      base.select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow(),
    ]);
    return {
      total: Number(count.count),
      tickets: rows.map((row) => ({
        ...ticketOf(row),
        messageCount: Number(row.message_count ?? 0),
      })),
    };
  }

  /**
   * Adds a message unless the ticket is closed, atomically: the ticket row is locked while its
   * status is read, so a message can never land after the ticket was closed.
   */
  async addMessage(message: {
    ticketId: number;
    authorId: number;
    text: string;
    now: () => Date;
  }): Promise<{ id: number; createdAt: string } | 'closed' | 'missing'> {
    return this.#locked(message.ticketId, async (trx, status) => {
      if (status === undefined) return 'missing';
      if (status === 'closed') return 'closed';
      // Taken under the lock, so message times follow the order in which they were stored.
      const at = message.now().toISOString();
      const row = await trx
        .insertInto('ticket_messages')
        .values({
          ticket_id: message.ticketId,
          author_id: message.authorId,
          text: message.text,
          created_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('tickets')
        .set({ updated_at: at })
        .where('id', '=', message.ticketId)
        .execute();
      return { id: row.id, createdAt: at };
    });
  }

  /** Sets the status and records the change; `from === to` records nothing. */
  async setStatus(change: {
    ticketId: number;
    status: TicketStatus;
    by: number;
    now: () => Date;
  }): Promise<{ from: TicketStatus; to: TicketStatus } | 'missing'> {
    return this.#locked(change.ticketId, async (trx, from) => {
      if (from === undefined) return 'missing';
      if (from === change.status) return { from, to: from };
      const at = change.now().toISOString();
      await trx
        .updateTable('tickets')
        .set({ status: change.status, updated_at: at })
        .where('id', '=', change.ticketId)
        .execute();
      await trx
        .insertInto('ticket_status_changes')
        .values({
          ticket_id: change.ticketId,
          changed_by: change.by,
          from_status: from,
          to_status: change.status,
          changed_at: at,
        })
        .execute();
      return { from, to: change.status };
    });
  }

  async activityOf(userId: number): Promise<TicketActivity> {
    const [statusRows, messages] = await Promise.all([
      this.#db
        .selectFrom('tickets')
        .select((eb) => ['status', eb.fn.countAll().as('count')])
        .where('owner_id', '=', userId)
        .groupBy('status')
        .execute(),
      this.#db
        .selectFrom('ticket_messages')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('author_id', '=', userId)
        .executeTakeFirstOrThrow(),
    ]);
    const ticketsByStatus: Record<TicketStatus, number> = { pending: 0, in_progress: 0, closed: 0 };
    for (const row of statusRows) ticketsByStatus[row.status] = Number(row.count);
    return { ticketsByStatus, messagesWritten: Number(messages.count) };
  }

  async #count(
    table: 'ticket_messages' | 'ticket_status_changes',
    ticketId: number,
  ): Promise<number> {
    const row = await this.#db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('count'))
      .where('ticket_id', '=', ticketId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * Runs `work` in a transaction holding the ticket's row (PostgreSQL: SELECT … FOR UPDATE;
   * SQLite: its single writer), with the status read under that lock.
   */
  #locked<T>(
    ticketId: number,
    work: (trx: Transaction<Database>, status: TicketStatus | undefined) => Promise<T>,
  ): Promise<T> {
    return this.#db.transaction().execute(async (trx) => {
      let query = trx.selectFrom('tickets').select('status').where('id', '=', ticketId);
      if (this.#dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      return work(trx, row?.status);
    });
  }
}
