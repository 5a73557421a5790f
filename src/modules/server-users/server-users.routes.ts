import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  PermissionsBody,
  ServerPeopleEnvelope,
  ServerPersonEnvelope,
  ServerPersonRemovedEnvelope,
  ServerUserParams,
  ServerUsersParams,
} from './server-users.schemas.js';
import type { ServerUsersService } from './server-users.service.js';

const TAGS = ['servers'];

/** A server's people and their permissions (docs/api.md, "Per-server permissions"). */
export function serverUsersRoutes(app: App, people: ServerUsersService): void {
  app.get(
    '/api/servers/:server/users',
    {
      schema: {
        tags: TAGS,
        summary: 'Who has the server in their list, with their permissions on it',
        description: 'Admins, and users with the `users` permission on the server.',
        params: ServerUsersParams,
        response: responses(ServerPeopleEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Server users',
      data: await people.list(currentUser(request), request.params.server),
    }),
  );

  app.put(
    '/api/servers/:server/users/:username',
    {
      schema: {
        tags: TAGS,
        summary: 'Give a user the server with exactly these permissions, or change theirs',
        description:
          'Admins, and users with the `users` permission, who may grant only what they hold themselves and change only people whose permissions are within their own (403). An admin target: 409.',
        params: ServerUserParams,
        body: PermissionsBody,
        response: responses(ServerPersonEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Permissions set',
      data: await people.set(
        currentUser(request),
        request.params.server,
        request.params.username,
        request.body.permissions,
      ),
    }),
  );

  app.delete(
    '/api/servers/:server/users/:username',
    {
      schema: {
        tags: TAGS,
        summary: "Take the server out of a user's list",
        params: ServerUserParams,
        response: responses(ServerPersonRemovedEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      await people.remove(currentUser(request), request.params.server, request.params.username);
      return { message: 'Access removed', data: { username: request.params.username } };
    },
  );
}
