import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { RequestBody } from '../api/types';
import { ME_KEY } from './useMe';

export const TWO_FACTOR_KEY = ['profile', '2fa'] as const;
const POLICY_KEY = ['admin', 'two-factor'] as const;

/** A role that may be required to use two-factor sign-in. */
export type TwoFactorRole = RequestBody<'/api/admin/two-factor', 'put'>['requiredFor'][number];

/** Whether the caller's two-factor sign-in is on, since when, recovery codes left, required. */
export function useTwoFactorStatus() {
  const { api } = useServices();
  return useQuery({
    queryKey: TWO_FACTOR_KEY,
    queryFn: async () => unwrapData(api.GET('/api/profile/2fa')),
  });
}

function useStatusChanged() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: TWO_FACTOR_KEY });
}

/** Starts enrolling (the password): a new pending secret, its otpauth URL and QR code. */
export function useTwoFactorSetup() {
  const { api } = useServices();
  return useMutation({
    mutationFn: async (password: string) =>
      unwrapData(api.POST('/api/profile/2fa/setup', { body: { password } })),
  });
}

/**
 * Turns it on with a code of the pending secret; answers the recovery codes. The account (`me`,
 * which may say enrolment is required) is asked for again only by `useEnrolmentDone`, once the
 * codes were seen: a required enrolment must not leave the page that shows them.
 */
export function useTwoFactorEnable() {
  const { api } = useServices();
  const changed = useStatusChanged();
  return useMutation({
    mutationFn: async (code: string) =>
      (await unwrapData(api.POST('/api/profile/2fa/enable', { body: { code } }))).recoveryCodes,
    onSuccess: changed,
  });
}

/** The account is asked for again: after an enrolment, its recovery codes put away. */
export function useEnrolmentDone() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: ME_KEY });
}

export interface PasswordAndCode {
  readonly password: string;
  /** Six digits of the app, or a recovery code. */
  readonly code: string;
}

/** Turns it off: the password and a code. */
export function useTwoFactorDisable() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (body: PasswordAndCode) =>
      unwrap(api.POST('/api/profile/2fa/disable', { body: { ...body } })),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: TWO_FACTOR_KEY }),
        queries.invalidateQueries({ queryKey: ME_KEY }),
      ]),
  });
}

/** New recovery codes in place of the old: the password and a code. */
export function useRenewRecoveryCodes() {
  const { api } = useServices();
  const changed = useStatusChanged();
  return useMutation({
    mutationFn: async (body: PasswordAndCode) =>
      (await unwrapData(api.POST('/api/profile/2fa/recovery-codes', { body: { ...body } })))
        .recoveryCodes,
    onSuccess: changed,
  });
}

/** The roles that must use two-factor sign-in (admins only). */
export function useTwoFactorPolicy(enabled: boolean) {
  const { api } = useServices();
  return useQuery({
    queryKey: POLICY_KEY,
    queryFn: async () => (await unwrapData(api.GET('/api/admin/two-factor'))).requiredFor,
    enabled,
  });
}

export function useSetTwoFactorPolicy() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (requiredFor: readonly TwoFactorRole[]) =>
      (
        await unwrapData(
          api.PUT('/api/admin/two-factor', { body: { requiredFor: [...requiredFor] } }),
        )
      ).requiredFor,
    onSuccess: (requiredFor) => {
      queries.setQueryData(POLICY_KEY, requiredFor);
      // The admin's own role may now require it of them.
      return queries.invalidateQueries({ queryKey: ME_KEY });
    },
  });
}
