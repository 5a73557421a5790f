/**
 * What spares a new operator the friction around templates (issue 27, point 5), on the HTTP
 * surface with real processes: whether a template needs a port and the next free one; the keys
 * of a file its config rules rewrite, with the variables a caller may see; a failed install's
 * reason in the start's 409 (its last lines only for those who may read the console); a stop
 * that ended as the stop asks recorded as a clean stop; and the flag of a game that reads no
 * console input.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  eventually,
  json,
  register,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

/** A PTDL_v2 egg whose start-up is a shell line; `overrides` replace top-level fields. */
function egg(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    meta: { version: 'PTDL_v2' },
    uuid: `friction-${Math.random().toString(36).slice(2)}`,
    name: 'Friction',
    author: 'tests@example.com',
    description: '',
    docker_images: { Debian: 'example/debian:12' },
    startup: 'echo ready; exec sleep 600',
    config: { files: '{}', startup: '{"done": "ready"}', logs: '{}', stop: '^C' },
    scripts: { installation: { script: '', container: 'debian', entrypoint: 'sh' } },
    variables: [
      {
        name: 'Message of the day',
        description: '',
        env_variable: 'MOTD',
        default_value: 'hello',
        user_viewable: true,
        user_editable: true,
        rules: 'required|string|max:40',
      },
      {
        name: 'Admin password',
        description: '',
        env_variable: 'ADMIN_PASSWORD',
        default_value: 'swordfish',
        user_viewable: false,
        user_editable: false,
        rules: 'nullable|string',
      },
    ],
    ...overrides,
  };
}

