import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';

const SETTINGS_KEY = ['admin', 'settings'] as const;

/** The panel's settings as an admin sees them (docs/security.md, "Defaults that bound a tenant"). */
export type PanelSettings = AnswerData<'/api/admin/settings', 'get'>;
export type SettingsChanges = RequestBody<'/api/admin/settings', 'put'>;

/** The panel's settings (admins only; `enabled` false for anyone else). */
export function usePanelSettings(enabled = true) {
  const { api } = useServices();
  return useQuery({
    queryKey: SETTINGS_KEY,
    queryFn: async () => unwrapData(api.GET('/api/admin/settings')),
    enabled,
  });
}

export function useSaveSettings() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (body: SettingsChanges) =>
      unwrapData(api.PUT('/api/admin/settings', { body })),
    onSuccess: async (data) => {
      queries.setQueryData(SETTINGS_KEY, data);
      await queries.invalidateQueries({ queryKey: ['registration'] });
    },
  });
}
