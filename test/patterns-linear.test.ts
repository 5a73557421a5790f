/**
 * No pattern a user or an egg gives takes more than linear time (docs/security.md, "Patterns";
 * issue 25, point 1). Each pattern field gets the patterns that froze the panel when they ran as
 * JavaScript RegExps: a backup's saved line, a template's done lines, a config-file `ifValue`
 * and a variable rule, against the stand-in game's hostile lines (1,001 and 100,000 characters,
 * printed again and again). `/api/health` must keep answering while those lines come, and its
 * latency is compared with a baseline of the same run (a generous ratio, never a time).
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  createServer,
  eventually,
  gameServerCommand,
  historyOf,
  json,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

/** Health is at most this many times slower, at the median, while hostile lines are matched. */
const RATIO = 25;

describe('patterns run in linear time: hostile lines never stop the panel', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  let baseline: number;

  /** Latencies of `count` health checks over real HTTP, one after the other. */
  const health = async (count: number): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const response = await fetch(`${base}/api/health`);
      assert.equal(response.status, 200);
      await response.arrayBuffer();
      times.push(performance.now() - started);
    }
    return times;
  };
  const median = (times: number[]): number =>
    [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0;

  const folderOf = (server: string): string => path.join(panel.config.serversDir, server);
  /** How many hostile lines the server has printed so far. */
  const printed = async (server: string): Promise<number> =>
    Number(await readFile(path.join(folderOf(server), 'hostile'), 'utf8').catch(() => '0'));

  /**
   * Health checks while `server` keeps printing hostile lines: every one answers, no slower
   * than RATIO times the baseline at the median, and lines kept coming meanwhile (so they were
   * being matched while health answered).
   */
  const healthWhileHostile = async (server: string): Promise<void> => {
    const first = await eventually(
      async () => ((await printed(server)) > 2 ? printed(server) : undefined),
      'the hostile lines to start',
    );
    const during = median(await health(20));
    const last = await eventually(
      async () => ((await printed(server)) > first ? printed(server) : undefined),
      'more hostile lines meanwhile',
    );
    assert.ok(last > first);
    assert.ok(
      during <= baseline * RATIO,
      `health took ${during.toFixed(1)} ms at the median while hostile lines were matched, ${baseline.toFixed(1)} ms before`,
    );
  };

  const call = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: Record<string, unknown>) =>
    panel.app.inject({ method, url: `/api/servers/${url}`, headers: admin.headers, payload });

  const importEgg = async (egg: Record<string, unknown>): Promise<string> => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/templates/import',
      headers: { ...admin.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(egg),
    });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: { id: string } }>(response).data.id;
  };

  const egg = (overrides: Record<string, unknown>): Record<string, unknown> => ({
    meta: { version: 'PTDL_v2' },
    uuid: `egg-${Math.random().toString(36).slice(2)}`,
    name: 'Hostile patterns',
    author: 'tests@example.com',
    description: 'The stand-in game server',
    docker_images: { Node: 'example/node:20' },
    startup: gameServerCommand(),
    config: { files: '{}', startup: '{}', logs: '{}', stop: 'stop' },
    scripts: { installation: { script: '', container: 'debian', entrypoint: 'bash' } },
    variables: [],
    ...overrides,
  });

  const printing = (server: string) =>
    eventually(async () => {
      const lines = await historyOf(panel, admin, server);
      return lines.some((line) => line.startsWith('Done!')) || undefined;
    }, 'the server to print');

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    base = await panel.listen();
    admin = await register(panel, 'admin');
    await health(10); // warm up
    baseline = Math.max(median(await health(20)), 1);
  });

  for (const length of [1001, 100_000]) {
    it(`a backup's saved line regex:\\s*\\s*\\s*x against ${length} spaces`, async () => {
      const server = `saver-${length}`;
      await createServer(panel, admin, server);
      const settings = await call('PUT', `${server}/backup-settings`, {
        beforeCommands: [`hostile ${length} 20 space`],
        savedLine: 'regex:\\s*\\s*\\s*x',
        waitSeconds: 120,
      });
      assert.equal(settings.statusCode, 200, settings.body);
      assert.equal((await serverAction(panel, admin, server, 'start')).statusCode, 200);
      await printing(server);
      const made = await call('POST', `${server}/backups`, {});
      assert.equal(made.statusCode, 200, made.body);
      const { id } = json<{ data: { id: string } }>(made).data;

      await healthWhileHostile(server);

      // The pattern still works: a line with an x is the saved line.
      assert.equal((await sendCommand(panel, admin, server, 'say x')).statusCode, 200);
      const backup = await eventually(async () => {
        const current = json<{ data: { status: string; consistency: string } }>(
          await call('GET', `${server}/backups/${id}`),
        ).data;
        return current.status === 'running' ? undefined : current;
      }, 'the backup to end');
      assert.equal(backup.status, 'done');
      assert.equal(backup.consistency, 'saved');
      await serverAction(panel, admin, server, 'kill');
    });
  }

  it('a saved line that is linear but slow per character is matched off the main thread', async () => {
    // [ab]*a[ab]{20}\d costs RE2 about 0.1 ms a character on pseudo-random a's and b's, which
    // its DFA cannot cache: 8 KiB lines, again and again, would hold the main thread for good.
    let state = 1;
    let text = '';
    for (let i = 0; i < 1500; i++) {
      state = (state * 1103515245 + 12345) % 2147483648;
      text += (state >> 16) & 1 ? 'a' : 'b';
    }
    await createServer(panel, admin, 'slow-saver');
    const settings = await call('PUT', 'slow-saver/backup-settings', {
      beforeCommands: [`hostile 8000 10 ${text}`],
      savedLine: 'regex:[ab]*a[ab]{20}\\d',
      waitSeconds: 3,
    });
    assert.equal(settings.statusCode, 200, settings.body);
    assert.equal((await serverAction(panel, admin, 'slow-saver', 'start')).statusCode, 200);
    await printing('slow-saver');
    const made = await call('POST', 'slow-saver/backups', {});
    assert.equal(made.statusCode, 200, made.body);
    const { id } = json<{ data: { id: string } }>(made).data;

    await healthWhileHostile('slow-saver');

    // Batches past the time limit count as no match: the backup goes on after its wait.
    const backup = await eventually(async () => {
      const current = json<{ data: { status: string; consistency: string } }>(
        await call('GET', `slow-saver/backups/${id}`),
      ).data;
      return current.status === 'running' ? undefined : current;
    }, 'the backup to end');
    assert.equal(backup.status, 'done');
    assert.equal(backup.consistency, 'timed-out');
    await serverAction(panel, admin, 'slow-saver', 'kill');
  });

  it('done lines regex:.*.*.*.*.*Q and regex:.*Server.*started against long lines', async () => {
    const template = await importEgg(
      egg({
        config: {
          files: '{}',
          startup: JSON.stringify({ done: ['regex:.*.*.*.*.*Q', 'regex:.*Server.*started'] }),
          logs: '{}',
          stop: 'stop',
        },
      }),
    );
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: { name: 'starter', template },
    });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal((await serverAction(panel, admin, 'starter', 'start')).statusCode, 200);
    await printing('starter');
    for (const command of ['hostile 120 5 a', 'hostile 100000 50 Server ', 'hostile 1001 20 a']) {
      assert.equal((await sendCommand(panel, admin, 'starter', command)).statusCode, 200);
    }
    await healthWhileHostile('starter');
    assert.equal((await stats(panel, admin, 'starter')).status, 'starting');

    // The patterns still work: the server is running once it says so.
    assert.equal(
      (await sendCommand(panel, admin, 'starter', 'say Server started')).statusCode,
      200,
    );
    await eventually(
      async () => ((await stats(panel, admin, 'starter')).status === 'running' ? true : undefined),
      'running after the done line',
    );
    await serverAction(panel, admin, 'starter', 'kill');
  });

  it('a config-file ifValue regex:^(a+)+$ against aaaa…b, at every start', async () => {
    const template = await importEgg(
      egg({
        config: {
          files: JSON.stringify({
            'game.properties': {
              parser: 'properties',
              find: {
                motd: { 'regex:^(a+)+$': 'calm' },
                name: { 'regex:^(a+)+$': 'calm' },
              },
            },
          }),
          startup: '{}',
          logs: '{}',
          stop: 'stop',
        },
      }),
    );
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: { name: 'configured', template },
    });
    assert.equal(created.statusCode, 200, created.body);
    const file = path.join(folderOf('configured'), 'game.properties');
    await writeFile(file, `motd=${'a'.repeat(5000)}b\nname=${'a'.repeat(5000)}\n`);

    const starting = serverAction(panel, admin, 'configured', 'start');
    const during = median(await health(5));
    assert.equal((await starting).statusCode, 200);
    assert.ok(during <= baseline * RATIO, `health ${during} ms, ${baseline} ms before`);
    // The near miss is left, the match replaced.
    assert.equal(await readFile(file, 'utf8'), `motd=${'a'.repeat(5000)}b\nname=calm\n`);
    await serverAction(panel, admin, 'configured', 'kill');
  });

  it('a variable rule regex:/^(a+)+$/ is enforced, in linear time', async () => {
    const template = await importEgg(
      egg({
        startup: `${gameServerCommand()} --motd {{MOTD}}`,
        variables: [
          {
            name: 'Message',
            description: 'Shown to players',
            env_variable: 'MOTD',
            default_value: 'aaa',
            user_viewable: true,
            user_editable: true,
            rules: 'required|regex:/^(a+)+$/',
          },
        ],
      }),
    );
    const create = (name: string, value: string) =>
      panel.app.inject({
        method: 'POST',
        url: '/api/servers/create',
        headers: admin.headers,
        payload: { name, template, variables: { MOTD: value } },
      });
    const checks = health(5);
    const refused = await create('ruled-1', `${'a'.repeat(4000)}b`);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.body, /must match the pattern/);
    assert.ok(median(await checks) <= baseline * RATIO);
    const accepted = await create('ruled-2', 'a'.repeat(4000));
    assert.equal(accepted.statusCode, 200, accepted.body);
  });
});
