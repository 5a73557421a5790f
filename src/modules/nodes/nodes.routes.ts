import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  DeletedNodeEnvelope,
  NewNodeBody,
  NodeChangesBody,
  NodeEnvelope,
  NodeListEnvelope,
  NodeParams,
} from './nodes.schemas.js';
import type { NodesService } from './nodes.service.js';

const TAGS = ['nodes'];
const config = { access: { action: 'nodes.manage' } } as const;

/** Nodes: admins only (docs/nodes.md). */
export function nodesRoutes(app: App, nodes: NodesService): void {
  app.get(
    '/api/admin/nodes',
    {
      // Polled by the web UI: its request lines are logged at debug (src/http/logging.ts).
      config: { ...config, polled: true },
      schema: {
        tags: TAGS,
        summary: 'Every node, `local` first, with its health and servers (admin)',
        description:
          'Health is what each node last answered: nodes are asked every 15 s, so a node that is down never holds up this answer.',
        response: responses(NodeListEnvelope, 401, 403),
      },
    },
    async () => ({ message: 'Nodes', data: await nodes.list() }),
  );

  app.post(
    '/api/admin/nodes',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Add a node: a Docker engine reached with mutual TLS or SSH (admin)',
        description:
          'The engine is asked before anything is saved: 503 `NODE_UNREACHABLE` says why it refused (a certificate not signed by the CA given, a client certificate it does not trust) or did not answer. 409 `ALREADY_EXISTS` for a name taken. Its certificates or key are never answered.',
        body: NewNodeBody,
        response: responses(NodeEnvelope, 400, 401, 403, 409, 503),
      },
    },
    async (request, reply) => {
      reply.code(201);
      return { message: 'Node added', data: await nodes.create(request.body) };
    },
  );

  app.get(
    '/api/admin/nodes/:name',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'A node, its health, capacity and servers (admin)',
        params: NodeParams,
        response: responses(NodeEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({ message: 'Node', data: await nodes.get(request.params.name) }),
  );

  app.put(
    '/api/admin/nodes/:name',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Change a node’s settings, or how it is reached (admin)',
        description:
          'A new `dockerHost`, `tls` or `sshKey` is asked of the engine first, as when adding (503 `NODE_UNREACHABLE`, nothing changed). `local` is reached as the panel is configured: only its settings change.',
        params: NodeParams,
        body: NodeChangesBody,
        response: responses(NodeEnvelope, 400, 401, 403, 404, 503),
      },
    },
    async (request) => ({
      message: 'Node saved',
      data: await nodes.update(request.params.name, request.body),
    }),
  );

  app.delete(
    '/api/admin/nodes/:name',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Remove a node that has no server (admin)',
        description:
          '409 `NODE_HAS_SERVERS` while servers are on it; 409 `CONFLICT` for `local`. Nothing on the machine is touched.',
        params: NodeParams,
        response: responses(DeletedNodeEnvelope, 401, 403, 404, 409),
      },
    },
    async (request) => {
      await nodes.remove(request.params.name);
      return { message: 'Node removed', data: null };
    },
  );
}
