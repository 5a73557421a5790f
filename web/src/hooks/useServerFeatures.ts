import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import { configKey, statsKey } from './useServer';
import { SERVERS_KEY } from './useServers';

export const imageKey = (server: string) => ['server', server, 'image'] as const;

/**
 * Accepts the Minecraft EULA for the server (`files.write` and `power`): the panel writes
 * eula.txt and starts it. The answer is its status; the stats and the list are fetched again.
 */
export function useAcceptEula(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async () =>
      unwrapData(api.POST('/api/servers/{server}/eula', { params: { path: { server } } })),
    onSettled: async () => {
      await Promise.all([
        queries.invalidateQueries({ queryKey: statsKey(server) }),
        queries.invalidateQueries({ queryKey: SERVERS_KEY }),
      ]);
    },
  });
}

/** The server's image and the images its template offers (`settings`). */
export function useImageChoice(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: imageKey(server),
    queryFn: async () =>
      unwrapData(api.GET('/api/servers/{server}/image', { params: { path: { server } } })),
  });
}

/**
 * Chooses one of the template's images (`settings`); it takes effect at the next start. The
 * answer replaces the cached choice, and the configuration (which holds the image) is fetched
 * again.
 */
export function useChooseImage(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (image: string) =>
      unwrapData(
        api.PUT('/api/servers/{server}/image', {
          params: { path: { server } },
          body: { image },
        }),
      ),
    onSuccess: async (saved) => {
      queries.setQueryData(imageKey(server), saved);
      await queries.invalidateQueries({ queryKey: configKey(server) });
    },
  });
}
