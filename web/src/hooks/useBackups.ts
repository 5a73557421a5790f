import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';
import { navigateToDownload } from './download';

/** A backup as the API answers it: its archive's facts, its progress and its last restore. */
export type Backup = AnswerData<'/api/servers/{server}/backups', 'get'>[number];
/** What the create form sends: an optional name and gitignore patterns. */
export type BackupInput = RequestBody<'/api/servers/{server}/backups', 'post'>;
/** Retention, admin limits and the save commands of a server's backups. */
export type BackupSettings = AnswerData<'/api/servers/{server}/backup-settings', 'get'>;
/** Any subset of the settings (maxCount and maxBytes: admins only, else 403). */
export type BackupSettingsInput = RequestBody<'/api/servers/{server}/backup-settings', 'put'>;

const backupsKey = (server: string) => ['server', server, 'backups'] as const;
const settingsKey = (server: string) => ['server', server, 'backup-settings'] as const;

/** While a backup or restore runs, the list is asked for this often, for its progress. */
export const BACKUPS_BUSY_INTERVAL_MS = 2_000;
/** Otherwise this often: a scheduled backup or retention elsewhere changes the list too. */
export const BACKUPS_IDLE_INTERVAL_MS = 15_000;

/** Something of this backup is under way: it is being made, or restored. */
export const isBusy = (backup: Backup): boolean =>
  backup.status === 'running' ||
  backup.progress !== null ||
  backup.lastRestore?.status === 'running';

/** The server's backups, newest first; polled quickly while one of them is busy. */
export function useBackups(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: backupsKey(server),
    queryFn: async () =>
      unwrapData(api.GET('/api/servers/{server}/backups', { params: { path: { server } } })),
    refetchInterval: (query) =>
      query.state.data?.some(isBusy) === true ? BACKUPS_BUSY_INTERVAL_MS : BACKUPS_IDLE_INTERVAL_MS,
  });
}

function useBackupsChanged(server: string) {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: backupsKey(server) });
}

/** Starts a backup; the answer comes once it began (409 while another backup or restore runs). */
export function useCreateBackup(server: string) {
  const { api } = useServices();
  const changed = useBackupsChanged(server);
  return useMutation({
    mutationFn: async (body: BackupInput) =>
      unwrapData(api.POST('/api/servers/{server}/backups', { params: { path: { server } }, body })),
    onSuccess: changed,
  });
}

export function useDeleteBackup(server: string) {
  const { api } = useServices();
  const changed = useBackupsChanged(server);
  return useMutation({
    mutationFn: async (id: string) =>
      unwrap(
        api.DELETE('/api/servers/{server}/backups/{id}', { params: { path: { server, id } } }),
      ),
    onSuccess: changed,
  });
}

export function useLockBackup(server: string) {
  const { api } = useServices();
  const changed = useBackupsChanged(server);
  return useMutation({
    mutationFn: async ({ id, locked }: { id: string; locked: boolean }) =>
      unwrapData(
        api.PUT('/api/servers/{server}/backups/{id}/lock', {
          params: { path: { server, id } },
          body: { locked },
        }),
      ),
    onSuccess: changed,
  });
}

/** Starts a restore: 409 unless the server is stopped and nothing else runs. */
export function useRestoreBackup(server: string) {
  const { api } = useServices();
  const changed = useBackupsChanged(server);
  return useMutation({
    mutationFn: async (id: string) =>
      unwrap(
        api.POST('/api/servers/{server}/backups/{id}/restore', {
          params: { path: { server, id } },
        }),
      ),
    onSuccess: changed,
  });
}

/**
 * Downloads a backup's archive by a single-use link, as the file manager downloads a file: the
 * browser navigates to it, so the bytes stream to disk and are never held by the page.
 */
export function useDownloadBackup(server: string) {
  const { api } = useServices();
  return useMutation({
    mutationFn: async (id: string) => {
      const link = await unwrapData(
        api.POST('/api/servers/{server}/backups/{id}/download-link', {
          params: { path: { server, id } },
        }),
      );
      navigateToDownload(link.url);
      return link;
    },
  });
}

export function useBackupSettings(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: settingsKey(server),
    queryFn: async () =>
      unwrapData(
        api.GET('/api/servers/{server}/backup-settings', { params: { path: { server } } }),
      ),
    // The form holds what the person typed; a refetch must not replace it.
    refetchOnWindowFocus: false,
  });
}

export function useSaveBackupSettings(server: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (body: BackupSettingsInput) =>
      unwrapData(
        api.PUT('/api/servers/{server}/backup-settings', { params: { path: { server } }, body }),
      ),
    onSuccess: (settings) => {
      queries.setQueryData(settingsKey(server), settings);
    },
  });
}
