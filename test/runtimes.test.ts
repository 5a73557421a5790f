/**
 * One set of cases, run on both runtimes through the real HTTP surface: the process runtime (a
 * sandboxed local process) and the docker runtime (a container on a real engine, with the test
 * image of helpers/docker.ts). The docker cases are skipped, saying why, where no engine answers.
 *
 * Both outlive the panel: after its SIGTERM or SIGKILL, a container or a process (through its
 * holder) runs on, and the next panel takes it back as it runs.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startPanel, suiteScope, testEnvironment, type TestPanel } from './helpers/app.js';
import { startPanelProcess } from './helpers/panel-process.js';
import { dockerForTests, imageGameServerCommand, IMAGE_NODE } from './helpers/docker.js';
import {
  alive,
  createServer,
  eventually,
  gameServerCommand,
  historyOf,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

const MIB = 1024 * 1024;
const docker = await dockerForTests();

type Kind = 'process' | 'docker';

/** How each runtime runs the stand-in game server and a `node -e` script. */
function setUp(kind: Kind) {
  if (kind === 'process') {
    return {
      env: {},
      gameServer: (...flags: string[]) => ({ startCommand: gameServerCommand(...flags) }),
      nodeScript: (script: string) => ({
        startCommand: [process.execPath, '-e', script]
          .map((part) => JSON.stringify(part))
          .join(' '),
      }),
    };
  }
  const image = docker.ok ? docker.image : 'none';
  const env: Record<string, string> = docker.ok ? { DOCKER_HOST: docker.dockerHost } : {};
  return {
    env,
    gameServer: (...flags: string[]) => ({
      startCommand: imageGameServerCommand(...flags),
      runtime: 'docker',
      image,
    }),
    nodeScript: (script: string) => ({
      startCommand: [IMAGE_NODE, '-e', script].map((part) => JSON.stringify(part)).join(' '),
      runtime: 'docker',
      image,
    }),
  };
}

async function consoleHas(panel: TestPanel, admin: Session, name: string, text: string) {
  return eventually(
    async () =>
      (await historyOf(panel, admin, name)).some((line) => line.includes(text)) ? true : undefined,
    `"${text}" in the console of ${name}`,
  );
}

async function statusIs(panel: TestPanel, admin: Session, name: string, status: string) {
  return eventually(async () => {
    const now = await stats(panel, admin, name);
    return now.status === status ? now : undefined;
  }, `${name} to be ${status}`);
}

