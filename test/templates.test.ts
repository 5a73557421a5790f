/**
 * Templates on the HTTP surface: importing eggs (JSON and YAML, broken ones refused naming the
 * field), listing, reading (a user sees only viewable variables), deleting (refused while used);
 * servers made from a template, with checked variables; the rendered start, startup-done
 * detection, a typed stop versus a crash, `^C` stops; installs that succeed and fail; and
 * allocations: validation, uniqueness on the host, a port another program holds, SERVER_PORT.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer as createTcpServer, type Server } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
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

/** A PTDL_v2 egg running the stand-in game server; `overrides` replace top-level fields. */
function fixtureEgg(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    meta: { version: 'PTDL_v2' },
    uuid: `egg-${Math.random().toString(36).slice(2)}`,
    name: 'Fixture game',
    author: 'tests@example.com',
    description: 'The stand-in game server',
    docker_images: { Node: 'example/node:20' },
    startup: `${gameServerCommand()} --motd {{MOTD}} --secret {{SECRET}}`,
    config: {
      files: '{}',
      startup: JSON.stringify({ done: '[Server] ready' }),
      logs: '{}',
      stop: 'stop',
    },
    scripts: { installation: { script: '', container: 'debian', entrypoint: 'bash' } },
    variables: [
      {
        name: 'Message of the day',
        description: 'Shown to players',
        env_variable: 'MOTD',
        default_value: 'hello',
        user_viewable: true,
        user_editable: true,
        rules: 'required|string|max:20',
      },
      {
        name: 'Slots',
        description: 'Players at once',
        env_variable: 'SLOTS',
        default_value: '10',
        user_viewable: true,
        user_editable: false,
        rules: 'required|integer|between:1,100',
      },
      {
        name: 'Secret',
        description: 'An admin-only value',
        env_variable: 'SECRET',
        default_value: 'hunter2-hidden',
        user_viewable: false,
        user_editable: false,
        rules: 'nullable|string',
      },
    ],
    ...overrides,
  };
}

