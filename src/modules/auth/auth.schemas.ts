import { Type } from 'typebox';
import {
  SignInSchema,
  NewPassword,
  PasswordAttempt,
  RoleSchema,
  Username,
  UsernameLookup,
} from '../../http/schemas.js';

export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String({ description: 'JWT (HS256), valid for 7 days' }),
    token_type: Type.Literal('bearer'),
    username: Type.String(),
    role: RoleSchema,
  },
  { description: 'A fresh token (flat object, no envelope)' },
);

export const RegisterBody = Type.Object(
  { username: Username, password: NewPassword },
  { additionalProperties: false },
);

export const LoginBody = Type.Object(
  { username: UsernameLookup, password: PasswordAttempt },
  { additionalProperties: false },
);

export const MeResponse = Type.Object(
  {
    username: Type.String(),
    role: RoleSchema,
    servers: Type.Array(Type.String(), {
      description: 'Servers the caller can reach: every server for an admin',
    }),
    signIn: SignInSchema,
  },
  { description: 'The caller (flat object, no envelope)' },
);
