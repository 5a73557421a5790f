/**
 * The panel's own life with the servers it runs (DECISIONS.md §1 and §4), and what a server can
 * reach of the host.
 *
 * As an operator runs it (a separate process started from src/server.ts): SIGTERM or SIGINT stops
 * every server with its stop sequence before the panel exits 0, and the next start brings back
 * the servers that were running. After the panel is killed outright, the next start ends what it
 * left running (even a process that ignores SIGTERM) but never a process that merely got one of
 * its pids, and starts the servers again; a sandboxed server dies with the panel.
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
import { fileURLToPath } from 'node:url';
import WebSocket, { type RawData } from 'ws';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Db } from '../src/db/database.js';
import { findBubblewrap } from '../src/host/runtime/process/process-runtime.js';
import { processIdentity } from '../src/host/runtime/process/proc.js';
import {
  TEST_JWT_SECRET,
  startPanel,
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

/** Every live process below `root` in the process tree. */
function descendants(root: number): ProcessRef[] {
  const parents = new Map<number, number>();
  for (const pid of allPids()) {
    const fields = statFields(pid);
    if (fields?.[1] !== undefined && fields[0] !== 'Z') parents.set(pid, Number(fields[1]));
  }
  const found: ProcessRef[] = [];
  for (const pid of parents.keys()) {
    for (let parent = parents.get(pid); parent !== undefined; parent = parents.get(parent)) {
      if (parent !== root) continue;
      const start = statFields(pid)?.[19];
      if (start !== undefined) found.push({ pid, start });
      break;
    }
  }
  return found;
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

function spawnPanel(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  childPanels.add(child);
  child.once('exit', () => childPanels.delete(child));
  return child;
}

/** Starts the panel on a free port and waits for its "listening" log line. */
async function startChildPanel(env: Record<string, string>): Promise<ChildPanel> {
  const child = spawnPanel({ ...env, PORT: '0', LOG_LEVEL: 'info' });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the panel did not listen within 30 s: ${output}`));
    }, 30_000);
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
// 1a. A clean shutdown

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  describe(`the panel on ${signal}`, () => {
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
      // "stop" makes the fixture print "Stopping server" and exit at once.
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
      const servers = descendants(first.child.pid!);
      for (const pid of oldPids) {
        assert.ok(
          servers.some((server) => server.pid === pid),
          `${pid} is not below the panel`,
        );
      }

      // Which of the servers' processes still run at the very moment the panel is gone: without
      // a graceful stop they would linger until they notice their input closed.
      const aliveAtExit = new Promise<ProcessRef[]>((resolve) => {
        first.child.once('exit', () => {
          resolve(servers.filter(running));
        });
      });
      first.child.kill(signal);
      const { code } = await first.exited;
      assert.equal(code, 0, first.output());
      assert.deepEqual(await aliveAtExit, [], 'server processes outlived the panel');
      assert.equal(
        readFileSync(path.join(serversDir, 'beta', 'stop-command-received'), 'utf8'),
        'written',
      );
      for (const pid of oldPids) assert.equal(alive(pid), false, `server pid ${pid} is alive`);
      assert.deepEqual(processesIn(serversDir), []);

      // Same DATA_DIR and database: both were running, so both run again.
      const second = await startChildPanel(env);
      for (const [index, name] of ['alpha', 'beta'].entries()) {
        const again = await childStats(second, token, name);
        const pid = runningPid(again);
        assert.notEqual(pid, oldPids[index], `${name} kept its old pid`);
      }
      second.child.kill('SIGTERM');
      assert.equal((await second.exited).code, 0, second.output());
      assert.deepEqual(processesIn(serversDir), []);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// 1b. A killed panel, without a sandbox

describe('the panel killed with SIGKILL (SANDBOX=none)', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment({ SANDBOX: 'none' }));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    await cleanup();
  });

  it('leaves its servers running; the next start ends them, even one that ignores SIGTERM, and starts them again', async () => {
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
    assert.equal(ignoresSigterm(plainPid), false);
    assert.equal(ignoresSigterm(stubbornPid), true);
    const leftovers = [refOf(plainPid), refOf(stubbornPid)];

    first.child.kill('SIGKILL');
    assert.equal((await first.exited).signal, 'SIGKILL');
    assert.deepEqual(
      leftovers.filter((leftover) => !running(leftover)),
      [],
      'without a sandbox, the servers outlive the panel',
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
    second.child.kill('SIGTERM');
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
// 1d. A killed panel, with the sandbox

describe('the panel killed with SIGKILL (SANDBOX=bwrap)', { skip: NO_BWRAP }, () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment({ SANDBOX: 'bwrap' }));
  });
  after(async () => {
    await killEverything(env.DATA_DIR!);
    await cleanup();
  });

  it('takes its sandboxed servers with it, and the next start starts them again', async () => {
    const serversDir = path.join(env.DATA_DIR!, 'servers');
    const first = await startChildPanel(env);
    const token = await registerAdmin(first);
    const oldPid = runningPid(
      await createAndStart(first, token, 'boxed', { startCommand: SLEEPER }),
    );
    // bwrap (and its init in the namespace) above the server itself.
    const sandbox = await eventually(() => {
      const found = descendants(first.child.pid!);
      return found.some((stray) => commandLine(stray.pid) === 'sleep 600') ? found : undefined;
    }, 'the sandboxed server to run');
    assert.ok(sandbox.length >= 2, JSON.stringify(sandbox));
    assert.ok(sandbox.some((member) => member.pid === oldPid));

    first.child.kill('SIGKILL');
    assert.equal((await first.exited).signal, 'SIGKILL');
    // --die-with-parent: nothing of it outlives the panel (SIGKILL, so no grace period).
    await eventually(
      () => (sandbox.some(running) ? undefined : true),
      'the sandbox to die with the panel',
      5_000,
    );
    assert.deepEqual(processesIn(serversDir), []);

    const second = await startChildPanel(env);
    const pid = runningPid(await childStats(second, token, 'boxed'));
    assert.notEqual(pid, oldPid);
    second.child.kill('SIGTERM');
    assert.equal((await second.exited).code, 0, second.output());
    assert.deepEqual(processesIn(serversDir), []);
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

    before(async () => {
      setProcessEnv('OIDC_CLIENT_SECRET', `leak-canary-${randomBytes(12).toString('hex')}`);
      setProcessEnv('PANEL_TEST_CANARY', `leak-canary-${randomBytes(12).toString('hex')}`);
      setProcessEnv('JWT_SECRET', TEST_JWT_SECRET);
      hostDataDir = viewDataDir();
      panel = await startPanel({ SANDBOX: mode, DATA_DIR: hostDataDir });
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
      reader?.close();
      await panel?.close();
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
