/**
 * The shipped Minetest and OpenTTD templates with the real games from Debian (minetest-server,
 * openttd and openttd-opengfx; .ci/run installs them): created from the template, installed,
 * started until the game says it is up, a command, and a stop (a clean one), OpenTTD going on
 * with its saved game after a restart, through the HTTP API, in the
 * process runtime's sandbox. Without the packages the tests are skipped, except in CI, where they
 * fail.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  eventually,
  historyOf,
  json,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

const MINETEST = '/usr/lib/minetest/minetestserver';
const OPENTTD = '/usr/games/openttd';

/** A reason to skip when `program` is missing; in CI a missing game is a failure. */
function missing(program: string, packages: string): string | false {
  if (existsSync(program)) return false;
  if (process.env.CI) throw new Error(`${program} is missing: .ci/run installs ${packages}`);
  return `${program} is not installed (apt-get install ${packages})`;
}

describe('the shipped game templates, with the real games', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  const create = async (payload: Record<string, unknown>) => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload,
    });
    assert.equal(response.statusCode, 200, response.body);
  };
  const statusOf = async (name: string) => (await stats(panel, admin, name)).status;
  const until = (name: string, status: string, timeoutMs = 60_000) =>
    eventually(
      async () => ((await statusOf(name)) === status ? true : undefined),
      `${name} to be ${status}`,
      timeoutMs,
    );
  const consoleOf = async (name: string) => (await historyOf(panel, admin, name)).join('\n');

  it(
    'runs Minetest: installed, started until it listens, stopped with Ctrl+C',
    { skip: missing(MINETEST, 'minetest-server') },
    async () => {
      await create({
        name: 'minetest',
        template: 'minetest-debian',
        variables: { SERVER_NAME: 'Panel test world', MAX_USERS: '7' },
        allocations: [{ ip: '127.0.0.1', port: 30417 }],
      });
      // The install script ran at creation: minetest.conf and worlds/.
      await eventually(async () => {
        const config = json<{ data: { install: { state: string } } }>(
          await panel.app.inject({ url: '/api/servers/minetest/config', headers: admin.headers }),
        ).data.install;
        return config.state === 'installed' ? true : undefined;
      }, 'the install');
      const started = await serverAction(panel, admin, 'minetest', 'start');
      assert.equal(started.statusCode, 200, started.body);
      await until('minetest', 'running');
      const folder = path.join(panel.config.serversDir, 'minetest');
      const conf = await readFile(path.join(folder, 'minetest.conf'), 'utf8');
      assert.match(conf, /^server_name = Panel test world$/m);
      assert.match(conf, /^port = 30417$/m);
      assert.match(conf, /^max_users = 7$/m);
      assert.match(await consoleOf('minetest'), /listening on .*30417/);
      // Minetest's log file is in the server's folder, not /var/log.
      assert.ok(existsSync(path.join(folder, 'minetest.log')));
      assert.ok(existsSync(path.join(folder, 'worlds', 'world', 'world.mt')));

      assert.equal((await sendCommand(panel, admin, 'minetest', 'status')).statusCode, 200);
      const stopped = await serverAction(panel, admin, 'minetest', 'stop');
      assert.equal(stopped.statusCode, 200, stopped.body);
      const lines = await consoleOf('minetest');
      assert.match(lines, /sent SIGINT/);
      assert.doesNotMatch(lines, /SIGTERM|killing/);
      assert.equal(await statusOf('minetest'), 'stopped');
      // Ended by its Ctrl+C as asked (exit code 130 or the signal): a clean stop, not a crash.
      const exit = (await stats(panel, admin, 'minetest')).lastExit;
      assert.equal(exit?.cleanStop, true, JSON.stringify(exit));
    },
  );

  /** The last line of the console matching `pattern`, once there is one after `since` lines. */
  const answer = async (name: string, pattern: RegExp, since: number) =>
    eventually(async () => {
      const lines = (await historyOf(panel, admin, name)).slice(since);
      return lines.reverse().find((line) => pattern.test(line));
    }, `a line matching ${pattern}`);

  it(
    'runs OpenTTD: started until the game runs, answers a console command, quits cleanly, and goes on with the same game after a restart',
    { skip: missing(OPENTTD, 'openttd openttd-opengfx') },
    async () => {
      await create({
        name: 'openttd',
        template: 'openttd-debian',
        variables: { SERVER_NAME: 'Panel test transport' },
        allocations: [{ ip: '127.0.0.1', port: 33979 }],
      });
      const started = await serverAction(panel, admin, 'openttd', 'start');
      assert.equal(started.statusCode, 200, started.body);
      assert.equal(json<{ data: { status: string } }>(started).data.status, 'starting');
      await until('openttd', 'running', 120_000);
      const folder = path.join(panel.config.serversDir, 'openttd');
      assert.match(await readFile(path.join(folder, 'openttd.cfg'), 'utf8'), /server_port = 33979/);
      assert.match(await consoleOf('openttd'), /Listening on 127\.0\.0\.1:33979/);

      assert.match(
        await readFile(path.join(folder, 'private.cfg'), 'utf8'),
        /server_name = Panel test transport/,
      );
      assert.equal((await sendCommand(panel, admin, 'openttd', 'server_info')).statusCode, 200);
      await eventually(
        async () =>
          (await consoleOf('openttd')).includes('Current/maximum clients') ? true : undefined,
        'server_info to answer',
      );
      // The game: its map's seed and its date.
      let seen = (await historyOf(panel, admin, 'openttd')).length;
      assert.equal((await sendCommand(panel, admin, 'openttd', 'getseed')).statusCode, 200);
      const seed = await answer('openttd', /^Generation Seed: \d+$/, seen);
      assert.equal((await sendCommand(panel, admin, 'openttd', 'getdate')).statusCode, 200);
      const date = (await answer('openttd', /^Date: \d{4}-\d\d-\d\d$/, seen)).slice(6);

      // quit typed by a person is a stop, not a crash; the game saves itself as it quits.
      assert.equal((await sendCommand(panel, admin, 'openttd', 'quit')).statusCode, 200);
      await until('openttd', 'stopped');
      const exit = (await stats(panel, admin, 'openttd')).lastExit;
      assert.equal(exit?.code, 0, JSON.stringify(exit));
      assert.equal(exit.cleanStop, true);
      assert.ok(existsSync(path.join(folder, 'save', 'autosave', 'exit.sav')));

      // Started again, it loads that save: the same map, its date on from where it was.
      seen = (await historyOf(panel, admin, 'openttd')).length;
      assert.equal((await serverAction(panel, admin, 'openttd', 'start')).statusCode, 200);
      await until('openttd', 'running', 120_000);
      await answer('openttd', /^Loading the newest save: save\/autosave\/exit\.sav$/, seen);
      assert.equal((await sendCommand(panel, admin, 'openttd', 'getseed')).statusCode, 200);
      assert.equal(await answer('openttd', /^Generation Seed: \d+$/, seen), seed);
      assert.equal((await sendCommand(panel, admin, 'openttd', 'getdate')).statusCode, 200);
      const later = (await answer('openttd', /^Date: \d{4}-\d\d-\d\d$/, seen)).slice(6);
      assert.ok(later >= date, `${later} after ${date}`);
      const restarted = (await historyOf(panel, admin, 'openttd')).slice(seen).join('\n');
      assert.doesNotMatch(restarted, /Generating map/);

      // And stopped by the panel: its stop command is quit too.
      const stopped = await serverAction(panel, admin, 'openttd', 'stop');
      assert.equal(stopped.statusCode, 200, stopped.body);
      assert.doesNotMatch(await consoleOf('openttd'), /SIGTERM|killing/);
    },
  );
});
