/**
 * Support tickets: anyone signed in (not banned) opens tickets and writes on their own; admins
 * and support see, answer and move every ticket through pending, in_progress and closed. A
 * ticket the caller may not see is answered exactly like one that does not exist (404).
 *
 * No read holds a whole ticket: a description and each message are at most `messageMaxBytes`
 * of UTF-8, and a read carries one page of messages and one of status changes, whose cursors
 * lead to the older ones.
 */
import type { TicketStatus } from '../../domain/ticket.js';
import type { RateLimit } from '../../rate-limit.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import { can } from '../../domain/policy.js';
import type { User } from '../../domain/user.js';
import { decodeCursor, encodeCursor, type CursorList } from './tickets.cursor.js';
import type {
  Page,
  StatusChange,
  Ticket,
  TicketMessage,
  TicketSummary,
  TicketsRepository,
} from './tickets.repository.js';

/** Entries of a list that a ticket read carries, and the default page of the list endpoints. */
export const PAGE_SIZE = 50;
/** The largest page a client may ask for. */
export const MAX_PAGE_SIZE = 100;
/**
 * Message text one page holds at most (always at least one message, however long): with the
 * description, this bounds what one ticket read makes the panel hold, even for messages stored
 * before the length limit existed.
 */
export const PAGE_TEXT_BYTES = 1024 * 1024;

export interface MessagePage {
  /** Oldest first. */
  readonly messages: readonly TicketMessage[];
  readonly messageCount: number;
  /** Pass as `before` for the page before this one; `null`: nothing older. */
  readonly olderMessagesCursor: string | null;
}

export interface HistoryPage {
  /** Oldest first. */
  readonly history: readonly StatusChange[];
  readonly historyCount: number;
  /** Pass as `before` for the page before this one; `null`: nothing older. */
  readonly olderHistoryCursor: string | null;
}

export type TicketDetail = Ticket & MessagePage & HistoryPage;

/** Which page of a list: the newest, or the one before a cursor. */
export interface PageQuery {
  readonly before?: string | undefined;
  readonly limit: number;
}

const isStaff = (user: User): boolean => can(user, 'tickets.manage');

/** What a TicketsService is made from. */
export interface TicketsServiceDeps {
  readonly tickets: TicketsRepository;
  readonly now: () => Date;
  /** Largest description or message, in UTF-8 bytes (TICKET_MESSAGE_MAX_BYTES). */
  readonly messageMaxBytes: number;
  /** Hears `ticket-event` once a ticket is opened, answered by staff or moved on. */
  readonly events?: Pick<PanelEvents, 'emit'>;
  /**
   * Tickets and messages one user may write per hour (TICKETS_PER_HOUR,
   * TICKET_MESSAGES_PER_HOUR); staff are not counted (docs/security.md, "Rate limits").
   */
  readonly limits?: { readonly tickets: RateLimit; readonly messages: RateLimit };
}

export class TicketsService {
  readonly #deps: TicketsServiceDeps;

  constructor(deps: TicketsServiceDeps) {
    this.#deps = deps;
  }

  async list(
    user: User,
    query: { status?: TicketStatus | undefined; limit: number; offset: number },
  ): Promise<{ tickets: TicketSummary[]; total: number }> {
    return this.#deps.tickets.list({ ...query, ownerId: isStaff(user) ? undefined : user.id });
  }

