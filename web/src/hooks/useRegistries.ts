import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';

const REGISTRIES_KEY = ['admin', 'registries'] as const;

/** The listed registries and whether images may come only from them (admins). */
export type RegistrySettings = AnswerData<'/api/admin/registries', 'get'>;
/** A listed registry as the API shows it: never its password. */
export type Registry = RegistrySettings['registries'][number];
export type NewRegistry = RequestBody<'/api/admin/registries', 'post'>;
/** A new username, password or both; null for either removes both. */
export type RegistryChanges = RequestBody<'/api/admin/registries/{host}', 'put'>;

/** The registries (admins only; `enabled` false for anyone else). */
export function useRegistries(enabled = true) {
  const { api } = useServices();
  return useQuery({
    queryKey: REGISTRIES_KEY,
    queryFn: async () => unwrapData(api.GET('/api/admin/registries')),
    enabled,
  });
}

function useRegistriesChanged() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: REGISTRIES_KEY });
}

/** Only the listed registries (true), or any (false). */
export function useRegistryRule() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (restricted: boolean) =>
      unwrapData(api.PUT('/api/admin/registries', { body: { restricted } })),
    // A reading already on its way (after a registry was added or removed) would answer the
    // rule as it was before this change, and put the checkbox back: it is dropped.
    onMutate: () => queries.cancelQueries({ queryKey: REGISTRIES_KEY }),
    onSuccess: (data) => {
      queries.setQueryData(REGISTRIES_KEY, data);
    },
  });
}

export function useAddRegistry() {
  const { api } = useServices();
  const changed = useRegistriesChanged();
  return useMutation({
    mutationFn: async (body: NewRegistry) =>
      unwrapData(api.POST('/api/admin/registries', { body })),
    onSuccess: changed,
  });
}

export function useUpdateRegistry(host: string) {
  const { api } = useServices();
  const changed = useRegistriesChanged();
  return useMutation({
    mutationFn: async (body: RegistryChanges) =>
      unwrapData(api.PUT('/api/admin/registries/{host}', { params: { path: { host } }, body })),
    onSuccess: changed,
  });
}

export function useDeleteRegistry(host: string) {
  const { api } = useServices();
  const changed = useRegistriesChanged();
  return useMutation({
    mutationFn: () =>
      unwrap(api.DELETE('/api/admin/registries/{host}', { params: { path: { host } } })),
    onSuccess: changed,
  });
}
