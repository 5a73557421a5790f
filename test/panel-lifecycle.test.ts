/**
 * The panel's own life with the servers it runs (docs/api.md, contract §1 and §4), and what a
 * server can reach of the host.
 *
 * As an operator runs it (a separate process started from src/server.ts, or a build of it made
 * elsewhere: an upgrade): on SIGTERM, SIGINT or SIGKILL the panel exits and its servers run on,
 * with or without the sandbox; the next start takes each one back with the same pid, its console
 * history spanning the gap, its input and stats, and its stop sequence; a server that exited
 * meanwhile is shown with its exit code. SIGUSR2 (`shutdown --stop-servers`) stops every server
 * with its stop sequence, and the next start starts them again. What cannot be taken back (its
 * holder was killed) is ended, even a process that ignores SIGTERM, but never a process that
 * merely got one of its pids.
 *
 * In process: a server gets none of the panel's secrets, and in the bubblewrap sandbox sees
 * neither the panel's files nor other servers nor the host's processes, and cannot write outside
 * its own directory.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  symlinkSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import WebSocket, { type RawData } from 'ws';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Db } from '../src/db/database.js';
import { findBubblewrap } from '../src/host/runtime/process/sandbox.js';
import { processIdentity } from '../src/host/runtime/process/proc.js';
import { runCliProcess } from './helpers/cli.js';
import {
  TEST_JWT_SECRET,
  startPanel,
  suiteScope,
  testDialect,
  testEnvironment,
  type TestPanel,
} from './helpers/app.js';
import {
  alive,
  createServer,
  newServerId,
  eventually,
  gameServerCommand,
  register,
  sendCommand,
  serverAction,
  stats,
  type ServerStatsBody,
  type Session,
} from './helpers/factories.js';

/** Why the sandbox tests cannot run here, or false when bubblewrap works (probed, not assumed). */
const NO_BWRAP = findBubblewrap(process.env.PATH ?? '')
  ? false
  : 'bubblewrap (bwrap) is not installed or cannot make a sandbox on this machine';

/** A server that does not read its input, so it outlives the panel unless something ends it. */
const SLEEPER = `/bin/sh -c "exec sleep 600"`;
/** The same, ignoring SIGTERM (an ignored signal stays ignored across exec). */
const STUBBORN_SLEEPER = `/bin/sh -c "trap '' TERM; exec sleep 600"`;

// ---------------------------------------------------------------------------------------------
// Processes, as /proc shows them

/** One process for its whole life: a later process that gets the same pid is another one. */
interface ProcessRef {
  readonly pid: number;
  readonly start: string;
}

/** Fields 3… of /proc/<pid>/stat: [0] state, [1] ppid, [19] start time. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function refOf(pid: number): ProcessRef {
  const start = statFields(pid)?.[19];
  assert.ok(start !== undefined, `process ${pid} does not exist`);
  return { pid, start };
}

/** True while that very process runs (not a zombie, not a newer process with its pid). */
function running(process: ProcessRef): boolean {
  return alive(process.pid) && statFields(process.pid)?.[19] === process.start;
}

function allPids(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** Live processes working in `dir` or below it: whatever servers started there left running. */
function processesIn(dir: string): ProcessRef[] {
  const found: ProcessRef[] = [];
  for (const pid of allPids()) {
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue;
    }
    const start = statFields(pid)?.[19];
    if ((cwd === dir || cwd.startsWith(`${dir}/`)) && alive(pid) && start !== undefined) {
      found.push({ pid, start });
    }
  }
  return found;
}

function ignoresSigterm(pid: number): boolean {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mask = /^SigIgn:\s+([0-9a-f]+)$/m.exec(status)?.[1];
  assert.ok(mask !== undefined, status);
  return ((BigInt(`0x${mask}`) >> 14n) & 1n) === 1n; // SIGTERM is signal 15, bit 14
}

