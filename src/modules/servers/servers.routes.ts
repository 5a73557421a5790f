import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  AllocationsBody,
  CommandBody,
  ConfigEnvelope,
  ConfigForCallerEnvelope,
  CreateBody,
  DeletedEnvelope,
  FreePortEnvelope,
  FreePortQuery,
  InstallStateBody,
  ServerListEnvelope,
  RewritesEnvelope,
  RewritesQuery,
  ServerParams,
  StatsEnvelope,
  StatusEnvelope,
  UpdateBody,
  VariablesEnvelope,
  VariablesUpdateBody,
} from './servers.schemas.js';
import type { ServerSettingsService } from './server-settings.service.js';
import type { ServersService } from './servers.service.js';

export function serversRoutes(
  app: App,
  servers: ServersService,
  settings: ServerSettingsService,
): void {
  app.get(
    '/api/servers',
    {
      // Polled by the web UI: its request lines are logged at debug (src/http/logging.ts).
      config: { polled: true },
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
        summary: 'Create a server and its directory (admin), from a template or a start command',
        description:
          'With `template`, the start and stop commands come from the template and `variables` are checked against its rules (400 naming the variable); a template with an install script starts installing at once (status `installing`). `allocations` are refused when another server on its node has them (409 ALLOCATION_TAKEN), and on a remote node when one names another address than 0.0.0.0, :: or the node’s public address (400). `node`: the node it goes on (400 when unknown, 409 NODE_MAINTENANCE, 409 NODE_FULL); by default the node with the most memory left that fits its memory limit (409 NODE_FULL when none does).',
        body: CreateBody,
        response: responses(ConfigEnvelope, 400, 401, 403, 409),
      },
    },
    async (request) => ({ message: 'Server created', data: await servers.create(request.body) }),
  );

  app.get(
    '/api/servers/allocations/free',
    {
      config: { access: { action: 'servers.create' } },
      schema: {
        tags: ['servers'],
        summary: 'The next free port of SERVER_PORT_RANGE, for a new server (admin)',
        description:
          'With `node`: the lowest port no server on that node has on any address (0.0.0.0 counts as every address; servers on other nodes do not count); 400 when there is no such node. Without: the lowest port no server on any node has, free wherever the server is placed. 409 when every port of the range is given. Another program may still hold it: a start on `local` says so (409 PORT_IN_USE); a remote node is not probed from the panel (docs/nodes.md).',
        querystring: FreePortQuery,
        response: responses(FreePortEnvelope, 400, 401, 403, 409),
      },
    },
    async (request) => ({
      message: 'Free port',
      data: await settings.freePort(request.query.node),
    }),
  );

  app.get(
    '/api/servers/:server/allocations/free',
    {
      schema: {
        tags: ['servers'],
        summary: "The next free port of SERVER_PORT_RANGE on the server's own node (admin)",
        description:
          'The lowest port no server on the node the server is on has on any address, its own allocations included; ports of servers on other nodes are free here. 409 when every port of the range is given on that node. Not probed on the machine: a start on `local` refuses a port another program holds (409 PORT_IN_USE); a remote node is not probed from the panel (docs/nodes.md).',
        params: ServerParams,
        response: responses(FreePortEnvelope, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Free port',
      data: await settings.freePortOf(currentUser(request), request.params.server),
    }),
  );

  app.get(
    '/api/servers/:server/config-files',
    {
      schema: {
        tags: ['servers'],
        summary: "The keys of the server's files its template rewrites at every start",
        description:
          "For a caller who may read the server's files: each config rule of its template (those of `path` only, when given), its keys and the variables their values come from. A variable the caller may not see is named as hidden. Empty for a server without a template.",
        params: ServerParams,
        querystring: RewritesQuery,
        response: responses(RewritesEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Rewritten keys',
      data: await settings.rewrittenKeys(
        currentUser(request),
        request.params.server,
        request.query.path,
      ),
    }),
  );

  app.get(
    '/api/servers/:server/variables',
    {
      schema: {
        tags: ['servers'],
        summary: "The server's template variables (a user sees those marked viewable)",
        params: ServerParams,
        response: responses(VariablesEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Server variables',
      data: await settings.variables(currentUser(request), request.params.server),
    }),
  );

  app.put(
    '/api/servers/:server/variables',
    {
      schema: {
        tags: ['servers'],
        summary: 'Change some variables; they take effect at the next start',
        description:
          'A user may change only the variables marked editable (403 for another they see, 400 for one they do not). Each value is checked against its rules (400 naming the variable).',
        params: ServerParams,
        body: VariablesUpdateBody,
        response: responses(VariablesEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Server variables saved',
      data: await settings.setVariables(
        currentUser(request),
        request.params.server,
        request.body.variables,
      ),
    }),
  );

  app.put(
    '/api/servers/:server/allocations',
    {
      schema: {
        tags: ['servers'],
        summary: "Replace the server's addresses and ports (admin); the first is its primary",
        description:
          "Taken into account at the next start. 409 ALLOCATION_TAKEN when another server on its node has one (0.0.0.0 counts as every address); on a remote node each names 0.0.0.0, :: or the node's public address (400 naming the `ip` otherwise). A start on `local` whose port another program holds is refused with 409 PORT_IN_USE.",
        params: ServerParams,
        body: AllocationsBody,
        response: responses(ConfigEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Server allocations saved',
      data: await settings.setAllocations(
        currentUser(request),
        request.params.server,
        request.body.allocations,
      ),
    }),
  );

  app.post(
    '/api/servers/:server/install',
    {
      schema: {
        tags: ['servers'],
        summary:
          "Run the template's install script (status installing); its output is in the console",
        description:
          'Answers once it runs. Exit code 0 makes the server installed; anything else failed, and it cannot start until an install succeeds or an admin marks it installed. 409 while the server runs or when its template has no script.',
        params: ServerParams,
        response: responses(StatusEnvelope, 401, 403, 404, 409, 503),
      },
    },
    async (request) => {
      const { server } = request.params;
      const status = await settings.install(currentUser(request), server);
      return {
        message: status === 'installing' ? 'Install started' : 'Install did not start',
        data: { name: server, status },
      };
    },
  );

  app.put(
    '/api/servers/:server/install',
    {
      schema: {
        tags: ['servers'],
        summary: 'Mark the server installed, or not, whatever its install did (admin)',
        params: ServerParams,
        body: InstallStateBody,
        response: responses(ConfigEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Install state saved',
      data: await settings.markInstalled(
        currentUser(request),
        request.params.server,
        request.body.state,
      ),
    }),
  );

  app.get(
    '/api/servers/:server/config',
    {
      schema: {
        tags: ['servers'],
        summary: "A server's configuration, and what the caller may do on it",
        params: ServerParams,
        response: responses(ConfigForCallerEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Server configuration',
      data: await servers.configFor(currentUser(request), request.params.server),
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
      data: await settings.updateConfig(currentUser(request), request.params.server, request.body),
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
          'Start the server; 409 when it already runs, is not installed, is over its disk quota, has a limit the host cannot enforce, its image is missing or its port is held by another program; 503 when its runtime (Docker) cannot be reached',
        description:
          "A server made from a template answers `starting` until its console shows the startup-done line, then turns `running`. Before each start the template's config-file rules are applied.",
        params: ServerParams,
        response: responses(StatusEnvelope, 400, 401, 403, 404, 409, 503),
      },
    },
    async (request) => {
      const { server } = request.params;
      const status = await servers.start(currentUser(request), server);
      return {
        message:
          status === 'running'
            ? 'Server started'
            : status === 'starting'
              ? 'Server starting'
              : 'Server did not start',
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
        message:
          status === 'running' || status === 'starting'
            ? 'Server restarted'
            : 'Server did not start',
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
      // Polled by the web UI: its request lines are logged at debug (src/http/logging.ts).
      config: { polled: true },
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
