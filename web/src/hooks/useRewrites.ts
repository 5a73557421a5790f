import { useQuery } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData } from '../api/types';

/** A file's keys that the server's template rewrites at every start, and where each comes from. */
export type RewrittenFile = AnswerData<'/api/servers/{server}/config-files', 'get'>[number];

/**
 * The keys of `path` the server's template rewrites at every start (none for a server without
 * a template), with the variables the caller may see named.
 */
export function useRewrites(server: string, path: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: ['server', server, 'config-files', path] as const,
    queryFn: async () =>
      unwrapData(
        api.GET('/api/servers/{server}/config-files', {
          params: { path: { server }, query: { path } },
        }),
      ),
  });
}
