import { Type } from 'typebox';
import { bearerToken, currentUser } from '../../http/access.js';
import { AppError } from '../../errors.js';
import type { App } from '../../http/types.js';
import { ServerParams } from '../servers/servers.schemas.js';
import type { ServersService } from '../servers/servers.service.js';
import type { ConsoleHub, ConsoleLimits } from './console.hub.js';

const ConsoleQuery = Type.Object({
  token: Type.Optional(
    Type.String({ description: 'The bearer token, for browsers that cannot set headers' }),
  ),
});

export function consoleRoutes(
  app: App,
  deps: { servers: ServersService; hub: ConsoleHub; limits: ConsoleLimits },
): void {
  app.route({
    method: 'GET',
    url: '/ws/servers/:server/console',
    config: { tokenInQuery: true },
    schema: {
      tags: ['servers'],
      summary: 'Live console (WebSocket)',
      description:
        'Token in the Authorization header or the `token` query parameter; refused with 401/403/404 before the upgrade, 429 past the sockets-per-user cap. ' +
        'Server to client: `{"type":"history","lines":[…]}` first, then `{"type":"log","line","ts"}` and `{"type":"status","status"}`; ' +
        'lines a server printed faster than they could be shown are replaced by one log line, `[panel] N lines skipped: …`. ' +
        'Client to server: `{"type":"command","command":"…"}`. Close codes: 4401 token no longer valid, 4403 access removed, 4404 server deleted, 4429 too many messages, 1009 message too big; a client that does not read is dropped without a close frame (1006).',
      params: ServerParams,
      querystring: ConsoleQuery,
    },
    preHandler: async (request) => {
      const user = currentUser(request);
      await deps.servers.require(user, request.params.server);
      if (deps.hub.socketsOf(user.id) >= deps.limits.socketsPerUser) {
        throw new AppError('RATE_LIMITED', 'Too many open consoles; close one first');
      }
    },
    // A plain HTTP request that passed every check above still cannot have a console.
    handler: () => {
      throw new AppError('UPGRADE_REQUIRED', 'The console is a WebSocket; send an upgrade request');
    },
    wsHandler: (socket, request) => {
      const token = bearerToken(request.headers.authorization) ?? request.query.token ?? '';
      deps.hub.attach(socket, {
        userId: currentUser(request).id,
        token,
        server: request.params.server,
      });
    },
  });
}