/** SIGKILLs what is still running of `processes` and waits until it is gone. */
async function killAll(processes: readonly ProcessRef[]): Promise<void> {
  for (const stray of processes.filter(running)) {
    try {
      process.kill(stray.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  await eventually(
    () => (processes.some(running) ? undefined : true),
    'killed processes to go',
    10_000,
  );
}

// ---------------------------------------------------------------------------------------------
// The panel as a child process

interface ChildPanel {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Panels started by this file and not yet seen exiting: `after` kills them whatever happened. */
const childPanels = new Set<ChildProcess>();

function spawnPanel(env: Record<string, string>, entry: string | null = null): ChildProcess {
  const args = entry === null ? ['--import', 'tsx', 'src/server.ts'] : [entry];
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  childPanels.add(child);
  child.once('exit', () => childPanels.delete(child));
  return child;
}

/** Starts the panel on a free port and waits for its "listening" log line. */
async function startChildPanel(
  env: Record<string, string>,
  entry: string | null = null,
): Promise<ChildPanel> {
  const child = spawnPanel({ ...env, PORT: '0', LOG_LEVEL: 'info' }, entry);
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  const url = await new Promise<string>((resolve, reject) => {
    // A bound for a hung start, not a speed check (see crash-safety.test.ts).
    const timer = setTimeout(() => {
      reject(new Error(`the panel did not listen within 120 s: ${output}`));
    }, 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the panel exited (${code ?? signal}) before listening: ${output}`));
    });
  });
  return { child, url, output: () => output, exited };
}

/** SIGKILLs every panel still running, then every process left in `dataDir`. */
async function killEverything(dataDir: string): Promise<void> {
  await Promise.all(
    [...childPanels].map(async (child) => {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
  await killAll(processesIn(dataDir));
}

/** Names of the servers whose leftover process the panel reports having ended. */
function endedLeftovers(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.includes('ended a leftover server process'))
    .map((line) => (JSON.parse(line) as { server: string }).server)
    .sort();
}

interface Reply {
  readonly status: number;
  readonly body: { readonly data?: unknown; readonly message?: string };
}

async function call(
  panel: ChildPanel,
  token: string | null,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
): Promise<Reply> {
  const response = await fetch(`${panel.url}${route}`, {
    method,
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Reply['body'] };
}

/** Registers the first user (an admin) and returns the token. */
async function registerAdmin(panel: ChildPanel): Promise<string> {
  const response = await fetch(`${panel.url}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'operator', password: 'correct horse' }),
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { access_token: string; role: string };
  assert.equal(body.role, 'admin');
  return body.access_token;
}

async function createAndStart(
  panel: ChildPanel,
  token: string,
  name: string,
  config: Record<string, unknown>,
): Promise<ServerStatsBody> {
  const created = await call(panel, token, 'POST', '/api/servers/create', { name, ...config });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const started = await call(panel, token, 'POST', `/api/servers/${name}/start`);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  assert.deepEqual(started.body.data, { name, status: 'running' });
  return childStats(panel, token, name);
}

async function childStats(panel: ChildPanel, token: string, name: string) {
  const reply = await call(panel, token, 'GET', `/api/servers/${name}/stats`);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data as ServerStatsBody;
}

/** The pid of a server that is running now, checked to be a live process. */
function runningPid(server: ServerStatsBody): number {
  assert.equal(server.status, 'running');
  assert.ok(server.pid !== null && alive(server.pid), `pid ${server.pid} is not alive`);
  return server.pid;
}

// ---------------------------------------------------------------------------------------------
// 1a. Servers outlive the panel: a clean shutdown, a killed panel, an upgrade

/** The tick lines of a console, by number. */
const ticks = (lines: readonly string[]): number[] =>
  lines.flatMap((line) => {
    const match = /^tick (\d+)$/.exec(line);
    return match ? [Number(match[1])] : [];
  });

/** POST /api/servers/<name>/command on a child panel. */
async function typeCommand(panel: ChildPanel, token: string, name: string, command: string) {
  const reply = await call(panel, token, 'POST', `/api/servers/${name}/command`, { command });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
}

/**
 * A bundle of the panel built afresh into a folder of its own, as an upgrade brings a newer
 * build to the same data: its own package.json, dist/panel.mjs and holder, the same
 * node_modules (its native addons).
 */
async function buildElsewhere(): Promise<string> {
  const root = mkdtempSync(path.join(tmpdir(), 'panel-upgrade-'));
  const { build } = await import('esbuild');
  // The build's own options: the packages with native addons stay in node_modules.
  const { bundleOptions } = await import('../scripts/bundle-server.mjs');
  await build(bundleOptions('src/server.ts', path.join(root, 'dist', 'panel.mjs')));
  copyFileSync('package.json', path.join(root, 'package.json'));
  cpSync('src/host/runtime/process/holder', path.join(root, 'src/host/runtime/process/holder'), {
    recursive: true,
  });
  symlinkSync(path.resolve('node_modules'), path.join(root, 'node_modules'));
  return root;
}

for (const sandbox of ['none', 'bwrap'] as const) {
  describe(
    `servers outlive the panel (SANDBOX=${sandbox})`,
    { skip: sandbox === 'bwrap' && NO_BWRAP },
    () => {
      let env: Record<string, string>;
      let cleanup: () => Promise<void>;
      let upgrade: string | undefined;
      before(async () => {
        ({ env, cleanup } = await testEnvironment({ SANDBOX: sandbox }));
      });
      after(async () => {
        await killEverything(env.DATA_DIR!);
        await cleanup();
        if (upgrade) rmSync(upgrade, { recursive: true, force: true });
      });

      it('on SIGTERM, SIGINT, SIGKILL and an upgrade: same pid, history across the gap, input, stats, stop', async () => {
        const serversDir = path.join(env.DATA_DIR!, 'servers');
        let panel = await startChildPanel(env);
        const token = await registerAdmin(panel);
        const pid = runningPid(
          await createAndStart(panel, token, 'alpha', {
            startCommand: gameServerCommand('--tick', '200'),
            stopCommand: 'stop',
          }),
        );
        upgrade = await buildElsewhere();
        const ends = [
          { how: 'SIGTERM', entry: null },
          { how: 'SIGINT', entry: null },
          { how: 'SIGKILL', entry: null },
          { how: 'SIGTERM', entry: path.join(upgrade, 'dist', 'panel.mjs') },
        ] as const;
        for (const [round, { how, entry }] of ends.entries()) {
          const said = `before ${how} ${round}`;
          await typeCommand(panel, token, 'alpha', `say ${said}`);
          const before = await ConsoleReader.open(panel.url, 'alpha', token);
          await eventually(
            () => (before.lines.includes(`[Server] ${said}`) ? true : undefined),
            'the line before the end',
          );
          const lastSeen = Math.max(...ticks(before.lines));
          before.close();

          panel.child.kill(how);
          const exit = await panel.exited;
          if (how === 'SIGKILL') assert.equal(exit.signal, 'SIGKILL');
          else assert.equal(exit.code, 0, panel.output());
          assert.match(
            panel.output(),
            how === 'SIGKILL' ? /Server listening/ : /the game servers run on/,
          );
          assert.equal(alive(pid), true, `the server died with the panel (${how})`);
          // While no panel runs, the server goes on printing.
          await sleep(1_000);
          assert.equal(alive(pid), true);

          panel = await startChildPanel(env, entry);
          const back = await childStats(panel, token, 'alpha');
          assert.equal(runningPid(back), pid, `the server was not taken back as it ran (${how})`);
          const after = await ConsoleReader.open(panel.url, 'alpha', token);
          const seen = ticks(after.lines);
          assert.ok(after.lines.includes(`[Server] ${said}`), after.lines.join('\n'));
          // The ticks printed while the panel was away are in the history, in order, none lost.
          for (let tick = lastSeen; tick <= lastSeen + 4; tick++)
            assert.ok(seen.includes(tick), `tick ${tick} is missing: ${seen.join(' ')}`);
          assert.deepEqual(
            seen,
            [...seen].sort((a, b) => a - b),
          );
          // Input reaches the game, stats read its processes.
          await typeCommand(panel, token, 'alpha', `say after ${how} ${round}`);
          await eventually(
            () => (after.lines.includes(`[Server] after ${how} ${round}`) ? true : undefined),
            'the command typed after the restart to reach the game',
          );
          after.close();
          assert.ok(back.memory.bytes > 0, JSON.stringify(back));
        }

        // The stop sequence of a server taken back: its stop command, then it is gone, holder
        // and all.
        const reader = await ConsoleReader.open(panel.url, 'alpha', token);
        const stopped = await call(panel, token, 'POST', '/api/servers/alpha/stop');
        assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
        assert.deepEqual(stopped.body.data, { name: 'alpha', status: 'stopped' });
        await eventually(
          () => (reader.lines.includes('Stopping server') ? true : undefined),
          'the stop command to reach the game',
        );
        reader.close();
        assert.equal(alive(pid), false);
        assert.deepEqual(processesIn(serversDir), []);
        assert.deepEqual(
          processesIn(path.join(env.DATA_DIR!, 'run')),
          [],
          'a holder outlived its server',
        );
        panel.child.kill('SIGTERM');
        assert.equal((await panel.exited).code, 0, panel.output());
      });

      it('shows a server that exited while the panel was away with its exit code', async () => {
        let panel = await startChildPanel(env);
        const token = (
          await call(panel, null, 'POST', '/api/auth/login', {
            username: 'operator',
            password: 'correct horse',
          })
        ).body as { access_token: string };
        const pid = runningPid(
          await createAndStart(panel, token.access_token, 'brief', {
            startCommand: gameServerCommand('--crash-after', '3000'),
          }),
        );
        panel.child.kill('SIGTERM');
        assert.equal((await panel.exited).code, 0, panel.output());
        await eventually(
          () => (alive(pid) ? undefined : true),
          'the server to exit on its own',
          10_000,
        );

        panel = await startChildPanel(env);
        const shown = await eventually(async () => {
          const stats = await childStats(panel, token.access_token, 'brief');
          return stats.status === 'crashed' ? stats : undefined;
        }, 'the server to be shown crashed');
        assert.equal(shown.pid, null);
        const list = await call(panel, token.access_token, 'GET', '/api/servers');
        const brief = (
          list.body.data as { name: string; lastExit: { code: number } | null }[]
        ).find((server) => server.name === 'brief');
        assert.equal(brief?.lastExit?.code, 7);
        const reader = await ConsoleReader.open(panel.url, 'brief', token.access_token);
        assert.ok(reader.lines.includes('Starting fake server'), reader.lines.join('\n'));
        assert.ok(
          reader.lines.some((line) => line.includes('exited unexpectedly (code 7)')),
          reader.lines.join('\n'),
        );
        reader.close();
        assert.deepEqual(processesIn(path.join(env.DATA_DIR!, 'run')), []);
        panel.child.kill('SIGTERM');
        assert.equal((await panel.exited).code, 0, panel.output());
      });
    },
  );
}

// ---------------------------------------------------------------------------------------------
// 1b. `shutdown --stop-servers` (SIGUSR2): the stop sequence, and a start again next time

describe('the panel on SIGUSR2 (shutdown --stop-servers)', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment({ SANDBOX: 'none' }));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    await cleanup();
  });

  it('stops every server with its stop sequence, exits 0, and starts them again on the next start', async () => {
    const serversDir = path.join(env.DATA_DIR!, 'servers');
    const first = await startChildPanel(env);
    const token = await registerAdmin(first);
    const alpha = await createAndStart(first, token, 'alpha', {
      startCommand: gameServerCommand(),
      stopCommand: 'stop',
      stopTimeoutSeconds: 30,
    });
    // A stop command that leaves a trace on disk proves the stop command itself was sent;
    // the fixture does not exit on it, so SIGTERM follows after a second.
    const beta = await createAndStart(first, token, 'beta', {
      startCommand: gameServerCommand(),
      stopCommand: 'write stop-command-received',
      stopTimeoutSeconds: 1,
    });
    const oldPids = [runningPid(alpha), runningPid(beta)];
    const servers = processesIn(serversDir);
    first.child.kill('SIGUSR2');
    const { code } = await first.exited;
    assert.equal(code, 0, first.output());
    assert.match(first.output(), /stopping the game servers/);
    assert.deepEqual(servers.filter(running), [], 'server processes outlived the panel');
    assert.equal(
      readFileSync(path.join(serversDir, 'beta', 'stop-command-received'), 'utf8'),
      'written',
    );
    for (const pid of oldPids) assert.equal(alive(pid), false, `server pid ${pid} is alive`);
    assert.deepEqual(processesIn(env.DATA_DIR!), []);

    // Both were running, so both run again.
    const second = await startChildPanel(env);
    for (const [index, name] of ['alpha', 'beta'].entries()) {
      const pid = runningPid(await childStats(second, token, name));
      assert.notEqual(pid, oldPids[index], `${name} kept its old pid`);
    }
    second.child.kill('SIGUSR2');
    assert.equal((await second.exited).code, 0, second.output());
    assert.deepEqual(processesIn(env.DATA_DIR!), []);
  });
});

// ---------------------------------------------------------------------------------------------
// 1b'. What cannot be taken back is ended

describe('a server whose holder was killed while the panel was away (SANDBOX=none)', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment({ SANDBOX: 'none' }));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    await cleanup();
  });

  it('is ended at the next start, even one that ignores SIGTERM, and started again', async () => {
    const serversDir = path.join(env.DATA_DIR!, 'servers');
    const first = await startChildPanel(env);
    const token = await registerAdmin(first);
    const plainPid = runningPid(
      await createAndStart(first, token, 'plain', { startCommand: SLEEPER }),
    );
    const stubbornPid = runningPid(
      await createAndStart(first, token, 'stubborn', { startCommand: STUBBORN_SLEEPER }),
    );
    // Once the shell has become `sleep`, the stubborn one really ignores SIGTERM.
    for (const pid of [plainPid, stubbornPid]) {
      await eventually(
        () => (commandLine(pid) === 'sleep 600' ? true : undefined),
        `server ${pid} to exec sleep`,
      );
    }
    assert.equal(ignoresSigterm(stubbornPid), true);
    const leftovers = [refOf(plainPid), refOf(stubbornPid)];

    first.child.kill('SIGKILL');
    assert.equal((await first.exited).signal, 'SIGKILL');
    // Their holders die too: nothing can take them back, and their processes run on unsandboxed.
    await killAll(processesIn(path.join(env.DATA_DIR!, 'run')));
    assert.deepEqual(
      leftovers.filter((leftover) => !running(leftover)),
      [],
    );

    const second = await startChildPanel(env);
    assert.deepEqual(
      leftovers.filter(running),
      [],
      'the leftovers are gone once the panel listens',
    );
    assert.deepEqual(endedLeftovers(second.output()), ['plain', 'stubborn']);
    for (const [name, oldPid] of [
      ['plain', plainPid],
      ['stubborn', stubbornPid],
    ] as const) {
      const pid = runningPid(await childStats(second, token, name));
      assert.notEqual(pid, oldPid, `${name} kept its old pid`);
    }
    second.child.kill('SIGUSR2');
    assert.equal((await second.exited).code, 0, second.output());
    assert.deepEqual(processesIn(serversDir), []);
  });
});

