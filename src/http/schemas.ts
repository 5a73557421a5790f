/**
 * Schemas shared by every module: the envelope of docs/api.md, contract §2 and the error body, plus
 * the field formats that several routes accept (usernames, passwords, roles).
 */
import { Type, type TSchema } from 'typebox';
import { PASSWORD_RULES, ROLES, USERNAME_RULES } from '../domain/user.js';

export const ErrorBody = Type.Object(
  {
    message: Type.String(),
    code: Type.String({ description: 'Stable UPPER_SNAKE machine code' }),
    statusCode: Type.Integer(),
    details: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
    ),
  },
  { $id: 'ErrorBody', description: 'Every error has this shape' },
);

/** `schema`, or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** `{ message, data }`, the shape of every successful response but register, login and me. */
export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({ message: Type.String(), data });

/**
 * The response schemas of a route: 200 with `ok`, and the error body for each listed status. The
 * 200 schema is also what keeps anything undeclared, such as a password hash, out of the reply.
 */
export function responses<T extends TSchema>(ok: T, ...errors: readonly number[]) {
  return { 200: ok, ...errorResponses(...errors) } as { 200: T } & Record<number, TSchema>;
}

/** The error body for each listed status (a route whose success is not a 200 adds its own). */
export function errorResponses(...errors: readonly number[]): Record<number, TSchema> {
  const schemas: Record<number, TSchema> = {};
  for (const status of errors) schemas[status] = Type.Ref('ErrorBody');
  return schemas;
}

export const Username = Type.String({
  ...USERNAME_RULES,
  description: '3 to 32 of A-Z a-z 0-9 _ . -, unique regardless of case',
});

/** Any string a client may send where a username is looked up (not created). */
export const UsernameLookup = Type.String({ minLength: 1, maxLength: 256 });

export const NewPassword = Type.String({ ...PASSWORD_RULES });

/** A password being checked: any length up to the limit, so a wrong one is a 401, not a 400. */
export const PasswordAttempt = Type.String({ minLength: 1, maxLength: 1024 });

/**
 * The body fields that prove the owner is at the keyboard before an action that outlives the
 * session (making an API key, adding an SSH key), spread into that action's body: the password,
 * and a code when two-factor sign-in is on (docs/api.md, API keys).
 */
export const IdentityProofFields = {
  password: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Your current password; required unless your account has none',
    }),
  ),
  code: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'A code of your authenticator app, or a recovery code: required when two-factor sign-in is on',
    }),
  ),
};

export const RoleSchema = Type.Union(ROLES.map((role) => Type.Literal(role)));

export const UsernameParams = Type.Object({ username: UsernameLookup });

export const SignInSchema = Type.Object(
  {
    hasPassword: Type.Boolean({ description: 'Whether the account has a password' }),
    providers: Type.Array(Type.String(), { description: 'Linked OpenID Connect providers' }),
  },
  { description: 'How the account can sign in' },
);
