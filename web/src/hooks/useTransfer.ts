import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import { ApiError } from '../api/errors';
import { SERVERS_KEY } from './useServers';

const transferKey = (server: string) => ['server', server, 'transfer'] as const;

/** How often a transfer under way is asked for again while it is shown. */
export const TRANSFER_INTERVAL_MS = 1_000;

/**
 * The server's last transfer to another node (docs/nodes.md, "Transfers"), asked for again
 * every second while it runs; null when it had none.
 */
export function useTransfer(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: transferKey(server),
    queryFn: () =>
      unwrapData(api.GET('/api/servers/{server}/transfer', { params: { path: { server } } })),
    refetchInterval: (query) => {
      if (query.state.error instanceof ApiError && query.state.error.status < 500) return false;
      return query.state.data?.status === 'running' ? TRANSFER_INTERVAL_MS : false;
    },
  });
}

/** After a transfer started, ended or was cancelled: the server, its node and the list. */
function useTransferChanged(server: string) {
  const queries = useQueryClient();
  return async () => {
    await queries.invalidateQueries({ queryKey: ['server', server] });
    await queries.invalidateQueries({ queryKey: SERVERS_KEY });
  };
}

/** Starts a transfer of the server to `node` (admins); answers once it has begun. */
export function useStartTransfer(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  const changed = useTransferChanged(server);
  return useMutation({
    mutationFn: (node: string) =>
      unwrapData(
        api.POST('/api/servers/{server}/transfer', {
          params: { path: { server } },
          body: { node },
        }),
      ),
    onSuccess: async (transfer) => {
      queries.setQueryData(transferKey(server), transfer);
      await changed();
    },
  });
}

/** Cancels the transfer under way; answers once it is rolled back. */
export function useCancelTransfer(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  const changed = useTransferChanged(server);
  return useMutation({
    mutationFn: () =>
      unwrapData(api.DELETE('/api/servers/{server}/transfer', { params: { path: { server } } })),
    onSuccess: async (transfer) => {
      queries.setQueryData(transferKey(server), transfer);
      await changed();
    },
  });
}