// ---------------------------------------------------------------------------------------------
// 1c. A pid that now belongs to another process

describe('a pid recorded before the panel was killed', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let db: Db | undefined;
  const bystanders: ChildProcess[] = [];
  before(async () => {
    ({ env, cleanup } = await testEnvironment({ SANDBOX: 'none' }));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    for (const bystander of bystanders) bystander.kill('SIGKILL');
    await db?.close();
    await cleanup();
  });

  /** A process of this test's own that has nothing to do with the panel. */
  async function bystander(): Promise<ProcessRef> {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    bystanders.push(child);
    await once(child, 'spawn');
    return refOf(child.pid!);
  }

  it('is never killed when another process holds it now, and is cleared from the row', async () => {
    const otherBoot = await bystander();
    const sameBoot = await bystander();
    const genuine = await bystander();
    const genuineIdentity = await processIdentity(genuine.pid);
    assert.ok(genuineIdentity !== null);
    const bootId = genuineIdentity.slice(0, genuineIdentity.lastIndexOf(':'));

    const opened = await openDatabase(loadConfig(env).database);
    db = opened;
    const row = async (name: string, pid: number, identity: string) => ({
      id: await newServerId(opened.kysely, name),
      name,
      display_name: name,
      start_command: gameServerCommand(),
      stop_command: null,
      stop_timeout_seconds: 10,
      auto_restart: 0,
      created_at: new Date().toISOString(),
      desired_running: 0,
      pid,
      pid_identity: identity,
      started_at: new Date().toISOString(),
    });
    await db.kysely
      .insertInto('servers')
      .values([
        // The pid of a process from an earlier boot of the machine…
        await row('reused-after-reboot', otherBoot.pid, 'some-other-boot:123'),
        // …or one that started later in this boot (start time differs).
        await row('reused-this-boot', sameBoot.pid, `${bootId}:1`),
        // Control: the very process that was recorded is ended, so recovery did run.
        await row('genuine', genuine.pid, genuineIdentity),
      ])
      .execute();

    const panel = await startChildPanel(env);
    assert.equal(running(otherBoot), true, 'a process with a reused pid was killed');
    assert.equal(running(sameBoot), true, 'a process with a reused pid was killed');
    assert.equal(running(genuine), false, 'the recorded process itself was left running');
    assert.deepEqual(endedLeftovers(panel.output()), ['genuine']);

    const rows = await db.kysely
      .selectFrom('servers')
      .select(['name', 'pid', 'pid_identity', 'desired_running'])
      .orderBy('name')
      .execute();
    assert.deepEqual(rows, [
      { name: 'genuine', pid: null, pid_identity: null, desired_running: 0 },
      { name: 'reused-after-reboot', pid: null, pid_identity: null, desired_running: 0 },
      { name: 'reused-this-boot', pid: null, pid_identity: null, desired_running: 0 },
    ]);

    panel.child.kill('SIGTERM');
    assert.equal((await panel.exited).code, 0, panel.output());
    assert.equal(running(otherBoot), true);
    assert.equal(running(sameBoot), true);
  });
});

