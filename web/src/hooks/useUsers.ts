import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap } from '../api/client';
import { useServices } from '../api/context';
import type { paths } from '../api/schema';
import { ME_KEY } from './useMe';

export const USERS_KEY = ['users'] as const;

type UsersAnswer = paths['/api/users']['get']['responses'][200]['content']['application/json'];
export type User = UsersAnswer['data'][number];
export type Role = User['role'];

/** Every account (admin and support; a user gets the API's 403). */
export function useUsers() {
  const { api } = useServices();
  return useQuery({
    queryKey: USERS_KEY,
    queryFn: async () => (await unwrap(api.GET('/api/users'))).data,
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
