import { Type } from 'typebox';
import { PASSWORD_RULES } from '../../domain/user.js';
import {
  Envelope,
  NewPassword,
  Nullable,
  RoleSchema,
  SignInSchema,
  Username,
} from '../../http/schemas.js';

export const UserSchema = Type.Object({
  username: Type.String(),
  role: RoleSchema,
  servers: Type.Array(Type.String(), { description: 'Servers assigned by an admin' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastLoginAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  signIn: SignInSchema,
  twoFactor: Type.Boolean({ description: 'Whether password sign-in asks for a code too' }),
});

export const UserEnvelope = Envelope(UserSchema);
export const UserListEnvelope = Envelope(Type.Array(UserSchema));
export const DeletedEnvelope = Envelope(Type.Object({ username: Type.String() }));

export const RoleBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });

export const ServersBody = Type.Object(
  {
    servers: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 10_000,
      description: "Replaces the user's list; every name must be an existing server",
    }),
  },
  { additionalProperties: false },
);

export const SetPasswordLinkSchema = Nullable(
  Type.Object(
    {
      url: Type.String({
        description:
          '`<PUBLIC_URL>/set-password#token=…`: give it to the person; good once, for 24 hours',
      }),
      expiresAt: Type.String({ format: 'date-time' }),
    },
    { description: 'A one-time link where the person sets their password' },
  ),
);

export const CreateUserBody = Type.Object(
  {
    username: Username,
    role: RoleSchema,
    password: Type.Optional(
      Type.String({
        ...PASSWORD_RULES,
        description: 'Without it the account has no password yet: the answer carries a link',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UserCreatedEnvelope = Envelope(
  Type.Object({ user: UserSchema, setPasswordLink: SetPasswordLinkSchema }),
);

export const PasswordBody = Type.Union(
  [
    Type.Object({ password: NewPassword }, { additionalProperties: false }),
    Type.Object(
      {
        link: Type.Literal(true, {
          description: 'Take the password away and answer a link where the person sets a new one',
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: '`{ password }` sets it; `{ link: true }` issues a set-password link' },
);

export const PasswordSetEnvelope = Envelope(
  Type.Object({
    setPasswordLink: SetPasswordLinkSchema,
    revokedApiKeys: Type.Integer({ description: "How many of the user's API keys were revoked" }),
  }),
);
