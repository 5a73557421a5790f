import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  historyOf,
  alive,
  assertError,
  createServer,
  eventually,
  gameServerCommand,
  json,
  register,
  sendCommand,
  serverAction,
  setRole,
  stats,
  type Session,
  type Envelope,
} from './helpers/factories.js';

/** Live processes whose command line contains `marker`, sandbox wrappers left out. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (cmdline.includes(marker) && comm !== 'bwrap' && alive(Number(entry))) {
        found.push(Number(entry));
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The name of process `pid`, or null once it is gone. */
function commOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

describe('server endpoints and permissions', () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;
  let outsider: Session;
  let helper: Session;
  let outlaw: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    member = await register(panel, 'member');
    outsider = await register(panel, 'outsider');
    helper = await register(panel, 'helper');
    outlaw = await register(panel, 'outlaw');
    await setRole(panel, admin, 'helper', 'support');
    await createServer(panel, admin, 'alpha');
    await createServer(panel, admin, 'beta');
    for (const username of ['member', 'helper', 'outlaw']) {
      const response = await panel.app.inject({
        method: 'PUT',
        url: `/api/users/${username}/servers`,
        headers: admin.headers,
        payload: { servers: ['alpha'] },
      });
      assert.equal(response.statusCode, 200);
    }
    await setRole(panel, admin, 'outlaw', 'banned');
  });

  it('creates a server with its directory and defaults', async () => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: { name: 'Gamma_1.x', displayName: 'Gamma', startCommand: gameServerCommand() },
    });
    assert.equal(response.statusCode, 200, response.body);
    const { data } = json<Envelope<Record<string, unknown>>>(response);
    assert.deepEqual(
      { ...data, createdAt: typeof data.createdAt },
      {
        name: 'Gamma_1.x',
        displayName: 'Gamma',
        startCommand: gameServerCommand(),
        stopCommand: null,
        stopTimeoutSeconds: 10,
        autoRestart: false,
        limits: { memoryBytes: null, cpuPercent: null, pids: 512, diskBytes: null },
        runtime: 'process',
        image: null,
        template: null,
        install: { state: 'installed', exitCode: null, finishedAt: null, reason: null },
        allocations: [],
        node: 'local',
        createdAt: 'string',
      },
    );
    assert.ok((await stat(path.join(panel.config.serversDir, 'Gamma_1.x'))).isDirectory());
  });

  it('lets only admins create servers', async () => {
    const create = (session?: Session) =>
      panel.app.inject({
        method: 'POST',
        url: '/api/servers/create',
        ...(session ? { headers: session.headers } : {}),
        payload: { name: 'nope', displayName: 'x', startCommand: 'true' },
      });
    assertError(await create(), 401);
    assertError(await create(member), 403, 'FORBIDDEN');
    assertError(await create(helper), 403, 'FORBIDDEN');
    assertError(await create(outlaw), 403, 'BANNED');
    assertError(await create(admin).then(() => create(admin)), 409, 'CONFLICT');
  });

  it('refuses bad names, commands and fields with 400', async () => {
    const bad = [
      { name: '..', startCommand: 'true' },
      { name: '.', startCommand: 'true' },
      { name: 'a/b', startCommand: 'true' },
      { name: '', startCommand: 'true' },
      { name: 'x'.repeat(65), startCommand: 'true' },
      { name: 'spaced name', startCommand: 'true' },
      { name: 'ok1', startCommand: '' },
      { name: 'ok2', startCommand: 'java -jar server.jar | tee log' },
      { name: 'ok3', startCommand: 'run && rm -rf /' },
      { name: 'ok4', startCommand: 'java -jar *.jar' },
      { name: 'ok5', startCommand: 'true', stopCommand: 'stop\nop me' },
      { name: 'ok6', startCommand: 'true', stopTimeoutSeconds: -1 },
      { name: 'ok7', startCommand: 'true', autoRestart: 'yes' },
      { name: 'ok8', startCommand: 'true', memory: 1024 },
    ];
    for (const payload of bad) {
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/servers/create',
        headers: admin.headers,
        payload,
      });
      assertError(response, 400, 'VALIDATION_FAILED');
    }
    const rows = await panel.db.kysely.selectFrom('servers').select('name').execute();
    assert.ok(!rows.some((row) => /^ok\d$/.test(row.name)), 'nothing refused was stored');
  });

  it('lists every server to an admin and only their own to others', async () => {
    const names = async (session: Session) =>
      json<Envelope<{ name: string; status: string }[]>>(
        await panel.app.inject({ url: '/api/servers', headers: session.headers }),
      ).data.map((server) => server.name);
    assert.deepEqual((await names(admin)).slice(0, 2), ['Gamma_1.x', 'alpha']);
    assert.ok((await names(admin)).includes('beta'));
    assert.deepEqual(await names(member), ['alpha']);
    assert.deepEqual(await names(helper), ['alpha']);
    assert.deepEqual(await names(outsider), []);
    assertError(await panel.app.inject({ url: '/api/servers', headers: outlaw.headers }), 403);
    assertError(await panel.app.inject({ url: '/api/servers' }), 401);
  });

  it('shows the configuration to those with access: 403 without, 404 for unknown', async () => {
    const config = (session: Session, name: string) =>
      panel.app.inject({ url: `/api/servers/${name}/config`, headers: session.headers });
    assert.equal((await config(member, 'alpha')).statusCode, 200);
    assert.equal((await config(admin, 'beta')).statusCode, 200);
    assertError(await config(member, 'beta'), 403, 'FORBIDDEN');
    assertError(await config(outsider, 'alpha'), 403, 'FORBIDDEN');
    assertError(await config(outlaw, 'alpha'), 403, 'BANNED');
    assertError(await config(admin, 'missing'), 404, 'NOT_FOUND');
  });

  it('lets users with access change displayName and autoRestart, and only admins the commands', async () => {
    const put = (session: Session, payload: unknown, name = 'alpha') =>
      panel.app.inject({
        method: 'PUT',
        url: `/api/servers/${name}/config`,
        headers: session.headers,
        payload: payload as Record<string, unknown>,
      });
    const changed = await put(member, {
      displayName: 'Alpha world',
      autoRestart: true,
      stopTimeoutSeconds: 3,
    });
    assert.equal(changed.statusCode, 200, changed.body);
    const data = json<Envelope<Record<string, unknown>>>(changed).data;
    assert.equal(data.displayName, 'Alpha world');
    assert.equal(data.autoRestart, true);
    assert.equal(data.stopTimeoutSeconds, 3);

    assertError(await put(member, { startCommand: 'sh -c id' }), 403, 'FORBIDDEN');
    assertError(await put(helper, { stopCommand: 'stop' }), 403, 'FORBIDDEN');
    assertError(await put(outsider, { displayName: 'mine' }), 403);
    assertError(await put(member, {}), 400, 'VALIDATION_FAILED');
    assertError(await put(member, { name: 'renamed' }), 400, 'VALIDATION_FAILED');
    assertError(await put(admin, { startCommand: 'a | b' }), 400, 'VALIDATION_FAILED');
    assertError(await put(admin, { displayName: 'x' }, 'missing'), 404);

    const byAdmin = await put(admin, { startCommand: gameServerCommand(), stopCommand: 'stop' });
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    const stored = json<Envelope<Record<string, unknown>>>(
      await panel.app.inject({ url: '/api/servers/alpha/config', headers: member.headers }),
    ).data;
    assert.equal(stored.stopCommand, 'stop');
    assert.equal(stored.displayName, 'Alpha world');
  });

  it('guards start, stop, command and stats like the configuration', async () => {
    for (const session of [outsider, outlaw]) {
      assertError(await serverAction(panel, session, 'alpha', 'start'), 403);
      assertError(await serverAction(panel, session, 'alpha', 'stop'), 403);
      assertError(await sendCommand(panel, session, 'alpha', 'say hi'), 403);
      assertError(
        await panel.app.inject({ url: '/api/servers/alpha/stats', headers: session.headers }),
        403,
      );
    }
    assertError(await serverAction(panel, admin, 'missing', 'start'), 404);
    assertError(await sendCommand(panel, member, 'alpha', 'say hi'), 409, 'CONFLICT');
    assertError(await serverAction(panel, member, 'alpha', 'stop'), 409, 'CONFLICT');
    for (const command of ['', 'two\nlines', 'x'.repeat(5000)]) {
      assertError(await sendCommand(panel, member, 'alpha', command), 400, 'VALIDATION_FAILED');
    }
  });

  it('lets only admins delete, and deleting stops the server and removes its directory', async () => {
    await createServer(panel, admin, 'doomed', { stopCommand: 'stop' });
    const started = await serverAction(panel, admin, 'doomed', 'start');
    assert.equal(started.statusCode, 200, started.body);
    const { pid } = await stats(panel, admin, 'doomed');
    assert.ok(pid !== null && alive(pid));
    const remove = (session: Session, name = 'doomed') =>
      panel.app.inject({ method: 'DELETE', url: `/api/servers/${name}`, headers: session.headers });
    assertError(await remove(member), 403);
    assertError(await remove(helper), 403);
    const response = await remove(admin);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json<Envelope<unknown>>(response).data, { name: 'doomed' });
    assert.equal(alive(pid), false);
    await assert.rejects(stat(path.join(panel.config.serversDir, 'doomed')));
    assertError(await remove(admin), 404);
    assertError(
      await panel.app.inject({ url: '/api/servers/doomed/config', headers: admin.headers }),
      404,
    );
  });
});

