/**
 * The set-password page's requests (public: the link's token is the credential). The token goes
 * only in their JSON bodies, never in a URL, so no server log or proxy sees it.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';

const LINK_KEY = 'set-password-link';

/**
 * Whose link this is and until when (`POST /api/auth/set-password/check`); a link unknown, used
 * or expired is the API's 400 `INVALID_LINK`. Asked once: the answer does not change while the
 * page is open, and asking again after the password was set would only say the link is used
 * (so the page passes `null` once it has the answer of the password, which disables it).
 */
export function useLinkCheck(token: string | null) {
  const { api } = useServices();
  return useQuery({
    queryKey: [LINK_KEY, token],
    queryFn: async () => {
      if (token === null) throw new Error('no token');
      return unwrapData(api.POST('/api/auth/set-password/check', { body: { token } }));
    },
    enabled: token !== null,
    staleTime: Infinity,
    gcTime: 0,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  });
}

export interface NewPasswordWithLink {
  readonly token: string;
  readonly password: string;
}

/**
 * Sets the password with the link (`POST /api/auth/set-password`), which answers as a login does:
 * a token, and the session starts as the sign-in page starts it; or, for an account with
 * two-factor sign-in, a challenge the page answers with `useSecondFactor`.
 */
export function useSetPasswordWithLink() {
  const { api, sessions } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (body: NewPasswordWithLink) =>
      unwrap(api.POST('/api/auth/set-password', { body: { ...body } })),
    onSuccess: (answer) => {
      if (!('access_token' in answer)) return;
      // Whatever an earlier session of this browser fetched goes, but not the link's check:
      // asked again, it would only spend an attempt of the address to hear the link is used.
      queries.removeQueries({ predicate: (query) => query.queryKey[0] !== LINK_KEY });
      sessions.signIn({ token: answer.access_token, username: answer.username, role: answer.role });
    },
  });
}
