import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { Api } from '../api/client';
import { navigateToDownload } from './download';

/** One entry of a folder: `{ name, path, type, size, modified }`. */
export type FileEntry = Awaited<ReturnType<typeof listFolder>>[number];

const filesKey = (server: string) => ['server', server, 'files'] as const;
const folderKey = (server: string, folder: string) =>
  [...filesKey(server), 'folder', folder] as const;
const contentKey = (server: string, path: string) =>
  [...filesKey(server), 'content', path] as const;

async function listFolder(api: Api, server: string, folder: string) {
  return unwrapData(
    api.GET('/api/servers/{server}/files', {
      params: { path: { server }, query: { path: folder } },
    }),
  );
}

/** A folder's entries, folders first, then by name (the API's order). */
export function useFolder(server: string, folder: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: folderKey(server, folder),
    queryFn: () => listFolder(api, server, folder),
  });
}

/**
 * Any change to a server's files: every listing and content of that server is asked for again
 * (a move touches two folders, a folder's rename every path under it).
 */
function useFilesChanged(server: string) {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: filesKey(server) });
}

/** Tells the listings a change happened outside a mutation (an upload through XHR). */
export const useRefreshFiles = useFilesChanged;

export function useCreateEntry(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async (entry: { type: 'file' | 'folder'; name: string; path: string }) =>
      unwrapData(
        api.POST('/api/servers/{server}/files/create', {
          params: { path: { server } },
          body: entry,
        }),
      ),
    onSuccess: changed,
  });
}

export function useRenameEntry(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async ({ path, name }: { path: string; name: string }) =>
      unwrapData(
        api.PUT('/api/servers/{server}/files/rename', {
          params: { path: { server }, query: { old_path: path, new_name: name } },
        }),
      ),
    onSuccess: changed,
  });
}

export function useMoveEntry(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async ({ source, destination }: { source: string; destination: string }) =>
      unwrapData(
        api.POST('/api/servers/{server}/files/move', {
          params: { path: { server } },
          body: { source, destination },
        }),
      ),
    onSuccess: changed,
  });
}

/** Deletes several entries at once; all are checked before any goes (400 or 404: none did). */
export function useDeleteEntries(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async (paths: string[]) =>
      unwrapData(
        api.POST('/api/servers/{server}/files/delete', {
          params: { path: { server } },
          body: { paths },
        }),
      ),
    onSuccess: changed,
  });
}

/** Moves several entries into an existing folder; all are checked before any moves. */
export function useMoveEntries(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async (body: { paths: string[]; destination: string }) =>
      unwrapData(
        api.POST('/api/servers/{server}/files/move-many', { params: { path: { server } }, body }),
      ),
    onSuccess: changed,
  });
}

export function useDeleteEntry(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async (path: string) =>
      unwrapData(
        api.DELETE('/api/servers/{server}/files', {
          params: { path: { server }, query: { path } },
        }),
      ),
    onSuccess: changed,
  });
}

/** Packs entries into a new archive (never over an existing file: 409). */
export function useCompress(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async (body: { paths: string[]; destination: string; format: 'zip' | 'tar.gz' }) =>
      unwrapData(
        api.POST('/api/servers/{server}/files/compress', { params: { path: { server } }, body }),
      ),
    onSuccess: changed,
  });
}

/** Unpacks an archive (zip, tar, tar.gz, told by its content) into an existing folder. */
export function useDecompress(server: string) {
  const { api } = useServices();
  const changed = useFilesChanged(server);
  return useMutation({
    mutationFn: async (body: { path: string; destination: string }) =>
      unwrapData(
        api.POST('/api/servers/{server}/files/decompress', {
          params: { path: { server } },
          body,
        }),
      ),
    onSuccess: changed,
  });
}

/**
 * Downloads a file by a single-use link: the browser navigates to it (an `<a download>`), so the
 * bytes stream to disk and are never held by the page.
 */
export function useDownload(server: string) {
  const { api } = useServices();
  return useMutation({
    mutationFn: async (path: string) => {
      const link = await unwrapData(
        api.POST('/api/servers/{server}/files/download-link', {
          params: { path: { server } },
          body: { path },
        }),
      );
      navigateToDownload(link.url);
      return link;
    },
  });
}

/** A text file's content for the editor (the API refuses binary and too large files). */
export function useFileContent(server: string, path: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: contentKey(server, path),
    queryFn: async () =>
      unwrapData(
        api.GET('/api/servers/{server}/files/content', {
          params: { path: { server }, query: { path } },
        }),
      ),
    // The editor holds what the person typed; a refetch must not replace it.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
}

export function useSaveFile(server: string, path: string) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (content: string) =>
      unwrapData(
        api.PUT('/api/servers/{server}/files/content', {
          params: { path: { server }, query: { path } },
          body: { content },
        }),
      ),
    onSuccess: (_entry, content) => {
      queries.setQueryData(contentKey(server, path), { path, content });
      return queries.invalidateQueries({ queryKey: folderKey(server, parentOf(path)) });
    },
  });
}

const parentOf = (path: string): string => path.split('/').slice(0, -1).join('/');
