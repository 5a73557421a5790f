import { Type } from 'typebox';
import { TICKET_STATUSES } from '../../db/schema.js';
import { Envelope, RoleSchema } from '../../http/schemas.js';

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

export const TicketEnvelope = Envelope(
  Type.Object({
    ...Fields,
    messages: Type.Array(MessageSchema, { description: 'In the order they were stored' }),
    history: Type.Array(
      Type.Object({
        by: Person,
        from: StatusSchema,
        to: StatusSchema,
        at: Type.String({ format: 'date-time' }),
      }),
      { description: 'Every status change, oldest first' },
    ),
  }),
);

export const TicketListEnvelope = Envelope(
  Type.Array(Type.Object({ ...Fields, messageCount: Type.Integer({ minimum: 0 }) })),
);

export const MessageEnvelope = Envelope(MessageSchema);

export const TicketParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});

export const ListQuery = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  },
  { additionalProperties: false },
);

export const CreateBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

export const MessageBody = Type.Object(
  { text: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

export const StatusBody = Type.Object({ status: StatusSchema }, { additionalProperties: false });
