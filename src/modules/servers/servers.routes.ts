import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  CommandBody,
  ConfigEnvelope,
  CreateBody,
  DeletedEnvelope,
  ServerListEnvelope,
  ServerParams,
  StatsEnvelope,
  StatusEnvelope,
  UpdateBody,
} from './servers.schemas.js';
import type { ServersService } from './servers.service.js';

export function serversRoutes(app: App, servers: ServersService): void {
  app.get(
    '/api/servers',
    {
      schema: {
        tags: ['servers'],
        summary: 'Servers the caller can reach (every server for an admin)',
        response: responses(ServerListEnvelope, 401, 403),
      },
    },
    async (request) => ({ message: 'Servers', data: await servers.list(currentUser(request)) }),
  );

  app.post(
    '/api/servers/create',
    {
      config: { access: { action: 'servers.create' } },
      schema: {
        tags: ['servers'],
        summary: 'Create a server and its directory (admin)',
        body: CreateBody,
        response: responses(ConfigEnvelope, 400, 401, 403, 409),
      },
    },
    async (request) => ({ message: 'Server created', data: await servers.create(request.body) }),
  );

  app.get(
    '/api/servers/:server/config',
    {
      schema: {
        tags: ['servers'],
        summary: "A server's configuration",
        params: ServerParams,
        response: responses(ConfigEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Server configuration',
      data: await servers.require(currentUser(request), request.params.server),
    }),
  );

  app.put(
    '/api/servers/:server/config',
    {
      schema: {
        tags: ['servers'],
        summary: "Change a server's configuration; takes effect at the next start",
        params: ServerParams,
        body: UpdateBody,
        response: responses(ConfigEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Server configuration saved',
      data: await servers.updateConfig(currentUser(request), request.params.server, request.body),
    }),
  );

  app.delete(
    '/api/servers/:server',
    {
      config: { access: { action: 'servers.delete' } },
      schema: {
        tags: ['servers'],
        summary: 'Stop and delete a server with its directory (admin)',
        params: ServerParams,
        response: responses(DeletedEnvelope, 401, 403, 404),
      },
    },
    async (request) => {
      await servers.remove(request.params.server);
      return { message: 'Server deleted', data: { name: request.params.server } };
    },
  );

  app.post(
    '/api/servers/:server/start',
    {
      schema: {
        tags: ['servers'],
        summary:
          'Start the server; 409 when it already runs, is over its disk quota, has a limit the host cannot enforce or its image is missing; 503 when its runtime (Docker) cannot be reached',
        params: ServerParams,
        response: responses(StatusEnvelope, 400, 401, 403, 404, 409, 503),
      },
    },
    async (request) => {
      const { server } = request.params;
      const status = await servers.start(currentUser(request), server);
      return {
        message: status === 'running' ? 'Server started' : 'Server did not start',
        data: { name: server, status },
      };
    },
  );

  app.post(
    '/api/servers/:server/stop',
    {
      schema: {
        tags: ['servers'],
        summary: 'Stop the server; answers once every process of it is gone',
        description:
          'Sends the stop command, waits stopTimeoutSeconds, then SIGTERM to the process group, then SIGKILL after 5 s. 409 when it is not running.',
        params: ServerParams,
        response: responses(StatusEnvelope, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const { server } = request.params;
      const status = await servers.stop(currentUser(request), server);
      return { message: 'Server stopped', data: { name: server, status } };
    },
  );

  app.post(
    '/api/servers/:server/restart',
    {
      schema: {
        tags: ['servers'],
        summary: 'Stop the server if it runs (the whole stop sequence), then start it',
        description:
          'Answers once it has started again, with the same refusals as start (409, 503); a server that was not running is simply started.',
        params: ServerParams,
        response: responses(StatusEnvelope, 400, 401, 403, 404, 409, 503),
      },
    },
    async (request) => {
      const { server } = request.params;
      const status = await servers.restart(currentUser(request), server);
      return {
        message: status === 'running' ? 'Server restarted' : 'Server did not start',
        data: { name: server, status },
      };
    },
  );

  app.post(
    '/api/servers/:server/kill',
    {
      schema: {
        tags: ['servers'],
        summary: 'End every process of the server at once (SIGKILL), without the stop command',
        description:
          'Works while a stop is waiting for a server that does not end: the stop finishes at once. Cancels a pending automatic restart. 409 when nothing runs or waits.',
        params: ServerParams,
        response: responses(StatusEnvelope, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const { server } = request.params;
      const status = await servers.kill(currentUser(request), server);
      return { message: 'Server killed', data: { name: server, status } };
    },
  );

  app.post(
    '/api/servers/:server/command',
    {
      schema: {
        tags: ['servers'],
        summary: "Type a line into the server's console; 409 when it is not running",
        description:
          "Written to the server's standard input with a newline, and shown to every console reader as `[panel] <username>> <command>`. When the server no longer reads its input the answer is still 200, and the console says the command was not read.",
        params: ServerParams,
        body: CommandBody,
        response: responses(StatusEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const { server } = request.params;
      await servers.command(currentUser(request), server, request.body.command);
      return { message: 'Command sent', data: { name: server, status: 'running' as const } };
    },
  );

  app.get(
    '/api/servers/:server/stats',
    {
      schema: {
        tags: ['servers'],
        summary: 'Status, CPU and memory of the whole process tree, and disk use',
        params: ServerParams,
        response: responses(StatsEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Server statistics',
      data: await servers.stats(currentUser(request), request.params.server),
    }),
  );
}
