import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData } from '../api/types';
import type { Permission } from '../pages/server/permissions';
import { USERS_KEY } from './useUsers';

/** Someone with the server in their list, and what they may do on it. */
export type Person = AnswerData<'/api/servers/{server}/users', 'get'>[number];

const peopleKey = (server: string) => ['server', server, 'people'] as const;

/** Who has the server in their list (needs the `users` permission). */
export function useServerPeople(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: peopleKey(server),
    queryFn: async () =>
      unwrapData(api.GET('/api/servers/{server}/users', { params: { path: { server } } })),
  });
}

function usePeopleChanged(server: string) {
  const queries = useQueryClient();
  return () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: peopleKey(server) }),
      queries.invalidateQueries({ queryKey: USERS_KEY }),
    ]);
}

export interface Grant {
  readonly username: string;
  readonly permissions: readonly Permission[];
}

/** Gives someone the server with exactly these permissions (an invitation), or changes theirs. */
export function useGrant(server: string) {
  const { api } = useServices();
  const changed = usePeopleChanged(server);
  return useMutation({
    mutationFn: async ({ username, permissions }: Grant) =>
      unwrapData(
        api.PUT('/api/servers/{server}/users/{username}', {
          params: { path: { server, username } },
          body: { permissions: [...permissions] },
        }),
      ),
    onSuccess: changed,
  });
}

/** Takes the server out of someone's list. */
export function useRemovePerson(server: string) {
  const { api } = useServices();
  const changed = usePeopleChanged(server);
  return useMutation({
    mutationFn: (username: string) =>
      unwrap(
        api.DELETE('/api/servers/{server}/users/{username}', {
          params: { path: { server, username } },
        }),
      ),
    onSuccess: changed,
  });
}