describe('templates', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;

  const importEgg = (body: unknown, contentType = 'application/json', session = admin) =>
    panel.app.inject({
      method: 'POST',
      url: '/api/templates/import',
      headers: { ...session.headers, 'content-type': contentType },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  const imported = async (egg: Record<string, unknown>): Promise<string> => {
    const response = await importEgg(egg);
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: { id: string } }>(response).data.id;
  };

  const create = (payload: Record<string, unknown>) =>
    panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload,
    });

  /** Puts `servers` in the user's list. */
  const grant = async (servers: string[]) => {
    const response = await panel.app.inject({
      method: 'PUT',
      url: '/api/users/player/servers',
      headers: admin.headers,
      payload: { servers },
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    user = await register(panel, 'player');
  });

  describe('import, list, read and delete', () => {
    it('ships the generic, Minetest and OpenTTD templates', async () => {
      const response = await panel.app.inject({ url: '/api/templates', headers: user.headers });
      assert.equal(response.statusCode, 200, response.body);
      const ids = json<{ data: { id: string }[] }>(response).data.map((t) => t.id);
      for (const id of ['generic-command', 'minetest-debian', 'openttd-debian'])
        assert.ok(ids.includes(id), `${id} in ${ids.join(', ')}`);
    });

    it('imports a JSON egg and a YAML one, giving each a slug id and the warnings', async () => {
      const egg = fixtureEgg({ name: 'Json Game' });
      const response = await importEgg(egg);
      assert.equal(response.statusCode, 200, response.body);
      const template = json<{
        data: { id: string; format: string; stop: unknown; donePatterns: string[] };
      }>(response).data;
      assert.equal(template.id, 'json-game');
      assert.equal(template.format, 'PTDL_v2');
      assert.deepEqual(template.stop, { type: 'command', command: 'stop' });
      assert.deepEqual(template.donePatterns, ['[Server] ready']);

      const yaml = [
        'meta:',
        '  version: PLCN_v3',
        'uuid: yaml-egg-1',
        'name: Yaml Game',
        'author: tests@example.com',
        'description: from YAML',
        'docker_images:',
        '  Node: example/node:20',
        'startup_commands:',
        '  Default: ./run --port {{server.allocations.default.port}}',
        'config:',
        '  files: {}',
        '  startup: {done: ready}',
        '  logs: {}',
        '  stop: ^C',
        'variables:',
        '  - name: Mode',
        '    description: ""',
        '    env_variable: MODE',
        '    default_value: a',
        '    user_viewable: true',
        '    user_editable: true',
        '    rules: [required, "in:a,b", "frobnicate:3"]',
      ].join('\n');
      const second = await importEgg(yaml, 'application/yaml');
      assert.equal(second.statusCode, 200, second.body);
      const fromYaml = json<{
        data: {
          id: string;
          format: string;
          startupCommands: { command: string }[];
          stop: unknown;
          warnings: string[];
        };
      }>(second).data;
      assert.equal(fromYaml.format, 'PLCN_v3');
      assert.equal(
        fromYaml.startupCommands[0]?.command,
        './run --port {{server.build.default.port}}',
      );
      assert.deepEqual(fromYaml.stop, { type: 'signal', signal: 'SIGINT' });
      assert.ok(
        fromYaml.warnings.some((warning) => warning.includes('frobnicate')),
        fromYaml.warnings.join(' | '),
      );
    });

    it('refuses a broken egg with 400 naming the field, and imports nothing', async () => {
      const before = json<{ data: unknown[] }>(
        await panel.app.inject({ url: '/api/templates', headers: admin.headers }),
      ).data.length;
      const cases: [unknown, string, RegExp][] = [
        ['{ not json', 'application/json', /./],
        [fixtureEgg({ meta: { version: 'PTDL_v9' } }), 'application/json', /meta\.version/],
        [fixtureEgg({ name: undefined }), 'application/json', /name/],
        [
          fixtureEgg({
            variables: [{ name: 'x', env_variable: 'BAD NAME', default_value: '', rules: '' }],
          }),
          'application/json',
          /variables\[0\]\.env_variable/,
        ],
        [
          fixtureEgg({
            config: {
              files: JSON.stringify({ 'a.cfg': { parser: 'toml', find: {} } }),
              startup: '{}',
              stop: 'stop',
            },
          }),
          'application/json',
          /config\.files/,
        ],
        ['- just\n- a list\n', 'text/yaml', /\$|mapping|object/i],
      ];
      for (const [body, type, field] of cases) {
        const response = await importEgg(body, type);
        assert.equal(response.statusCode, 400, response.body);
        assert.match(json<{ message: string }>(response).message, field);
      }
      const afterCount = json<{ data: unknown[] }>(
        await panel.app.inject({ url: '/api/templates', headers: admin.headers }),
      ).data.length;
      assert.equal(afterCount, before);
    });

    it('answers a template stopped by SIGTERM (^SIGTERM) as it is', async () => {
      const response = await importEgg(
        fixtureEgg({
          name: 'Stopped by SIGTERM',
          config: { files: '{}', startup: '{}', logs: '{}', stop: '^SIGTERM' },
        }),
      );
      assert.equal(response.statusCode, 200, response.body);
      const { stop } = json<{ data: { stop: unknown } }>(response).data;
      assert.deepEqual(stop, { type: 'signal', signal: 'SIGTERM' });
    });

    it('refuses the same egg twice (409) and an import by a user (403)', async () => {
      const egg = fixtureEgg({ uuid: 'only-once' });
      await imported(egg);
      assertError(await importEgg(egg), 409, 'ALREADY_EXISTS');
      assertError(await importEgg(fixtureEgg(), 'application/json', user), 403, 'FORBIDDEN');
    });

    it('shows a user only the viewable variables of a template', async () => {
      const id = await imported(fixtureEgg({ name: 'Hidden vars' }));
      const asUser = json<{ data: { variables: { envVariable: string }[] } }>(
        await panel.app.inject({ url: `/api/templates/${id}`, headers: user.headers }),
      ).data;
      assert.deepEqual(
        asUser.variables.map((v) => v.envVariable),
        ['MOTD', 'SLOTS'],
      );
      const asAdmin = json<{ data: { variables: unknown[] } }>(
        await panel.app.inject({ url: `/api/templates/${id}`, headers: admin.headers }),
      ).data;
      assert.equal(asAdmin.variables.length, 3);
      assertError(
        await panel.app.inject({ url: '/api/templates/nope', headers: admin.headers }),
        404,
        'NOT_FOUND',
      );
    });

    it('refuses to delete a template a server uses, and deletes it once none does', async () => {
      const id = await imported(fixtureEgg({ name: 'Deletable' }));
      assert.equal((await create({ name: 'uses-it', template: id })).statusCode, 200);
      const refused = await panel.app.inject({
        method: 'DELETE',
        url: `/api/templates/${id}`,
        headers: admin.headers,
      });
      assertError(refused, 409, 'CONFLICT');
      assert.match(json<{ message: string }>(refused).message, /uses-it/);
      await panel.app.inject({
        method: 'DELETE',
        url: '/api/servers/uses-it',
        headers: admin.headers,
      });
      const deleted = await panel.app.inject({
        method: 'DELETE',
        url: `/api/templates/${id}`,
        headers: admin.headers,
      });
      assert.equal(deleted.statusCode, 200, deleted.body);
      assertError(
        await panel.app.inject({ url: `/api/templates/${id}`, headers: admin.headers }),
        404,
      );
    });
  });

  describe('servers made from a template', () => {
    let templateId: string;

    before(async () => {
      templateId = await imported(fixtureEgg({ name: 'Fixture' }));
    });

    it('checks the variables against their rules, naming the variable', async () => {
      const tooLong = await create({
        name: 'bad-vars',
        template: templateId,
        variables: { MOTD: 'x'.repeat(21) },
      });
      assertError(tooLong, 400, 'VALIDATION_FAILED');
      assert.match(json<{ message: string }>(tooLong).message, /MOTD/);
      const notInteger = await create({
        name: 'bad-vars',
        template: templateId,
        variables: { SLOTS: 'many' },
      });
      assertError(notInteger, 400, 'VALIDATION_FAILED');
      assert.match(json<{ message: string }>(notInteger).message, /SLOTS/);
      const unknown = await create({
        name: 'bad-vars',
        template: templateId,
        variables: { NOPE: '1' },
      });
      assertError(unknown, 400, 'VALIDATION_FAILED');
      assert.match(json<{ message: string }>(unknown).message, /NOPE/);
      assertError(await create({ name: 'bad-vars', template: 'no-such' }), 400);
      const list = await panel.app.inject({ url: '/api/servers', headers: admin.headers });
      assert.ok(!list.body.includes('bad-vars'), 'nothing was created');
    });

    it('enforces int, gt and ends_with, and compares with the other variables’ new values', async () => {
      const id = await imported(
        fixtureEgg({
          name: 'Compared',
          variables: [
            {
              name: 'Min',
              env_variable: 'MIN_PLAYERS',
              default_value: '2',
              rules: 'required|int|gt:0',
            },
            {
              name: 'Max',
              env_variable: 'MAX_PLAYERS',
              default_value: '10',
              user_viewable: true,
              user_editable: true,
              rules: 'required|integer|gte:environment.MIN_PLAYERS',
            },
            { name: 'Jar', env_variable: 'JAR', default_value: 'a.jar', rules: 'ends_with:.jar' },
          ],
        }),
      );
      const refused = async (variables: Record<string, string>, message: RegExp) => {
        const response = await create({ name: 'compared', template: id, variables });
        assertError(response, 400, 'VALIDATION_FAILED');
        assert.match(json<{ message: string }>(response).message, message);
      };
      await refused({ MIN_PLAYERS: '1.5' }, /variables\.MIN_PLAYERS: must be an integer/);
      await refused({ MIN_PLAYERS: '0' }, /variables\.MIN_PLAYERS: must be greater than 0/);
      await refused({ JAR: 'a.zip' }, /variables\.JAR: must end with \.jar/);
      // Against the default of MIN_PLAYERS (2), then against its value in the same request.
      await refused({ MAX_PLAYERS: '1' }, /variables\.MAX_PLAYERS: must be at least MIN_PLAYERS/);
      await refused(
        { MIN_PLAYERS: '20', MAX_PLAYERS: '10' },
        /variables\.MAX_PLAYERS: must be at least MIN_PLAYERS/,
      );
      const created = await create({
        name: 'compared',
        template: id,
        variables: { MIN_PLAYERS: '4', MAX_PLAYERS: '4' },
      });
      assert.equal(created.statusCode, 200, created.body);
      // A change is compared with the values the server has.
      const put = (variables: Record<string, string>) =>
        panel.app.inject({
          method: 'PUT',
          url: '/api/servers/compared/variables',
          headers: admin.headers,
          payload: { variables },
        });
      assertError(await put({ MAX_PLAYERS: '3' }), 400, 'VALIDATION_FAILED');
      assert.equal((await put({ MAX_PLAYERS: '5' })).statusCode, 200);
    });

    it('starts rendered, is starting until the done line, and masks hidden values', async () => {
      const created = await create({
        name: 'fixture-1',
        template: templateId,
        variables: { MOTD: 'sunny' },
      });
      assert.equal(created.statusCode, 200, created.body);
      const config = json<{ data: { template: string; stopCommand: string } }>(created).data;
      assert.equal(config.template, templateId);
      assert.equal(config.stopCommand, 'stop');

      const started = await serverAction(panel, admin, 'fixture-1', 'start');
      assert.equal(started.statusCode, 200, started.body);
      assert.equal(json<{ data: { status: string } }>(started).data.status, 'starting');
      await eventually(async () => {
        const lines = await historyOf(panel, admin, 'fixture-1');
        return lines.some((line) => line.startsWith('Done!')) || undefined;
      }, 'the server to print');
      assert.equal((await stats(panel, admin, 'fixture-1')).status, 'starting');
      const lines = await historyOf(panel, admin, 'fixture-1');
      const shown = lines.find((line) => line.startsWith('[panel] starting: '));
      assert.ok(shown?.includes('--motd sunny --secret [hidden]'), shown);
      assert.ok(!lines.join('\n').includes('hunter2-hidden'), 'the hidden value is not shown');

      // The panel's echo of a command that holds the pattern is not the server saying it.
      assert.equal(
        (await sendCommand(panel, admin, 'fixture-1', 'echo [Server] ready')).statusCode,
        200,
      );
      assert.equal((await sendCommand(panel, admin, 'fixture-1', 'say ready')).statusCode, 200);
      await eventually(
        async () =>
          (await stats(panel, admin, 'fixture-1')).status === 'running' ? true : undefined,
        'running after the done line',
      );

      assert.equal((await sendCommand(panel, admin, 'fixture-1', 'env')).statusCode, 200);
      const env = await eventually(async () => {
        const line = (await historyOf(panel, admin, 'fixture-1')).find((l) => l.startsWith('{'));
        return line === undefined ? undefined : (JSON.parse(line) as Record<string, string>);
      }, 'the environment');
      assert.equal(env.MOTD, 'sunny');
      assert.equal(env.SLOTS, '10');
      assert.equal(env.SECRET, 'hunter2-hidden');
      assert.ok(Number(env.SERVER_MEMORY) > 0);
      assert.equal(env.SERVER_PORT, undefined, 'no allocation, no port');
      assert.ok(!Object.keys(env).some((key) => key.startsWith('JWT')), 'no panel secret');
      await serverAction(panel, admin, 'fixture-1', 'stop');
    });

    it('shows and changes variables as each caller may', async () => {
      await create({ name: 'fixture-vars', template: templateId });
      await grant(['fixture-vars']);
      const asUser = json<{ data: { envVariable: string; editable: boolean }[] }>(
        await panel.app.inject({
          url: '/api/servers/fixture-vars/variables',
          headers: user.headers,
        }),
      ).data;
      assert.deepEqual(
        asUser.map((v) => [v.envVariable, v.editable]),
        [
          ['MOTD', true],
          ['SLOTS', false],
        ],
      );
      const put = (session: Session, variables: Record<string, string>) =>
        panel.app.inject({
          method: 'PUT',
          url: '/api/servers/fixture-vars/variables',
          headers: session.headers,
          payload: { variables },
        });
      assertError(await put(user, { SLOTS: '5' }), 403, 'FORBIDDEN');
      assertError(await put(user, { SECRET: 'x' }), 400, 'VALIDATION_FAILED');
      assertError(await put(user, { MOTD: 'x'.repeat(30) }), 400, 'VALIDATION_FAILED');
      const saved = await put(user, { MOTD: 'rainy' });
      assert.equal(saved.statusCode, 200, saved.body);
      const motd = json<{ data: { envVariable: string; value: string }[] }>(saved).data.find(
        (v) => v.envVariable === 'MOTD',
      );
      assert.equal(motd?.value, 'rainy');
      assert.equal((await put(admin, { SLOTS: '50', SECRET: '' })).statusCode, 200);
    });

    it('counts a typed stop word as a stop whatever the exit code, and a crash as a crash', async () => {
      await create({ name: 'fixture-quit', template: templateId });
      await serverAction(panel, admin, 'fixture-quit', 'start');
      await sendCommand(panel, admin, 'fixture-quit', 'say ready');
      await eventually(
        async () =>
          (await stats(panel, admin, 'fixture-quit')).status === 'running' ? true : undefined,
        'running',
      );
      await sendCommand(panel, admin, 'fixture-quit', 'quit');
      const quit = await eventually(async () => {
        const now = await stats(panel, admin, 'fixture-quit');
        return now.status === 'stopped' || now.status === 'crashed' ? now : undefined;
      }, 'the exit');
      assert.equal(quit.status, 'stopped');
      assert.equal(quit.lastExit?.code, 1);

      await serverAction(panel, admin, 'fixture-quit', 'start');
      await sendCommand(panel, admin, 'fixture-quit', 'say ready');
      await eventually(
        async () =>
          (await stats(panel, admin, 'fixture-quit')).status === 'running' ? true : undefined,
        'running again',
      );
      await sendCommand(panel, admin, 'fixture-quit', 'crash');
      const crashed = await eventually(async () => {
        const now = await stats(panel, admin, 'fixture-quit');
        return now.status === 'crashed' ? now : undefined;
      }, 'the crash');
      assert.equal(crashed.lastExit?.code, 3);
      const list = json<{ data: { name: string; lastExit: { code: number } | null }[] }>(
        await panel.app.inject({ url: '/api/servers', headers: admin.headers }),
      ).data;
      assert.equal(list.find((s) => s.name === 'fixture-quit')?.lastExit?.code, 3);
    });

    it('stops a ^C template with SIGINT', async () => {
      const id = await imported(
        fixtureEgg({
          name: 'Interrupt me',
          config: { files: '{}', startup: '{}', logs: '{}', stop: '^C' },
        }),
      );
      await create({ name: 'fixture-int', template: id });
      const started = await serverAction(panel, admin, 'fixture-int', 'start');
      assert.equal(json<{ data: { status: string } }>(started).data.status, 'running');
      // Stopped once the game itself runs: a signal sent while the shell has not started it yet
      // reaches only the shell (see the closing note of issue 15).
      await eventually(
        async () =>
          (await historyOf(panel, admin, 'fixture-int')).some((line) => line.startsWith('Done!'))
            ? true
            : undefined,
        'the game server to print Done!',
      );
      const stopped = await serverAction(panel, admin, 'fixture-int', 'stop');
      assert.equal(stopped.statusCode, 200, stopped.body);
      const lines = await historyOf(panel, admin, 'fixture-int');
      assert.ok(lines.includes('[panel] sent SIGINT; waiting up to 10 s'), lines.join(' | '));
      // Ended by SIGINT: told as the signal, or by the shell around it as 128 + 2.
      const exit = (await stats(panel, admin, 'fixture-int')).lastExit;
      assert.ok(exit?.signal === 'SIGINT' || exit?.code === 130, JSON.stringify(exit));
      assert.ok(!lines.some((line) => line.includes('SIGTERM')), lines.join(' | '));
    });
  });

  describe('installs', () => {
    const installEgg = (name: string, script: string, entrypoint = 'sh') =>
      fixtureEgg({
        name,
        config: { files: '{}', startup: '{}', logs: '{}', stop: 'stop' },
        scripts: { installation: { script, container: 'alpine', entrypoint } },
      });

    it('runs the script at creation with the folder at /mnt/server; the server then starts', async () => {
      const id = await imported(
        installEgg(
          'Installs',
          'set -e\necho "installing $MOTD"\ncd /mnt/server\necho made > installed.txt\npwd',
          // Alpine's shell, as many eggs name it: the host's sh runs the script.
          'ash',
        ),
      );
      const created = await create({ name: 'inst-ok', template: id, variables: { MOTD: 'sun' } });
      assert.equal(created.statusCode, 200, created.body);
      const state = await eventually(async () => {
        const config = json<{ data: { install: { state: string; exitCode: number | null } } }>(
          await panel.app.inject({ url: '/api/servers/inst-ok/config', headers: admin.headers }),
        ).data.install;
        return installEnded(config.state) ? config : undefined;
      }, 'the install to end');
      assert.deepEqual([state.state, state.exitCode], ['installed', 0]);
      const file = await readFile(
        path.join(panel.config.serversDir, 'inst-ok', 'installed.txt'),
        'utf8',
      );
      assert.equal(file, 'made\n');
      const lines = await historyOf(panel, admin, 'inst-ok');
      assert.ok(lines.includes('installing sun'), lines.join(' | '));
      assert.ok(lines.includes('/mnt/server'), lines.join(' | '));
      assert.ok(lines.includes('[panel] installed'), lines.join(' | '));
      const started = await serverAction(panel, admin, 'inst-ok', 'start');
      assert.equal(started.statusCode, 200, started.body);
      await serverAction(panel, admin, 'inst-ok', 'stop');
    });

    it('keeps a server whose install failed from starting until an admin marks it installed', async () => {
      const id = await imported(installEgg('Fails', 'echo "oh no" >&2\nexit 4'));
      await create({ name: 'inst-bad', template: id });
      const install = await eventually(async () => {
        const config = json<{ data: { install: { state: string; exitCode: number | null } } }>(
          await panel.app.inject({ url: '/api/servers/inst-bad/config', headers: admin.headers }),
        ).data.install;
        return installEnded(config.state) ? config : undefined;
      }, 'the install to end');
      assert.deepEqual([install.state, install.exitCode], ['failed', 4]);
      const refused = await serverAction(panel, admin, 'inst-bad', 'start');
      assertError(refused, 409, 'NOT_INSTALLED');
      assert.match(
        json<{ message: string }>(refused).message,
        /the script exited with code 4\): .*Its last lines: oh no$/,
      );
      const lines = await historyOf(panel, admin, 'inst-bad');
      assert.ok(lines.includes('oh no'), lines.join(' | '));

      // A user may run the install again but not mark it installed.
      await grant(['inst-bad']);
      assertError(
        await panel.app.inject({
          method: 'PUT',
          url: '/api/servers/inst-bad/install',
          headers: user.headers,
          payload: { state: 'installed' },
        }),
        403,
      );
      const marked = await panel.app.inject({
        method: 'PUT',
        url: '/api/servers/inst-bad/install',
        headers: admin.headers,
        payload: { state: 'installed' },
      });
      assert.equal(marked.statusCode, 200, marked.body);
      const started = await serverAction(panel, admin, 'inst-bad', 'start');
      assert.equal(started.statusCode, 200, started.body);
      const again = await panel.app.inject({
        method: 'POST',
        url: '/api/servers/inst-bad/install',
        headers: user.headers,
      });
      assertError(again, 409, 'CONFLICT');
      await serverAction(panel, admin, 'inst-bad', 'stop');
      const rerun = await panel.app.inject({
        method: 'POST',
        url: '/api/servers/inst-bad/install',
        headers: user.headers,
      });
      assert.equal(rerun.statusCode, 200, rerun.body);
      assert.equal(json<{ data: { status: string } }>(rerun).data.status, 'installing');
    });

    it('refuses an install for a server without a script', async () => {
      await panel.app.inject({
        method: 'POST',
        url: '/api/servers/create',
        headers: admin.headers,
        payload: { name: 'plain', startCommand: gameServerCommand() },
      });
      assertError(
        await panel.app.inject({
          method: 'POST',
          url: '/api/servers/plain/install',
          headers: admin.headers,
        }),
        409,
        'CONFLICT',
      );
    });
  });

  describe('allocations', () => {
    let holder: Server | undefined;
    after(() => holder?.close());

    const allocate = (name: string, allocations: unknown, session = admin) =>
      panel.app.inject({
        method: 'PUT',
        url: `/api/servers/${name}/allocations`,
        headers: session.headers,
        payload: { allocations },
      });

    it('validates addresses and ports, and keeps each unique on the host', async () => {
      const id = await imported(
        fixtureEgg({
          name: 'With port',
          startup: `${gameServerCommand()} --port {{server.build.default.port}}`,
          config: { files: '{}', startup: '{}', logs: '{}', stop: 'stop' },
        }),
      );
      assert.equal((await create({ name: 'port-a', template: id })).statusCode, 200);
      assert.equal((await create({ name: 'port-b', template: id })).statusCode, 200);

      // Without a port, a start whose command needs one is refused, saying so.
      const noPort = await serverAction(panel, admin, 'port-a', 'start');
      assertError(noPort, 409, 'CONFLICT');
      assert.match(json<{ message: string }>(noPort).message, /port/);

      assertError(
        await allocate('port-a', [{ ip: 'nope', port: 30000 }]),
        400,
        'VALIDATION_FAILED',
      );
      assertError(
        await allocate('port-a', [{ ip: '0.0.0.0', port: 80 }]),
        400,
        'VALIDATION_FAILED',
      );
      assertError(
        await allocate('port-a', [
          { ip: '127.0.0.1', port: 30001 },
          { ip: '127.0.0.1', port: 30001 },
        ]),
        400,
      );
      assertError(await allocate('port-a', [{ ip: '127.0.0.1', port: 30001 }], user), 403);

      const saved = await allocate('port-a', [
        { ip: '127.0.0.1', port: 30001 },
        { ip: '127.0.0.1', port: 30002 },
      ]);
      assert.equal(saved.statusCode, 200, saved.body);
      assert.deepEqual(json<{ data: { allocations: unknown[] } }>(saved).data.allocations, [
        { ip: '127.0.0.1', port: 30001 },
        { ip: '127.0.0.1', port: 30002 },
      ]);
      const taken = await allocate('port-b', [{ ip: '0.0.0.0', port: 30002 }]);
      assertError(taken, 409, 'ALLOCATION_TAKEN');
      assert.match(json<{ message: string }>(taken).message, /port-a/);
      assert.equal((await allocate('port-b', [{ ip: '127.0.0.1', port: 30003 }])).statusCode, 200);
    });

    it('gives the primary port to the server, and refuses a start on a port held elsewhere', async () => {
      const started = await serverAction(panel, admin, 'port-a', 'start');
      assert.equal(started.statusCode, 200, started.body);
      await sendCommand(panel, admin, 'port-a', 'env');
      const env = await eventually(async () => {
        const line = (await historyOf(panel, admin, 'port-a')).find((l) => l.startsWith('{'));
        return line === undefined ? undefined : (JSON.parse(line) as Record<string, string>);
      }, 'the environment');
      assert.equal(env.SERVER_PORT, '30001');
      assert.equal(env.SERVER_IP, '127.0.0.1');
      await serverAction(panel, admin, 'port-a', 'stop');

      const server = createTcpServer();
      holder = server;
      await new Promise<void>((resolve) => server.listen(30003, '127.0.0.1', resolve));
      const refused = await serverAction(panel, admin, 'port-b', 'start');
      assertError(refused, 409, 'PORT_IN_USE');
      assert.match(json<{ message: string }>(refused).message, /30003/);
      assert.equal((await stats(panel, admin, 'port-b')).status, 'stopped');
    });
  });
});

/** Whether an install has ended, one way or the other. */
const installEnded = (state: string): boolean => state === 'installed' || state === 'failed';
