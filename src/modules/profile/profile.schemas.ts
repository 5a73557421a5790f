import { Type } from 'typebox';
import {
  Envelope,
  NewPassword,
  PasswordAttempt,
  RoleSchema,
  Username,
} from '../../http/schemas.js';
import { TokenResponseSchema } from '../auth/auth.schemas.js';

const Count = Type.Integer({ minimum: 0 });

export const StatsEnvelope = Envelope(
  Type.Object({
    username: Type.String(),
    role: RoleSchema,
    createdAt: Type.String({ format: 'date-time', description: 'When the account was created' }),
    lastLoginAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Last successful password login; null if never',
    }),
    serverCount: Type.Integer({
      minimum: 0,
      description: 'Servers the user can reach (every server for an admin)',
    }),
    tickets: Type.Object(
      { total: Count, pending: Count, in_progress: Count, closed: Count },
      { description: 'Tickets the user opened, by current status' },
    ),
    messagesWritten: Type.Integer({
      minimum: 0,
      description: 'Ticket messages the user wrote, on any ticket',
    }),
  }),
);

export const RenameBody = Type.Object(
  {
    new_username: Username,
    password: Type.Optional(PasswordAttempt),
  },
  {
    additionalProperties: false,
    description: '`password` is the current password; only an account without one may omit it',
  },
);

export const RenamedEnvelope = Envelope(Type.Object({ username: Type.String(), role: RoleSchema }));

export const PasswordBody = Type.Object(
  {
    old_password: Type.Optional(PasswordAttempt),
    new_password: NewPassword,
    revokeApiKeys: Type.Optional(
      Type.Boolean({ default: true, description: 'Also revoke every API key of yours (default)' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      '`old_password` is required, except for an account made by an OpenID Connect sign-in that has no password yet',
  },
);

export const PasswordChangedEnvelope = Envelope(
  Type.Object({
    ...TokenResponseSchema.properties,
    revokedApiKeys: Type.Integer({ minimum: 0, description: 'How many API keys were revoked' }),
  }),
);
