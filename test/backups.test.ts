/**
 * Backups through the HTTP surface with real files: round trips byte for byte (download with
 * ranges, restore), ignore patterns and the server's ignore file, save commands with a running
 * game server, hostile archives put in a backup's place (refused, the server untouched),
 * retention, locks and limits, one job per server, the schedule's backup task, and what a
 * panel stopped mid-way leaves.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { tarOf } from './helpers/archives.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  historyOf,
  json,
  register,
  serverAction,
  type Session,
} from './helpers/factories.js';
import { serverRoles } from './helpers/roles.js';

interface BackupBody {
  id: string;
  name: string;
  status: 'running' | 'done' | 'failed';
  locked: boolean;
  bytes: number | null;
  checksum: string | null;
  files: number | null;
  entries: number | null;
  unpackedBytes: number | null;
  consistency: string | null;
  message: string | null;
  lastRestore: { status: string; message: string; at: string } | null;
  progress: unknown;
}

/** The names in a .tar.gz. */
async function tarNames(archive: Buffer): Promise<string[]> {
  const names: string[] = [];
  const parser = new Parser();
  parser.on('entry', (entry: ReadEntry) => {
    names.push(entry.path);
    entry.resume();
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
    parser.end(archive);
  });
  return names.sort();
}

/** Every entry under `dir`: type, and content hash or link target. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })).map(String).sort()) {
    const full = path.join(dir, name);
    const stat = await lstat(full);
    result[name] = stat.isSymbolicLink()
      ? `link ${await readlink(full)}`
      : stat.isDirectory()
        ? 'folder'
        : `file ${stat.mode & 0o777} ${createHash('sha256')
            .update(await readFile(full))
            .digest('hex')}`;
  }
  return result;
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describe('backups', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;
  let stranger: Session;

  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: Record<string, unknown>,
    session: Session = admin,
  ) =>
    panel.app.inject({
      method,
      url: `/api/servers/${url}`,
      headers: session.headers,
      ...(payload === undefined ? {} : { payload }),
    });

  const backupOf = async (server: string, id: string): Promise<BackupBody> => {
    const response = await call('GET', `${server}/backups/${id}`);
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: BackupBody }>(response).data;
  };

  /** Makes a backup and waits for its end; answers it. */
  const backUp = async (
    server: string,
    payload: Record<string, unknown> = {},
    expect: 'done' | 'failed' = 'done',
  ): Promise<BackupBody> => {
    const response = await call('POST', `${server}/backups`, payload);
    assert.equal(response.statusCode, 200, response.body);
    const { id, status } = json<{ data: BackupBody }>(response).data;
    assert.equal(status, 'running');
    const backup = await eventually(async () => {
      const current = await backupOf(server, id);
      // Retention runs after the record says done; the job ends after it.
      return current.status === 'running' || current.progress !== null ? undefined : current;
    }, 'the backup to end');
    assert.equal(backup.status, expect, backup.message ?? '');
    return backup;
  };

  /** Starts a restore and waits for its end; answers the backup after it. */
  const restore = async (server: string, id: string): Promise<BackupBody> => {
    const response = await call('POST', `${server}/backups/${id}/restore`);
    assert.equal(response.statusCode, 200, response.body);
    return eventually(async () => {
      const current = await backupOf(server, id);
      return current.lastRestore?.status === 'running' || current.progress !== null
        ? undefined
        : current;
    }, 'the restore to end');
  };

  const download = async (server: string, id: string, range?: string) =>
    panel.app.inject({
      method: 'GET',
      url: `/api/servers/${server}/backups/${id}/download`,
      headers: { ...admin.headers, ...(range ? { range } : {}) },
    });

  const folderOf = (server: string): string => path.join(panel.config.serversDir, server);
  const archiveOf = (server: string, id: string): string =>
    path.join(panel.config.backupDir, server, `${id}.tar.gz`);

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    ({
      admin,
      member: user,
      outsider: stranger,
    } = await serverRoles(panel, { server: 'world', member: 'player', outsider: 'stranger' }));
  });

  it('round-trips a folder byte for byte: download with ranges, restore over changes', async () => {
    await createServer(panel, admin, 'trip');
    const root = folderOf('trip');
    await mkdir(path.join(root, 'world/region'), { recursive: true });
    await mkdir(path.join(root, 'empty'));
    await writeFile(path.join(root, 'world/region/r.0.0.mca'), randomBytes(300_000));
    await writeFile(path.join(root, 'world/level.dat'), 'level one\n');
    await writeFile(path.join(root, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await writeFile(path.join(root, 'zero'), '');
    await writeFile(path.join(root, 'ünïcode 文字.txt'), 'name\n');
    await symlink('world/level.dat', path.join(root, 'level-link'));
    const original = await snapshot(root);

    const backup = await backUp('trip', { name: 'first' });
    assert.equal(backup.name, 'first');
    assert.equal(backup.consistency, 'stopped');
    assert.equal(backup.files, 6);
    assert.equal(backup.entries, 9);
    assert.equal(backup.progress, null);
    const archive = await readFile(archiveOf('trip', backup.id));
    assert.equal(backup.bytes, archive.length);
    assert.equal(backup.checksum, sha256(archive));

    const whole = await download('trip', backup.id);
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['content-type'], 'application/octet-stream');
    assert.equal(sha256(whole.rawPayload), backup.checksum);
    const part = await download('trip', backup.id, 'bytes=10-99');
    assert.equal(part.statusCode, 206);
    assert.deepEqual(part.rawPayload, archive.subarray(10, 100));

    // Changed, added, removed: the restore puts back exactly what was packed.
    await writeFile(path.join(root, 'world/level.dat'), 'level two\n');
    await writeFile(path.join(root, 'new-file'), 'added later');
    await rm(path.join(root, 'empty'), { recursive: true });
    await rm(path.join(root, 'level-link'));
    const restored = await restore('trip', backup.id);
    assert.equal(restored.lastRestore?.status, 'done', restored.lastRestore?.message);
    assert.deepEqual(await snapshot(root), original);
    // Restored files belong to whoever the servers run as, as the folder does.
    const owner = (await lstat(root)).uid;
    for (const name of ['world', 'world/level.dat', 'level-link', 'empty']) {
      assert.equal((await lstat(path.join(root, name))).uid, owner, name);
    }
    // No folder of the restore is left beside the servers'.
    assert.deepEqual(await readdir(path.join(panel.config.serversDir, '.restoring~')), []);
  });

  it('restores whatever it holds: links out and absolute, empty folders, modes, an empty server', async () => {
    await createServer(panel, admin, 'links');
    const root = folderOf('links');
    await mkdir(path.join(root, 'steam/linux64'), { recursive: true });
    await mkdir(path.join(root, 'empty/nested-empty'), { recursive: true });
    await mkdir(path.join(root, 'private'), { mode: 0o700 });
    await chmod(path.join(root, 'private'), 0o700);
    await chmod(path.join(root, 'empty'), 0o750);
    await writeFile(path.join(root, 'steam/linux64/steamclient.so'), 'lib');
    await writeFile(path.join(root, 'private/secret'), 'x', { mode: 0o600 });
    // What SteamCMD and many images make: absolute links, and relative ones leading out.
    await symlink('/home/container/steam/linux64/steamclient.so', path.join(root, 'abs'));
    await symlink('/etc/passwd', path.join(root, 'passwd'));
    await symlink('../../../etc', path.join(root, 'steam/up'));
    await symlink('linux64/steamclient.so', path.join(root, 'steam/inside'));
    await symlink('missing-target', path.join(root, 'dangling'));
    const tree = async (): Promise<Record<string, string>> => {
      const result = await snapshot(root);
      for (const name of Object.keys(result)) {
        const stat = await lstat(path.join(root, name));
        if (stat.isDirectory()) result[name] = `folder ${(stat.mode & 0o777).toString(8)}`;
      }
      return result;
    };
    const original = await tree();
    const backup = await backUp('links');
    await rm(root, { recursive: true });
    await mkdir(root);
    await writeFile(path.join(root, 'later'), 'added after the backup');
    const restored = await restore('links', backup.id);
    assert.equal(restored.lastRestore?.status, 'done', restored.lastRestore?.message);
    assert.deepEqual(await tree(), original);

    // A link that points out stays a link nothing follows: the panel refuses to read through it.
    const through = await panel.app.inject({
      method: 'GET',
      url: '/api/servers/links/files/content?path=/passwd',
      headers: admin.headers,
    });
    assert.equal(through.statusCode, 403, through.body);
    const listing = await panel.app.inject({
      method: 'GET',
      url: '/api/servers/links/files?path=/steam/up',
      headers: admin.headers,
    });
    assert.equal(listing.statusCode, 403, listing.body);

    // An empty server, and one whose every entry is ignored: both back up and restore.
    await createServer(panel, admin, 'bare');
    const bare = folderOf('bare');
    await rm(bare, { recursive: true });
    await mkdir(bare);
    const empty = await backUp('bare');
    assert.equal(empty.files, 0);
    await writeFile(path.join(bare, 'ignored.log'), 'log');
    const ignored = await backUp('bare', { ignore: ['*.log'] });
    assert.equal(ignored.files, 0);
    for (const made of [empty, ignored]) {
      await writeFile(path.join(bare, 'since'), 'written since');
      const outcome = await restore('bare', made.id);
      assert.equal(outcome.lastRestore?.status, 'done', outcome.lastRestore?.message);
      assert.deepEqual(await readdir(bare), []);
    }
  });

  it('tells the console socket how a backup and a restore go, as backup frames', async () => {
    await createServer(panel, admin, 'watched');
    await writeFile(path.join(folderOf('watched'), 'data'), randomBytes(2 * 1024 * 1024));
    const base = await panel.listen();
    const socket = new WebSocket(`${base.replace('http', 'ws')}/ws/servers/watched/console`, {
      headers: admin.headers,
    });
    const frames: { type: string; action?: string; status?: string; bytes?: number }[] = [];
    socket.on('message', (data: Buffer) => {
      frames.push(JSON.parse(data.toString()) as (typeof frames)[number]);
    });
    await once(socket, 'open');
    try {
      await eventually(() => (frames.length > 0 ? true : undefined), 'the history frame');
      const backup = await backUp('watched');
      const made = await eventually(
        () => frames.find((f) => f.type === 'backup' && f.status === 'done'),
        'the backup frame',
      );
      assert.equal(made.action, 'backup');
      assert.equal(made.bytes, 2 * 1024 * 1024);
      await restore('watched', backup.id);
      const restored = await eventually(
        () =>
          frames.find((f) => f.type === 'backup' && f.action === 'restore' && f.status === 'done'),
        'the restore frame',
      );
      assert.equal(restored.bytes, 2 * 1024 * 1024);
    } finally {
      socket.close();
    }
  });

  it('leaves out what the ignore patterns and the server ignore file name', async () => {
    await createServer(panel, admin, 'picky');
    const root = folderOf('picky');
    await mkdir(path.join(root, 'logs'));
    await mkdir(path.join(root, 'cache/deep'), { recursive: true });
    await writeFile(path.join(root, 'logs/latest.log'), 'log');
    await writeFile(path.join(root, 'cache/deep/x'), 'x');
    await writeFile(path.join(root, 'keep.txt'), 'keep');
    await writeFile(path.join(root, 'big.tmp'), 'tmp');
    await writeFile(path.join(root, '.backupignore'), '# comment\ncache/\n');
    const backup = await backUp('picky', { ignore: ['logs/', '*.tmp'] });
    const names = await tarNames(await readFile(archiveOf('picky', backup.id)));
    assert.deepEqual(names, ['.backupignore', 'keep.txt']);
    assert.deepEqual(backup.files, 2);
  });

  it('sends the save commands to a running server and waits for its saved line', async () => {
    await createServer(panel, admin, 'live');
    const settings = await call('PUT', 'live/backup-settings', {
      beforeCommands: ['say saving now'],
      afterCommands: ['say saving back on'],
      savedLine: 'regex:^\\[Server\\] saving now$',
      waitSeconds: 30,
    });
    assert.equal(settings.statusCode, 200, settings.body);
    assert.equal((await serverAction(panel, admin, 'live', 'start')).statusCode, 200);
    await eventually(
      async () => ((await historyOf(panel, admin, 'live')).length > 0 ? true : undefined),
      'the server to print',
    );
    const saved = await backUp('live');
    assert.equal(saved.consistency, 'saved');
    assert.equal(saved.message, null);
    const lines = await eventually(async () => {
      const history = await historyOf(panel, admin, 'live');
      return history.includes('[Server] saving back on') ? history : undefined;
    }, 'the after command');
    const order = ['[Server] saving now', '[Server] saving back on'].map((line) =>
      lines.indexOf(line),
    );
    assert.ok(order[0]! >= 0 && order[0]! < order[1]!, lines.join('\n'));

    // A saved line that never comes: packed anyway after the wait, and said so.
    await call('PUT', 'live/backup-settings', { savedLine: 'never printed', waitSeconds: 1 });
    const late = await backUp('live');
    assert.equal(late.consistency, 'timed-out');
    assert.match(late.message ?? '', /did not come within 1 s/);

    // No save commands while it runs: the record says the copy may be inconsistent.
    await call('PUT', 'live/backup-settings', { beforeCommands: [], afterCommands: [] });
    const unprepared = await backUp('live');
    assert.equal(unprepared.consistency, 'unprepared');
    assert.match(unprepared.message ?? '', /no save commands/);

    // A restore needs the server stopped.
    const refused = await call('POST', `live/backups/${saved.id}/restore`);
    assertError(refused, 409, 'CONFLICT');
    assert.equal((await serverAction(panel, admin, 'live', 'stop')).statusCode, 200);
  });

  it('refuses hostile archives put in place of a backup, leaving the server untouched', async () => {
    await createServer(panel, admin, 'target');
    const root = folderOf('target');
    await writeFile(path.join(root, 'precious'), 'keep me');
    await mkdir(path.join(root, 'sub'));
    const backup = await backUp('target');
    const before = await snapshot(root);
    const outside = path.join(panel.dataDir, 'escaped');

    const hostile: [string, Buffer, RegExp][] = [
      ['dot-dot', gzipSync(tarOf([{ path: '../escaped', body: Buffer.from('x') }])), /\.\./],
      ['absolute', gzipSync(tarOf([{ path: outside, body: Buffer.from('x') }])), /absolute/],
      // A link out is restored as the link it is (see the round trip: nothing follows it), but
      // nothing is ever written through one.
      [
        'write through a link out',
        gzipSync(
          tarOf([
            { path: 'up', type: 'SymbolicLink', linkpath: '..' },
            { path: 'up/escaped', body: Buffer.from('x') },
          ]),
        ),
        /through a symlink/,
      ],
      [
        'write through an absolute link',
        gzipSync(
          tarOf([
            { path: 'abs', type: 'SymbolicLink', linkpath: '/' },
            { path: `abs${outside}`, body: Buffer.from('x') },
          ]),
        ),
        /through a symlink/,
      ],
      [
        'hard link out',
        gzipSync(tarOf([{ path: 'hard', type: 'Link', linkpath: '/etc/passwd' }])),
        /hard link/,
      ],
      ['device', gzipSync(tarOf([{ path: 'dev', type: 'CharacterDevice' }])), /device/],
      [
        'huge ratio',
        gzipSync(tarOf([{ path: 'bomb', body: Buffer.alloc(64 * 1024 * 1024) }])),
        /more than was recorded/,
      ],
    ];
    for (const [what, archive, reason] of hostile) {
      await writeFile(archiveOf('target', backup.id), archive);
      // The record is made to match, as a store an attacker controls would: only the
      // extraction's own checks stand between the archive and the server.
      await panel.db.kysely
        .updateTable('backups')
        .set({ checksum: sha256(archive), bytes: archive.length })
        .where('id', '=', backup.id)
        .execute();
      const outcome = await restore('target', backup.id);
      assert.equal(outcome.lastRestore?.status, 'failed', what);
      assert.match(outcome.lastRestore.message, reason, what);
      assert.deepEqual(await snapshot(root), before, what);
      await assert.rejects(lstat(outside), what);
      await assert.rejects(lstat(path.join(panel.config.serversDir, '.restoring~/escaped')), what);
    }

    // A file changed behind the record's back is refused by its checksum.
    await writeFile(
      archiveOf('target', backup.id),
      gzipSync(tarOf([{ path: 'other', body: Buffer.from('y') }])),
    );
    const tampered = await restore('target', backup.id);
    assert.equal(tampered.lastRestore?.status, 'failed');
    assert.match(tampered.lastRestore.message, /checksum/);
    assert.deepEqual(await snapshot(root), before);
    assert.deepEqual(await readdir(path.join(panel.config.serversDir, '.restoring~')), []);
  });

  it('keeps the newest backups, spares locked ones, and refuses to delete a locked one', async () => {
    await createServer(panel, admin, 'kept');
    await writeFile(path.join(folderOf('kept'), 'f'), 'f');
    const first = await backUp('kept', { name: 'one' });
    const locked = await call('PUT', `kept/backups/${first.id}/lock`, { locked: true });
    assert.equal(locked.statusCode, 200, locked.body);
    assert.equal(json<{ data: BackupBody }>(locked).data.locked, true);
    assertError(await call('DELETE', `kept/backups/${first.id}`), 409, 'BACKUP_LOCKED');

    assert.equal((await call('PUT', 'kept/backup-settings', { keepLast: 2 })).statusCode, 200);
    const second = await backUp('kept', { name: 'two' });
    const third = await backUp('kept', { name: 'three' });
    const fourth = await backUp('kept', { name: 'four' });
    const names = async () =>
      json<{ data: BackupBody[] }>(await call('GET', 'kept/backups')).data.map((b) => b.name);
    // Two newest unlocked, and the locked one.
    assert.deepEqual(await names(), ['four', 'three', 'one']);
    await assert.rejects(lstat(archiveOf('kept', second.id)));
    assert.ok(await lstat(archiveOf('kept', first.id)));
    assert.ok(await lstat(archiveOf('kept', third.id)));

    await call('PUT', `kept/backups/${first.id}/lock`, { locked: false });
    const deleted = await call('DELETE', `kept/backups/${first.id}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
    await assert.rejects(lstat(archiveOf('kept', first.id)));
    assert.deepEqual(await names(), ['four', 'three']);
    assertError(await call('GET', `kept/backups/${first.id}`), 404, 'NOT_FOUND');
    assert.ok(fourth.id);
  });

  it('holds a server to the limits an admin set, which only an admin may change', async () => {
    await createServer(panel, admin, 'limited');
    const grant = await panel.app.inject({
      method: 'PUT',
      url: '/api/users/player/servers',
      headers: admin.headers,
      payload: { servers: ['world', 'limited'] },
    });
    assert.equal(grant.statusCode, 200, grant.body);
    assertError(
      await call('PUT', 'limited/backup-settings', { maxCount: 5 }, user),
      403,
      'FORBIDDEN',
    );
    const userSettings = await call('PUT', 'limited/backup-settings', { keepDays: 3 }, user);
    assert.equal(userSettings.statusCode, 200, userSettings.body);
    assert.equal(json<{ data: { keepDays: number } }>(userSettings).data.keepDays, 3);

    assert.equal((await call('PUT', 'limited/backup-settings', { maxCount: 1 })).statusCode, 200);
    await backUp('limited');
    assertError(await call('POST', 'limited/backups', {}, user), 409, 'BACKUP_LIMIT');

    await call('PUT', 'limited/backup-settings', { maxCount: null, maxBytes: 10 });
    assertError(await call('POST', 'limited/backups', {}), 409, 'BACKUP_LIMIT');
  });

  it('stops a backup that grows past the byte limit while it packs, keeping nothing', async () => {
    await createServer(panel, admin, 'growing');
    // Random bytes do not compress: the archive passes 100 kB part-way through packing.
    await writeFile(path.join(folderOf('growing'), 'noise.bin'), randomBytes(300 * 1024));
    assert.equal(
      (await call('PUT', 'growing/backup-settings', { maxBytes: 100_000 })).statusCode,
      200,
    );
    const failed = await backUp('growing', {}, 'failed');
    assert.match(failed.message ?? '', /grew past the server's backup limit of 100000 bytes/);
    assert.deepEqual(await readdir(path.dirname(archiveOf('growing', failed.id))), []);
    // The panel lives on, and the next backup within the limit is made.
    assert.equal((await panel.app.inject({ url: '/api/health' })).statusCode, 200);
    await call('PUT', 'growing/backup-settings', { maxBytes: null });
    await backUp('growing');
  });

  it('runs one backup per server at a time', async () => {
    await createServer(panel, admin, 'busy');
    await writeFile(path.join(folderOf('busy'), 'big'), randomBytes(32 * 1024 * 1024));
    const [a, b] = await Promise.all([
      call('POST', 'busy/backups', {}),
      call('POST', 'busy/backups', {}),
    ]);
    const codes = [a.statusCode, b.statusCode].sort();
    assert.deepEqual(codes, [200, 409]);
    assertError(a.statusCode === 409 ? a : b, 409, 'BACKUP_IN_PROGRESS');
    const started = json<{ data: BackupBody }>(a.statusCode === 200 ? a : b).data;
    await eventually(
      async () => ((await backupOf('busy', started.id)).status === 'done' ? true : undefined),
      'the backup to end',
    );
    // While a restore runs (it answers once it holds the server), nothing else may begin.
    const restoring = await call('POST', `busy/backups/${started.id}/restore`);
    assert.equal(restoring.statusCode, 200, restoring.body);
    assertError(await serverAction(panel, admin, 'busy', 'start'), 409, 'BACKUP_IN_PROGRESS');
    assertError(await call('POST', 'busy/backups', {}), 409, 'BACKUP_IN_PROGRESS');
    assertError(
      await call('POST', `busy/backups/${started.id}/restore`),
      409,
      'BACKUP_IN_PROGRESS',
    );
    await eventually(
      async () =>
        (await backupOf('busy', started.id)).lastRestore?.status === 'done' ? true : undefined,
      'the restore to end',
    );
    // Once it has ended, the server starts again.
    assert.equal((await serverAction(panel, admin, 'busy', 'start')).statusCode, 200);
    assert.equal((await serverAction(panel, admin, 'busy', 'stop')).statusCode, 200);
  });

  it('checks who may: users of the server, not others', async () => {
    const made = await call('POST', 'world/backups', { name: 'by the user' }, user);
    assert.equal(made.statusCode, 200, made.body);
    const { id } = json<{ data: BackupBody }>(made).data;
    await eventually(
      async () => ((await backupOf('world', id)).status === 'done' ? true : undefined),
      'the backup to end',
    );
    for (const [method, url, payload] of [
      ['GET', 'world/backups', undefined],
      ['POST', 'world/backups', {}],
      ['GET', `world/backups/${id}`, undefined],
      ['GET', `world/backups/${id}/download`, undefined],
      ['POST', `world/backups/${id}/restore`, undefined],
      ['PUT', `world/backups/${id}/lock`, { locked: true }],
      ['DELETE', `world/backups/${id}`, undefined],
      ['GET', 'world/backup-settings', undefined],
      ['PUT', 'world/backup-settings', { keepLast: 1 }],
    ] as const) {
      assertError(await call(method, url, payload, stranger), 403, 'FORBIDDEN');
    }
    assertError(await call('GET', 'world/backups/not-a-uuid'), 400, 'VALIDATION_FAILED');
    assertError(
      await call('GET', 'world/backups/00000000-0000-4000-8000-000000000000'),
      404,
      'NOT_FOUND',
    );
    // RE2 runs `(a+)+$` in linear time; a backreference or lookahead it cannot run is refused.
    for (const savedLine of ['regex:(a)\\1', 'regex:saved(?=!)', 'regex:(unclosed']) {
      const refused = await call('PUT', 'world/backup-settings', { savedLine });
      assertError(refused, 400, 'VALIDATION_FAILED');
      assert.match(
        refused.body,
        /savedLine: the pattern is not a regular expression the panel can run in linear time/,
      );
    }
    const nested = await call('PUT', 'world/backup-settings', { savedLine: 'regex:(a+)+$' });
    assert.equal(nested.statusCode, 200, nested.body);
    const cleared = await call('PUT', 'world/backup-settings', { savedLine: null });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assertError(await call('POST', 'world/backups', { ignore: ['a\nb'] }), 400);
    const deleted = await call('DELETE', `world/backups/${id}`, undefined, user);
    assert.equal(deleted.statusCode, 200, deleted.body);
  });

  it('save commands: set only with console.write, typed as who set them, not once they lost it', async () => {
    await createServer(panel, admin, 'saves');
    const carol = await register(panel, 'carol');
    const dave = await register(panel, 'dave');
    const grant = async (username: string, permissions: string[]) => {
      const response = await call('PUT', `saves/users/${username}`, { permissions });
      assert.equal(response.statusCode, 200, response.body);
    };
    // What `backups` was: the four backups permissions, and no console.
    await grant('dave', [
      'backups.create',
      'backups.download',
      'backups.restore',
      'backups.delete',
    ]);
    const refused = await call(
      'PUT',
      'saves/backup-settings',
      { beforeCommands: ['say dave-before'] },
      dave,
    );
    assertError(refused, 403, 'FORBIDDEN');
    assert.match(json<{ message: string }>(refused).message, /console\.write/);
    assertError(
      await call('PUT', 'saves/backup-settings', { afterCommands: ['say dave-after'] }, dave),
      403,
      'FORBIDDEN',
    );
    // The other settings, and the commands sent back unchanged, need nothing more.
    const other = await call(
      'PUT',
      'saves/backup-settings',
      { waitSeconds: 5, beforeCommands: [], keepLast: null },
      dave,
    );
    assert.equal(other.statusCode, 200, other.body);

    await grant('carol', ['backups.create', 'console.write']);
    const set = await call(
      'PUT',
      'saves/backup-settings',
      { beforeCommands: ['say carol-before'], afterCommands: ['say carol-after'] },
      carol,
    );
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(json<{ data: { commandsBy: string } }>(set).data.commandsBy, 'carol');
    const audit = await panel.app.inject({
      url: '/api/audit?action=backup.settings&limit=1',
      headers: admin.headers,
    });
    const [entry] = json<{ data: { actor: string; details: Record<string, unknown> }[] }>(
      audit,
    ).data;
    assert.equal(entry?.actor, 'carol');
    assert.deepEqual(entry.details.beforeCommands, ['say carol-before']);
    assert.deepEqual(entry.details.afterCommands, ['say carol-after']);

    // The admin makes the backup: the commands are carol's, and say so on the console.
    assert.equal((await serverAction(panel, admin, 'saves', 'start')).statusCode, 200);
    await eventually(
      async () => ((await historyOf(panel, admin, 'saves')).length > 0 ? true : undefined),
      'the server to print',
    );
    const typed = await backUp('saves');
    assert.equal(typed.consistency, 'commands-sent');
    const lines = await eventually(async () => {
      const history = await historyOf(panel, admin, 'saves');
      return history.includes('[Server] carol-after') ? history : undefined;
    }, 'the after command');
    assert.ok(lines.includes('[panel] carol> say carol-before'), lines.join('\n'));
    assert.ok(lines.includes('[panel] carol> say carol-after'), lines.join('\n'));
    assert.ok(!lines.some((line) => line.startsWith('[panel] admin> say carol')));

    // Carol loses console.write: the next backup goes on without her commands, and says why.
    await grant('carol', ['backups.create']);
    const seen = (await historyOf(panel, admin, 'saves')).length;
    const untyped = await backUp('saves');
    assert.equal(untyped.consistency, 'unprepared');
    assert.match(
      untyped.message ?? '',
      /save commands were not typed: carol no longer holds the console\.write permission/,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const later = (await historyOf(panel, admin, 'saves')).slice(seen);
    assert.ok(!later.some((line) => line.includes('carol-before')), later.join('\n'));
    assert.equal((await serverAction(panel, admin, 'saves', 'stop')).statusCode, 200);
  });

  it('downloads need backups.download and files.read, restores backups.restore and files.write', async () => {
    await createServer(panel, admin, 'split');
    await writeFile(path.join(folderOf('split'), 'world.dat'), 'a world');
    const backup = await backUp('split');
    const erin = await register(panel, 'erin');
    const grant = async (permissions: string[]) => {
      const response = await call('PUT', 'split/users/erin', { permissions });
      assert.equal(response.statusCode, 200, response.body);
    };
    const refusal = async (
      method: 'GET' | 'POST',
      url: string,
      permission: RegExp,
    ): Promise<void> => {
      const response = await call(method, url, undefined, erin);
      assertError(response, 403, 'FORBIDDEN');
      assert.match(json<{ message: string }>(response).message, permission);
    };
    const download = `split/backups/${backup.id}/download`;
    const link = `split/backups/${backup.id}/download-link`;
    const restoreUrl = `split/backups/${backup.id}/restore`;
    await grant(['backups.create']);
    assert.equal((await call('GET', 'split/backups', undefined, erin)).statusCode, 200);
    await refusal('GET', download, /backups\.download/);
    await refusal('POST', link, /backups\.download/);
    await refusal('POST', restoreUrl, /backups\.restore/);
    assertError(await call('DELETE', `split/backups/${backup.id}`, undefined, erin), 403);
    // A backup holds every file: downloading it needs reading them too.
    await grant(['backups.download']);
    await refusal('GET', download, /files\.read/);
    await refusal('POST', link, /files\.read/);
    await grant(['backups.download', 'files.read']);
    assert.equal((await call('GET', download, undefined, erin)).statusCode, 200);
    // A restore replaces every file: it needs writing them too.
    await grant(['backups.restore']);
    await refusal('POST', restoreUrl, /files\.write/);
    await grant(['backups.restore', 'files.write']);
    const restored = await call('POST', restoreUrl, undefined, erin);
    assert.equal(restored.statusCode, 200, restored.body);
    const outcome = await eventually(async () => {
      const current = await backupOf('split', backup.id);
      return current.lastRestore?.status === 'running' ? undefined : current.lastRestore;
    }, 'the restore');
    assert.equal(outcome?.status, 'done', outcome?.message);
    // Locking is about deleting.
    const lock = `split/backups/${backup.id}/lock`;
    const locked = await call('PUT', lock, { locked: true }, erin);
    assertError(locked, 403, 'FORBIDDEN');
    assert.match(json<{ message: string }>(locked).message, /backups\.delete/);
    await grant(['backups.delete']);
    assert.equal((await call('PUT', lock, { locked: true }, erin)).statusCode, 200);
    assert.equal((await call('PUT', lock, { locked: false }, erin)).statusCode, 200);
  });

  it("makes a backup as a schedule's task, and waits for it", async () => {
    await createServer(panel, admin, 'timed');
    const made = await call('POST', 'timed/schedules', {
      name: 'nightly',
      cron: '0 4 * * *',
      tasks: [{ action: 'backup' }, { action: 'command', payload: 'say done' }],
    });
    assert.equal(made.statusCode, 200, made.body);
    const { id } = json<{ data: { id: number } }>(made).data;
    assert.equal((await call('POST', `timed/schedules/${id}/run`)).statusCode, 200);
    const outcome = await eventually(async () => {
      const schedule = json<{ data: { lastOutcome: { status: string; message: string } | null } }>(
        await call('GET', `timed/schedules/${id}`),
      ).data;
      return schedule.lastOutcome ?? undefined;
    }, 'the run to end');
    // The command task fails (the server is stopped) only after the backup is done.
    assert.equal(outcome.status, 'failed', outcome.message);
    assert.match(outcome.message, /Task 2 \(command\)/);
    const backups = json<{ data: BackupBody[] }>(await call('GET', 'timed/backups')).data;
    assert.equal(backups.length, 1);
    assert.equal(backups[0]?.status, 'done');
  });

  it('removes the backups of a deleted server', async () => {
    await createServer(panel, admin, 'doomed');
    const backup = await backUp('doomed');
    const removed = await panel.app.inject({
      method: 'DELETE',
      url: '/api/servers/doomed',
      headers: admin.headers,
    });
    assert.equal(removed.statusCode, 200, removed.body);
    await eventually(
      async () =>
        (await lstat(archiveOf('doomed', backup.id)).catch(() => null)) ? undefined : true,
      'the archive to go',
    );
    const rows = await panel.db.kysely
      .selectFrom('backups')
      .select('id')
      .where('server_name', '=', 'doomed')
      .execute();
    assert.deepEqual(rows, []);
  });

  it('after a panel stopped mid-way: unfinished backups fail, a cut restore is undone', async () => {
    await createServer(panel, admin, 'cut');
    const root = folderOf('cut');
    await writeFile(path.join(root, 'state'), 'before the restore');
    const backup = await backUp('cut');
    // What a killed panel leaves: a running backup's row and half-written file, a restore
    // between its two renames (the old folder moved away, the new one not yet in place).
    const at = new Date().toISOString();
    await panel.db.kysely
      .insertInto('backups')
      .values({
        id: '11111111-1111-4111-8111-111111111111',
        server_name: 'cut',
        name: 'cut short',
        status: 'running',
        locked: 0,
        ignore: '[]',
        bytes: null,
        checksum: null,
        files: null,
        entries: null,
        unpacked_bytes: null,
        duration_ms: null,
        consistency: null,
        message: null,
        last_restore: JSON.stringify({ status: 'running', message: 'Restoring', at }),
        created_at: at,
        finished_at: null,
      })
      .execute();
    const partial = path.join(panel.config.backupDir, 'cut', '.partial~abc-half');
    await writeFile(partial, 'half');
    const restoring = path.join(panel.config.serversDir, '.restoring~');
    await mkdir(restoring, { recursive: true });
    const { rename } = await import('node:fs/promises');
    await rename(root, path.join(restoring, 'cut.old-0123456789abcdef'));
    await mkdir(path.join(restoring, 'cut.new-0123456789abcdef'));

    await panel.app.close();
    const again = await buildApp(panel.config, { logStream: { write: () => undefined } });
    try {
      await again.ready();
      assert.equal(await readFile(path.join(root, 'state'), 'utf8'), 'before the restore');
      assert.deepEqual(await readdir(restoring), []);
      await assert.rejects(lstat(partial));
      const response = await again.inject({
        method: 'GET',
        url: '/api/servers/cut/backups/11111111-1111-4111-8111-111111111111',
        headers: admin.headers,
      });
      const cut = json<{ data: BackupBody }>(response).data;
      assert.equal(cut.status, 'failed');
      assert.match(cut.message ?? '', /panel stopped/);
      assert.equal(cut.lastRestore?.status, 'failed');
      const kept = await again.inject({
        method: 'GET',
        url: `/api/servers/cut/backups/${backup.id}`,
        headers: admin.headers,
      });
      assert.equal(json<{ data: BackupBody }>(kept).data.status, 'done');
    } finally {
      await again.close();
    }
  });
});