  async create(user: User, ticket: { title: string; description: string }): Promise<TicketDetail> {
    this.#requireWithinLimit('description', ticket.description);
    const id = await this.#counted(user, 'tickets', () =>
      this.#deps.tickets.insert({ ownerId: user.id, ...ticket, now: this.#deps.now() }),
    );
    const detail = await this.#detail(id);
    this.#deps.events?.emit('ticket-event', id, 'created', {
      title: detail.title,
      owner: detail.owner.username,
      by: user.username,
      status: detail.status,
    });
    return detail;
  }

  async get(user: User, id: number): Promise<TicketDetail> {
    await this.#requireVisible(user, id);
    return this.#detail(id);
  }

  /** A page of the ticket's messages; 400 for a cursor not made for them. */
  async messages(user: User, id: number, query: PageQuery): Promise<MessagePage> {
    await this.#requireVisible(user, id);
    return this.#messages(id, query.limit, cursorPosition('messages', id, query.before));
  }

  /** A page of the ticket's status changes; 400 for a cursor not made for them. */
  async history(user: User, id: number, query: PageQuery): Promise<HistoryPage> {
    await this.#requireVisible(user, id);
    return this.#history(id, query.limit, cursorPosition('history', id, query.before));
  }

  async addMessage(user: User, id: number, text: string): Promise<TicketMessage> {
    this.#requireWithinLimit('text', text);
    await this.#requireVisible(user, id);
    const result = await this.#counted(user, 'messages', async () => {
      const added = await this.#deps.tickets.addMessage({
        ticketId: id,
        authorId: user.id,
        text,
        now: this.#deps.now,
      });
      if (added === 'missing') throw ticketNotFound();
      if (added === 'closed') {
        throw new AppError('CONFLICT', 'The ticket is closed; reopen it to add messages');
      }
      return added;
    });
    // Answered: a staff member wrote on somebody else's ticket.
    if (isStaff(user)) {
      const ticket = await this.#deps.tickets.ticket(id);
      if (ticket && ticket.owner.username !== user.username) {
        this.#deps.events?.emit('ticket-event', id, 'answered', {
          title: ticket.title,
          owner: ticket.owner.username,
          by: user.username,
          status: ticket.status,
        });
      }
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
    const result = await this.#deps.tickets.setStatus({
      ticketId: id,
      status,
      by: user.id,
      now: this.#deps.now,
    });
    if (result === 'missing') throw ticketNotFound();
    const detail = await this.#detail(id);
    if (result.from !== result.to) {
      this.#deps.events?.emit('ticket-event', id, 'status-changed', {
        title: detail.title,
        owner: detail.owner.username,
        by: user.username,
        status: result.to,
        from: result.from,
      });
    }
    return detail;
  }

  /** 413 when `text` is longer than the limit in UTF-8 bytes (the length that is stored). */
  #requireWithinLimit(field: 'description' | 'text', text: string): void {
    const bytes = Buffer.byteLength(text, 'utf8');
    const limit = this.#deps.messageMaxBytes;
    if (bytes <= limit) return;
    const what = field === 'description' ? 'The description' : 'The message';
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `${what} is ${bytes} bytes long; at most ${limit} bytes (UTF-8) are accepted`,
      { details: [{ path: `body/${field}`, message: `must be at most ${limit} bytes of UTF-8` }] },
    );
  }

  /**
   * Runs `write` as one of the user's tickets or messages of the hour: 429 with Retry-After past
   * the limit; a write that fails is not counted. Staff are not counted.
   */
  async #counted<T>(user: User, kind: 'tickets' | 'messages', write: () => Promise<T>): Promise<T> {
    const limit = this.#deps.limits?.[kind];
    if (limit === undefined || isStaff(user)) return write();
    const taken = limit.take(String(user.id));
    if (taken.kind === 'refused') {
      throw new AppError(
        'RATE_LIMITED',
        kind === 'tickets'
          ? 'You opened too many tickets in the last hour; try again later'
          : 'You wrote too many messages in the last hour; try again later',
        { retryAfter: taken.retryAfterSeconds },
      );
    }
    try {
      return await write();
    } catch (error) {
      taken.release();
      throw error;
    }
  }

  async #requireVisible(user: User, id: number): Promise<void> {
    const owner = await this.#deps.tickets.ownerOf(id);
    if (owner === undefined || (!isStaff(user) && owner !== user.id)) throw ticketNotFound();
  }

  async #detail(id: number): Promise<TicketDetail> {
    const [ticket, messages, history] = await Promise.all([
      this.#deps.tickets.ticket(id),
      this.#messages(id, PAGE_SIZE),
      this.#history(id, PAGE_SIZE),
    ]);
    if (!ticket) throw ticketNotFound();
    return { ...ticket, ...messages, ...history };
  }

  async #messages(id: number, limit: number, before?: number): Promise<MessagePage> {
    const page = await this.#deps.tickets.messagePage(id, {
      before,
      limit,
      maxTextBytes: PAGE_TEXT_BYTES,
    });
    return {
      messages: page.items,
      messageCount: page.total,
      olderMessagesCursor: cursorAfter('messages', id, page),
    };
  }

  async #history(id: number, limit: number, before?: number): Promise<HistoryPage> {
    const page = await this.#deps.tickets.historyPage(id, { before, limit });
    return {
      history: page.items,
      historyCount: page.total,
      olderHistoryCursor: cursorAfter('history', id, page),
    };
  }
}

const ticketNotFound = (): AppError => notFound('Ticket');

const cursorAfter = (list: CursorList, ticketId: number, page: Page<unknown>): string | null =>
  page.olderThan === null ? null : encodeCursor(list, ticketId, page.olderThan);

/** Where a `before` cursor points; `undefined` (the newest page) when none was given. */
function cursorPosition(list: CursorList, ticketId: number, cursor?: string): number | undefined {
  if (cursor === undefined) return undefined;
  const position = decodeCursor(list, ticketId, cursor);
  if (position === undefined) {
    throw new AppError('VALIDATION_FAILED', `The cursor does not belong to this ticket's ${list}`, {
      details: [
        { path: 'querystring/before', message: `is not a cursor of this ticket's ${list}` },
      ],
    });
  }
  return position;
}
