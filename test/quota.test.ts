/**
 * The disk quota (`limits.diskBytes`) held against the panel's own writes, through the HTTP
 * surface with real files on disk: uploads and saves that would pass it are refused with 413
 * QUOTA_EXCEEDED and leave nothing behind (no file, no temporary file, the old content intact),
 * only growth counts, a streamed upload is cut off as it crosses the limit, concurrent uploads
 * cannot both slip under it, deletes and shrinking saves are always allowed, and the figure the
 * panel keeps (shown in /stats) matches a real walk of the folder after its writes.
 */
import assert from 'node:assert/strict';
import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  historyOf,
  json,
  register,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

const BOUNDARY = '----panel-quota-boundary';

const partHead = (filename: string): Buffer =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
const partsTail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/** Every entry under `dir`, hidden temporary files included, with its size. */
async function everything(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { recursive: true })).map(String).sort();
  return Promise.all(
    names.map(async (name) => `${name}:${(await lstat(path.join(dir, name))).size}`),
  );
}

/** What the quota counts, walked here independently: the bytes of files and symlinks. */
async function walkedBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    const stat = await lstat(path.join(dir, name));
    if (!stat.isDirectory()) total += stat.size;
  }
  return total;
}

describe('the disk quota against the panel’s own writes', () => {
  let panel: TestPanel;
  let admin: Session;

  const rootOf = (server: string) => path.join(panel.config.serversDir, server);
  const upload = (server: string, filename: string, content: Buffer | Readable, folder = '') =>
    panel.app.inject({
      method: 'POST',
      url: `/api/servers/${server}/files/upload?path=${encodeURIComponent(folder)}`,
      headers: { ...admin.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: Buffer.isBuffer(content)
        ? Buffer.concat([partHead(filename), content, partsTail])
        : content,
    });
  const save = (server: string, file: string, content: string) =>
    panel.app.inject({
      method: 'PUT',
      url: `/api/servers/${server}/files/content?path=${encodeURIComponent(file)}`,
      headers: admin.headers,
      payload: { content },
    });
  const setQuota = async (server: string, diskBytes: number | null) => {
    const response = await panel.app.inject({
      method: 'PUT',
      url: `/api/servers/${server}/config`,
      headers: admin.headers,
      payload: { limits: { diskBytes } },
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, { MAX_UPLOAD_BYTES: String(64 * 1024 * 1024) });
    admin = await register(panel, 'admin');
  });

  it('refuses an upload past the quota with 413 and leaves nothing on disk', async () => {
    await createServer(panel, admin, 'full', { limits: { diskBytes: 100_000 } });
    await writeFile(path.join(rootOf('full'), 'world.dat'), Buffer.alloc(60_000, 1));
    const before = await everything(rootOf('full'));

    const refused = await upload('full', 'big.dat', Buffer.alloc(50_000, 2));
    assertError(refused, 413, 'QUOTA_EXCEEDED');
    const message = json<{ message: string }>(refused).message;
    assert.match(message, /60000 bytes/, 'how much is used');
    assert.match(message, /100000 bytes/, 'the limit');
    assert.match(message, /needs at least \d+ bytes/, 'what the write needed');
    assert.deepEqual(await everything(rootOf('full')), before, 'no file, no temporary file');

    // What fits is taken, and the overwrite of a file counts only its growth.
    assert.equal((await upload('full', 'small.dat', Buffer.alloc(30_000, 3))).statusCode, 200);
    const regrown = await upload('full', 'world.dat', Buffer.alloc(70_000, 4));
    assert.equal(regrown.statusCode, 200, regrown.body);
    assertError(await upload('full', 'small.dat', Buffer.alloc(30_001, 5)), 413, 'QUOTA_EXCEEDED');
    assert.deepEqual(
      await readFile(path.join(rootOf('full'), 'small.dat')),
      Buffer.alloc(30_000, 3),
    );
  });

  it('cuts off a streamed upload of unknown length as it crosses the quota', async () => {
    await createServer(panel, admin, 'stream', { limits: { diskBytes: 1024 * 1024 } });
    await writeFile(path.join(rootOf('stream'), 'keep.txt'), 'kept');
    const before = await everything(rootOf('stream'));

    // No Content-Length, and it never ends: only the quota can stop it.
    const block = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    const body = new Readable({
      read() {
        if (sent === 0) this.push(partHead('endless.bin'));
        sent += block.length;
        this.push(block);
      },
    });
    const answer = await upload('stream', 'endless.bin', body);
    body.destroy();
    assertError(answer, 413, 'QUOTA_EXCEEDED');
    assert.ok(sent < 64 * 1024 * 1024, `cut off early, after ${sent} bytes`);
    // The request is cut off, then the temporary file removed: soon, not necessarily at once.
    for (let tries = 0; ; tries += 1) {
      const now = await everything(rootOf('stream'));
      if (JSON.stringify(now) === JSON.stringify(before) || tries === 100) {
        assert.deepEqual(now, before, 'nothing left of the upload');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal((await stats(panel, admin, 'stream')).disk.bytes, 4);
  });

  it('refuses a save that grows a file past the quota and keeps the old content', async () => {
    await createServer(panel, admin, 'edit', { limits: { diskBytes: 1000 } });
    assert.equal((await save('edit', 'server.properties', 'a'.repeat(600))).statusCode, 200);
    const refused = await save('edit', 'server.properties', 'b'.repeat(1001));
    assertError(refused, 413, 'QUOTA_EXCEEDED');
    assert.match(json<{ message: string }>(refused).message, /needs 401 bytes more/);
    assert.equal(
      await readFile(path.join(rootOf('edit'), 'server.properties'), 'utf8'),
      'a'.repeat(600),
    );
    // A save that creates a file carries bytes too.
    assertError(await save('edit', 'new.txt', 'c'.repeat(401)), 413, 'QUOTA_EXCEEDED');
    assert.deepEqual(await everything(rootOf('edit')), ['server.properties:600']);
    assert.equal((await save('edit', 'new.txt', 'c'.repeat(400))).statusCode, 200);
  });

  it('allows deletes and shrinking writes, and only those, once the quota is lowered below use', async () => {
    await createServer(panel, admin, 'lowered');
    const root = rootOf('lowered');
    await mkdir(path.join(root, 'logs'));
    await writeFile(path.join(root, 'logs', 'old.log'), Buffer.alloc(5000));
    await writeFile(path.join(root, 'config.yml'), 'x'.repeat(3000));
    await setQuota('lowered', 1000);

    assertError(await save('lowered', 'config.yml', 'x'.repeat(3001)), 413, 'QUOTA_EXCEEDED');
    assertError(await upload('lowered', 'one.byte', Buffer.from('1')), 413, 'QUOTA_EXCEEDED');
    const shrunk = await save('lowered', 'config.yml', 'y'.repeat(2000));
    assert.equal(shrunk.statusCode, 200, shrunk.body);
    const smaller = await upload('lowered', 'config.yml', Buffer.alloc(1500, 1));
    assert.equal(smaller.statusCode, 200, smaller.body);
    // Creates add no bytes (an empty file or folder), so they are never refused for it.
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/lowered/files/create',
      headers: admin.headers,
      payload: { type: 'folder', name: 'backups', path: '' },
    });
    assert.equal(created.statusCode, 200, created.body);
    const deleted = await panel.app.inject({
      method: 'DELETE',
      url: '/api/servers/lowered/files?path=logs',
      headers: admin.headers,
    });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal((await stats(panel, admin, 'lowered')).disk.bytes, 1500);
    // Back within it: the room left can be used again.
    assert.equal((await save('lowered', 'config.yml', 'z'.repeat(1000))).statusCode, 200);
    assertError(await save('lowered', 'config.yml', 'z'.repeat(1001)), 413, 'QUOTA_EXCEEDED');
  });

  it('lets exactly one of two concurrent uploads through when only one fits', async () => {
    await createServer(panel, admin, 'race', { limits: { diskBytes: 60_000 } });
    // Each sends its first 30,000 bytes (both fit so far), waits, then its last 10,000.
    let go: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (go = resolve));
    const halves = (name: string) =>
      Readable.from(
        (async function* () {
          yield partHead(name);
          yield Buffer.alloc(30_000, 1);
          await released;
          yield Buffer.alloc(10_000, 2);
          yield partsTail;
        })(),
      );
    const both = Promise.all([
      upload('race', 'a.bin', halves('a.bin')),
      upload('race', 'b.bin', halves('b.bin')),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    go();
    const responses = await both;
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.deepEqual(statuses, [200, 413], responses.map((response) => response.body).join(' '));
    const left = await everything(rootOf('race'));
    assert.equal(left.length, 1, left.join(', '));
    assert.match(left[0] ?? '', /^[ab]\.bin:40000$/);
  });

  it('leaves a server without a quota unlimited', async () => {
    await createServer(panel, admin, 'free');
    const big = await upload('free', 'big.bin', Buffer.alloc(8 * 1024 * 1024, 9));
    assert.equal(big.statusCode, 200, big.body);
    assert.equal((await save('free', 'notes.txt', 'n'.repeat(100_000))).statusCode, 200);
    const now = await stats(panel, admin, 'free');
    assert.deepEqual(now.disk, { bytes: 8 * 1024 * 1024 + 100_000, limit: null });
  });

  it('keeps the usage figure of /stats equal to a real walk after writes and deletes', async () => {
    await createServer(panel, admin, 'books', { limits: { diskBytes: 10_000_000 } });
    const root = rootOf('books');
    await mkdir(path.join(root, 'world', 'region'), { recursive: true });
    await writeFile(path.join(root, 'world', 'region', 'r.0.0.mca'), Buffer.alloc(200_000));
    await writeFile(path.join(root, 'eula.txt'), 'eula=true\n');
    // The first figure: one walk.
    assert.equal((await stats(panel, admin, 'books')).disk.bytes, await walkedBytes(root));

    const steps = [
      () => upload('books', 'plugin.jar', Buffer.alloc(123_456, 1), 'world'),
      () => upload('books', 'r.0.0.mca', Buffer.alloc(50_000, 2), 'world/region'),
      () => save('books', 'eula.txt', 'eula=false and a longer line\n'),
      () => save('books', 'world/level.dat', 'level'),
      () =>
        panel.app.inject({
          method: 'POST',
          url: '/api/servers/books/files/move',
          headers: admin.headers,
          payload: { source: 'world/plugin.jar', destination: '' },
        }),
      () =>
        panel.app.inject({
          method: 'DELETE',
          url: '/api/servers/books/files?path=world',
          headers: admin.headers,
        }),
      () => upload('books', 'late.bin', Buffer.alloc(7777, 3)),
    ];
    for (const step of steps) {
      const response = await step();
      assert.equal(response.statusCode, 200, response.body);
      assert.equal((await stats(panel, admin, 'books')).disk.bytes, await walkedBytes(root));
    }
    assert.equal(await walkedBytes(root), 123_456 + 29 + 7777);
  });
});

describe('a server over its disk quota', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      { DISK_QUOTA_GRACE_SECONDS: '2' },
      { diskCheckMs: 200, diskUsageTtlMs: 200 },
    );
    admin = await register(panel, 'admin');
  });

  const folderOf = (name: string) => path.join(panel.config.serversDir, name);

  it('cannot start while its folder is larger than its quota (409), and starts once it is not', async () => {
    await createServer(panel, admin, 'full', { limits: { diskBytes: 100_000 } });
    // Its own writes, as a game server's: behind the panel's back.
    await writeFile(path.join(folderOf('full'), 'world.dat'), Buffer.alloc(150_000, 1));
    const refused = await serverAction(panel, admin, 'full', 'start');
    assertError(refused, 409, 'OVER_QUOTA');
    assert.match(json<{ message: string }>(refused).message, /more than its limit/);
    assert.equal((await stats(panel, admin, 'full')).status, 'stopped');

    await rm(path.join(folderOf('full'), 'world.dat'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = await serverAction(panel, admin, 'full', 'start');
    assert.equal(started.statusCode, 200, started.body);
    await serverAction(panel, admin, 'full', 'stop');
  });

  it('warns a running server that passes it, and stops it after the grace period', async () => {
    await createServer(panel, admin, 'grower', {
      stopCommand: 'stop',
      limits: { diskBytes: 100_000 },
    });
    assert.equal((await serverAction(panel, admin, 'grower', 'start')).statusCode, 200);
    await writeFile(path.join(folderOf('grower'), 'world.dat'), Buffer.alloc(150_000, 1));
    const warned = await eventually(async () => {
      const lines = await historyOf(panel, admin, 'grower');
      return lines.find((line) => line.includes('more than its limit')) ?? undefined;
    }, 'the console warning');
    assert.match(warned, /it will be stopped in 2 s unless it gets back within it/);
    const stopped = await eventually(async () => {
      const now = await stats(panel, admin, 'grower');
      return now.status === 'stopped' ? now : undefined;
    }, 'the server to be stopped');
    assert.equal(stopped.pid, null);
    const lines = await historyOf(panel, admin, 'grower');
    assert.ok(lines.some((line) => line.includes('still over its disk limit after 2 s; stopping')));
    assert.ok(lines.includes('Stopping server'), 'stopped with its stop command');
  });

  it('lets a server that gets back within its quota in time run on', async () => {
    await createServer(panel, admin, 'tidy', { limits: { diskBytes: 100_000 } });
    await serverAction(panel, admin, 'tidy', 'start');
    const file = path.join(folderOf('tidy'), 'cache.dat');
    await writeFile(file, Buffer.alloc(150_000, 1));
    await eventually(async () => {
      const lines = await historyOf(panel, admin, 'tidy');
      return lines.some((line) => line.includes('more than its limit')) || undefined;
    }, 'the console warning');
    await rm(file);
    await eventually(async () => {
      const lines = await historyOf(panel, admin, 'tidy');
      return lines.includes('[panel] the server is back within its disk limit') || undefined;
    }, 'the all-clear');
    // Past the grace period, it still runs.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal((await stats(panel, admin, 'tidy')).status, 'running');
    await serverAction(panel, admin, 'tidy', 'stop');
  });
});
