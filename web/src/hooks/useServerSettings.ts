import { useMutation, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { ConfigChanges } from '../pages/server/settings/settingsForm';
import { configKey } from './useServer';
import { SERVERS_KEY } from './useServers';

/**
 * Saves changes to a server's configuration. The answer is the configuration as saved: it
 * replaces the cached one at once, and the list (display names, auto-restart) is fetched again.
 */
export function useUpdateServerConfig(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (changes: ConfigChanges) =>
      unwrapData(
        api.PUT('/api/servers/{server}/config', {
          params: { path: { server } },
          body: changes,
        }),
      ),
    onSuccess: async (saved) => {
      queries.setQueryData(configKey(server), saved);
      await queries.invalidateQueries({ queryKey: SERVERS_KEY });
    },
  });
}

/** Stops and deletes a server with its folder (admin); the list is fetched again afterwards. */
export function useDeleteServer(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async () =>
      unwrapData(api.DELETE('/api/servers/{server}', { params: { path: { server } } })),
    onSuccess: async () => {
      queries.removeQueries({ queryKey: ['server', server] });
      await queries.invalidateQueries({ queryKey: SERVERS_KEY });
    },
  });
}