// ---------------------------------------------------------------------------------------------
// SANDBOX=bwrap where bubblewrap cannot be found

describe('SANDBOX=bwrap without bubblewrap', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  // bubblewrap cannot be uninstalled for a test, but it can be taken off the panel's PATH: the
  // panel finds it there, and runs node and the fixture by absolute path.
  let emptyPath: string;
  before(async () => {
    ({ env, cleanup } = await testEnvironment());
    emptyPath = mkdtempSync(path.join(tmpdir(), 'panel-no-bwrap-'));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    await cleanup();
    rmSync(emptyPath, { recursive: true, force: true });
  });

  it('stops the start with an error naming SANDBOX, where auto runs without a sandbox', async () => {
    const refused = spawnPanel({
      ...env,
      PATH: emptyPath,
      SANDBOX: 'bwrap',
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    let output = '';
    const [code] = await new Promise<[number | null]>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Server listening')) {
          refused.kill('SIGKILL');
          reject(new Error(`the panel started with SANDBOX=bwrap and no bwrap: ${output}`));
        }
      };
      refused.stdout?.on('data', onData);
      refused.stderr?.on('data', onData);
      refused.once('exit', (exitCode) => {
        resolve([exitCode]);
      });
    });
    assert.equal(code, 1, output);
    assert.match(
      output,
      /^Configuration error: SANDBOX: is bwrap, but bubblewrap \(bwrap\) is missing or cannot run here\n$/,
      'one line naming the variable, no stack trace',
    );
    assert.doesNotMatch(output, /Server listening/);

    // The same PATH with SANDBOX=auto: the panel starts, and says it runs servers unsandboxed.
    const fallback = await startChildPanel({ ...env, PATH: emptyPath, SANDBOX: 'auto' });
    assert.match(
      fallback.output(),
      /servers run (each as a uid of its own \(\d+ \+ the server's id, up to \d+\)|as the panel's own user \(uid \d+\), all of them: [^\n]*?) WITHOUT a sandbox/,
    );
    fallback.child.kill('SIGTERM');
    assert.equal((await fallback.exited).code, 0, fallback.output());
  });
});

