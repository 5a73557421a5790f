import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import { API_KEYS_KEY } from './useApiKeys';
import { ME_KEY } from './useMe';
import { USERS_KEY } from './useUsers';

export const PROFILE_STATS_KEY = ['profile', 'stats'] as const;

/** The caller's statistics: servers, tickets, messages, when the account was made and used. */
export function useProfileStats() {
  const { api } = useServices();
  return useQuery({
    queryKey: PROFILE_STATS_KEY,
    queryFn: async () => unwrapData(api.GET('/api/profile/stats')),
  });
}

function useRefetchProfile() {
  const queries = useQueryClient();
  return () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: ME_KEY }),
      queries.invalidateQueries({ queryKey: PROFILE_STATS_KEY }),
      queries.invalidateQueries({ queryKey: USERS_KEY }),
    ]);
}

export interface Rename {
  readonly newUsername: string;
  /** The current password; `undefined` for an account without one. */
  readonly password: string | undefined;
}

/** Renames the caller. The token stays valid (it names the account by id); the session's name changes. */
export function useRename() {
  const { api, sessions } = useServices();
  const refetch = useRefetchProfile();
  return useMutation({
    mutationFn: ({ newUsername, password }: Rename) =>
      unwrap(
        api.PUT('/api/profile/username', {
          body: { new_username: newUsername, ...(password === undefined ? {} : { password }) },
        }),
      ),
    onSuccess: async (answer) => {
      const session = sessions.getSnapshot().session;
      if (session !== null) {
        sessions.signIn({ ...session, username: answer.data.username, role: answer.data.role });
      }
      await refetch();
    },
  });
}

export interface PasswordChange {
  /** `undefined` for an account without a password (made by an OpenID Connect sign-in). */
  readonly oldPassword: string | undefined;
  readonly newPassword: string;
  /** Also revoke every API key of the account (the API's default). */
  readonly revokeApiKeys: boolean;
}

/**
 * Changes (or, for an account without one, sets) the caller's password. The API revokes every
 * earlier token and answers a fresh one, which replaces the session's at once: this tab stays
 * signed in, other browsers are sent back to sign-in on their next request.
 */
export function useChangePassword() {
  const { api, sessions } = useServices();
  const queries = useQueryClient();
  const refetch = useRefetchProfile();
  return useMutation({
    mutationFn: ({ oldPassword, newPassword, revokeApiKeys }: PasswordChange) =>
      unwrap(
        api.PUT('/api/profile/password', {
          body: {
            new_password: newPassword,
            revokeApiKeys,
            ...(oldPassword === undefined ? {} : { old_password: oldPassword }),
          },
        }),
      ),
    onSuccess: async (answer) => {
      const { access_token, username, role } = answer.data;
      sessions.signIn({ token: access_token, username, role });
      await refetch();
      if (answer.data.revokedApiKeys > 0) {
        await queries.invalidateQueries({ queryKey: API_KEYS_KEY });
      }
    },
  });
}
