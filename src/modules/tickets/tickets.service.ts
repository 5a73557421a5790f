/**
 * Support tickets: anyone signed in (not banned) opens tickets and writes on their own; admins
 * and support see, answer and move every ticket through pending, in_progress and closed. A
 * ticket the caller may not see is answered exactly like one that does not exist (404).
 */
import type { TicketStatus } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import type { User } from '../users/users.repository.js';
import type {
  TicketDetail,
  TicketMessage,
  TicketSummary,
  TicketsRepository,
} from './tickets.repository.js';

const isStaff = (user: User): boolean => user.role === 'admin' || user.role === 'support';

export class TicketsService {
  constructor(
    private readonly deps: { readonly tickets: TicketsRepository; readonly now: () => Date },
  ) {}

  async list(
    user: User,
    query: { status?: TicketStatus | undefined; limit: number; offset: number },
  ): Promise<{ tickets: TicketSummary[]; total: number }> {
    return this.deps.tickets.list({ ...query, ownerId: isStaff(user) ? undefined : user.id });
  }

  async create(user: User, ticket: { title: string; description: string }): Promise<TicketDetail> {
    const id = await this.deps.tickets.insert({
      ownerId: user.id,
      ...ticket,
      now: this.deps.now(),
    });
    return this.#detail(id);
  }

  async get(user: User, id: number): Promise<TicketDetail> {
    await this.#requireVisible(user, id);
    return this.#detail(id);
  }

  async addMessage(user: User, id: number, text: string): Promise<TicketMessage> {
    await this.#requireVisible(user, id);
    const result = await this.deps.tickets.addMessage({
      ticketId: id,
      authorId: user.id,
      text,
      now: this.deps.now,
    });
    if (result === 'missing') throw ticketNotFound();
    if (result === 'closed') {
      throw new AppError('CONFLICT', 'The ticket is closed; reopen it to add messages');
    }
    return {
      id: result.id,
      author: { username: user.username, role: user.role, deleted: false },
      text,
      createdAt: result.createdAt,
    };
  }

  /** Admin and support only (the route checks the role); records who changed what. */
  async setStatus(user: User, id: number, status: TicketStatus): Promise<TicketDetail> {
    const result = await this.deps.tickets.setStatus({
      ticketId: id,
      status,
      by: user.id,
      now: this.deps.now,
    });
    if (result === 'missing') throw ticketNotFound();
    return this.#detail(id);
  }

  async #requireVisible(user: User, id: number): Promise<void> {
    const owner = await this.deps.tickets.ownerOf(id);
    if (owner === undefined || (!isStaff(user) && owner !== user.id)) throw ticketNotFound();
  }

  async #detail(id: number): Promise<TicketDetail> {
    const ticket = await this.deps.tickets.detail(id);
    if (!ticket) throw ticketNotFound();
    return ticket;
  }
}

const ticketNotFound = (): AppError => notFound('Ticket');