// ---------------------------------------------------------------------------------------------
// 2. What a server sees, in process

/** A console socket that keeps every line the server printed. */
class ConsoleReader {
  readonly lines: string[] = [];

  private constructor(private readonly socket: WebSocket) {}

  static async open(base: string, name: string, token: string): Promise<ConsoleReader> {
    const url = `${base.replace(/^http/, 'ws')}/ws/servers/${name}/console?token=${encodeURIComponent(token)}`;
    const socket = new WebSocket(url);
    const reader = new ConsoleReader(socket);
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data: RawData) => {
        const text = Array.isArray(data)
          ? Buffer.concat(data).toString('utf8')
          : Buffer.isBuffer(data)
            ? data.toString('utf8')
            : Buffer.from(data).toString('utf8');
        const message = JSON.parse(text) as { type: string; lines?: string[] };
        if (message.type === 'history') {
          reader.lines.push(...(message.lines ?? []));
          resolve();
        } else if (message.type === 'log') {
          reader.lines.push(...(message.lines ?? []));
        }
      });
      socket.once('error', reject);
    });
    return reader;
  }

  /** The first line the server itself printed at index `from` or later. */
  next(from: number, what: string): Promise<string> {
    return eventually(
      () => this.lines.slice(from).find((line) => !line.startsWith('[panel]')),
      what,
    );
  }

  close(): void {
    this.socket.close();
  }
}

