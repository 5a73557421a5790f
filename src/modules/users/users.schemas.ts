import { Type } from 'typebox';
import { Envelope, RoleSchema, SignInSchema } from '../../http/schemas.js';

export const UserSchema = Type.Object({
  username: Type.String(),
  role: RoleSchema,
  servers: Type.Array(Type.String(), { description: 'Servers assigned by an admin' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastLoginAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  signIn: SignInSchema,
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
