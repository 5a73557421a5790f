import { responses, UsernameParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { UserWithServers } from './users.repository.js';
import {
  DeletedEnvelope,
  RoleBody,
  ServersBody,
  UserEnvelope,
  UserListEnvelope,
} from './users.schemas.js';
import type { UsersService } from './users.service.js';

const view = (user: UserWithServers) => ({
  username: user.username,
  role: user.role,
  servers: [...user.servers],
  createdAt: user.createdAt,
  lastLoginAt: user.lastLoginAt,
  signIn: { hasPassword: user.signIn.hasPassword, providers: [...user.signIn.providers] },
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