/** Why the panel cannot switch servers to the server user here, or false as root (CI). */
const NOT_ROOT =
  process.getuid?.() === 0
    ? false
    : 'servers run as the server user, not as the panel, only when the panel runs as root';

/**
 * A data directory outside /tmp and /var/tmp, which the sandbox replaces with empty ones of its
 * own: that would hide a DATA_DIR there whether or not the panel hides DATA_DIR itself (as it
 * must for ./data). Reachable by the server user, as root; the panel's user's home otherwise.
 */
function viewDataDir(): string {
  return mkdtempSync(
    process.getuid?.() === 0
      ? '/var/lib/panel-lifecycle-'
      : path.join(homedir(), '.panel-lifecycle-'),
  );
}

for (const mode of ['none', 'bwrap'] as const) {
  const sandboxed = mode === 'bwrap';
  const skip = sandboxed ? NO_BWRAP : NOT_ROOT;
  describe(`a server's view of the host (SANDBOX=${mode})`, { skip }, () => {
    let panel: TestPanel | undefined;
    let admin: Session;
    let reader: ConsoleReader | undefined;
    let serverDir: string;
    let hostDataDir: string | undefined;
    /** Values that must never reach a server, however the panel got them. */
    const secrets: string[] = [TEST_JWT_SECRET];
    const savedEnv = new Map<string, string | undefined>();
    const canary = `canary-${randomBytes(8).toString('hex')}`;
    const hostFile = `/etc/panel-test-${randomBytes(8).toString('hex')}`;

    /** Sets a variable in this process's own environment, which the panel would inherit. */
    function setProcessEnv(name: string, value: string): void {
      if (!savedEnv.has(name)) savedEnv.set(name, process.env[name]);
      process.env[name] = value;
      secrets.push(value);
    }

    /** Types `command` into the server's console and returns the line it answers with. */
    async function ask(command: string): Promise<string> {
      assert.ok(panel && reader);
      const from = reader.lines.length;
      const response = await sendCommand(panel, admin, 'game', command);
      assert.equal(response.statusCode, 200, response.body);
      return reader.next(from, `the answer to "${command}"`);
    }

    after(() => {
      reader?.close();
    });
    const suite = suiteScope();
    before(async () => {
      setProcessEnv('OIDC_CLIENT_SECRET', `leak-canary-${randomBytes(12).toString('hex')}`);
      setProcessEnv('PANEL_TEST_CANARY', `leak-canary-${randomBytes(12).toString('hex')}`);
      setProcessEnv('JWT_SECRET', TEST_JWT_SECRET);
      hostDataDir = viewDataDir();
      panel = await startPanel(suite, { SANDBOX: mode, DATA_DIR: hostDataDir });
      assert.equal(panel.dataDir, hostDataDir);
      if (panel.config.database.kind === 'postgres') {
        setProcessEnv('DATABASE_URL', panel.config.database.url);
        const schema = /search_path%3D(\w+)|search_path=(\w+)/.exec(panel.config.database.url);
        const name = schema?.[1] ?? schema?.[2];
        if (name !== undefined) secrets.push(name);
      }
      if (process.env.TEST_DATABASE_URL) secrets.push(process.env.TEST_DATABASE_URL);

      admin = await register(panel, 'admin');
      // The stand-in game server runs from its own folder, the only one of the checkout's
      // folders a sandboxed server sees, by `node` from the servers' PATH (/usr/bin).
      await createServer(panel, admin, 'game', { startCommand: 'node game-server.mjs' });
      await createServer(panel, admin, 'neighbour');
      serverDir = path.join(panel.dataDir, 'servers', 'game');
      copyFileSync(
        fileURLToPath(new URL('fixtures/game-server.mjs', import.meta.url)),
        path.join(serverDir, 'game-server.mjs'),
      );
      chmodSync(path.join(serverDir, 'game-server.mjs'), 0o644);
      writeFileSync(path.join(panel.dataDir, 'secret-canary'), `${canary}\n`, { mode: 0o600 });
      writeFileSync(path.join(panel.dataDir, 'servers', 'neighbour', 'private.txt'), 'private\n', {
        mode: 0o644,
      });

      const started = await serverAction(panel, admin, 'game', 'start');
      assert.equal(started.statusCode, 200, started.body);
      reader = await ConsoleReader.open(await panel.listen(), 'game', admin.token);
      const { lines } = reader;
      await eventually(
        () => lines.find((line) => line.startsWith('Done! pid=')),
        'the server to come up',
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; its console: ${lines.join(' | ')}`);
      });
    });

    after(async () => {
      if (hostDataDir !== undefined) {
        await killAll(processesIn(hostDataDir));
        rmSync(hostDataDir, { recursive: true, force: true });
      }
      rmSync(hostFile, { force: true });
      for (const [name, value] of savedEnv) {
        if (value === undefined) Reflect.deleteProperty(process.env, name);
        else process.env[name] = value;
      }
    });

    it("gets none of the panel's secrets, only PATH, LANG, HOME and PWD (its own folder)", async () => {
      const line = await ask('env');
      const environment = JSON.parse(line) as Record<string, string>;
      assert.deepEqual(Object.keys(environment).sort(), ['HOME', 'LANG', 'PATH', 'PWD']);
      assert.equal(environment.HOME, serverDir);
      assert.equal(environment.PWD, serverDir);
      for (const secret of secrets) {
        assert.equal(line.includes(secret), false, `the server's environment holds "${secret}"`);
      }
    });

    if (sandboxed) {
      it('sees nothing of DATA_DIR but its own directory, the host read-only', async () => {
        assert.ok(panel);
        const dataDir = panel.dataDir;
        assert.equal(await ask(`read ${dataDir}/secret-canary`), 'read failed: ENOENT');
        assert.equal(await ask(`ls ${dataDir}`), 'servers');
        assert.equal(await ask(`ls ${dataDir}/servers`), 'game');
        assert.equal(
          await ask(`read ${dataDir}/servers/neighbour/private.txt`),
          'read failed: ENOENT',
        );
        if (testDialect === 'sqlite') {
          assert.ok(existsSync(path.join(dataDir, 'panel.sqlite')));
          assert.equal(await ask(`read ${dataDir}/panel.sqlite`), 'read failed: ENOENT');
        }

        assert.equal(await ask(`write ${hostFile}`), 'write failed: EROFS');
        assert.equal(existsSync(hostFile), false);
        assert.equal(await ask(`write ${serverDir}/ok.txt`), 'write ok');
        assert.equal(readFileSync(path.join(serverDir, 'ok.txt'), 'utf8'), 'written');
      });

      it('runs in its own PID namespace, seeing none of the host processes', async () => {
        assert.ok(panel && reader);
        const done = await eventually(
          () => reader?.lines.find((line) => line.startsWith('Done! pid=')),
          'the server to print its pid',
        );
        const inside = Number(/^Done! pid=(\d+)$/.exec(done)?.[1]);
        assert.ok(inside >= 1 && inside <= 3, `pid inside the sandbox: ${done}`);
        const { pid: outside } = await stats(panel, admin, 'game');
        assert.notEqual(inside, outside);
        const visible = (await ask('ls /proc')).split(',').filter((entry) => /^\d+$/.test(entry));
        assert.ok(visible.length <= 3, `processes visible in the sandbox: ${visible.join(' ')}`);
        assert.match(await ask(`ls /proc/${process.pid}`), /^ls failed: ENOENT$/);
      });
    } else {
      it("runs as the server user, who can neither read DATA_DIR's secrets nor list it", async () => {
        assert.ok(panel);
        const dataDir = panel.dataDir;
        const owner = statSync(serverDir);
        assert.notEqual(owner.uid, 0);
        const { pid } = await stats(panel, admin, 'game');
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        assert.equal(/^Uid:\s+(\d+)/m.exec(status)?.[1], String(owner.uid), status);
        assert.equal(await ask(`read ${dataDir}/secret-canary`), 'read failed: EACCES');
        assert.equal(await ask(`ls ${dataDir}`), 'ls failed: EACCES');
        assert.equal(await ask(`ls ${dataDir}/servers`), 'ls failed: EACCES');
        if (testDialect === 'sqlite') {
          assert.ok(existsSync(path.join(dataDir, 'panel.sqlite')));
          assert.equal(await ask(`read ${dataDir}/panel.sqlite`), 'read failed: EACCES');
        }
        // Each server runs as a uid of its own (issue 25): without the sandbox too, a server
        // cannot read another's files by their path (the folder is the other uid's, 0700).
        assert.equal(
          await ask(`read ${dataDir}/servers/neighbour/private.txt`),
          'read failed: EACCES',
        );
        assert.equal(await ask(`write ${serverDir}/ok.txt`), 'write ok');
        assert.equal(readFileSync(path.join(serverDir, 'ok.txt'), 'utf8'), 'written');
        const written = statSync(path.join(serverDir, 'ok.txt'));
        assert.deepEqual([written.uid, written.gid], [owner.uid, owner.gid]);
      });

      it('runs with its real pid, among the host processes', async () => {
        assert.ok(panel && reader);
        const done = await eventually(
          () => reader?.lines.find((line) => line.startsWith('Done! pid=')),
          'the server to print its pid',
        );
        const inside = Number(/^Done! pid=(\d+)$/.exec(done)?.[1]);
        const { pid: outside } = await stats(panel, admin, 'game');
        assert.equal(inside, outside);
        // The test's own process is visible to it.
        assert.doesNotMatch(await ask(`ls /proc/${process.pid}`), /failed/);
      });
    }
  });
}

