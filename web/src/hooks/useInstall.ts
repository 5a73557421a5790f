import { useMutation, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import { configKey, statsKey } from './useServer';
import { SERVERS_KEY } from './useServers';

/** After an install starts or its state is set: the config, the stats and the list again. */
function useRefetch(server: string) {
  const queries = useQueryClient();
  return () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: configKey(server) }),
      queries.invalidateQueries({ queryKey: statsKey(server) }),
      queries.invalidateQueries({ queryKey: SERVERS_KEY }),
    ]);
}

/** Runs the template's install script (anyone with the server); its output is in the console. */
export function useInstall(server: string) {
  const { api } = useServices();
  const refetch = useRefetch(server);
  return useMutation({
    mutationFn: async () =>
      unwrapData(api.POST('/api/servers/{server}/install', { params: { path: { server } } })),
    onSettled: refetch,
  });
}

/** Marks the server installed or not, whatever its install did (admin). */
export function useSetInstallState(server: string) {
  const { api } = useServices();
  const refetch = useRefetch(server);
  return useMutation({
    mutationFn: async (state: 'installed' | 'not-installed') =>
      unwrapData(
        api.PUT('/api/servers/{server}/install', {
          params: { path: { server } },
          body: { state },
        }),
      ),
    onSettled: refetch,
  });
}
