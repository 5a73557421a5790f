import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  chmod,
  mkdir,
  readdir,
  readFile,
  readlink,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { before, describe, it } from 'node:test';
import { ServerStorage } from '../src/host/local/storage/server-storage.js';
import { TEMP_PREFIX } from '../src/host/local/storage/atomic.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  json,
  register,
  setRole,
  type Session,
  type Envelope,
} from './helpers/factories.js';
import { serverRoles } from './helpers/roles.js';

interface EntryBody {
  name: string;
  path: string;
  type: string;
  size: number;
  modified: string;
}

const BOUNDARY = '----panel-test-boundary';

/** A multipart body with one part per file, built by hand as a browser would send it. */
function multipart(files: { field?: string; filename: string; content: Buffer | string }[]) {
  const chunks: Buffer[] = [];
  for (const file of files) {
    chunks.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

/** Every entry name under `dir`, recursively, for "nothing left behind" checks. */
async function allNames(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

describe('the file manager', () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;
  let outsider: Session;
  let root: string;

  const url = (endpoint: string, query: Record<string, string> = {}) =>
    `/api/servers/world/files${endpoint}?${new URLSearchParams(query).toString()}`;
  const call = (
    session: Session | undefined,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    endpoint: string,
    query: Record<string, string> = {},
    payload?: Record<string, unknown>,
  ) =>
    panel.app.inject({
      method,
      url: url(endpoint, query),
      ...(session ? { headers: session.headers } : {}),
      ...(payload ? { payload } : {}),
    });
  const upload = (session: Session, folder: string, files: Parameters<typeof multipart>[0]) =>
    panel.app.inject({
      method: 'POST',
      url: url('/upload', { path: folder }),
      headers: { ...session.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: multipart(files),
    });

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, {
      MAX_UPLOAD_BYTES: String(1024 * 1024),
      MAX_EDIT_BYTES: '4096',
    });
    ({ admin, member, outsider } = await serverRoles(panel, { server: 'world' }));
    root = path.join(panel.config.serversDir, 'world');
  });

  it('refuses callers without access to the server', async () => {
    const banned = await register(panel, 'banned1');
    await setRole(panel, admin, 'banned1', 'banned');
    for (const [session, status] of [
      [undefined, 401],
      [outsider, 403],
      [banned, 403],
    ] as const) {
      assertError(await call(session, 'GET', ''), status);
      assertError(await call(session, 'GET', '/content', { path: 'x' }), status);
      assertError(await call(session, 'PUT', '/content', { path: 'x' }, { content: 'x' }), status);
      assertError(await call(session, 'DELETE', '', { path: 'x' }), status);
    }
    assertError(
      await call(admin, 'GET', '').then(() =>
        panel.app.inject({
          url: '/api/servers/nowhere/files',
          headers: admin.headers,
        }),
      ),
      404,
    );
  });

  it('creates files and folders, and lists folders first, then by name', async () => {
    for (const [type, name, folder] of [
      ['folder', 'plugins', ''],
      ['file', 'server.properties', '/'],
      ['file', 'Banner.txt', '.'],
      ['folder', 'config', 'plugins'],
      ['folder', 'world', ''],
    ] as const) {
      const response = await call(member, 'POST', '/create', {}, { type, name, path: folder });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(json<Envelope<EntryBody>>(response).data.type, type);
    }
    const listing = json<Envelope<EntryBody[]>>(await call(member, 'GET', '')).data;
    assert.deepEqual(
      listing.map((entry) => [entry.name, entry.type]),
      [
        ['plugins', 'folder'],
        ['world', 'folder'],
        ['Banner.txt', 'file'],
        ['server.properties', 'file'],
      ],
    );
    for (const entry of listing) {
      assert.ok(!Number.isNaN(Date.parse(entry.modified)));
      assert.equal(entry.path, entry.name);
    }
    const nested = json<Envelope<EntryBody[]>>(await call(member, 'GET', '', { path: 'plugins' }));
    assert.deepEqual(
      nested.data.map((entry) => entry.path),
      ['plugins/config'],
    );
    assert.ok((await stat(path.join(root, 'plugins', 'config'))).isDirectory());
  });

  it('answers 404, 400 and 409 where creating or listing cannot work', async () => {
    assertError(await call(member, 'GET', '', { path: 'missing' }), 404, 'NOT_FOUND');
    assertError(await call(member, 'GET', '', { path: 'server.properties' }), 400, 'NOT_A_FOLDER');
    const create = (payload: Record<string, unknown>) =>
      call(member, 'POST', '/create', {}, payload);
    assertError(await create({ type: 'file', name: 'x', path: 'missing' }), 404);
    assertError(await create({ type: 'file', name: 'x', path: 'server.properties' }), 400);
    assertError(
      await create({ type: 'file', name: 'server.properties', path: '' }),
      409,
      'ALREADY_EXISTS',
    );
    assertError(await create({ type: 'folder', name: 'plugins', path: '' }), 409, 'ALREADY_EXISTS');
    for (const name of [
      'a/b',
      '..',
      '.',
      'a\\b',
      'bad\u0000name',
      'x'.repeat(256),
      '.panel-tmp-notes.txt',
    ]) {
      assertError(await create({ type: 'file', name, path: '' }), 400);
    }
    assertError(await create({ type: 'socket', name: 'x', path: '' }), 400, 'VALIDATION_FAILED');
  });

  it('saves text atomically, keeping the mode, and reads it back', async () => {
    const file = path.join(root, 'server.properties');
    await chmod(file, 0o600);
    const text = 'motd=Ünïcödé ⛏️ "quoted" <script>\r\nmax-players=20\n';
    const saved = await call(
      member,
      'PUT',
      '/content',
      { path: 'server.properties' },
      { content: text },
    );
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(json<Envelope<EntryBody>>(saved).data.size, Buffer.byteLength(text));
    assert.equal(await readFile(file, 'utf8'), text);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const read = await call(member, 'GET', '/content', { path: '/server.properties' });
    assert.deepEqual(json<Envelope<unknown>>(read).data, {
      path: 'server.properties',
      content: text,
    });

    const created = await call(
      member,
      'PUT',
      '/content',
      { path: 'plugins/new.yml' },
      { content: 'a: 1' },
    );
    assert.equal(created.statusCode, 200, created.body);
    assert.equal(await readFile(path.join(root, 'plugins', 'new.yml'), 'utf8'), 'a: 1');
    assert.ok(!(await allNames(root)).some((name) => name.includes(TEMP_PREFIX)));
  });

  it('refuses binary, oversized, missing and folder content with the right status', async () => {
    await writeFile(path.join(root, 'level.dat'), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff]));
    await writeFile(path.join(root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await writeFile(path.join(root, 'big.log'), 'x'.repeat(5000));
    assertError(await call(member, 'GET', '/content', { path: 'level.dat' }), 400, 'BINARY_FILE');
    assertError(await call(member, 'GET', '/content', { path: 'latin1.txt' }), 400, 'BINARY_FILE');
    assertError(
      await call(member, 'GET', '/content', { path: 'big.log' }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    assertError(await call(member, 'GET', '/content', { path: 'nothing.txt' }), 404);
    assertError(await call(member, 'GET', '/content', { path: 'plugins' }), 400, 'NOT_A_FILE');
    assertError(await call(member, 'GET', '/content', {}), 400, 'VALIDATION_FAILED');

    const put = (where: string, content: unknown) =>
      call(member, 'PUT', '/content', { path: where }, { content });
    assertError(await put('big.log', 'y'.repeat(5000)), 413, 'PAYLOAD_TOO_LARGE');
    assert.equal((await readFile(path.join(root, 'big.log'), 'utf8')).length, 5000);
    assertError(await put('missing/file.txt', 'x'), 404);
    assertError(await put('plugins', 'x'), 400, 'NOT_A_FILE');
    assertError(await put('', 'x'), 400);
    assertError(await put('ok.txt', 42), 400, 'VALIDATION_FAILED');
  });

  it('uploads several files, each under its own safe name, replacing only when complete', async () => {
    await writeFile(path.join(root, 'plugins', 'keep.jar'), 'old version');
    const response = await upload(member, 'plugins', [
      { filename: 'keep.jar', content: 'new version' },
      { filename: '../../escape.jar', content: 'escape attempt' },
      { filename: 'C:\\Users\\me\\windows.jar', content: 'windows path' },
      { filename: '/etc/absolute.jar', content: 'absolute' },
    ]);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(
      json<Envelope<EntryBody[]>>(response).data.map((entry) => entry.path),
      ['plugins/keep.jar', 'plugins/escape.jar', 'plugins/windows.jar', 'plugins/absolute.jar'],
    );
    assert.equal(await readFile(path.join(root, 'plugins', 'keep.jar'), 'utf8'), 'new version');
    assert.equal(
      await readFile(path.join(root, 'plugins', 'escape.jar'), 'utf8'),
      'escape attempt',
    );
    await assert.rejects(stat(path.join(panel.config.serversDir, 'escape.jar')));
  });

  it('refuses bad uploads with nothing left behind', async () => {
    const before = await allNames(root);
    assertError(await upload(member, 'plugins', [{ filename: '', content: 'x' }]), 400);
    assertError(await upload(member, 'plugins', [{ filename: '..', content: 'x' }]), 400);
    assertError(
      await upload(member, 'plugins', [{ filename: '.panel-tmp-mine', content: 'x' }]),
      400,
      'INVALID_PATH',
    );
    assertError(
      await upload(member, 'plugins', [{ field: 'other', filename: 'a', content: 'x' }]),
      400,
    );
    assertError(await upload(member, 'missing', [{ filename: 'a.txt', content: 'x' }]), 404);
    assertError(
      await upload(member, 'server.properties', [{ filename: 'a.txt', content: 'x' }]),
      400,
    );
    const tooBig = await upload(member, 'plugins', [
      { filename: 'keep.jar', content: Buffer.alloc(1024 * 1024 + 1) },
    ]);
    assertError(tooBig, 413, 'PAYLOAD_TOO_LARGE');
    const kept = await readFile(path.join(root, 'plugins', 'keep.jar'), 'utf8');
    assert.ok(kept === 'new version', `keep.jar was replaced (${kept.length} bytes)`);
    const notMultipart = await panel.app.inject({
      method: 'POST',
      url: url('/upload', { path: '' }),
      headers: member.headers,
      payload: { file: 'x' },
    });
    assertError(notMultipart, 415);
    const empty = await panel.app.inject({
      method: 'POST',
      url: url('/upload', { path: '' }),
      headers: { ...member.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: `--${BOUNDARY}--\r\n`,
    });
    assertError(empty, 400, 'INVALID_UPLOAD');
    assert.deepEqual(await allNames(root), before);
  });

  it('downloads with Content-Length, an RFC 6266 Content-Disposition and Range', async () => {
    const name = 'weird "name" ü.txt';
    const content = 'abcdefghijklmnopqrstuvwxyz';
    await writeFile(path.join(root, name), content);
    const full = await call(member, 'GET', '/download', { path: name });
    assert.equal(full.statusCode, 200);
    assert.equal(full.body, content);
    assert.equal(full.headers['content-length'], '26');
    assert.equal(full.headers['accept-ranges'], 'bytes');
    const disposition = String(full.headers['content-disposition']);
    assert.match(
      disposition,
      /^attachment; filename="weird \\"name\\" \?\.txt"; filename\*=UTF-8''weird%20%22name%22%20%C3%BC\.txt$/,
    );

    const ranged = (range: string) =>
      panel.app.inject({
        url: url('/download', { path: name }),
        headers: { ...member.headers, range },
      });
    const partial = await ranged('bytes=2-5');
    assert.equal(partial.statusCode, 206);
    assert.equal(partial.body, 'cdef');
    assert.equal(partial.headers['content-range'], 'bytes 2-5/26');
    assert.equal(partial.headers['content-length'], '4');
    assert.equal((await ranged('bytes=-3')).body, 'xyz');
    assert.equal((await ranged('bytes=20-')).body, 'uvwxyz');
    const outside = await ranged('bytes=100-200');
    assertError(outside, 416, 'RANGE_NOT_SATISFIABLE');
    assert.equal(outside.headers['content-range'], 'bytes */26');
    const several = await ranged('bytes=0-1,5-6');
    assert.equal(several.statusCode, 200);
    assert.equal(several.body, content);

    await writeFile(path.join(root, 'empty.txt'), '');
    const empty = await call(member, 'GET', '/download', { path: 'empty.txt' });
    assert.equal(empty.statusCode, 200);
    assert.equal(empty.body, '');
    assertError(await call(member, 'GET', '/download', { path: 'plugins' }), 400, 'NOT_A_FILE');
    assertError(await call(member, 'GET', '/download', { path: 'missing.bin' }), 404);
  });

  it('renames within a folder and refuses what cannot be renamed', async () => {
    await writeFile(path.join(root, 'old.txt'), 'content');
    const renamed = await call(member, 'PUT', '/rename', {
      old_path: 'old.txt',
      new_name: 'new.txt',
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(json<Envelope<EntryBody>>(renamed).data.path, 'new.txt');
    assert.equal(await readFile(path.join(root, 'new.txt'), 'utf8'), 'content');
    await assert.rejects(stat(path.join(root, 'old.txt')));

    const rename = (oldPath: string, newName: string) =>
      call(member, 'PUT', '/rename', { old_path: oldPath, new_name: newName });
    assertError(await rename('new.txt', 'server.properties'), 409, 'ALREADY_EXISTS');
    assert.equal(await readFile(path.join(root, 'new.txt'), 'utf8'), 'content');
    assertError(await rename('plugins', 'world'), 409, 'ALREADY_EXISTS');
    assertError(await rename('missing.txt', 'x.txt'), 404);
    assertError(await rename('new.txt', 'sub/x.txt'), 400, 'INVALID_PATH');
    assertError(await rename('new.txt', '..'), 400, 'INVALID_PATH');
    assertError(await rename('', 'x'), 400);
    const folder = await rename('plugins/config', 'settings');
    assert.equal(folder.statusCode, 200, folder.body);
    assert.ok((await stat(path.join(root, 'plugins', 'settings'))).isDirectory());
  });

  it('moves into an existing folder or to a new path, never over an existing entry', async () => {
    const move = (source: string, destination: string) =>
      call(member, 'POST', '/move', {}, { source, destination });
    const into = await move('new.txt', 'world');
    assert.equal(into.statusCode, 200, into.body);
    assert.equal(json<Envelope<EntryBody>>(into).data.path, 'world/new.txt');
    const to = await move('world/new.txt', 'plugins/settings/moved.txt');
    assert.equal(to.statusCode, 200, to.body);
    assert.equal(
      await readFile(path.join(root, 'plugins', 'settings', 'moved.txt'), 'utf8'),
      'content',
    );

    await writeFile(path.join(root, 'clash.txt'), 'mine');
    await writeFile(path.join(root, 'world', 'clash.txt'), 'theirs');
    assertError(await move('clash.txt', 'world'), 409, 'ALREADY_EXISTS');
    assertError(await move('clash.txt', 'world/clash.txt'), 409, 'ALREADY_EXISTS');
    assert.equal(await readFile(path.join(root, 'world', 'clash.txt'), 'utf8'), 'theirs');
    assert.equal(await readFile(path.join(root, 'clash.txt'), 'utf8'), 'mine');
    assertError(await move('plugins', 'plugins/settings'), 400);
    assertError(await move('missing.txt', 'world'), 404);
    assertError(await move('clash.txt', 'missing/deep/x.txt'), 404);
    assertError(await move('', 'world'), 400);
    const folder = await move('plugins/settings', 'world');
    assert.equal(folder.statusCode, 200, folder.body);
    assert.ok((await stat(path.join(root, 'world', 'settings', 'moved.txt'))).isFile());
  });

  it('deletes files, symlinks without their targets, and folders with their content', async () => {
    await mkdir(path.join(root, 'doomed', 'deep', 'deeper'), { recursive: true });
    await writeFile(path.join(root, 'doomed', 'deep', 'deeper', 'f.txt'), 'x');
    await writeFile(path.join(root, 'target.txt'), 'kept');
    await symlink('target.txt', path.join(root, 'link.txt'));
    const remove = (where: string) => call(member, 'DELETE', '', { path: where });

    const link = await remove('link.txt');
    assert.equal(link.statusCode, 200, link.body);
    assert.equal(await readFile(path.join(root, 'target.txt'), 'utf8'), 'kept');
    const folder = await remove('doomed');
    assert.equal(folder.statusCode, 200, folder.body);
    assert.deepEqual(json<Envelope<unknown>>(folder).data, { path: 'doomed' });
    await assert.rejects(stat(path.join(root, 'doomed')));
    assert.equal((await remove('target.txt')).statusCode, 200);
    assertError(await remove('target.txt'), 404);
    for (const rootSpelling of ['', '/', '.', 'plugins/..']) {
      assertError(await remove(rootSpelling), 400);
    }
    assert.ok((await stat(root)).isDirectory());
  });

  it('hides temporary files from listings and removes leftovers at start', async () => {
    const leftover = path.join(root, 'plugins', `${TEMP_PREFIX}crashed-upload`);
    await writeFile(leftover, 'partial');
    const listing = json<Envelope<EntryBody[]>>(await call(member, 'GET', '', { path: 'plugins' }));
    assert.ok(!listing.data.some((entry) => entry.name.startsWith(TEMP_PREFIX)));
    const removed = await new ServerStorage(panel.config.serversDir).cleanTemporaryFiles('world');
    assert.equal(removed, 1);
    await assert.rejects(stat(leftover));
  });
});

describe('large and interrupted uploads and downloads over real HTTP', () => {
  let panel: TestPanel;
  let admin: Session;
  let base: URL;
  let root: string;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'big');
    base = new URL(await panel.listen());
    root = path.join(panel.config.serversDir, 'big');
  });

  /**
   * Streams a multipart upload of `size` generated bytes; resolves with status and body. With
   * `abort`, it stops sending after `after` bytes and cuts the request off once `when` resolves.
   */
  function streamUpload(
    filename: string,
    size: number,
    options: { abort?: { after: number; when: () => Promise<unknown> } } = {},
  ): Promise<{ status: number; body: string; sha256: string }> {
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    const block = randomBytes(1024 * 1024);
    const hash = createHash('sha256');
    let sent = 0;
    let stalled: (() => void) | undefined;
    const body = new Readable({
      read() {
        if (sent === 0) this.push(head);
        if (options.abort && sent >= options.abort.after) {
          stalled?.();
          stalled = undefined;
          return;
        }
        if (sent >= size) {
          this.push(tail);
          this.push(null);
          return;
        }
        const chunk = block.subarray(0, Math.min(block.length, size - sent));
        sent += chunk.length;
        hash.update(chunk);
        this.push(chunk);
      },
    });
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: base.hostname,
          port: base.port,
          method: 'POST',
          path: '/api/servers/big/files/upload?path=',
          headers: {
            ...admin.headers,
            'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
            'content-length': String(head.length + size + tail.length),
          },
        },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, body: text, sha256: hash.digest('hex') });
          });
        },
      );
      request.on('error', (error) => {
        if (options.abort) resolve({ status: 0, body: '', sha256: '' });
        else reject(error);
      });
      const abort = options.abort;
      if (abort) {
        stalled = () => {
          abort.when().then(
            () => request.destroy(),
            (error: unknown) => {
              request.destroy();
              reject(error instanceof Error ? error : new Error(String(error)));
            },
          );
        };
      }
      body.pipe(request);
    });
  }

  it('streams a 512 MiB upload to disk with flat memory', async () => {
    const size = 512 * 1024 * 1024;
    globalThis.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    let result;
    try {
      result = await streamUpload('world.zip', size);
    } finally {
      clearInterval(sampler);
    }
    const growth = peak - baseline;
    assert.equal(result.status, 200, result.body);
    assert.ok(growth < 64 * 1024 * 1024, `memory grew by ${Math.round(growth / 1024 / 1024)} MiB`);
    const stored = createHash('sha256');
    for await (const chunk of createReadStream(path.join(root, 'world.zip')))
      stored.update(chunk as Buffer);
    assert.equal(stored.digest('hex'), result.sha256);
    assert.equal((await stat(path.join(root, 'world.zip'))).size, size);
  });

  it('leaves nothing behind, and the previous file intact, when the client aborts', async () => {
    await writeFile(path.join(root, 'map.zip'), 'previous version');
    const before = await allNames(root);
    const writing = async () => (await allNames(root)).some((name) => name.includes(TEMP_PREFIX));
    // Cut off once the panel is writing the upload into its temporary file.
    await streamUpload('map.zip', 64 * 1024 * 1024, {
      abort: {
        after: 8 * 1024 * 1024,
        when: () => eventually(async () => ((await writing()) ? true : undefined), 'the upload'),
      },
    });
    // The panel notices the abort asynchronously, then removes its temporary file.
    await eventually(async () => ((await writing()) ? undefined : true), 'its removal');
    assert.deepEqual(await allNames(root), before);
    assert.equal(await readFile(path.join(root, 'map.zip'), 'utf8'), 'previous version');
  });

  /** GETs `urlPath` with a reader that stops after every chunk; resolves with what it read. */
  function slowDownload(
    urlPath: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const request = http.get(
        {
          host: base.hostname,
          port: base.port,
          path: urlPath,
          headers: { ...admin.headers, ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            // The socket fills up meanwhile: the panel has to wait before it reads on.
            response.pause();
            setImmediate(() => response.resume());
          });
          response.on('end', () => {
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks),
            });
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
    });
  }

  const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

  it('downloads a file of many chunks, whole and in ranges, byte for byte, to a slow reader', async () => {
    // Five and a bit of the 4 MiB buffers the panel reads into and reuses.
    const content = randomBytes(5 * 4 * 1024 * 1024 + 12345);
    await writeFile(path.join(root, 'region.mca'), content);
    const whole = await slowDownload('/api/servers/big/files/download?path=region.mca');
    assert.equal(whole.status, 200);
    assert.equal(whole.headers['content-length'], String(content.length));
    assert.equal(whole.body.length, content.length);
    assert.equal(sha256(whole.body), sha256(content));

    const [from, to] = [3 * 1024 * 1024 + 7, 17 * 1024 * 1024 + 1];
    const part = await slowDownload('/api/servers/big/files/download?path=region.mca', {
      range: `bytes=${from}-${to}`,
    });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes ${from}-${to}/${content.length}`);
    assert.equal(sha256(part.body), sha256(content.subarray(from, to + 1)));
  });

  it('closes the file when the client goes away in the middle of a download', async () => {
    const file = path.join(root, 'backup.tar');
    await writeFile(file, randomBytes(32 * 1024 * 1024));
    /** Descriptors of this process (the panel runs in it) open on that file. */
    const openOnFile = async (): Promise<number> => {
      let count = 0;
      for (const fd of await readdir('/proc/self/fd')) {
        const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
        if (target === file) count += 1;
      }
      return count;
    };
    const request = http.get({
      host: base.hostname,
      port: base.port,
      path: '/api/servers/big/files/download?path=backup.tar',
      headers: admin.headers,
    });
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      request.on('response', resolve);
      request.on('error', reject);
    });
    await new Promise((resolve) => response.once('data', resolve));
    response.pause();
    assert.equal(await openOnFile(), 1, 'the file is open while it is being sent');
    request.on('error', () => undefined);
    request.destroy();
    await eventually(
      async () => ((await openOnFile()) === 0 ? true : undefined),
      'the panel to close the file',
    );
  });
});