for (const kind of ['process', 'docker'] as const) {
  const skip = kind === 'docker' && !docker.ok ? docker.why : false;
  const { env, gameServer, nodeScript } = setUp(kind);

  describe(`${kind} runtime`, { skip }, () => {
    let panel: TestPanel;
    let admin: Session;

    const suite = suiteScope();
    before(async () => {
      panel = await startPanel(suite, env);
      admin = await register(panel, 'admin');
    });

    it('starts a server, shows its console (history and live) and echoes commands', async () => {
      await createServer(panel, admin, 'main', { ...gameServer(), stopCommand: 'stop' });
      assert.equal((await serverAction(panel, admin, 'main', 'start')).statusCode, 200);
      await consoleHas(panel, admin, 'main', 'Done! pid=');
      const base = await panel.listen();
      const socket = new WebSocket(`${base.replace('http', 'ws')}/ws/servers/main/console`, {
        headers: admin.headers,
      });
      let heard = '';
      socket.on('message', (data: Buffer) => {
        heard += data.toString();
      });
      await once(socket, 'open');
      await eventually(() => (heard.includes('"history"') ? true : undefined), 'the history');
      assert.equal((await sendCommand(panel, admin, 'main', 'say live')).statusCode, 200);
      await eventually(() => (heard.includes('[Server] live') ? true : undefined), 'a live line');
      socket.close();
      await consoleHas(panel, admin, 'main', '[panel] admin> say live');
    });

    it('stops a server with its stop command', async () => {
      const stopped = await serverAction(panel, admin, 'main', 'stop');
      assert.equal(stopped.statusCode, 200, stopped.body);
      assert.equal((await stats(panel, admin, 'main')).status, 'stopped');
      await consoleHas(panel, admin, 'main', 'Stopping server');
    });

    it('falls back to SIGTERM, then SIGKILL, for a server that ignores both', async () => {
      await createServer(panel, admin, 'stubborn', gameServer('--ignore-term'));
      assert.equal((await serverAction(panel, admin, 'stubborn', 'start')).statusCode, 200);
      await consoleHas(panel, admin, 'stubborn', 'Done! pid=');
      const stopped = await serverAction(panel, admin, 'stubborn', 'stop');
      assert.equal(stopped.statusCode, 200, stopped.body);
      await consoleHas(panel, admin, 'stubborn', 'ignoring SIGTERM');
      await consoleHas(panel, admin, 'stubborn', 'did not end on SIGTERM; killing it');
      assert.equal((await stats(panel, admin, 'stubborn')).status, 'stopped');
    });

    it('shows a crash as crashed, with its exit code', async () => {
      await createServer(panel, admin, 'fragile', gameServer());
      assert.equal((await serverAction(panel, admin, 'fragile', 'start')).statusCode, 200);
      await consoleHas(panel, admin, 'fragile', 'Done! pid=');
      await sendCommand(panel, admin, 'fragile', 'crash');
      const crashed = await statusIs(panel, admin, 'fragile', 'crashed');
      assert.equal(crashed.lastExit?.code, 3);
      await consoleHas(panel, admin, 'fragile', 'exited unexpectedly (code 3)');
    });

    it('restarts a crashing server with back-off', async () => {
      await createServer(panel, admin, 'phoenix', {
        ...gameServer('--crash-after', '300'),
        autoRestart: true,
      });
      assert.equal((await serverAction(panel, admin, 'phoenix', 'start')).statusCode, 200);
      await consoleHas(panel, admin, 'phoenix', '[panel] restarting in 1 s');
      await consoleHas(panel, admin, 'phoenix', '[panel] restarting in 2 s');
      const history = await historyOf(panel, admin, 'phoenix');
      assert.ok(history.filter((line) => line.startsWith('[panel] started')).length >= 2);
      await serverAction(panel, admin, 'phoenix', 'stop');
      await statusIs(panel, admin, 'phoenix', 'stopped');
    });

    it('reports live CPU, memory and pids in /stats, with the limits', async () => {
      await createServer(panel, admin, 'busy', {
        ...gameServer(),
        limits: { memoryBytes: 256 * MIB, cpuPercent: 50, pids: 64 },
      });
      assert.equal((await serverAction(panel, admin, 'busy', 'start')).statusCode, 200);
      await consoleHas(panel, admin, 'busy', 'Done! pid=');
      await stats(panel, admin, 'busy');
      await sendCommand(panel, admin, 'busy', 'alloc 32');
      await consoleHas(panel, admin, 'busy', 'alloc 32');
      await sendCommand(panel, admin, 'busy', 'burn 5');
      // Each reading covers the time since the one before: read until one covers only the burn.
      const now = await eventually(
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 700));
          const reading = await stats(panel, admin, 'busy');
          assert.ok(reading.cpu.percent < 75, `cpu ${reading.cpu.percent} above its 50 % limit`);
          return reading.cpu.percent > 20 ? reading : undefined;
        },
        'the CPU use of the burn',
        5_000,
      );
      assert.equal(now.status, 'running');
      assert.ok(now.pid !== null && now.pid > 0);
      assert.ok(now.memory.bytes > 32 * MIB && now.memory.bytes < 256 * MIB, `${now.memory.bytes}`);
      assert.ok(now.pids.count >= 1 && now.pids.count <= 64, `pids ${now.pids.count}`);
      assert.deepEqual([now.cpu.limit, now.memory.limit, now.pids.limit], [50, 256 * MIB, 64]);
      await serverAction(panel, admin, 'busy', 'stop');
    });

    it('tells an end at the memory limit as out of memory', async () => {
      await createServer(panel, admin, 'greedy', {
        ...gameServer(),
        limits: { memoryBytes: 96 * MIB },
      });
      assert.equal((await serverAction(panel, admin, 'greedy', 'start')).statusCode, 200);
      await consoleHas(panel, admin, 'greedy', 'Done! pid=');
      await sendCommand(panel, admin, 'greedy', 'alloc 200');
      const crashed = await statusIs(panel, admin, 'greedy', 'crashed');
      assert.equal(crashed.lastExit?.outOfMemory, true);
      await consoleHas(panel, admin, 'greedy', '[panel] the server ran out of memory');
    });

    it('holds a server to its pids limit: forks past it are refused', async () => {
      // Starts sleepers until the kernel refuses one, says how many it could, and waits. One line:
      // a start command has no newline.
      const script = `
        const { spawn } = require('node:child_process');
        let started = 0;
        const next = () => {
          if (started >= 200) { console.log('forks ' + started + ' none refused'); return; }
          const child = spawn('sleep', ['60'], { stdio: 'ignore' });
          child.once('spawn', () => { started++; next(); });
          child.once('error', (e) => console.log('forks ' + started + ' refused ' + e.code));
        };
        next();
        process.on('SIGTERM', () => process.exit(0));
        process.stdin.resume();`.replace(/\s*\n\s*/g, ' ');
      await createServer(panel, admin, 'forky', { ...nodeScript(script), limits: { pids: 24 } });
      assert.equal((await serverAction(panel, admin, 'forky', 'start')).statusCode, 200);
      await consoleHas(panel, admin, 'forky', 'refused EAGAIN');
      const now = await stats(panel, admin, 'forky');
      assert.equal(now.status, 'running');
      assert.ok(now.pids.count <= 24, `pids ${now.pids.count}`);
      await serverAction(panel, admin, 'forky', 'stop');
      await statusIs(panel, admin, 'forky', 'stopped');
    });

    it('deletes a server, and what ran it with it', async () => {
      await createServer(panel, admin, 'doomed', gameServer());
      assert.equal((await serverAction(panel, admin, 'doomed', 'start')).statusCode, 200);
      const running = await stats(panel, admin, 'doomed');
      const deleted = await panel.app.inject({
        method: 'DELETE',
        url: '/api/servers/doomed',
        headers: admin.headers,
      });
      assert.equal(deleted.statusCode, 200, deleted.body);
      if (kind === 'docker' && docker.ok) {
        const left = await docker.docker.listContainers({
          all: true,
          filters: { label: ['game-panel.server=doomed'] },
        });
        assert.deepEqual(left, []);
      } else {
        assert.equal(alive(running.pid ?? 0), false);
      }
    });
  });

  describe(`${kind} runtime: servers outlive the panel`, { skip }, () => {
    let cleanup: () => Promise<void>;
    let panelEnv: Record<string, string>;
    const children = new Set<ChildProcess>();

    before(async () => {
      const made = await testEnvironment(env);
      cleanup = made.cleanup;
      panelEnv = made.env;
    });
    // SIGUSR2: the panel stops its servers before it exits, so that none outlives the test.
    after(async () => {
      for (const child of children) child.kill('SIGUSR2');
      await Promise.all([...children].map((child) => once(child, 'exit')));
      await cleanup();
    });

    /** The panel as an operator runs it, on a free port; ended in `after` whatever happens. */
    function startChild() {
      return startPanelProcess(panelEnv, (child) => {
        children.add(child);
        child.once('exit', () => children.delete(child));
      });
    }

    async function call(url: string, token: string, method: string, route: string, body?: unknown) {
      const response = await fetch(`${url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    }

    it('takes the server back after SIGTERM and after SIGKILL: same pid, console and commands work', async () => {
      const first = await startChild();
      const registered = await fetch(`${first.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: 'correct horse' }),
      });
      const token = ((await registered.json()) as { access_token: string }).access_token;
      const created = await call(first.url, token, 'POST', '/api/servers/create', {
        name: 'survivor',
        displayName: 'survivor',
        // Prints "tick <n>" every 300 ms, panel or no panel.
        ...gameServer('--tick', '300'),
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(
        (await call(first.url, token, 'POST', '/api/servers/survivor/start')).status,
        200,
      );
      const statsOf = async (url: string) =>
        (await call(url, token, 'GET', '/api/servers/survivor/stats')).body.data as {
          status: string;
          pid: number | null;
        };
      const before = await statsOf(first.url);
      assert.equal(before.status, 'running');
      let second = first;
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        const ended = once(second.child, 'exit');
        second.child.kill(signal);
        await ended;
        second = await startChild();
        const after = await eventually(async () => {
          const now = await statsOf(second.url);
          return now.status === 'running' ? now : undefined;
        }, `the server to run under the new panel (${signal})`);
        assert.equal(after.pid, before.pid, `taken back after ${signal}`);
      }
      const said = await call(second.url, token, 'POST', '/api/servers/survivor/command', {
        command: 'say still here',
      });
      assert.equal(said.status, 200);
      const socket = new WebSocket(
        `${second.url.replace('http', 'ws')}/ws/servers/survivor/console`,
        { headers: { authorization: `Bearer ${token}` } },
      );
      let heard = '';
      let history: string[] = [];
      socket.on('message', (data: Buffer) => {
        heard += data.toString();
        const message = JSON.parse(data.toString()) as { type: string; lines?: string[] };
        if (message.type === 'history') history = message.lines ?? [];
      });
      await eventually(
        () => (heard.includes('[Server] still here') ? true : undefined),
        'the answer to a command typed after the restart',
      );
      assert.ok(heard.includes("[panel] took the server back at the panel's start"), heard);
      // Every tick, those printed while no panel ran included, is in the history, in order.
      const ticks = history.flatMap((line) => {
        const match = /^tick (\d+)$/.exec(line);
        return match ? [Number(match[1])] : [];
      });
      assert.ok(ticks.length >= 10, heard);
      assert.deepEqual(
        ticks,
        ticks.map((_tick, index) => (ticks[0] ?? 0) + index),
        'a tick is missing or out of order',
      );
      // What the server printed before the panel's first end is still in its history.
      assert.ok(heard.includes('Starting fake server'), heard);
      socket.close();
      assert.equal(
        (await call(second.url, token, 'POST', '/api/servers/survivor/stop')).status,
        200,
      );
    });

    it('shows a server that ended while no panel ran as a crash, with its exit code', async () => {
      for (const child of children) child.kill('SIGUSR2');
      await Promise.all([...children].map((child) => once(child, 'exit')));
      const first = await startChild();
      const login = await fetch(`${first.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: 'correct horse' }),
      });
      const token = ((await login.json()) as { access_token: string }).access_token;
      const created = await call(first.url, token, 'POST', '/api/servers/create', {
        name: 'shortlived',
        ...gameServer('--crash-after', '3000'),
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const started = await call(first.url, token, 'POST', '/api/servers/shortlived/start');
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const { pid } = (await call(first.url, token, 'GET', '/api/servers/shortlived/stats')).body
        .data as { pid: number };
      const killed = once(first.child, 'exit');
      first.child.kill('SIGKILL');
      await killed;
      // The server's own clock: it exits 3 s after it started, while no panel runs.
      await eventually(
        () => (alive(pid) ? undefined : true),
        'the server to exit on its own',
        15_000,
      );

      const second = await startChild();
      interface Stats {
        status: string;
        lastExit: { code: number | null; outOfMemory: boolean } | null;
      }
      const now = await eventually(async () => {
        const data = (await call(second.url, token, 'GET', '/api/servers/shortlived/stats')).body
          .data as Stats;
        return data.status === 'running' || data.status === 'crashed' ? data : undefined;
      }, 'the new panel to settle the server');
      assert.equal(now.status, 'crashed', second.output());
      assert.equal(now.lastExit?.code, 7);
      assert.equal(now.lastExit.outOfMemory, false);
    });
  });
}
