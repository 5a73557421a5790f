import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  InvitedEnvelope,
  OwnerBody,
  OwnerEnvelope,
  PermissionsBody,
  ServerPeopleEnvelope,
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
          "Admins, and users with the `users` permission, who may grant only what they hold themselves and change only people whose permissions are within their own (403). The server's owner: 403 `OWNER_PROTECTED` (409 for an admin). A name that is no account, or an admin's, gets the same answer as anyone else's and nothing changes.",
        params: ServerUserParams,
        body: PermissionsBody,
        response: responses(InvitedEnvelope, 400, 401, 403, 404, 409),
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
        description:
          'A name not on the server (whether or not the account exists): 404. The owner: 403 `OWNER_PROTECTED`, except for an admin, which leaves the server without an owner.',
        params: ServerUserParams,
        response: responses(ServerPersonRemovedEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      await people.remove(currentUser(request), request.params.server, request.params.username);
      return { message: 'Access removed', data: { username: request.params.username } };
    },
  );

  app.put(
    '/api/servers/:server/owner',
    {
      // Admins only, decided by the service with the server's name (an API key reaches only
      // the servers of its list).
      schema: {
        tags: TAGS,
        summary: "Name the server's owner, or none (admin)",
        description:
          'The owner holds every permission on the server and no sub-user may remove or narrow them. The new owner gets the server with every permission; the previous owner loses it. An unknown account or an admin: 400.',
        params: ServerUsersParams,
        body: OwnerBody,
        response: responses(OwnerEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Owner set',
      data: await people.setOwner(currentUser(request), request.params.server, request.body.owner),
    }),
  );
}