describe('server lifecycle', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  it('starts, takes commands, reports stats, and stops with the stop command', async () => {
    await createServer(panel, admin, 'basic', { stopCommand: 'stop' });
    await writeFile(
      path.join(panel.config.serversDir, 'basic', 'world.dat'),
      Buffer.alloc(200_000),
    );
    const started = await serverAction(panel, admin, 'basic', 'start');
    assert.equal(started.statusCode, 200, started.body);
    assert.deepEqual(json<Envelope<unknown>>(started).data, { name: 'basic', status: 'running' });
    assertError(await serverAction(panel, admin, 'basic', 'start'), 409, 'CONFLICT');

    assert.equal((await sendCommand(panel, admin, 'basic', 'say hello there')).statusCode, 200);
    await eventually(
      async () =>
        (await historyOf(panel, admin, 'basic')).includes('[Server] hello there') || undefined,
      'the command to come back in the console',
    );

    const running = await stats(panel, admin, 'basic');
    assert.equal(running.status, 'running');
    assert.ok(running.pid !== null && alive(running.pid));
    assert.ok(running.memory.bytes > 1_000_000, `memory ${running.memory.bytes}`);
    assert.ok(running.cpu.percent >= 0);
    assert.ok(running.uptimeSeconds >= 0);
    assert.ok(running.disk.bytes >= 200_000, `disk ${running.disk.bytes}`);

    const stopped = await serverAction(panel, admin, 'basic', 'stop');
    assert.equal(stopped.statusCode, 200, stopped.body);
    assert.deepEqual(json<Envelope<unknown>>(stopped).data, { name: 'basic', status: 'stopped' });
    assert.equal(alive(running.pid), false);
    assert.ok((await historyOf(panel, admin, 'basic')).includes('Stopping server'));
    const after = await stats(panel, admin, 'basic');
    assert.deepEqual(
      { status: after.status, pid: after.pid, cpu: after.cpu, memory: after.memory },
      {
        status: 'stopped',
        pid: null,
        cpu: { percent: 0, limit: null },
        memory: { bytes: 0, limit: null },
      },
    );
    assertError(await serverAction(panel, admin, 'basic', 'stop'), 409, 'CONFLICT');
  });

  it('falls back to SIGTERM after the stop timeout, and to SIGKILL 5 s later', async () => {
    await createServer(panel, admin, 'stubborn', {
      startCommand: gameServerCommand('--ignore-term'),
      stopCommand: 'please stop',
      stopTimeoutSeconds: 1,
    });
    await serverAction(panel, admin, 'stubborn', 'start');
    const { pid } = await stats(panel, admin, 'stubborn');
    assert.ok(pid !== null);
    const stopped = await serverAction(panel, admin, 'stubborn', 'stop');
    assert.equal(stopped.statusCode, 200, stopped.body);
    assert.equal(alive(pid), false);
    const lines = await historyOf(panel, admin, 'stubborn');
    assert.ok(lines.includes('Unknown command: please stop'), 'the stop command was sent first');
    assert.ok(lines.includes('ignoring SIGTERM'), 'then SIGTERM');
    assert.ok(
      lines.some((line) => line.includes('did not end on SIGTERM')),
      'then SIGKILL',
    );
  });

  it('restarts with the whole stop sequence, then a new process; a stopped server just starts', async () => {
    await createServer(panel, admin, 'again', { stopCommand: 'stop' });
    const first = await serverAction(panel, admin, 'again', 'restart');
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(json<Envelope<unknown>>(first).data, { name: 'again', status: 'running' });
    const before = (await stats(panel, admin, 'again')).pid;
    assert.ok(before !== null);

    const restarted = await serverAction(panel, admin, 'again', 'restart');
    assert.equal(restarted.statusCode, 200, restarted.body);
    const after = await stats(panel, admin, 'again');
    assert.equal(after.status, 'running');
    assert.ok(after.pid !== null && after.pid !== before && alive(after.pid));
    assert.equal(alive(before), false);
    const lines = await historyOf(panel, admin, 'again');
    assert.ok(lines.includes('Stopping server'), 'the stop command ended the first process');
    assert.equal(lines.filter((line) => line.startsWith('[panel] started')).length, 2);
    await serverAction(panel, admin, 'again', 'stop');
  });

  it('kills at once, even while a stop waits for a server that ignores it', async () => {
    assertError(await serverAction(panel, admin, 'basic', 'kill'), 409, 'CONFLICT');
    await createServer(panel, admin, 'hanging', {
      startCommand: gameServerCommand('--ignore-term'),
      stopCommand: 'please stop',
      stopTimeoutSeconds: 60,
    });
    await serverAction(panel, admin, 'hanging', 'start');
    const { pid } = await stats(panel, admin, 'hanging');
    assert.ok(pid !== null);
    const stopping = serverAction(panel, admin, 'hanging', 'stop');
    await eventually(
      async () => ((await stats(panel, admin, 'hanging')).status === 'stopping' ? true : undefined),
      'the stop to wait for the server',
    );
    const killed = await serverAction(panel, admin, 'hanging', 'kill');
    assert.equal(killed.statusCode, 200, killed.body);
    assert.deepEqual(json<Envelope<unknown>>(killed).data, { name: 'hanging', status: 'stopped' });
    assert.equal(alive(pid), false);
    const stopped = await stopping;
    assert.equal(stopped.statusCode, 200, stopped.body);
    const lines = await historyOf(panel, admin, 'hanging');
    assert.ok(lines.includes('[panel] killing the server'));
    assert.ok(!lines.some((line) => line.includes('did not end on SIGTERM')), 'no SIGTERM waited');

    await serverAction(panel, admin, 'hanging', 'start');
    const running = await stats(panel, admin, 'hanging');
    const direct = await serverAction(panel, admin, 'hanging', 'kill');
    assert.equal(direct.statusCode, 200, direct.body);
    assert.equal(running.pid !== null && alive(running.pid), false);
    assert.equal((await stats(panel, admin, 'hanging')).status, 'stopped');
  });

  for (const sandbox of ['none', 'auto'] as const) {
    it(`leaves no process of the tree behind, even one that left the group (SANDBOX=${sandbox})`, async (t) => {
      const own = await startPanel(t, { SANDBOX: sandbox });
      const boss = await register(own, 'boss');
      const marker = String(randomInt(100_000, 999_999));
      await createServer(own, boss, 'tree', {
        startCommand: `sh -c "sleep ${marker}1 & setsid sleep ${marker}2 & sleep ${marker}3"`,
      });
      assert.equal((await serverAction(own, boss, 'tree', 'start')).statusCode, 200);
      await eventually(
        () => (processesWith(marker).length >= 3 ? true : undefined),
        'the three sleeps to run',
      );
      const stopped = await serverAction(own, boss, 'tree', 'stop');
      assert.equal(stopped.statusCode, 200, stopped.body);
      assert.deepEqual(processesWith(marker), []);
    });
  }

  it('starts exactly one process for 20 concurrent start requests', async () => {
    const marker = `--marker=${randomInt(100_000, 999_999)}`;
    await createServer(panel, admin, 'racer', { startCommand: gameServerCommand(marker) });
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => serverAction(panel, admin, 'racer', 'start')),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 200).length, 1, String(statuses));
    assert.equal(statuses.filter((status) => status === 409).length, 19, String(statuses));
    // Inside a sandbox the server appears a moment after the start request returns; until then
    // the marker is in the start-up shell's arguments, which execs bubblewrap (not counted).
    await eventually(
      () => (processesWith(marker).some((pid) => commOf(pid) === 'node') ? true : undefined),
      'the server process',
    );
    assert.equal(processesWith(marker).length, 1);
    assert.equal((await serverAction(panel, admin, 'racer', 'stop')).statusCode, 200);
    assert.deepEqual(processesWith(marker), []);
  });

  it('marks an exit nobody asked for as crashed, without restarting by default', async () => {
    await createServer(panel, admin, 'fragile');
    await serverAction(panel, admin, 'fragile', 'start');
    assert.equal((await sendCommand(panel, admin, 'fragile', 'crash')).statusCode, 200);
    await eventually(
      async () => ((await stats(panel, admin, 'fragile')).status === 'crashed' ? true : undefined),
      'the crash to be seen',
    );
    const lines = await historyOf(panel, admin, 'fragile');
    assert.ok(lines.some((line) => line.includes('exited unexpectedly (code 3)')));
    assert.equal(lines.filter((line) => line.startsWith('[panel] started')).length, 1);
    assertError(await serverAction(panel, admin, 'fragile', 'stop'), 409);
    assert.equal((await serverAction(panel, admin, 'fragile', 'start')).statusCode, 200);
    assert.equal((await serverAction(panel, admin, 'fragile', 'stop')).statusCode, 200);
  });

  it('restarts a crashing server with back-off, at most 3 times in 60 s', async () => {
    await createServer(panel, admin, 'phoenix', {
      startCommand: gameServerCommand('--crash-after', '100'),
      autoRestart: true,
    });
    const started = Date.now();
    await serverAction(panel, admin, 'phoenix', 'start');
    const lines = await eventually(
      async () => {
        const history = await historyOf(panel, admin, 'phoenix');
        return history.some((line) => line.includes('not restarting')) ? history : undefined;
      },
      'the restarts to give up',
      30_000,
    );
    assert.equal(lines.filter((line) => line.startsWith('[panel] started')).length, 4);
    assert.deepEqual(
      lines.filter((line) => line.startsWith('[panel] restarting')),
      ['[panel] restarting in 1 s', '[panel] restarting in 2 s', '[panel] restarting in 4 s'],
    );
    assert.ok(Date.now() - started >= 7_000, 'the back-off waited 1 + 2 + 4 s');
    assert.equal((await stats(panel, admin, 'phoenix')).status, 'crashed');
  });

  it('cancels a pending automatic restart when stopped', async () => {
    await createServer(panel, admin, 'cancelled', {
      startCommand: gameServerCommand('--crash-after', '100'),
      autoRestart: true,
    });
    await serverAction(panel, admin, 'cancelled', 'start');
    await eventually(
      async () =>
        (await historyOf(panel, admin, 'cancelled')).includes('[panel] restarting in 1 s') ||
        undefined,
      'a restart to be scheduled',
    );
    const stopped = await serverAction(panel, admin, 'cancelled', 'stop');
    assert.equal(stopped.statusCode, 200, stopped.body);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const lines = await historyOf(panel, admin, 'cancelled');
    assert.equal(lines.filter((line) => line.startsWith('[panel] started')).length, 1);
    assert.equal((await stats(panel, admin, 'cancelled')).status, 'stopped');
  });

  it('reports a program that cannot start as crashed, with the reason in the console', async (t) => {
    const own = await startPanel(t, { SANDBOX: 'none' });
    const boss = await register(own, 'boss');
    await createServer(own, boss, 'ghost', { startCommand: '/nonexistent/server --nogui' });
    const response = await serverAction(own, boss, 'ghost', 'start');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json<Envelope<{ status: string }>>(response).data.status, 'crashed');
    const lines = await historyOf(own, boss, 'ghost');
    assert.ok(lines.some((line) => line.includes('Cannot start /nonexistent/server')));
  });
});
