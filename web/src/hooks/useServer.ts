import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import { SERVERS_KEY } from './useServers';

/** How often a server's stats are asked for while its page is open. */
export const STATS_INTERVAL_MS = 3000;

export const configKey = (server: string) => ['server', server, 'config'] as const;
export const statsKey = (server: string) => ['server', server, 'stats'] as const;

/** A server's configuration: its names and how long a stop may take. */
export function useServerConfig(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: configKey(server),
    queryFn: async () =>
      unwrapData(api.GET('/api/servers/{server}/config', { params: { path: { server } } })),
  });
}

/** Status, CPU, memory, disk and uptime, asked for again every few seconds. */
export function useServerStats(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: statsKey(server),
    queryFn: async () =>
      unwrapData(api.GET('/api/servers/{server}/stats', { params: { path: { server } } })),
    refetchInterval: STATS_INTERVAL_MS,
  });
}

/** Starts or stops a server; the stats and the server list are fetched again afterwards. */
export type PowerAction = 'start' | 'stop' | 'restart' | 'kill';

export function usePower(server: string, action: PowerAction) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async () => {
      const params = { params: { path: { server } } };
      const answer = await unwrap(
        action === 'start'
          ? api.POST('/api/servers/{server}/start', params)
          : action === 'stop'
            ? api.POST('/api/servers/{server}/stop', params)
            : action === 'restart'
              ? api.POST('/api/servers/{server}/restart', params)
              : api.POST('/api/servers/{server}/kill', params),
      );
      return answer.data;
    },
    onSettled: async () => {
      await Promise.all([
        queries.invalidateQueries({ queryKey: statsKey(server) }),
        queries.invalidateQueries({ queryKey: SERVERS_KEY }),
      ]);
    },
  });
}
