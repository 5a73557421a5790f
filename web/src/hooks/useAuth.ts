import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/** Signs in with a password (`login`) or makes an account (`register`); the session starts. */
export function useSignIn(mode: 'login' | 'register') {
  const { api, sessions } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (body: Credentials) =>
      unwrap(
        mode === 'login'
          ? api.POST('/api/auth/login', { body })
          : api.POST('/api/auth/register', { body }),
      ),
    onSuccess: (answer) => {
      // An account with two-factor sign-in answers a challenge: the page asks for the code.
      if (!('access_token' in answer)) return;
      queries.clear();
      sessions.signIn({ token: answer.access_token, username: answer.username, role: answer.role });
    },
  });
}

export interface SecondStep {
  readonly challenge: string;
  readonly code: string;
}

/** The second step of a sign-in with two factors: the challenge and a code; the session starts. */
export function useSecondFactor() {
  const { api, sessions } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (body: SecondStep) => unwrap(api.POST('/api/auth/login/2fa', { body })),
    onSuccess: (answer) => {
      queries.clear();
      sessions.signIn({ token: answer.access_token, username: answer.username, role: answer.role });
    },
  });
}

/** Ends the session in this browser and forgets everything fetched with it. */
export function useSignOut() {
  const { sessions } = useServices();
  const queries = useQueryClient();
  return () => {
    sessions.signOut();
    queries.clear();
  };
}

/** The OpenID Connect providers offered for sign-in (none when the panel has none). */
export function useProviders() {
  const { api } = useServices();
  return useQuery({
    queryKey: ['oidc-providers'],
    queryFn: async () => unwrapData(api.GET('/api/auth/oidc/providers')),
    staleTime: 5 * 60_000,
  });
}

/** Whether anyone may create an account here (`REGISTRATION`); undefined while asking. */
export function useRegistrationOpen(): boolean | undefined {
  const { api } = useServices();
  return useQuery({
    queryKey: ['registration'],
    queryFn: async () => (await unwrapData(api.GET('/api/auth/registration'))).open,
    staleTime: 5 * 60_000,
  }).data;
}
