/**
 * Deleting a server: its directory is taken away first (renamed into the trash in one step),
 * then its row, and the old content is removed in the background. A failure on the way leaves
 * the server as it was; a new server of the same name never starts from the old folder.
 *
 * The trees here are deeper than PATH_MAX (4096 bytes as a path) and, in a panel whose descriptor
 * limit was lowered while it runs, deeper than that limit: measuring, deleting a folder of the
 * file manager and deleting the server must work at any depth.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ServerStorage } from '../src/host/local/storage/server-storage.js';
import { TRASH_NAME } from '../src/host/local/storage/trash.js';
import {
  rememberSecret,
  startPanel,
  suiteScope,
  testDialect,
  testEnvironment,
  type TestPanel,
} from './helpers/app.js';
import {
  alive,
  assertError,
  createServer,
  eventually,
  json,
  PASSWORD,
  register,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

/** 300 levels of 20-byte names: a path of 6,300 bytes, well past PATH_MAX. */
const LEVELS = 300;
const NAME_BYTES = 20;
/** The file at the bottom, big enough that a usage walk that stops early is seen. */
const BOTTOM_BYTES = 1_000_000;

/**
 * Builds `levels` nested folders under `dir` with descriptor-relative calls (a child process
 * that changes into each folder it makes), a small file every 50 levels, a symlink to `/` and a
 * file of BOTTOM_BYTES at the bottom.
 */
function buildDeepTree(dir: string, levels = LEVELS): void {
  const script = `
    const fs = require('node:fs');
    const [dir, levels, bytes, length] = process.argv.slice(1).map((v, i) => i ? Number(v) : v);
    fs.mkdirSync(dir, { recursive: true });
    process.chdir(dir);
    for (let i = 0; i < levels; i++) {
      const name = ('level-' + i).padEnd(length, '_');
      fs.mkdirSync(name);
      if (i % 50 === 0) fs.writeFileSync('note.txt', 'level ' + i);
      process.chdir(name);
    }
    fs.symlinkSync('/', 'root-link');
    fs.writeFileSync('bottom.bin', Buffer.alloc(bytes, 1));
  `;
  execFileSync(process.execPath, [
    '-e',
    script,
    dir,
    String(levels),
    String(BOTTOM_BYTES),
    String(NAME_BYTES),
  ]);
}

/** The entries of the trash, or none when it does not exist. */
const trashOf = (serversDir: string): string[] => {
  const trash = path.join(serversDir, TRASH_NAME);
  return existsSync(trash) ? readdirSync(trash) : [];
};

describe('deleting a server', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  const remove = (name: string) =>
    panel.app.inject({ method: 'DELETE', url: `/api/servers/${name}`, headers: admin.headers });
  const listing = async (name: string): Promise<unknown[]> => {
    const response = await panel.app.inject({
      url: `/api/servers/${name}/files`,
      headers: admin.headers,
    });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: unknown[] }>(response).data;
  };

  it('measures and deletes a directory deeper than PATH_MAX; the next server of that name starts empty', async () => {
    await createServer(panel, admin, 'deep');
    const dir = path.join(panel.config.serversDir, 'deep');
    buildDeepTree(path.join(dir, 'world'));

    const usage = await stats(panel, admin, 'deep');
    assert.ok(
      usage.disk.bytes >= BOTTOM_BYTES,
      `disk ${usage.disk.bytes}: the walk reached the bottom`,
    );

    const response = await remove('deep');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(existsSync(dir), false, 'the directory is gone at once');
    await eventually(
      () => (trashOf(panel.config.serversDir).length === 0 ? true : undefined),
      'the trash to be emptied',
    );
    assert.ok((await stat('/')).isDirectory(), 'the symlink to / was not followed');

    await createServer(panel, admin, 'deep');
    assert.deepEqual(await listing('deep'), [], 'the new server starts from an empty folder');
    assertError(await remove('nothing-here'), 404);
  });

  it('deletes a folder deeper than PATH_MAX through the file manager', async () => {
    await createServer(panel, admin, 'keeper');
    const dir = path.join(panel.config.serversDir, 'keeper');
    buildDeepTree(path.join(dir, 'tree'));
    await writeFile(path.join(dir, 'keep.txt'), 'keep');
    const response = await panel.app.inject({
      method: 'DELETE',
      url: '/api/servers/keeper/files?path=tree',
      headers: admin.headers,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(await readdir(dir), ['keep.txt']);
  });

  it('stops a running server first, and nothing of it is left', async () => {
    await createServer(panel, admin, 'running', { stopCommand: 'stop' });
    assert.equal((await serverAction(panel, admin, 'running', 'start')).statusCode, 200);
    const { pid } = await stats(panel, admin, 'running');
    assert.ok(pid !== null && alive(pid));
    buildDeepTree(path.join(panel.config.serversDir, 'running', 'world'), 50);
    const response = await remove('running');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(alive(pid), false);
    assert.equal(existsSync(path.join(panel.config.serversDir, 'running')), false);
    assertError(await serverAction(panel, admin, 'running', 'start'), 404);
  });

  it('keeps the server and its directory when the row cannot be deleted', async () => {
    await createServer(panel, admin, 'sticky');
    const dir = path.join(panel.config.serversDir, 'sticky');
    await writeFile(path.join(dir, 'world.dat'), 'precious');
    const refuse =
      testDialect === 'postgres'
        ? [
            sql`create function refuse_delete() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$`,
            sql`create trigger refuse_delete before delete on servers for each row execute function refuse_delete()`,
          ]
        : [
            sql`create trigger refuse_delete before delete on servers begin select raise(abort, 'refused'); end`,
          ];
    for (const statement of refuse) await statement.execute(panel.db.kysely);
    try {
      assertError(await remove('sticky'), 500, 'INTERNAL');
    } finally {
      await sql`drop trigger refuse_delete${sql.raw(testDialect === 'postgres' ? ' on servers' : '')}`.execute(
        panel.db.kysely,
      );
    }
    assert.equal(await readFile(path.join(dir, 'world.dat'), 'utf8'), 'precious');
    assert.equal(
      (await panel.app.inject({ url: '/api/servers/sticky/config', headers: admin.headers }))
        .statusCode,
      200,
    );
    assert.deepEqual(
      trashOf(panel.config.serversDir).filter((entry) => entry.startsWith('sticky-')),
      [],
      'nothing of it stays in the trash',
    );
    assert.equal((await remove('sticky')).statusCode, 200);
    assert.equal(existsSync(dir), false);
  });

  it('never lets a server be named like the trash, and empties a trash left by a killed panel', async () => {
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: { name: TRASH_NAME, startCommand: 'true' },
    });
    assertError(created, 400, 'VALIDATION_FAILED');
    assertError(
      await panel.app.inject({ url: `/api/servers/${TRASH_NAME}/files`, headers: admin.headers }),
      404,
    );

    const leftover = path.join(panel.config.serversDir, TRASH_NAME, 'old-0123456789abcdef');
    buildDeepTree(leftover);
    await mkdir(path.join(panel.config.serversDir, TRASH_NAME, 'empty-0123'));
    await new ServerStorage(panel.config.serversDir, { log: panel.app.log }).emptyTrash();
    assert.deepEqual(trashOf(panel.config.serversDir), []);
  });
});

