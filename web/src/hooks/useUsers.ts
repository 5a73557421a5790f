import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { succeeded, unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';
import { ME_KEY } from './useMe';

export const USERS_KEY = ['users'] as const;

export type User = AnswerData<'/api/users', 'get'>[number];
export type Role = User['role'];

/** Every account (admin and support; a user gets the API's 403). */
export function useUsers() {
  const { api } = useServices();
  return useQuery({
    queryKey: USERS_KEY,
    queryFn: async () => unwrapData(api.GET('/api/users')),
  });
}

/**
 * After a change to an account: the list, and the caller's own account (an admin may demote or
 * delete themselves, and the shell shows the role the API answers).
 */
function useRefetchAfterChange() {
  const queries = useQueryClient();
  return () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: USERS_KEY }),
      queries.invalidateQueries({ queryKey: ME_KEY }),
    ]);
}

/** Changes a user's role (admin); answers the API's message and the updated user. */
export function useSetRole(username: string) {
  const { api } = useServices();
  const refetch = useRefetchAfterChange();
  return useMutation({
    mutationFn: (role: Role) =>
      unwrap(
        api.PUT('/api/users/{username}/role', { params: { path: { username } }, body: { role } }),
      ),
    onSettled: refetch,
  });
}

/** Replaces the servers a user may reach (admin). */
export function useSetUserServers(username: string) {
  const { api } = useServices();
  const refetch = useRefetchAfterChange();
  return useMutation({
    mutationFn: (servers: readonly string[]) =>
      unwrap(
        api.PUT('/api/users/{username}/servers', {
          params: { path: { username } },
          body: { servers: [...servers] },
        }),
      ),
    onSettled: refetch,
  });
}

/** Deletes an account (admin); its tickets stay. */
export function useDeleteUser(username: string) {
  const { api } = useServices();
  const refetch = useRefetchAfterChange();
  return useMutation({
    mutationFn: () =>
      unwrap(api.DELETE('/api/users/{username}', { params: { path: { username } } })),
    onSettled: refetch,
  });
}

/** A one-time link where a person sets their password: shown to the admin once. */
export type SetPasswordLink = NonNullable<AnswerData<'/api/users', 'post', 201>['setPasswordLink']>;
export type NewUser = RequestBody<'/api/users', 'post'>;
export type PasswordReset = RequestBody<'/api/users/{username}/password', 'put'>;

/** Makes an account (admin): answers it, and the one-time link when no password was given. */
export function useCreateUser() {
  const { api } = useServices();
  const refetch = useRefetchAfterChange();
  return useMutation({
    mutationFn: async (body: NewUser) => unwrapData(api.POST('/api/users', { body })),
    onSettled: refetch,
  });
}

/**
 * Sets a user's password, or takes it away and issues a new one-time link (admin); either way the
 * API signs them out everywhere and revokes their API keys. Answers the link (`null` for a
 * password) and how many keys were revoked.
 */
export function useResetPassword(username: string) {
  const { api } = useServices();
  const refetch = useRefetchAfterChange();
  return useMutation({
    mutationFn: async (body: PasswordReset) =>
      unwrapData(
        api.PUT('/api/users/{username}/password', { params: { path: { username } }, body }),
      ),
    onSettled: refetch,
  });
}

/** Turns a user's two-factor sign-in off (admin): its secret and recovery codes are removed. */
export function useTurnOffTwoFactor(username: string) {
  const { api } = useServices();
  const refetch = useRefetchAfterChange();
  return useMutation({
    mutationFn: () =>
      succeeded(api.DELETE('/api/users/{username}/2fa', { params: { path: { username } } })),
    onSettled: refetch,
  });
}
