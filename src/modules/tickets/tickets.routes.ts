import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  CreateBody,
  HistoryPageEnvelope,
  ListQuery,
  MessageBody,
  MessageEnvelope,
  MessagePageEnvelope,
  PageQuery,
  StatusBody,
  TicketEnvelope,
  TicketListEnvelope,
  TicketParams,
} from './tickets.schemas.js';
import type { TicketsService } from './tickets.service.js';

const TAGS = ['tickets'];

/**
 * The body limit of the routes that take a description or message: room for any text within
 * the limit however it is escaped (`\u0001` is 6 bytes of JSON for 1 of text) plus the rest of
 * the body, and no more, so what one request makes the panel parse follows the ticket limit.
 */
const bodyLimitFor = (messageMaxBytes: number): number => messageMaxBytes * 6 + 64 * 1024;

export function ticketsRoutes(
  app: App,
  tickets: TicketsService,
  limits: { messageMaxBytes: number },
): void {
  const bodyLimit = bodyLimitFor(limits.messageMaxBytes);

  app.get(
    '/api/tickets',
    {
      schema: {
        tags: TAGS,
        summary: 'Tickets, newest activity first: own ones, or all for admin and support',
        description:
          'Paginated with limit (1-200, default 50) and offset; X-Total-Count holds the number of matching tickets.',
        querystring: ListQuery,
        response: responses(TicketListEnvelope, 400, 401, 403),
      },
    },
    async (request, reply) => {
      const { tickets: page, total } = await tickets.list(currentUser(request), request.query);
      reply.header('X-Total-Count', String(total));
      return { message: 'Tickets', data: page };
    },
  );

  app.post(
    '/api/tickets/create',
    {
      bodyLimit,
      schema: {
        tags: TAGS,
        summary: 'Open a ticket (status pending); 413 when the description is over the limit',
        description:
          'A user (not staff) may open TICKETS_PER_HOUR tickets (10 by default) per hour: past that, 429 `RATE_LIMITED` with Retry-After.',
        body: CreateBody(limits.messageMaxBytes),
        response: responses(TicketEnvelope, 400, 401, 403, 413, 429),
      },
    },
    async (request) => ({
      message: 'Ticket created',
      data: await tickets.create(currentUser(request), request.body),
    }),
  );

  app.get(
    '/api/tickets/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'One ticket with its newest messages and status changes',
        description:
          'Older messages and status changes: follow olderMessagesCursor and olderHistoryCursor.',
        params: TicketParams,
        response: responses(TicketEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Ticket',
      data: await tickets.get(currentUser(request), request.params.id),
    }),
  );

  app.get(
    '/api/tickets/:id/messages',
    {
      schema: {
        tags: TAGS,
        summary: "A page of a ticket's messages: the newest, or those before a cursor",
        description:
          'Without before: the newest messages. With before (an olderMessagesCursor): the ones stored before that page. A cursor of another ticket or list: 400.',
        params: TicketParams,
        querystring: PageQuery,
        response: responses(MessagePageEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Messages',
      data: await tickets.messages(currentUser(request), request.params.id, request.query),
    }),
  );

  app.get(
    '/api/tickets/:id/history',
    {
      schema: {
        tags: TAGS,
        summary: "A page of a ticket's status changes: the newest, or those before a cursor",
        description:
          'Without before: the newest changes. With before (an olderHistoryCursor): the ones made before that page. A cursor of another ticket or list: 400.',
        params: TicketParams,
        querystring: PageQuery,
        response: responses(HistoryPageEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Status history',
      data: await tickets.history(currentUser(request), request.params.id, request.query),
    }),
  );

  app.post(
    '/api/tickets/:id/message',
    {
      bodyLimit,
      schema: {
        tags: TAGS,
        summary: 'Add a message; 409 when the ticket is closed, 413 when over the limit',
        description:
          'A user (not staff) may write TICKET_MESSAGES_PER_HOUR messages (60 by default) per hour: past that, 429 `RATE_LIMITED` with Retry-After.',
        params: TicketParams,
        body: MessageBody(limits.messageMaxBytes),
        response: responses(MessageEnvelope, 400, 401, 403, 404, 409, 413, 429),
      },
    },
    async (request) => ({
      message: 'Message added',
      data: await tickets.addMessage(currentUser(request), request.params.id, request.body.text),
    }),
  );

  app.put(
    '/api/tickets/:id/status',
    {
      config: { access: { action: 'tickets.manage' } },
      schema: {
        tags: TAGS,
        summary: 'Set the status (admin, support); every change is kept in the history',
        params: TicketParams,
        body: StatusBody,
        response: responses(TicketEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Status set',
      data: await tickets.setStatus(currentUser(request), request.params.id, request.body.status),
    }),
  );
}
