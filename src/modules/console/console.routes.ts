import { Type } from 'typebox';
import { bearerToken, currentUser } from '../../http/access.js';
import { AppError } from '../../errors.js';
import type { App } from '../../http/types.js';
import { ServerParams } from '../servers/servers.schemas.js';
import type { ServersService } from '../servers/servers.service.js';
import type { ServerConsole } from '../../host/host.js';
import type { ConsoleHub, ConsoleLimits } from './console.hub.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console of the server a console socket asked for, once the caller was checked. */
    console: ServerConsole | null;
  }
}

const ConsoleQuery = Type.Object({
  token: Type.Optional(
    Type.String({ description: 'The bearer token, for browsers that cannot set headers' }),
  ),
});

export function consoleRoutes(
  app: App,
  deps: { servers: ServersService; hub: ConsoleHub; limits: ConsoleLimits },
): void {
  app.decorateRequest('console', null);
  app.route({
    method: 'GET',
    url: '/ws/servers/:server/console',
    config: { tokenInQuery: true },
    schema: {
      tags: ['servers'],
      summary: 'Live console (WebSocket)',
      description:
        'Token in the Authorization header or the `token` query parameter; refused with 401/403/404 before the upgrade, 429 past the sockets-per-user cap. ' +
        'Protocol v2. Server to client, one JSON text frame each: `{"type":"history","lines":[…]}` first (the last ≤1000 lines), then batches `{"type":"log","lines":["…",…],"ts":"<ISO time of the last line>"}` (a quiet server\'s line at once; during a flood at most one batch per 20 ms), `{"type":"status","status":"…"}` and `{"type":"skipped","lines":N}` where N lines were dropped for this reader (it fell more than 4 MiB behind) or for everyone (the server printed faster than the console can show). ' +
        'Commands appear to every reader as `[panel] <username>> <command>`. ' +
        'Client to server: `{"type":"command","command":"…"}`. Close codes: 4401 token no longer valid (a password change, the API key revoked or expired), 4403 access removed, 4404 server deleted, 4408 read nothing for 30 s while data waited (a client that reads nothing may only see 1006), 4429 too many messages, 1009 message too big.',
      params: ServerParams,
      querystring: ConsoleQuery,
    },
    preHandler: async (request) => {
      const user = currentUser(request);
      request.console = await deps.servers.console(user, request.params.server);
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
      const console = request.console;
      if (console === null) throw new Error('unreachable: the console of a checked request');
      const user = currentUser(request);
      const expiresAt = user.key?.expiresAt ?? null;
      deps.hub.attach(
        socket,
        {
          userId: user.id,
          token,
          server: request.params.server,
          expiresAt: expiresAt === null ? undefined : new Date(expiresAt),
        },
        console,
      );
    },
  });
}
