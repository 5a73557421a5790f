import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData } from '../api/types';
import { configKey } from './useServer';

export type ServerVariable = AnswerData<'/api/servers/{server}/variables', 'get'>[number];
export interface Allocation {
  readonly ip: string;
  readonly port: number;
}

const variablesKey = (server: string) => ['server', server, 'variables'] as const;

/** The server's template variables (a user sees the viewable ones), with whether each may change. */
export function useServerVariables(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: variablesKey(server),
    queryFn: async () =>
      unwrapData(api.GET('/api/servers/{server}/variables', { params: { path: { server } } })),
  });
}

/** Changes some variables (by environment name); the answer replaces the cached list. */
export function useUpdateVariables(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (variables: Record<string, string>) =>
      unwrapData(
        api.PUT('/api/servers/{server}/variables', {
          params: { path: { server } },
          body: { variables },
        }),
      ),
    onSuccess: (saved) => {
      queries.setQueryData(variablesKey(server), saved);
    },
  });
}

/** Replaces the server's addresses and ports (admin); the first is the primary. */
export function useUpdateAllocations(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (allocations: Allocation[]) =>
      unwrapData(
        api.PUT('/api/servers/{server}/allocations', {
          params: { path: { server } },
          body: { allocations },
        }),
      ),
    onSuccess: (saved) => {
      queries.setQueryData(configKey(server), saved);
    },
  });
}
