/** Where a support ticket stands. */

export type TicketStatus = 'pending' | 'in_progress' | 'closed';
export const TICKET_STATUSES: readonly TicketStatus[] = ['pending', 'in_progress', 'closed'];

/** What one user did on tickets: for their statistics. */
export interface TicketActivity {
  /** Tickets the user opened, by their current status. */
  readonly ticketsByStatus: Readonly<Record<TicketStatus, number>>;
  /** Messages the user wrote, on any ticket. */
  readonly messagesWritten: number;
}