// ---------------------------------------------------------------------------------------------
// A panel with fewer descriptors than the tree has levels

/** Descriptors the child panel may hold, set with prlimit once it listens. */
const FD_LIMIT = 128;

const hasPrlimit = spawnSync('prlimit', ['--version']).status === 0;

describe(
  'a panel with fewer descriptors than the tree has levels',
  { skip: !hasPrlimit && 'prlimit is not installed' },
  () => {
    let child: ChildProcess | undefined;
    let cleanup: () => Promise<void> = () => Promise.resolve();
    after(async () => {
      if (child?.exitCode === null) {
        const gone = new Promise((resolve) => child?.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
      }
      await cleanup();
    });

    it('measures, deletes a folder and deletes the server', async () => {
      const environment = await testEnvironment();
      cleanup = environment.cleanup;
      const spawned = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        env: { PATH: process.env.PATH ?? '', ...environment.env, PORT: '0', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = spawned;
      let output = '';
      const base = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`the panel did not listen: ${output}`));
        }, 30_000);
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        };
        spawned.stdout.on('data', onData);
        spawned.stderr.on('data', onData);
      });
      const call = async (method: string, url: string, token?: string, body?: unknown) => {
        const response = await fetch(`${base}${url}`, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        return { status: response.status, text };
      };

      rememberSecret(PASSWORD);
      const registered = await call('POST', '/api/auth/register', undefined, {
        username: 'admin',
        password: PASSWORD,
      });
      assert.equal(registered.status, 200, registered.text);
      const token = (JSON.parse(registered.text) as { access_token: string }).access_token;
      rememberSecret(token);
      const created = await call('POST', '/api/servers/create', token, {
        name: 'deep',
        startCommand: 'true',
      });
      assert.equal(created.status, 200, created.text);
      const serversDir = path.join(environment.env.DATA_DIR ?? '', 'servers');
      const dir = path.join(serversDir, 'deep');

      const pid = spawned.pid ?? 0;
      execFileSync('prlimit', ['--pid', String(pid), `--nofile=${FD_LIMIT}:${FD_LIMIT}`]);
      const open = readdirSync(`/proc/${pid}/fd`).length;
      assert.ok(open < FD_LIMIT / 2, `the panel holds ${open} descriptors`);
      const levels = FD_LIMIT * 2 + 44;

      buildDeepTree(path.join(dir, 'tree'), levels);
      const usage = await call('GET', '/api/servers/deep/stats', token);
      assert.equal(usage.status, 200, usage.text);
      const disk = (JSON.parse(usage.text) as { data: { disk: { bytes: number } } }).data.disk
        .bytes;
      assert.ok(disk >= BOTTOM_BYTES, `disk ${disk}: the walk reached the bottom`);

      const deleted = await call('DELETE', '/api/servers/deep/files?path=tree', token);
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(readdirSync(dir), []);

      buildDeepTree(path.join(dir, 'world'), levels);
      const removed = await call('DELETE', '/api/servers/deep', token);
      assert.equal(removed.status, 200, removed.text);
      assert.equal(existsSync(dir), false);
      await eventually(
        () => (trashOf(serversDir).length === 0 ? true : undefined),
        'the trash to be emptied',
      );

      const again = await call('POST', '/api/servers/create', token, {
        name: 'deep',
        startCommand: 'true',
      });
      assert.equal(again.status, 200, again.text);
      const files = await call('GET', '/api/servers/deep/files', token);
      assert.equal(files.status, 200, files.text);
      assert.deepEqual((JSON.parse(files.text) as { data: unknown[] }).data, []);
      assert.doesNotMatch(output, /EMFILE|ENAMETOOLONG/);
    });
  },
);
