import { Type, type TSchema } from 'typebox';
import { errorResponses, responses, UsernameParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { UserWithServers } from './users.repository.js';
import {
  CreateUserBody,
  DeletedEnvelope,
  PasswordBody,
  PasswordSetEnvelope,
  RoleBody,
  ServersBody,
  UserCreatedEnvelope,
  UserEnvelope,
  UserListEnvelope,
} from './users.schemas.js';
import type { UsersService } from './users.service.js';

/** The response schemas of a route that answers 201 with `ok` (see `responses`). */
const created = <T extends TSchema>(ok: T, ...errors: readonly number[]) =>
  ({ 201: ok, ...errorResponses(...errors) }) as { 201: T } & Record<number, TSchema>;

const view = (user: UserWithServers) => ({
  username: user.username,
  role: user.role,
  servers: [...user.servers],
  createdAt: user.createdAt,
  lastLoginAt: user.lastLoginAt,
  signIn: { hasPassword: user.signIn.hasPassword, providers: [...user.signIn.providers] },
  twoFactor: user.twoFactor,
});

export function usersRoutes(app: App, users: UsersService): void {
  app.get(
    '/api/users',
    {
      config: { access: { action: 'users.list' } },
      schema: {
        tags: ['users'],
        summary: 'List every user (admin, support)',
        response: responses(UserListEnvelope, 401, 403),
      },
    },
    async () => ({ message: 'Users', data: (await users.list()).map(view) }),
  );

  app.post(
    '/api/users',
    {
      config: { access: { action: 'users.manage' } },
      schema: {
        tags: ['users'],
        summary: 'Make an account (admin)',
        description:
          'With `password`, the account can sign in at once and `setPasswordLink` is null. Without, it has no password yet and the answer carries a one-time link (`<PUBLIC_URL>/set-password#token=…`, good for 24 hours) to hand to the person. Username and password follow the rules of registration; 409 `USERNAME_TAKEN` for a name in use.',
        body: CreateUserBody,
        response: created(UserCreatedEnvelope, 400, 401, 403, 409),
      },
    },
    async (request, reply) => {
      const made = await users.create(request.body);
      void reply.code(201);
      return {
        message: 'User created',
        data: { user: view(made.user), setPasswordLink: made.setPasswordLink },
      };
    },
  );

  app.put(
    '/api/users/:username/password',
    {
      config: { access: { action: 'users.manage' } },
      schema: {
        tags: ['users'],
        summary: "Set a user's password, or issue a link to set it (admin)",
        description:
          '`{ password }` sets it; `{ link: true }` takes the current password away and answers a one-time link (24 hours) where the person sets a new one, ending any earlier link. Either way every session token of the user is revoked at once, and every API key of theirs. An account that signs in only through OpenID Connect may be given a password this way.',
        params: UsernameParams,
        body: PasswordBody,
        response: responses(PasswordSetEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const { setPasswordLink, revokedApiKeys } = await users.setPassword(
        request.params.username,
        request.body,
      );
      return {
        message: 'password' in request.body ? 'Password set' : 'Set-password link issued',
        data: { setPasswordLink, revokedApiKeys },
      };
    },
  );

  app.delete(
    '/api/users/:username/2fa',
    {
      config: { access: { action: 'users.manage' } },
      schema: {
        tags: ['users'],
        summary: "Turn a user's two-factor sign-in off (admin)",
        description:
          'Removes their authenticator secret and recovery codes: they sign in with the password alone (and must set it up again if their role requires it). 409 `TWO_FACTOR_OFF` when it is not on.',
        params: UsernameParams,
        response: {
          204: Type.Null({ description: 'Turned off' }),
          ...errorResponses(401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      await users.turnOffTwoFactor(request.params.username);
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/api/users/:username/role',
    {
      config: { access: { action: 'users.manage' } },
      schema: {
        tags: ['users'],
        summary: "Change a user's role (admin); the last admin cannot be demoted",
        params: UsernameParams,
        body: RoleBody,
        response: responses(UserEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Role changed',
      data: view(await users.setRole(request.params.username, request.body.role)),
    }),
  );

  app.put(
    '/api/users/:username/servers',
    {
      config: { access: { action: 'users.manage' } },
      schema: {
        tags: ['users'],
        summary: 'Set which servers a user can reach (admin)',
        params: UsernameParams,
        body: ServersBody,
        response: responses(UserEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Servers set',
      data: view(await users.setServers(request.params.username, request.body.servers)),
    }),
  );

  app.delete(
    '/api/users/:username',
    {
      config: { access: { action: 'users.manage' } },
      schema: {
        tags: ['users'],
        summary: 'Delete a user (admin); their tickets and messages stay',
        params: UsernameParams,
        response: responses(DeletedEnvelope, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const username = await users.remove(request.params.username);
      return { message: 'User deleted', data: { username } };
    },
  );
}
