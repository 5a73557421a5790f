import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData, type Api } from '../api/client';
import { useServices } from '../api/context';
import { ApiError } from '../api/errors';
import type { RequestBody } from '../api/types';

const NODES_KEY = ['admin', 'nodes'] as const;

const listNodes = (api: Api) => unwrapData(api.GET('/api/admin/nodes'));

/**
 * A node as the API shows it: never its certificates or key (docs/nodes.md). Read from what the
 * client answers rather than `AnswerData`: the generated `checkedAt: never | null` of a node not
 * heard from yet is left out of the client's answer type, and the two would not match.
 */
export type Node = Awaited<ReturnType<typeof listNodes>>[number];
export type NodeHealth = Node['health'];
export type NewNode = RequestBody<'/api/admin/nodes', 'post'>;
/** Any of a node's settings, or how it is reached: the rest stays. */
export type NodeChanges = RequestBody<'/api/admin/nodes/{name}', 'put'>;

/**
 * How often the list is asked for again while it is shown. The panel asks each node how it is
 * every 15 s and answers what it last heard, so a node going down or coming back shows within
 * about that plus this.
 */
export const NODES_INTERVAL_MS = 5_000;

/** Every node (admins), `local` first, with its health, capacity and servers. */
export function useNodes() {
  const { api } = useServices();
  return useQuery({
    queryKey: NODES_KEY,
    queryFn: () => listNodes(api),
    // A refusal (a role that is not admin) will not change by asking again.
    refetchInterval: (query) =>
      query.state.error instanceof ApiError && query.state.error.status < 500
        ? false
        : NODES_INTERVAL_MS,
  });
}

function useNodesChanged() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: NODES_KEY });
}

/** Adds a node once its engine answered (503 `NODE_UNREACHABLE` says why it did not). */
export function useAddNode() {
  const { api } = useServices();
  const changed = useNodesChanged();
  return useMutation({
    mutationFn: async (body: NewNode) => unwrapData(api.POST('/api/admin/nodes', { body })),
    onSuccess: changed,
  });
}

export function useUpdateNode(name: string) {
  const { api } = useServices();
  const changed = useNodesChanged();
  return useMutation({
    mutationFn: async (body: NodeChanges) =>
      unwrapData(api.PUT('/api/admin/nodes/{name}', { params: { path: { name } }, body })),
    onSuccess: changed,
  });
}

/** Removes a node without servers (409 `NODE_HAS_SERVERS` otherwise, `CONFLICT` for local). */
export function useDeleteNode(name: string) {
  const { api } = useServices();
  const changed = useNodesChanged();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/admin/nodes/{name}', { params: { path: { name } } })),
    onSuccess: changed,
  });
}
