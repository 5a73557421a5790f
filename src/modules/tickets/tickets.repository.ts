/**
 * The only code that queries the ticket tables. The ticket endpoints come later; profile
 * statistics already count a user's tickets and messages.
 */
import type { Kysely } from 'kysely';
import type { Database, TicketStatus } from '../../db/schema.js';

export interface TicketActivity {
  /** Tickets the user opened, by their current status. */
  readonly ticketsByStatus: Readonly<Record<TicketStatus, number>>;
  /** Messages the user wrote, on any ticket. */
  readonly messagesWritten: number;
}

export class TicketsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async activityOf(userId: number): Promise<TicketActivity> {
    const [statusRows, messages] = await Promise.all([
      this.db
        .selectFrom('tickets')
        .select((eb) => ['status', eb.fn.countAll().as('count')])
        .where('owner_id', '=', userId)
        .groupBy('status')
        .execute(),
      this.db
        .selectFrom('ticket_messages')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('author_id', '=', userId)
        .executeTakeFirstOrThrow(),
    ]);
    const ticketsByStatus: Record<TicketStatus, number> = { pending: 0, in_progress: 0, closed: 0 };
    for (const row of statusRows) ticketsByStatus[row.status] = Number(row.count);
    return { ticketsByStatus, messagesWritten: Number(messages.count) };
  }
}
