import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { succeeded, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';

export const SSH_KEYS_KEY = ['profile', 'ssh-keys'] as const;

/** One of the caller's SSH public keys, as the API lists it (the key is public: shown again). */
export type SshKey = AnswerData<'/api/profile/ssh-keys', 'get'>[number];
/** What the add form sends: a name, the key as pasted, the password (and a code). */
export type NewSshKey = RequestBody<'/api/profile/ssh-keys', 'post'>;

/** The caller's SSH keys, oldest first. */
export function useSshKeys() {
  const { api } = useServices();
  return useQuery({
    queryKey: SSH_KEYS_KEY,
    queryFn: async () => unwrapData(api.GET('/api/profile/ssh-keys')),
  });
}

/** Adds a key; the API answers it with its fingerprint. */
export function useAddSshKey() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (body: NewSshKey) => unwrapData(api.POST('/api/profile/ssh-keys', { body })),
    onSuccess: () => queries.invalidateQueries({ queryKey: SSH_KEYS_KEY }),
  });
}

/** Deletes a key: it signs in no more, and its SFTP sessions end. */
export function useDeleteSshKey() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      succeeded(api.DELETE('/api/profile/ssh-keys/{id}', { params: { path: { id } } })),
    onSettled: () => queries.invalidateQueries({ queryKey: SSH_KEYS_KEY }),
  });
}