// ---------------------------------------------------------------------------------------------
// `game-panel shutdown`, as an operator types it

describe('game-panel shutdown', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment({ SANDBOX: 'none' }));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    await cleanup();
  });

  it('ends the panel with its servers running on; --stop-servers stops them first', async () => {
    const first = await startChildPanel(env);
    const token = await registerAdmin(first);
    const pid = runningPid(
      await createAndStart(first, token, 'alpha', { startCommand: gameServerCommand() }),
    );
    const plain = await runCliProcess(['shutdown'], env);
    assert.equal(plain.status, 0, plain.stderr);
    assert.match(plain.stdout, /its game servers run on/);
    assert.equal((await first.exited).code, 0, first.output());
    assert.equal(alive(pid), true);

    const second = await startChildPanel(env);
    assert.equal(runningPid(await childStats(second, token, 'alpha')), pid);
    const stopping = await runCliProcess(['shutdown', '--stop-servers'], env);
    assert.equal(stopping.status, 0, stopping.stderr);
    assert.equal((await second.exited).code, 0, second.output());
    assert.equal(alive(pid), false);
    assert.deepEqual(processesIn(env.DATA_DIR!), []);

    const none = await runCliProcess(['shutdown'], env);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /^No panel runs on /);
    const wrong = await runCliProcess(['shutdown', '--now'], env);
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /Unknown argument: --now/);
  });
});

