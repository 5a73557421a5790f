import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  CreateBody,
  ListQuery,
  MessageBody,
  MessageEnvelope,
  StatusBody,
  TicketEnvelope,
  TicketListEnvelope,
  TicketParams,
} from './tickets.schemas.js';
import type { TicketsService } from './tickets.service.js';

const TAGS = ['tickets'];

export function ticketsRoutes(app: App, tickets: TicketsService): void {
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
      schema: {
        tags: TAGS,
        summary: 'Open a ticket (status pending)',
        body: CreateBody,
        response: responses(TicketEnvelope, 400, 401, 403, 413),
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
        summary: 'One ticket with its messages and status history',
        params: TicketParams,
        response: responses(TicketEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Ticket',
      data: await tickets.get(currentUser(request), request.params.id),
    }),
  );

  app.post(
    '/api/tickets/:id/message',
    {
      schema: {
        tags: TAGS,
        summary: 'Add a message; 409 when the ticket is closed',
        params: TicketParams,
        body: MessageBody,
        response: responses(MessageEnvelope, 400, 401, 403, 404, 409, 413),
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
      config: { access: { roles: ['admin', 'support'] } },
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
