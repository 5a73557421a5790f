import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../api/errors';
import { startUpload, uploadUrl, type UploadXhr } from './upload';

class FakeXhr implements UploadXhr {
  status = 0;
  responseText = '';
  opened: [string, string] | null = null;
  headers: Record<string, string> = {};
  sent: FormData | null = null;
  aborted = false;
  upload: UploadXhr['upload'] = { onprogress: null };
  onload: UploadXhr['onload'] = null;
  onerror: UploadXhr['onerror'] = null;
  onabort: UploadXhr['onabort'] = null;
  open(method: string, url: string) {
    this.opened = [method, url];
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name] = value;
  }
  send(body: FormData) {
    this.sent = body;
  }
  abort() {
    this.aborted = true;
    this.onabort?.({} as ProgressEvent);
  }
  getResponseHeader() {
    return null;
  }
  answer(status: number, body: unknown) {
    this.status = status;
    this.responseText = JSON.stringify(body);
    this.onload?.({} as ProgressEvent);
  }
}

const file = new File(['hello world'], 'a b.txt');

function start(progress: [number, number][] = []) {
  const xhr = new FakeXhr();
  const running = startUpload(
    {
      server: 'mc',
      folder: 'plugins',
      file,
      token: 'secret',
      onProgress: (sent, total) => progress.push([sent, total]),
    },
    () => xhr,
  );
  return { xhr, running, progress };
}

describe('startUpload', () => {
  it('posts the file as "file" with the token, and reports progress', async () => {
    const { xhr, running, progress } = start();
    expect(xhr.opened).toEqual(['POST', '/api/servers/mc/files/upload?path=plugins']);
    expect(xhr.headers.Authorization).toBe('Bearer secret');
    expect((xhr.sent?.get('file') as File).name).toBe('a b.txt');
    xhr.upload.onprogress?.({ loaded: 4, total: 11, lengthComputable: true } as ProgressEvent);
    xhr.answer(200, { message: 'Uploaded', data: [] });
    await expect(running.result).resolves.toEqual({ kind: 'done' });
    expect(progress).toEqual([
      [4, 11],
      [11, 11],
    ]);
  });

  it("rejects with the API's own message", async () => {
    const { xhr, running } = start();
    xhr.answer(413, { message: 'The file is larger than 1 MiB', code: 'PAYLOAD_TOO_LARGE' });
    const error = await running.result.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe('The file is larger than 1 MiB');
    expect((error as ApiError).status).toBe(413);
  });

  it('aborts on Cancel and says it was cancelled', async () => {
    const { xhr, running } = start();
    running.abort();
    expect(xhr.aborted).toBe(true);
    await expect(running.result).resolves.toEqual({ kind: 'cancelled' });
  });

  it('encodes the server and folder', () => {
    expect(uploadUrl('a b', 'x/y z')).toBe('/api/servers/a%20b/files/upload?path=x%2Fy+z');
  });
});
