import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';

export const API_KEYS_KEY = ['profile', 'api-keys'] as const;

/** One of the caller's API keys as the API shows it: never its token, only the token's start. */
export type ApiKey = AnswerData<'/api/profile/api-keys', 'get'>[number];
/** What the create form sends: a name, and optionally an expiry, servers and permissions. */
export type NewApiKey = RequestBody<'/api/profile/api-keys', 'post'>;

/** The caller's own API keys, newest first. */
export function useApiKeys() {
  const { api } = useServices();
  return useQuery({
    queryKey: API_KEYS_KEY,
    queryFn: async () => unwrapData(api.GET('/api/profile/api-keys')),
  });
}

/** Makes a key; the answer holds its token, which the API shows this once. */
export function useCreateApiKey() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (body: NewApiKey) => unwrapData(api.POST('/api/profile/api-keys', { body })),
    onSuccess: () => queries.invalidateQueries({ queryKey: API_KEYS_KEY }),
  });
}

/** Revokes a key: it stops working at once. */
export function useRevokeApiKey() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE('/api/profile/api-keys/{id}', { params: { path: { id } } })),
    onSettled: () => queries.invalidateQueries({ queryKey: API_KEYS_KEY }),
  });
}