describe('the friction around templates', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, { SERVER_PORT_RANGE: '41000-41002' });
    admin = await register(panel, 'admin');
    user = await register(panel, 'player');
  });

  const get = (url: string, session?: Session) =>
    panel.app.inject({ url, ...(session ? { headers: session.headers } : {}) });

  const imported = async (body: Record<string, unknown>): Promise<string> => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/templates/import',
      headers: admin.headers,
      payload: body,
    });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: { id: string } }>(response).data.id;
  };

  const create = async (payload: Record<string, unknown>) => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload,
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  const grant = async (server: string, permissions: string[]) => {
    const response = await panel.app.inject({
      method: 'PUT',
      url: `/api/servers/${server}/users/player`,
      headers: admin.headers,
      payload: { permissions },
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  const template = async (id: string) =>
    json<{ data: { needsPort: boolean; readsConsoleInput: boolean } }>(
      await get(`/api/templates/${id}`, user),
    ).data;

  describe('ports', () => {
    it('says which templates need a port: the shipped games do, the generic command not', async () => {
      assert.equal((await template('minetest-debian')).needsPort, true);
      assert.equal((await template('openttd-debian')).needsPort, true);
      assert.equal((await template('generic-command')).needsPort, false);
      // A shell reference in the start-up, or a config file's value alone, counts too.
      const shell = await imported(
        egg({ name: 'Shell port', startup: 'exec game -p $SERVER_PORT' }),
      );
      assert.equal((await template(shell)).needsPort, true);
      const config = await imported(
        egg({
          name: 'Config port',
          config: {
            files: JSON.stringify({
              'game.ini': { parser: 'ini', find: { 'net.port': '{{server.build.default.port}}' } },
            }),
            startup: '{}',
            logs: '{}',
            stop: '^C',
          },
        }),
      );
      assert.equal((await template(config)).needsPort, true);
      assert.equal((await template(await imported(egg({ name: 'No port' })))).needsPort, false);
    });

    it('offers admins the lowest port of SERVER_PORT_RANGE that no server has, then 409', async () => {
      const free = async () => {
        const response = await get('/api/servers/allocations/free', admin);
        assert.equal(response.statusCode, 200, response.body);
        return json<{ data: { ip: string; port: number; range: unknown } }>(response).data;
      };
      assert.deepEqual(await free(), {
        ip: '0.0.0.0',
        port: 41000,
        range: { min: 41000, max: 41002 },
        node: null,
      });
      // Taken on one address is taken: the form offers it on every address.
      await create({
        name: 'first',
        startCommand: 'true',
        allocations: [{ ip: '127.0.0.1', port: 41000 }],
      });
      await create({
        name: 'third',
        startCommand: 'true',
        allocations: [{ ip: '0.0.0.0', port: 41002 }],
      });
      assert.equal((await free()).port, 41001);
      await create({
        name: 'second',
        startCommand: 'true',
        allocations: [{ ip: '0.0.0.0', port: 41001 }],
      });
      assertError(await get('/api/servers/allocations/free', admin), 409, 'CONFLICT');
      assertError(await get('/api/servers/allocations/free', user), 403);
      assertError(await get('/api/servers/allocations/free'), 401);
      // A server named like the route keeps its own routes.
      await create({ name: 'allocations', startCommand: 'true' });
      assert.equal((await get('/api/servers/allocations/config', admin)).statusCode, 200);
      for (const name of ['first', 'second', 'third', 'allocations']) {
        await panel.app.inject({
          method: 'DELETE',
          url: `/api/servers/${name}`,
          headers: admin.headers,
        });
      }
    });
  });

  describe('keys rewritten at every start', () => {
    interface Rewritten {
      file: string;
      parser: string;
      keys: {
        match: string;
        ifValue: string | null;
        value: string;
        from: { envVariable: string | null; name: string; hidden: boolean }[];
      }[];
    }
    const rewrites = (server: string, session: Session, path?: string) =>
      get(
        `/api/servers/${server}/config-files${path === undefined ? '' : `?path=${encodeURIComponent(path)}`}`,
        session,
      );
    const rewritten = async (server: string, session: Session, path?: string) => {
      const response = await rewrites(server, session, path);
      assert.equal(response.statusCode, 200, response.body);
      return json<{ data: Rewritten[] }>(response).data;
    };

    before(async () => {
      await create({ name: 'mt', template: 'minetest-debian' });
      const id = await imported(
        egg({
          name: 'Rewrites',
          config: {
            files: JSON.stringify({
              'cfg/server.json': {
                parser: 'json',
                find: {
                  motd: 'Welcome: {{MOTD}}',
                  'admin.password': '{{ADMIN_PASSWORD}}',
                  'net.bind': '{{config.docker.interface}}',
                  mode: { survival: 'creative' },
                },
              },
            }),
            startup: '{}',
            logs: '{}',
            stop: '^C',
          },
        }),
      );
      await create({ name: 'rw', template: id });
      await create({ name: 'plain', startCommand: 'true' });
      await grant('rw', ['files.read']);
      await grant('plain', ['files.read']);
    });

    it("names Minetest's keys and the variables they come from", async () => {
      const [file, ...others] = await rewritten('mt', admin, 'minetest.conf');
      assert.equal(others.length, 0);
      assert.equal(file?.file, 'minetest.conf');
      assert.equal(file.parser, 'file');
      assert.deepEqual(
        file.keys.map((key) => [key.match, key.value, key.from.map((f) => f.envVariable)]),
        [
          ['server_name ', 'server_name = {{SERVER_NAME}}', ['SERVER_NAME']],
          ['port ', 'port = {{server.build.default.port}}', ['SERVER_PORT']],
          ['max_users ', 'max_users = {{MAX_USERS}}', ['MAX_USERS']],
        ],
      );
      assert.equal(file.keys[0]?.from[0]?.name, 'Server name');
      // The same file however the path is written; another file has none; no path: all.
      assert.equal((await rewritten('mt', admin, '/./minetest.conf')).length, 1);
      assert.deepEqual(await rewritten('mt', admin, 'worlds/minetest.conf'), []);
      assert.deepEqual(await rewritten('mt', admin, '../mt/minetest.conf'), []);
      assert.equal((await rewritten('mt', admin)).length, 1);
    });

    it('names a variable the caller may not see as hidden, never by its name', async () => {
      const [forUser] = await rewritten('rw', user, 'cfg/server.json');
      const keys = forUser?.keys ?? [];
      const byMatch = new Map(keys.map((key) => [key.match, key]));
      assert.deepEqual(byMatch.get('motd')?.from, [
        { envVariable: 'MOTD', name: 'Message of the day', hidden: false },
      ]);
      const password = byMatch.get('admin.password');
      assert.equal(password?.value, '[hidden]');
      assert.deepEqual(password.from, [
        { envVariable: null, name: 'a hidden variable', hidden: true },
      ]);
      assert.doesNotMatch(JSON.stringify(keys), /ADMIN_PASSWORD|Admin password|swordfish/);
      assert.equal(byMatch.get('net.bind')?.from[0]?.envVariable, null);
      assert.deepEqual(
        [byMatch.get('mode')?.ifValue, byMatch.get('mode')?.value, byMatch.get('mode')?.from],
        ['survival', 'creative', []],
      );
      // An admin sees it.
      const [forAdmin] = await rewritten('rw', admin, 'cfg/server.json');
      const adminPassword = forAdmin?.keys.find((key) => key.match === 'admin.password');
      assert.deepEqual(adminPassword?.from, [
        { envVariable: 'ADMIN_PASSWORD', name: 'Admin password', hidden: false },
      ]);
      assert.equal(adminPassword.value, '{{ADMIN_PASSWORD}}');
    });

    it('answers a server without a template with none; 401, 403 and 404 as the files do', async () => {
      assert.deepEqual(await rewritten('plain', user, 'server.properties'), []);
      assertError(await rewrites('mt', user, 'minetest.conf'), 403);
      await grant('mt', ['console.read']);
      assertError(await rewrites('mt', user, 'minetest.conf'), 403);
      assertError(await rewrites('nowhere', admin), 404);
      assertError(await get('/api/servers/mt/config-files'), 401);
    });
  });

  describe('a failed install', () => {
    before(async () => {
      const script = [
        'echo "step 1"',
        'echo "step 2"',
        'echo "step 3"',
        'printf "\\033[31mstep 4 in red\\033[0m\\n"',
        'echo "step 5"',
        'echo "step 6"',
        'echo "E: Unable to locate package frobnicate" >&2',
        'exit 2',
      ].join('\n');
      const id = await imported(
        egg({
          name: 'Fails to install',
          scripts: { installation: { script, container: 'debian', entrypoint: 'sh' } },
        }),
      );
      await create({ name: 'broken', template: id });
      await eventually(async () => {
        const install = json<{ data: { install: { state: string } } }>(
          await get('/api/servers/broken/config', admin),
        ).data.install;
        return install.state === 'failed' ? true : undefined;
      }, 'the install to fail');
    });

    it('keeps its reason with the install state', async () => {
      const install = json<{ data: { install: Record<string, unknown> } }>(
        await get('/api/servers/broken/config', admin),
      ).data.install;
      assert.equal(install.reason, 'the script exited with code 2');
      assert.equal(install.exitCode, 2);
      // The lines are console output: never in the configuration.
      assert.equal(install.lastLines, undefined);
    });

    it("repeats the reason and the last lines in the start's 409", async () => {
      const refused = await serverAction(panel, admin, 'broken', 'start');
      assertError(refused, 409, 'NOT_INSTALLED');
      const { message } = json<{ message: string }>(refused);
      assert.match(message, /install failed \(the script exited with code 2\)/);
      assert.match(
        message,
        /Its last lines: step 3 \| step 4 in red \| step 5 \| step 6 \| E: Unable to locate package frobnicate$/,
      );
      assert.doesNotMatch(message, /step 2|\\x1b/);
      const restarted = await serverAction(panel, admin, 'broken', 'restart');
      assertError(restarted, 409, 'NOT_INSTALLED');
      assert.match(json<{ message: string }>(restarted).message, /frobnicate$/);
    });

    it('quotes the lines only to those who may read the console', async () => {
      await grant('broken', ['power']);
      const refused = await serverAction(panel, user, 'broken', 'start');
      assertError(refused, 409, 'NOT_INSTALLED');
      const { message } = json<{ message: string }>(refused);
      assert.match(message, /the script exited with code 2/);
      assert.doesNotMatch(message, /step|frobnicate/);
      await grant('broken', ['power', 'console.read']);
      assert.match(
        json<{ message: string }>(await serverAction(panel, user, 'broken', 'start')).message,
        /frobnicate$/,
      );
    });

    it('forgets the reason once an admin marks the server installed', async () => {
      const marked = await panel.app.inject({
        method: 'PUT',
        url: '/api/servers/broken/install',
        headers: admin.headers,
        payload: { state: 'installed' },
      });
      assert.equal(marked.statusCode, 200, marked.body);
      assert.equal(
        json<{ data: { install: { reason: unknown } } }>(marked).data.install.reason,
        null,
      );
      const install = json<{ data: { install: { reason: unknown } } }>(
        await get('/api/servers/broken/config', admin),
      ).data.install;
      assert.equal(install.reason, null);
    });
  });

  describe('a clean stop', () => {
    /** Starts a server from an egg with `startup` and stop `stop`, and waits for it to run. */
    const running = async (name: string, startup: string, stop = '^C') => {
      const id = await imported(
        egg({
          name: `Stops ${name}`,
          startup,
          config: { files: '{}', startup: '{"done": "ready"}', logs: '{}', stop },
        }),
      );
      await create({ name, template: id });
      const started = await serverAction(panel, admin, name, 'start');
      assert.equal(started.statusCode, 200, started.body);
      await eventually(
        async () => ((await stats(panel, admin, name)).status === 'running' ? true : undefined),
        `${name} to run`,
      );
    };
    const stopped = async (name: string) => {
      const response = await serverAction(panel, admin, name, 'stop');
      assert.equal(response.statusCode, 200, response.body);
      const body = await stats(panel, admin, name);
      assert.equal(body.status, 'stopped');
      assert.ok(body.lastExit);
      return body.lastExit;
    };

    it('is a game ended by the SIGINT of its ^C', async () => {
      await running('by-signal', 'echo ready; exec sleep 600');
      const exit = await stopped('by-signal');
      // The sandbox's wrapper tells a death by SIGINT as the shells do: 130.
      assert.ok(exit.signal === 'SIGINT' || exit.code === 130, JSON.stringify(exit));
      assert.equal(exit.cleanStop, true);
    });

    it('is a game that exits with 130 on the SIGINT of its ^C', async () => {
      await running('by-code', "trap 'exit 130' INT; echo ready; while :; do sleep 0.2; done");
      const exit = await stopped('by-code');
      assert.deepEqual([exit.code, exit.signal, exit.cleanStop], [130, null, true]);
      // Kept across the panel's restarts: recorded with the exit, and shown in the list.
      const row = await panel.db.kysely
        .selectFrom('servers')
        .select('last_exit_clean_stop')
        .where('name', '=', 'by-code')
        .executeTakeFirstOrThrow();
      assert.equal(row.last_exit_clean_stop, 1);
      const list = json<{ data: { name: string; lastExit: { cleanStop: boolean } | null }[] }>(
        await get('/api/servers', admin),
      ).data;
      assert.equal(list.find((server) => server.name === 'by-code')?.lastExit?.cleanStop, true);
    });

    it('is not a game that answers the stop with another code, nor a crash', async () => {
      await running('odd-exit', "trap 'exit 1' INT; echo ready; while :; do sleep 0.2; done");
      const exit = await stopped('odd-exit');
      assert.deepEqual([exit.code, exit.cleanStop], [1, false]);

      // 143 is SIGTERM's code: not what a ^C stop asks for.
      await running('wrong-code', "trap 'exit 143' INT; echo ready; while :; do sleep 0.2; done");
      assert.equal((await stopped('wrong-code')).cleanStop, false);

      await running('crashes', 'echo ready; sleep 0.5; exit 130');
      await eventually(
        async () =>
          (await stats(panel, admin, 'crashes')).status === 'crashed' ? true : undefined,
        'the crash',
      );
      const crash = (await stats(panel, admin, 'crashes')).lastExit;
      assert.equal(crash?.cleanStop, false);
    });

    it('is a SIGTERM stop (no stop command) ending as 143', async () => {
      const id = await imported(
        egg({
          name: 'Stops on TERM',
          startup: "trap 'exit 143' TERM; echo ready; while :; do sleep 0.2; done",
        }),
      );
      await create({ name: 'by-term', template: id, variables: {} });
      // No stop command: the stop is SIGTERM.
      const cleared = await panel.app.inject({
        method: 'PUT',
        url: '/api/servers/by-term/config',
        headers: admin.headers,
        payload: { stopCommand: null },
      });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal((await serverAction(panel, admin, 'by-term', 'start')).statusCode, 200);
      await eventually(
        async () =>
          (await stats(panel, admin, 'by-term')).status === 'running' ? true : undefined,
        'by-term to run',
      );
      const exit = await stopped('by-term');
      assert.deepEqual([exit.code, exit.cleanStop], [143, true]);
    });
  });

  describe('a game that reads no console input', () => {
    it('is a template flag: the feature no_console_input, set for Minetest', async () => {
      assert.equal((await template('minetest-debian')).readsConsoleInput, false);
      assert.equal((await template('openttd-debian')).readsConsoleInput, true);
      const flagged = await imported(egg({ name: 'Deaf game', features: ['no_console_input'] }));
      assert.equal((await template(flagged)).readsConsoleInput, false);
      const plain = await imported(egg({ name: 'Listening game', features: ['eula'] }));
      assert.equal((await template(plain)).readsConsoleInput, true);
    });
  });
});
