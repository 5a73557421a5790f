import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { RequestBody } from '../api/types';

export const SERVERS_KEY = ['servers'] as const;

export type NewServer = RequestBody<'/api/servers/create', 'post'>;

/** How often the server list (and so each status) is asked for again while it is shown. */
export const SERVERS_INTERVAL_MS = 5000;

/** The servers the caller can reach (every server for an admin), statuses kept fresh. */
export function useServers() {
  const { api } = useServices();
  return useQuery({
    queryKey: SERVERS_KEY,
    queryFn: async () => unwrapData(api.GET('/api/servers')),
    refetchInterval: SERVERS_INTERVAL_MS,
  });
}

/** Creates a server (admin); the list is fetched again once it exists. */
/**
 * The next free port of SERVER_PORT_RANGE (admin), offered by the create form: on `node` when
 * one is chosen, else free on every node (wherever the server is placed); fetched again with
 * the server list, after a server is made.
 */
export function useFreePort(enabled: boolean, node: string | null = null) {
  const { api } = useServices();
  return useQuery({
    queryKey: [...SERVERS_KEY, 'free-port', node],
    enabled,
    retry: false,
    queryFn: async () =>
      unwrapData(
        api.GET('/api/servers/allocations/free', {
          params: { query: node === null ? {} : { node } },
        }),
      ),
  });
}

export function useCreateServer() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (server: NewServer) =>
      unwrapData(api.POST('/api/servers/create', { body: server })),
    onSuccess: () => queries.invalidateQueries({ queryKey: SERVERS_KEY }),
  });
}
