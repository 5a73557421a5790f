import { Type } from 'typebox';
import {
  Envelope,
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

export const ChallengeResponseSchema = Type.Object(
  {
    two_factor_required: Type.Literal(true),
    challenge: Type.String({
      description:
        'Send it with a code to POST /api/auth/login/2fa: good for 5 minutes and one sign-in',
    }),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { description: 'The password was right and the account has two-factor sign-in: no token yet' },
);

export const LoginResponseSchema = Type.Union([TokenResponseSchema, ChallengeResponseSchema]);

export const SecondFactorBody = Type.Object(
  {
    challenge: Type.String({ minLength: 1, maxLength: 128 }),
    code: Type.String({
      minLength: 1,
      maxLength: 32,
      description: 'The 6 digits of the authenticator app, or one of the recovery codes',
    }),
  },
  { additionalProperties: false },
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
    twoFactor: Type.Object({
      enabled: Type.Boolean({ description: 'Password sign-in asks for a code too' }),
      mustEnrol: Type.Boolean({
        description:
          'The role requires two-factor sign-in and it is not set up: nothing but setting it up is allowed',
      }),
    }),
  },
  { description: 'The caller (flat object, no envelope)' },
);

/** A set-password link's token: what follows `#token=` in the link. */
const LinkToken = Type.String({
  minLength: 1,
  maxLength: 128,
  description: 'What follows `#token=` in the link',
});

export const LinkCheckBody = Type.Object({ token: LinkToken }, { additionalProperties: false });

export const LinkCheckEnvelope = Envelope(
  Type.Object({
    username: Type.String({ description: 'The account whose password the link sets' }),
    expiresAt: Type.String({ format: 'date-time' }),
  }),
);

export const SetPasswordBody = Type.Object(
  { token: LinkToken, password: NewPassword },
  { additionalProperties: false },
);
