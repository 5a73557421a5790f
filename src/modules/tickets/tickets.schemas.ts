import { Type } from 'typebox';
import { TICKET_STATUSES } from '../../domain/ticket.js';
import { Envelope, RoleSchema } from '../../http/schemas.js';
import { MAX_PAGE_SIZE, PAGE_SIZE, PAGE_TEXT_BYTES } from './tickets.service.js';

export const StatusSchema = Type.Union(TICKET_STATUSES.map((status) => Type.Literal(status)));

const Person = Type.Object({
  username: Type.String({ description: "The current name; a deleted user's last name" }),
  role: RoleSchema,
  deleted: Type.Boolean(),
});

const Fields = {
  id: Type.Integer(),
  title: Type.String(),
  description: Type.String(),
  status: StatusSchema,
  owner: Person,
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time', description: 'Last message or status change' }),
};

export const MessageSchema = Type.Object({
  id: Type.Integer(),
  author: Person,
  text: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

const Cursor = Type.String({
  description: 'Opaque; pass it as `before` to the list endpoint for the page before this one',
});

const MessagePageFields = {
  messages: Type.Array(MessageSchema, {
    description: `Oldest first: at most the page's limit of messages and ${PAGE_TEXT_BYTES} bytes of text, but at least one`,
  }),
  messageCount: Type.Integer({ minimum: 0, description: 'Messages of the whole ticket' }),
  olderMessagesCursor: Type.Union([Cursor, Type.Null()], {
    description: 'For GET /api/tickets/{id}/messages?before=…; null when no older message exists',
  }),
};

const HistoryPageFields = {
  history: Type.Array(
    Type.Object({
      by: Person,
      from: StatusSchema,
      to: StatusSchema,
      at: Type.String({ format: 'date-time' }),
    }),
    { description: "Status changes, oldest first: the page's newest ones" },
  ),
  historyCount: Type.Integer({ minimum: 0, description: 'Status changes of the whole ticket' }),
  olderHistoryCursor: Type.Union([Cursor, Type.Null()], {
    description: 'For GET /api/tickets/{id}/history?before=…; null when no older change exists',
  }),
};

export const TicketEnvelope = Envelope(
  Type.Object(
    { ...Fields, ...MessagePageFields, ...HistoryPageFields },
    { description: `With its newest ${PAGE_SIZE} messages and status changes` },
  ),
);

export const MessagePageEnvelope = Envelope(Type.Object(MessagePageFields));

export const HistoryPageEnvelope = Envelope(Type.Object(HistoryPageFields));

export const TicketListEnvelope = Envelope(
  Type.Array(Type.Object({ ...Fields, messageCount: Type.Integer({ minimum: 0 }) })),
);

export const MessageEnvelope = Envelope(MessageSchema);

export const TicketParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});

export const PageQuery = Type.Object(
  {
    before: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'A cursor from the previous page; unset: the newest page',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: PAGE_SIZE }),
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  },
  { additionalProperties: false },
);

/**
 * A description or message. Its limit is in UTF-8 bytes, which a schema cannot count: the service
 * checks it and answers 413, the status of every size limit.
 */
const LimitedText = (maxBytes: number) =>
  Type.String({
    minLength: 1,
    description: `At most ${maxBytes} bytes of UTF-8 (TICKET_MESSAGE_MAX_BYTES); longer: 413`,
  });

export const CreateBody = (maxBytes: number) =>
  Type.Object(
    { title: Type.String({ minLength: 1, maxLength: 200 }), description: LimitedText(maxBytes) },
    { additionalProperties: false },
  );

export const MessageBody = (maxBytes: number) =>
  Type.Object({ text: LimitedText(maxBytes) }, { additionalProperties: false });

export const StatusBody = Type.Object({ status: StatusSchema }, { additionalProperties: false });
