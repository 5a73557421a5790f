/**
 * One file's upload, with progress: `XMLHttpRequest`, because `fetch` reports no upload
 * progress. Each file goes in a request of its own, so each has its own bar, its own Cancel
 * (`abort`, after which the panel keeps nothing of it) and its own answer from the API.
 */
import { type ApiError, apiErrorFrom } from '../../../api/errors';

export type UploadOutcome = { readonly kind: 'done' } | { readonly kind: 'cancelled' };

export interface UploadRequest {
  readonly server: string;
  /** The folder to upload into. */
  readonly folder: string;
  readonly file: Blob & { readonly name: string };
  readonly token: string | undefined;
  /** Bytes sent of the total, as the browser reports them. */
  readonly onProgress: (sent: number, total: number) => void;
}

export interface RunningUpload {
  readonly result: Promise<UploadOutcome>;
  readonly abort: () => void;
}

/** The smallest part of XMLHttpRequest an upload uses, so a test can hand in a fake. */
export interface UploadXhr {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: FormData): void;
  abort(): void;
  readonly status: number;
  readonly responseText: string;
  getResponseHeader(name: string): string | null;
  readonly upload: { onprogress: ((event: ProgressEvent) => void) | null };
  onload: ((event: ProgressEvent) => void) | null;
  onerror: ((event: ProgressEvent) => void) | null;
  onabort: ((event: ProgressEvent) => void) | null;
}

export function uploadUrl(server: string, folder: string): string {
  const query = new URLSearchParams({ path: folder });
  return `/api/servers/${encodeURIComponent(server)}/files/upload?${query.toString()}`;
}

/** The API's error from a finished request that did not succeed. */
function failure(xhr: UploadXhr): ApiError {
  let body: unknown = null;
  try {
    body = JSON.parse(xhr.responseText);
  } catch {
    // A proxy's page or an empty body: apiErrorFrom says the panel gave no reason.
  }
  const headers = new Headers();
  const retryAfter = xhr.getResponseHeader('Retry-After');
  if (retryAfter !== null) headers.set('Retry-After', retryAfter);
  return apiErrorFrom(xhr.status, headers, body);
}

export function startUpload(
  request: UploadRequest,
  makeXhr: () => UploadXhr = () => new XMLHttpRequest(),
): RunningUpload {
  const xhr = makeXhr();
  const result = new Promise<UploadOutcome>((resolve, reject) => {
    xhr.upload.onprogress = (event) => {
      request.onProgress(event.loaded, event.lengthComputable ? event.total : request.file.size);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        request.onProgress(request.file.size, request.file.size);
        resolve({ kind: 'done' });
      } else {
        reject(failure(xhr));
      }
    };
    // fetch's own word for a request that got no answer, so errorMessage says so.
    xhr.onerror = () => {
      reject(new TypeError('Network error'));
    };
    xhr.onabort = () => {
      resolve({ kind: 'cancelled' });
    };
  });
  xhr.open('POST', uploadUrl(request.server, request.folder));
  if (request.token !== undefined) xhr.setRequestHeader('Authorization', `Bearer ${request.token}`);
  const form = new FormData();
  form.append('file', request.file, request.file.name);
  xhr.send(form);
  return {
    result,
    abort: () => {
      xhr.abort();
    },
  };
}
