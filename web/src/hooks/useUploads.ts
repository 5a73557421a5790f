/**
 * The uploads of a server's Files tab, as the page shows them: each file its own request
 * (`startUpload`), progress and Cancel; a 401 ends the session as the API client's does.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { useServices } from '../api/context';
import { ApiError, errorMessage } from '../api/errors';
import { startUpload } from '../pages/server/files/upload';
import { useRefreshFiles } from './useFiles';

export interface UploadItem {
  readonly id: number;
  readonly name: string;
  readonly folder: string;
  readonly sent: number;
  readonly total: number;
  readonly state: 'uploading' | 'done' | 'cancelled' | 'failed';
  readonly error: string | null;
}

let nextId = 0;

/**
 * The uploads of a server's Files tab: each file its own request, bar and Cancel. The list is
 * refreshed as each one completes. Uploads still running when the tab closes are cancelled.
 */
export function useUploads(server: string) {
  const { sessions } = useServices();
  const refresh = useRefreshFiles(server);
  const [items, setItems] = useState<UploadItem[]>([]);
  const aborts = useRef(new Map<number, () => void>());

  useEffect(() => {
    const running = aborts.current;
    return () => {
      for (const abort of running.values()) abort();
    };
  }, []);

  const update = useCallback((id: number, change: Partial<UploadItem>) => {
    setItems((current) => current.map((item) => (item.id === id ? { ...item, ...change } : item)));
  }, []);

  const upload = useCallback(
    (files: Iterable<File>, folder: string) => {
      for (const file of files) {
        nextId += 1;
        const id = nextId;
        setItems((current) => [
          ...current,
          {
            id,
            name: file.name,
            folder,
            sent: 0,
            total: file.size,
            state: 'uploading',
            error: null,
          },
        ]);
        const running = startUpload({
          server,
          folder,
          file,
          token: sessions.getSnapshot().session?.token,
          onProgress: (sent, total) => {
            update(id, { sent, total });
          },
        });
        aborts.current.set(id, running.abort);
        running.result.then(
          (outcome) => {
            aborts.current.delete(id);
            update(id, { state: outcome.kind === 'done' ? 'done' : 'cancelled' });
            if (outcome.kind === 'done') void refresh();
          },
          (error: unknown) => {
            aborts.current.delete(id);
            if (error instanceof ApiError && error.status === 401) {
              sessions.signOut('Your session has ended; sign in again');
            }
            update(id, { state: 'failed', error: errorMessage(error) });
          },
        );
      }
    },
    [server, sessions, update, refresh],
  );

  const cancel = useCallback((id: number) => aborts.current.get(id)?.(), []);
  const clearFinished = useCallback(() => {
    setItems((current) => current.filter((item) => item.state === 'uploading'));
  }, []);

  return { items, upload, cancel, clearFinished };
}
