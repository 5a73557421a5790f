/**
 * Issue 25, point 7: what bounds a tenant by default (docs/security.md, "Defaults that bound a
 * tenant"). A new server gets a process limit (512, or the admin's default) and the admin's other
 * defaults; its processes have a raised oom_score_adj and the panel a lowered one; its backups are
 * held to a quota (by default its disk quota) and a count (by default 10).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  historyOf,
  json,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

const MIB = 1024 * 1024;

interface Limits {
  memoryBytes: number | null;
  cpuPercent: number | null;
  pids: number | null;
  diskBytes: number | null;
}

describe('defaults that bound a tenant', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;

  const limitsOf = async (name: string): Promise<Limits> => {
    const response = await panel.app.inject({
      url: `/api/servers/${name}/config`,
      headers: admin.headers,
    });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: { limits: Limits } }>(response).data.limits;
  };
  const putSettings = (payload: Record<string, unknown>, session = admin) =>
    panel.app.inject({
      method: 'PUT',
      url: '/api/admin/settings',
      headers: session.headers,
      payload,
    });
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: Record<string, unknown>) =>
    panel.app.inject({
      method,
      url: `/api/servers/${url}`,
      headers: admin.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  /** Makes a backup and waits for its end; answers its status and message. */
  const backUp = async (server: string): Promise<{ status: string; message: string | null }> => {
    const response = await call('POST', `${server}/backups`, {});
    assert.equal(response.statusCode, 200, response.body);
    const { id } = json<{ data: { id: string } }>(response).data;
    return eventually(async () => {
      const current = json<{
        data: { status: string; message: string | null; progress: unknown };
      }>(await call('GET', `${server}/backups/${id}`)).data;
      return current.status === 'running' || current.progress !== null ? undefined : current;
    }, 'the backup to end');
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    user = await register(panel, 'tenant');
  });

  it('gives a new server a process limit of 512, and nothing else, by default', async () => {
    const settings = await panel.app.inject({ url: '/api/admin/settings', headers: admin.headers });
    assert.equal(settings.statusCode, 200, settings.body);
    assert.deepEqual(json<{ data: unknown }>(settings).data, {
      serverDefaults: { pids: 512, memoryBytes: null, cpuPercent: null, diskBytes: null },
      backupDefaults: { maxCount: 10, maxBytes: null },
      registrationOpen: false,
      registrationEnv: 'open',
    });
    await createServer(panel, admin, 'plain');
    assert.deepEqual(await limitsOf('plain'), {
      memoryBytes: null,
      cpuPercent: null,
      pids: 512,
      diskBytes: null,
    });
    // A null process limit is not "none": it is the default, at creation and later.
    await createServer(panel, admin, 'asked-for-none', { limits: { pids: null } });
    assert.equal((await limitsOf('asked-for-none')).pids, 512);
    const put = await call('PUT', 'plain/config', { limits: { pids: null } });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal((await limitsOf('plain')).pids, 512);
  });

  it('gives new servers the defaults an admin set; what the creator gives wins', async () => {
    assertError(await putSettings({ serverDefaults: { pids: 100 } }, user), 403, 'FORBIDDEN');
    assertError(await putSettings({ serverDefaults: { pids: 0 } }), 400);
    assertError(await putSettings({ serverDefaults: { memoryBytes: 1 } }), 400);
    const saved = await putSettings({
      serverDefaults: { pids: 300, memoryBytes: 512 * MIB, diskBytes: 2048 * MIB },
    });
    assert.equal(saved.statusCode, 200, saved.body);
    await createServer(panel, admin, 'defaulted');
    assert.deepEqual(await limitsOf('defaulted'), {
      memoryBytes: 512 * MIB,
      cpuPercent: null,
      pids: 300,
      diskBytes: 2048 * MIB,
    });
    await createServer(panel, admin, 'chosen', {
      limits: { pids: 64, memoryBytes: null, cpuPercent: 50 },
    });
    assert.deepEqual(await limitsOf('chosen'), {
      memoryBytes: null,
      cpuPercent: 50,
      pids: 64,
      diskBytes: 2048 * MIB,
    });
    // The earlier servers keep what they were made with.
    assert.equal((await limitsOf('plain')).memoryBytes, null);
    const reset = await putSettings({
      serverDefaults: { pids: 512, memoryBytes: null, diskBytes: null },
    });
    assert.equal(reset.statusCode, 200, reset.body);
  });

  it(
    "raises a server's oom_score_adj, and a fork loop meets the default process limit",
    { skip: process.getuid?.() !== 0 && 'cgroups need root here' },
    async () => {
      const saved = await putSettings({ serverDefaults: { pids: 30 } });
      assert.equal(saved.statusCode, 200, saved.body);
      await createServer(panel, admin, 'bomb');
      assert.equal((await serverAction(panel, admin, 'bomb', 'start')).statusCode, 200);
      await eventually(async () => {
        const lines = await historyOf(panel, admin, 'bomb');
        return lines.some((line) => line.startsWith('Done!')) || undefined;
      }, 'bomb to be up');
      const { pid } = await stats(panel, admin, 'bomb');
      assert.ok(pid !== null);
      assert.equal((await readFile(`/proc/${pid}/oom_score_adj`, 'utf8')).trim(), '500');
      assert.equal((await sendCommand(panel, admin, 'bomb', 'fork 100')).statusCode, 200);
      const outcome = await eventually(async () => {
        const lines = await historyOf(panel, admin, 'bomb');
        return lines.find((line) => line.startsWith('fork '));
      }, 'the fork loop to end');
      assert.match(outcome, /^fork failed: EAGAIN/);
      assert.ok((await stats(panel, admin, 'bomb')).pids.count <= 30);
      assert.equal((await serverAction(panel, admin, 'bomb', 'kill')).statusCode, 200);
      await putSettings({ serverDefaults: { pids: 512 } });
    },
  );

  it("lowers the panel's own oom_score_adj where it may, and says so at start-up", async (t) => {
    const lines: string[] = [];
    const other = await startPanel(
      t,
      { LOG_LEVEL: 'info' },
      { logStream: { write: (line: string) => lines.push(line) } },
    );
    const own = (await readFile('/proc/self/oom_score_adj', 'utf8')).trim();
    await other.close();
    const said = lines
      .map((line) => JSON.parse(line) as { msg: string; level: number })
      .find((line) => line.msg.startsWith("the panel's oom_score_adj"));
    assert.ok(said, 'the start-up log speaks of oom_score_adj');
    if (said.msg.includes('stays')) {
      // Lowering needs CAP_SYS_RESOURCE, which this host's root may lack (a container): a warning.
      assert.equal(said.level, 40);
      assert.match(
        said.msg,
        new RegExp(`stays ${own} \\(lowering it needs CAP_SYS_RESOURCE, .*: EACCES\\)`),
      );
    } else {
      assert.equal(own, '-500');
      assert.match(said.msg, /oom_score_adj is -500/);
    }
  });

  it("holds a server's backups to its disk quota by default, and to the admin's default", async () => {
    await createServer(panel, admin, 'quota', { limits: { diskBytes: 100 * 1024 } });
    const dir = path.join(panel.config.serversDir, 'quota');
    // Random bytes: the archive is as big as the file.
    await writeFile(path.join(dir, 'world.dat'), randomBytes(70 * 1024));
    assert.equal((await backUp('quota')).status, 'done');
    // 70 KiB kept + 70 KiB more would pass the 100 KiB quota: the backup fails, and says so.
    const second = await backUp('quota');
    assert.equal(second.status, 'failed');
    assert.match(second.message ?? '', /backup limit of 102400 bytes/);
    // An admin's default quota of 10 bytes: already past, refused at once.
    const saved = await putSettings({ backupDefaults: { maxBytes: 10 } });
    assert.equal(saved.statusCode, 200, saved.body);
    const refused = await call('POST', 'quota/backups', {});
    assertError(refused, 409, 'BACKUP_LIMIT');
    // The server's own limit wins over the defaults.
    assert.equal(
      (await call('PUT', 'quota/backup-settings', { maxBytes: 10 * MIB })).statusCode,
      200,
    );
    assert.equal((await backUp('quota')).status, 'done');
    await putSettings({ backupDefaults: { maxBytes: null } });
  });

  it('keeps at most 10 backups of a server by default', async () => {
    await createServer(panel, admin, 'many');
    await writeFile(path.join(panel.config.serversDir, 'many', 'a.txt'), 'a');
    for (let made = 0; made < 10; made++) assert.equal((await backUp('many')).status, 'done');
    const refused = await call('POST', 'many/backups', {});
    assertError(refused, 409, 'BACKUP_LIMIT');
    assert.match(json<{ message: string }>(refused).message, /10 backups/);
  });
});