// ---------------------------------------------------------------------------------------------
// A holder's socket sits in a folder its server's user may write

describe("a link in a server's holder folder to another server's holder", () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment({ SANDBOX: 'none' }));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    await cleanup();
  });

  it('is never taken for that holder: the other server runs on untouched', async () => {
    const first = await startChildPanel(env);
    const token = await registerAdmin(first);
    const mallory = runningPid(
      await createAndStart(first, token, 'mallory', { startCommand: SLEEPER }),
    );
    const victim = runningPid(
      await createAndStart(first, token, 'victim', { startCommand: gameServerCommand() }),
    );
    first.child.kill('SIGTERM');
    assert.equal((await first.exited).code, 0, first.output());

    // What a server without a sandbox could do as its own user: its holder's socket replaced
    // by a link to the victim's (found as root here; the server would guess the hash).
    const run = path.join(env.DATA_DIR!, 'run');
    const sockets = readdirSync(run).map((folder) => path.join(run, folder, 'holder.sock'));
    const byOwner = (pid: number) =>
      sockets.find((socket) => statSync(path.dirname(socket)).uid === statSync(`/proc/${pid}`).uid);
    const mallorySocket = byOwner(mallory)!;
    const victimSocket = byOwner(victim)!;
    assert.notEqual(mallorySocket, victimSocket);
    rmSync(mallorySocket);
    symlinkSync(victimSocket, mallorySocket);

    const second = await startChildPanel(env);
    assert.equal(runningPid(await childStats(second, token, 'victim')), victim);
    assert.equal(alive(victim), true, "the victim's server was ended");
    // Mallory's own server could not be taken back: it was ended and started again.
    assert.notEqual(runningPid(await childStats(second, token, 'mallory')), mallory);
    second.child.kill('SIGUSR2');
    assert.equal((await second.exited).code, 0, second.output());
  });
});
