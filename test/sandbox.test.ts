/**
 * A game server's reach, seen from inside it (issue 11; docs/security.md §3), with the panel
 * running as root as it does in CI and on most hosts. Each server here is a small probe program
 * that answers questions typed into its console: what it is (user, capabilities,
 * `no_new_privs`), what it can read, write, mount and connect to. Everything goes through the
 * real HTTP API and the real console WebSocket.
 *
 * - With bubblewrap, a server runs as the server user in a sandbox that holds only /usr, a part
 *   of /etc, /sys, its private /dev, /proc, /tmp and /var/tmp, and its own folder: nothing of
 *   the panel's data, of other servers, of the operator's files or of the host's sockets.
 * - Without it, a server still runs as the server user with `no_new_privs`, and that user can
 *   read none of the panel's files.
 * - Whatever a server starts, even a double fork that left its session, ends with it: each
 *   server runs in a cgroup of its own, removed when it stops.
 * - The data directory is reachable by the server user only down to its own folder.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer as createNetServer, type Server } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { findBubblewrap } from '../src/host/runtime/process/sandbox.js';
import { probeUserOf } from '../src/host/runtime/server-user.js';
import {
  rememberSecret,
  startPanel,
  suiteScope,
  testDialect,
  testEnvironment,
  type TestPanel,
} from './helpers/app.js';
import {
  alive,
  createServer,
  eventually,
  register,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

// ---------------------------------------------------------------------------------------------
// What this machine allows: CI runs as root with bubblewrap and a writable cgroup file system,
// so there every test here runs.

const NOT_ROOT =
  process.getuid?.() === 0
    ? false
    : 'the panel runs servers as another user only when it runs as root';

/**
 * Why the sandbox tests cannot run here, or false when bubblewrap can make a sandbox as a uid of
 * the servers' range: probed, not assumed.
 */
const NO_BWRAP =
  NOT_ROOT ||
  (findBubblewrap(process.env.PATH ?? '', probeUserOf({ first: 200_000, last: 299_999 }))
    ? false
    : 'bubblewrap (bwrap) is not installed or cannot make a sandbox as the server user here');

/** The cgroup hierarchy the panel uses (v2, else v1's `pids`), as the runtime finds it. */
const CGROUP_ROOT = existsSync('/sys/fs/cgroup/cgroup.controllers')
  ? '/sys/fs/cgroup'
  : '/sys/fs/cgroup/pids';

/** Why servers cannot get cgroups here, or false when the hierarchy can be written. */
const NO_CGROUPS = ((): string | false => {
  if (NOT_ROOT) return NOT_ROOT;
  if (!existsSync(path.join(CGROUP_ROOT, 'cgroup.procs')))
    return `no cgroup hierarchy at ${CGROUP_ROOT}`;
  const probe = path.join(CGROUP_ROOT, `game-panel-test-${randomBytes(6).toString('hex')}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return false;
  } catch (error) {
    return `${CGROUP_ROOT} cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
})();

// ---------------------------------------------------------------------------------------------
// The probe: a game server that reports on its own surroundings

/**
 * Reads one request a line, `<id> <op> <argument>`, and answers each with one line,
 * `@<id> {"ok": value}` or `@<id> {"error": "<errno code>"}`. Ops: `status` (its identity from
 * /proc/self/status), `read`, `ls`, `write`, `stat` (a path), `run` (a shell command: exit
 * status and output), `connect` (`host:port` or a Unix socket path), `env`.
 */
const PROBE = String.raw`
import { spawnSync } from 'node:child_process';
import { lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const FIELDS = ['Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs'];
const ops = {
  status: () =>
    Object.fromEntries(
      readFileSync('/proc/self/status', 'utf8')
        .split('\n')
        .map((line) => line.split(':'))
        .filter(([key]) => FIELDS.includes(key))
        .map(([key, value]) => [key, value.trim().split(/\s+/).filter(Boolean)]),
    ),
  read: (file) => readFileSync(file, 'utf8'),
  ls: (dir) => readdirSync(dir).sort(),
  stat: (file) => lstatSync(file).mode,
  write: (file) => {
    writeFileSync(file, 'written by the probe\n');
    return true;
  },
  run: (command) => {
    const result = spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8', timeout: 10000 });
    return { status: result.status, output: (result.stdout + result.stderr).trim() };
  },
  connect: (target) =>
    new Promise((resolve, reject) => {
      const colon = target.lastIndexOf(':');
      const socket = target.startsWith('/')
        ? connect(target)
        : connect(Number(target.slice(colon + 1)), target.slice(0, colon));
      socket.setTimeout(3000, () => {
        socket.destroy();
        reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }));
      });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', reject);
    }),
  env: () => process.env,
};

console.log('probe ready');
createInterface({ input: process.stdin }).on('line', async (line) => {
  const [id, op, ...rest] = line.split(' ');
  try {
    const value = await ops[op](rest.join(' '));
    console.log('@' + id + ' ' + JSON.stringify({ ok: value }));
  } catch (error) {
    console.log('@' + id + ' ' + JSON.stringify({ error: error.code ?? String(error.message) }));
  }
});
`;

type Answer = { readonly ok: unknown } | { readonly error: string };

/** A console socket that keeps every line the server printed. */
class ConsoleReader {
  readonly lines: string[] = [];

  private constructor(private readonly socket: WebSocket) {}

  static async open(base: string, name: string, token: string): Promise<ConsoleReader> {
    const url = new URL(`/ws/servers/${name}/console`, base);
    url.protocol = 'ws:';
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    const reader = new ConsoleReader(socket);
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data: WebSocket.RawData) => {
        const text = Array.isArray(data)
          ? Buffer.concat(data).toString('utf8')
          : Buffer.from(data as ArrayBuffer).toString('utf8');
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

  find(predicate: (line: string) => boolean, what: string): Promise<string> {
    return eventually(() => this.lines.find(predicate), what).catch((error: unknown) => {
      throw new Error(`${String(error)}; the console: ${this.lines.join(' | ')}`);
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** A running probe server and the questions a test asks it through the console. */
class Probe {
  #asked = 0;

  private constructor(
    private readonly panel: TestPanel,
    private readonly admin: Session,
    readonly name: string,
    readonly dir: string,
    private readonly reader: ConsoleReader,
  ) {}

  /** Creates the server, puts the probe into its folder, starts it and waits until it answers. */
  static async start(panel: TestPanel, admin: Session, name: string): Promise<Probe> {
    await createServer(panel, admin, name, { startCommand: 'node probe.mjs' });
    const dir = path.join(panel.config.serversDir, name);
    // Written as root: it must stay readable by the server user.
    writeFileSync(path.join(dir, 'probe.mjs'), PROBE, { mode: 0o644 });
    const started = await serverAction(panel, admin, name, 'start');
    assert.equal(started.statusCode, 200, started.body);
    const reader = await ConsoleReader.open(await panel.listen(), name, admin.token);
    await reader.find((line) => line === 'probe ready', `the probe ${name} to start`);
    return new Probe(panel, admin, name, dir, reader);
  }

  async ask(op: string, argument = ''): Promise<Answer> {
    const id = `q${++this.#asked}`;
    const response = await this.panel.app.inject({
      method: 'POST',
      url: `/api/servers/${this.name}/command`,
      headers: this.admin.headers,
      payload: { command: `${id} ${op} ${argument}` },
    });
    assert.equal(response.statusCode, 200, response.body);
    const line = await this.reader.find(
      (candidate) => candidate.startsWith(`@${id} `),
      `the answer to ${op} ${argument}`,
    );
    return JSON.parse(line.slice(id.length + 2)) as Answer;
  }

  /** `ok`, or the error code the operation failed with. */
  async outcome(op: string, argument: string): Promise<string> {
    const answer = await this.ask(op, argument);
    return 'error' in answer ? answer.error : 'ok';
  }

  /** The value of an operation that must succeed. */
  async value<T>(op: string, argument = ''): Promise<T> {
    const answer = await this.ask(op, argument);
    assert.ok('ok' in answer, `${op} ${argument}: ${JSON.stringify(answer)}`);
    return answer.ok as T;
  }

  /** Runs a shell command in the server; its exit status and output. */
  run(command: string): Promise<{ status: number | null; output: string }> {
    return this.value('run', command);
  }

  close(): void {
    this.reader.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The host, as the test sees it

interface HostUser {
  readonly uid: number;
  readonly gid: number;
}

/** The server's own user: the first uid of SERVER_UID_RANGE (by default 200000) plus its id. */
async function serverUser(panel: TestPanel, name: string): Promise<HostUser> {
  const row = await panel.db.kysely
    .selectFrom('servers')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  const uid = panel.config.serverUidRange.first + row.id;
  return { uid, gid: uid };
}

/**
 * A data directory outside /tmp and /var/tmp: the sandbox replaces both with empty ones of its
 * own, which would hide a DATA_DIR there whether or not the panel hides DATA_DIR itself.
 */
function hostDataDir(): string {
  return mkdtempSync('/var/lib/game-panel-test-');
}

/** The cgroup folder of server `name` of the panel whose DATA_DIR is `dataDir`. */
function cgroupOf(dataDir: string, name: string): string {
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  return path.join(CGROUP_ROOT, `game-panel-${id}`, `server-${name}`);
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

/** Fields 3… of /proc/<pid>/stat: [0] state, [1] ppid, [2] process group, [3] session. */
function statFields(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** The real uid of a process, as the host sees it. */
function uidOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

/** Live processes running `command` exactly, or working in `dir` or below. */
function processesOf(commands: readonly string[], dir: string): number[] {
  return allPids().filter((pid) => {
    if (!alive(pid)) return false;
    if (commands.includes(commandLine(pid))) return true;
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      return cwd === dir || cwd.startsWith(`${dir}/`);
    } catch {
      return false;
    }
  });
}

/** SIGKILLs what a failed test may have left behind. */
function killLeftovers(commands: readonly string[], dir: string): void {
  for (const pid of processesOf(commands, dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

const ZERO_CAPS = '0000000000000000';

const TAG = randomBytes(6).toString('hex');

/** Things of the host a server has no business with, made once for the whole file. */
const host = {
  /** The operator's configuration (an OIDC providers file), readable by anyone on the host. */
  etcFile: `/etc/game-panel-test-${TAG}/oidc.json`,
  optFile: `/opt/game-panel-test-${TAG}/config.json`,
  rootFile: `/root/game-panel-test-${TAG}.json`,
  /** What the operator shares with servers (SANDBOX_READ_ONLY_PATHS): open to all on the host. */
  sharedDir: `/opt/game-panel-test-${TAG}-shared`,
  /** A service's socket that anyone on the host may connect to, as a database's or Docker's. */
  socket: `/run/game-panel-test-${TAG}.sock`,
} as const;
let hostService: Server | undefined;

before(async () => {
  if (NOT_ROOT) return;
  for (const file of [host.etcFile, host.optFile, host.rootFile]) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    writeFileSync(file, '[{"id":"operator-config"}]\n', { mode: 0o644 });
  }
  mkdirSync(host.sharedDir, { mode: 0o777 });
  chmodSync(host.sharedDir, 0o777);
  writeFileSync(path.join(host.sharedDir, 'mods.txt'), 'shared mods\n', { mode: 0o666 });
  hostService = createNetServer((socket) => {
    socket.on('error', () => undefined); // the probe hangs up at once
    socket.end('hello from the host\n');
  });
  hostService.listen(host.socket);
  await once(hostService, 'listening');
  chmodSync(host.socket, 0o666);
});

after(() => {
  if (NOT_ROOT) return;
  hostService?.close();
  rmSync(host.socket, { force: true });
  rmSync(path.dirname(host.etcFile), { recursive: true, force: true });
  rmSync(path.dirname(host.optFile), { recursive: true, force: true });
  rmSync(host.rootFile, { force: true });
  rmSync(host.sharedDir, { recursive: true, force: true });
});

/**
 * Starts `sh -c '(setsid sleep A &); (sleep B &); exec sleep C'`: one sleep that left the
 * server's session and process tree, one that left its tree, and the server itself. Checks that
 * they run as the server user in the server's cgroup, stops the server through the API, and
 * checks that none of them is left, nor the cgroup.
 */
async function escapeIsEnded(panel: TestPanel, admin: Session, name: string): Promise<void> {
  const [escaped, orphan, main] = [0, 1, 2].map(
    (offset) => `sleep ${randomInt(100_000, 900_000) * 10 + offset}`,
  );
  assert.ok(escaped && orphan && main);
  const dir = path.join(panel.config.serversDir, name);
  const cgroup = cgroupOf(panel.dataDir, name);
  try {
    await createServer(panel, admin, name, {
      startCommand: `/bin/sh -c "(setsid ${escaped} &); (${orphan} &); exec ${main}"`,
    });
    const user = await serverUser(panel, name);
    const started = await serverAction(panel, admin, name, 'start');
    assert.equal(started.statusCode, 200, started.body);
    const pids = await eventually(() => {
      const found = [escaped, orphan, main].map((command) =>
        allPids().find((pid) => alive(pid) && commandLine(pid) === command),
      );
      return found.every((pid) => pid !== undefined) ? found : undefined;
    }, 'the three sleeps to run');
    const [escapedPid, , mainPid] = pids as [number, number, number];

    // A real escape: the setsid one is in a session of its own, out of the server's group.
    assert.notEqual(statFields(escapedPid)[3], statFields(mainPid)[3]);
    assert.notEqual(statFields(escapedPid)[2], statFields(mainPid)[2]);
    assert.ok(existsSync(cgroup), `no cgroup ${cgroup}`);
    const inCgroup = readFileSync(path.join(cgroup, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
    for (const pid of pids) {
      assert.equal(uidOf(pid), user.uid, `${commandLine(pid)} runs as uid ${uidOf(pid)}`);
      assert.ok(inCgroup.includes(pid), `${commandLine(pid)} (${pid}) is not in ${cgroup}`);
    }

    const stopped = await serverAction(panel, admin, name, 'stop');
    assert.equal(stopped.statusCode, 200, stopped.body);
    assert.equal((await stats(panel, admin, name)).status, 'stopped');
    // The stop answers once the server's processes are gone; a killed process may still need a
    // moment to be reaped by whoever inherited it.
    const left = () => processesOf([escaped, orphan, main], dir);
    await eventually(
      () => (left().length === 0 ? true : undefined),
      `no process of ${name} to be left`,
      2_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${left().map(commandLine).join(', ')}`);
    });
    await eventually(
      () => (existsSync(cgroup) ? undefined : true),
      `${cgroup} to be removed`,
      2_000,
    );
  } finally {
    killLeftovers([escaped, orphan, main], dir);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. In the bubblewrap sandbox

describe(
  'a server in the bubblewrap sandbox (panel as root, SANDBOX=bwrap)',
  { skip: NOT_ROOT || NO_BWRAP },
  () => {
    let dataDir: string;
    let panel: TestPanel | undefined;
    let admin: Session;
    let probe: Probe | undefined;
    let user: HostUser;

    after(() => {
      probe?.close();
    });
    const suite = suiteScope();
    before(async () => {
      dataDir = hostDataDir();
      // No JWT_SECRET: the panel keeps its generated secret in DATA_DIR/jwt-secret.
      panel = await startPanel(suite, {
        SANDBOX: 'bwrap',
        DATA_DIR: dataDir,
        JWT_SECRET: '',
        SANDBOX_READ_ONLY_PATHS: host.sharedDir,
      });
      rememberSecret(readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim());
      admin = await register(panel, 'admin');
      await createServer(panel, admin, 'neighbour');
      // As readable as a file can be: only the sandbox keeps it from a server running as the
      // same user as its neighbour.
      writeFileSync(path.join(panel.config.serversDir, 'neighbour', 'private.txt'), 'private\n', {
        mode: 0o644,
      });
      probe = await Probe.start(panel, admin, 'probe');
      user = await serverUser(panel, 'probe');
    });

    after(() => {
      killLeftovers([], dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('runs as the server user, never root: no capability at all, no_new_privs', async () => {
      assert.ok(probe && panel);
      const status = await probe.value<Record<string, string[]>>('status');
      assert.deepEqual(status.Uid, Array(4).fill(String(user.uid)));
      assert.deepEqual(status.Gid, Array(4).fill(String(user.gid)));
      assert.ok(
        (status.Groups ?? []).every((group) => group === String(user.gid)),
        `supplementary groups: ${(status.Groups ?? []).join(' ')}`,
      );
      for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) {
        assert.deepEqual(status[set], [ZERO_CAPS], set);
      }
      assert.deepEqual(status.NoNewPrivs, ['1']);
      // bubblewrap itself, the outermost process of the server, runs as that user on the host.
      const { pid } = await stats(panel, admin, 'probe');
      assert.ok(pid !== null);
      assert.equal(uidOf(pid), user.uid);
    });

    it('cannot mount, unmount, or remount its root read-write', async () => {
      assert.ok(probe);
      assert.equal(await probe.outcome('write', '/tmp/before-mount'), 'ok');
      for (const command of [
        'mount -t tmpfs tmpfs /tmp',
        'umount /tmp',
        'umount -l /tmp',
        'mount -o remount,rw /',
        'mount -o remount,rw /usr',
        `mount --bind /tmp ${probe.dir}`,
      ]) {
        const result = await probe.run(command);
        assert.notEqual(result.status, 0, `${command} succeeded: ${result.output}`);
      }
      // Nor make a user namespace of its own, where it would be "root" again.
      const nested = await probe.run('unshare --user --map-root-user true');
      assert.notEqual(nested.status, 0, `a nested user namespace was made: ${nested.output}`);
      // Nothing changed: /tmp is the same, / and /usr still read-only.
      assert.equal(await probe.value('read', '/tmp/before-mount'), 'written by the probe\n');
      assert.equal(await probe.outcome('write', '/after-mount'), 'EROFS');
      assert.equal(await probe.outcome('write', '/usr/after-mount'), 'EROFS');
    });

    it('cannot write /usr, /etc or its root; writes its own folder and its private /tmp', async () => {
      assert.ok(probe);
      const name = `written-${randomBytes(6).toString('hex')}`;
      // EROFS, not EACCES: the file system itself is read-only, whoever the server runs as.
      for (const file of [
        `/usr/${name}`,
        `/usr/bin/${name}`,
        `/etc/${name}`,
        '/etc/passwd',
        `/${name}`,
      ]) {
        assert.equal(await probe.outcome('write', file), 'EROFS', file);
      }
      assert.equal(existsSync(`/usr/${name}`), false);
      assert.equal(existsSync(`/etc/${name}`), false);
      assert.match(readFileSync('/etc/passwd', 'utf8'), /^root:/);

      assert.equal(await probe.outcome('write', `${probe.dir}/${name}`), 'ok');
      const written = statSync(path.join(probe.dir, name));
      assert.deepEqual([written.uid, written.gid], [user.uid, user.gid]);
      for (const dir of ['/tmp', '/var/tmp']) {
        assert.equal(await probe.outcome('write', `${dir}/${name}`), 'ok', dir);
        assert.equal(existsSync(`${dir}/${name}`), false, `${dir} is the host's`);
      }
    });

    it("sees nothing of DATA_DIR but its own folder: not jwt-secret, panel.sqlite, nor its neighbour's files", async () => {
      assert.ok(probe && panel);
      const jwtSecret = path.join(dataDir, 'jwt-secret');
      assert.ok(existsSync(jwtSecret));
      // ENOENT, not EACCES: they are not there at all, whatever their modes.
      assert.equal(await probe.outcome('read', jwtSecret), 'ENOENT');
      if (testDialect === 'sqlite') {
        assert.ok(existsSync(path.join(dataDir, 'panel.sqlite')));
        assert.equal(await probe.outcome('read', path.join(dataDir, 'panel.sqlite')), 'ENOENT');
      }
      const neighbour = path.join(panel.config.serversDir, 'neighbour', 'private.txt');
      assert.equal(readFileSync(neighbour, 'utf8'), 'private\n');
      assert.equal(await probe.outcome('read', neighbour), 'ENOENT');
      assert.deepEqual(await probe.value('ls', dataDir), ['servers']);
      assert.deepEqual(await probe.value('ls', panel.config.serversDir), ['probe']);
      assert.ok((await probe.value<string[]>('ls', probe.dir)).includes('probe.mjs'));
    });

    it("sees none of the host's secrets, the operator's files or the host's sockets", async () => {
      assert.ok(probe);
      // What a program needs is there…
      assert.match(await probe.value<string>('read', '/etc/passwd'), /^root:/);
      // …and nothing else: only these folders at the root, and of /var and /opt only the way to
      // DATA_DIR and to the folder shared through SANDBOX_READ_ONLY_PATHS.
      const allowed = ['bin', 'dev', 'etc', 'lib', 'lib32', 'lib64', 'libx32', 'proc', 'sbin'];
      allowed.push('sys', 'tmp', 'usr', 'var', 'opt');
      const root = await probe.value<string[]>('ls', '/');
      assert.deepEqual(
        root.filter((entry) => !allowed.includes(entry)),
        [],
        `at the sandbox's root: ${root.join(' ')}`,
      );
      assert.deepEqual(await probe.value('ls', '/var'), ['lib', 'tmp']);
      assert.deepEqual(await probe.value('ls', '/var/lib'), [path.basename(dataDir)]);
      assert.deepEqual(await probe.value('ls', '/opt'), [path.basename(host.sharedDir)]);

      for (const file of [
        '/etc/shadow',
        '/etc/gshadow',
        '/etc/sudoers',
        '/etc/ssh',
        host.etcFile,
        host.optFile,
        host.rootFile,
        '/root',
        '/home',
        '/srv',
        '/run',
        '/var/run',
        '/var/run/postgresql',
        '/var/run/docker.sock',
        '/run/docker.sock',
        '/var/lib/postgresql',
      ]) {
        assert.equal(await probe.outcome('stat', file), 'ENOENT', file);
      }
      // The operator's file is readable by anyone on the host: only the sandbox hides it.
      assert.equal(statSync(host.etcFile).mode & 0o777, 0o644);
      assert.equal(await probe.outcome('read', host.etcFile), 'ENOENT');
      // No host socket: not a service's the test opened for anyone, not PostgreSQL's.
      assert.equal(await probe.outcome('connect', host.socket), 'ENOENT');
      assert.equal(await probe.outcome('connect', '/var/run/postgresql/.s.PGSQL.5432'), 'ENOENT');
      assert.equal(await probe.outcome('connect', '/run/docker.sock'), 'ENOENT');
    });

    it('reads what the operator shares through SANDBOX_READ_ONLY_PATHS, read-only', async () => {
      assert.ok(probe);
      assert.equal(await probe.value('read', `${host.sharedDir}/mods.txt`), 'shared mods\n');
      // Writable by anyone on the host: only the read-only mount stops the server.
      assert.equal(await probe.outcome('write', `${host.sharedDir}/mods.txt`), 'EROFS');
      assert.equal(await probe.outcome('write', `${host.sharedDir}/new.txt`), 'EROFS');
      assert.equal(readFileSync(`${host.sharedDir}/mods.txt`, 'utf8'), 'shared mods\n');
    });

    it('runs in its own PID namespace, with only PATH, LANG, HOME and PWD (its folder)', async () => {
      assert.ok(probe);
      const visible = (await probe.value<string[]>('ls', '/proc')).filter((entry) =>
        /^\d+$/.test(entry),
      );
      assert.ok(visible.length <= 3, `processes visible in the sandbox: ${visible.join(' ')}`);
      assert.equal(await probe.outcome('stat', `/proc/${process.pid}`), 'ENOENT');
      const env = await probe.value<Record<string, string>>('env');
      assert.deepEqual(Object.keys(env).sort(), ['HOME', 'LANG', 'PATH', 'PWD']);
      assert.equal(env.HOME, probe.dir);
      assert.equal(env.PWD, probe.dir);
    });

    it("shares the host's network by default: the panel's port on 127.0.0.1 is reachable (SERVER_NETWORK=host, not a protection)", async () => {
      assert.ok(probe && panel);
      const port = new URL(await panel.listen()).port;
      assert.equal(await probe.outcome('connect', `127.0.0.1:${port}`), 'ok');
    });

    it(
      'ends everything a server started, even a double fork that left its session, and removes its cgroup',
      { skip: NO_CGROUPS },
      async () => {
        assert.ok(panel);
        await escapeIsEnded(panel, admin, 'escaper');
      },
    );
  },
);

describe(
  'a server in the bubblewrap sandbox with SERVER_NETWORK=none',
  { skip: NOT_ROOT || NO_BWRAP },
  () => {
    let dataDir: string;
    let panel: TestPanel | undefined;
    let probe: Probe | undefined;

    after(() => {
      probe?.close();
    });
    const suite = suiteScope();
    before(async () => {
      dataDir = hostDataDir();
      panel = await startPanel(suite, {
        SANDBOX: 'bwrap',
        SERVER_NETWORK: 'none',
        DATA_DIR: dataDir,
      });
      const admin = await register(panel, 'admin');
      probe = await Probe.start(panel, admin, 'probe');
    });

    after(() => {
      killLeftovers([], dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("cannot connect to the panel's port on 127.0.0.1: its loopback is its own", async () => {
      assert.ok(probe && panel);
      const port = Number(new URL(await panel.listen()).port);
      // The port is open on the host's loopback…
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      socket.destroy();
      // …and not on the server's.
      assert.equal(await probe.outcome('connect', `127.0.0.1:${port}`), 'ECONNREFUSED');
    });
  },
);

// ---------------------------------------------------------------------------------------------
// 2. Without a sandbox

describe('a server without a sandbox (panel as root, SANDBOX=none)', { skip: NOT_ROOT }, () => {
  let dataDir: string;
  let panel: TestPanel | undefined;
  let admin: Session;
  let probe: Probe | undefined;
  let user: HostUser;

  after(() => {
    probe?.close();
  });
  const suite = suiteScope();
  before(async () => {
    dataDir = hostDataDir();
    panel = await startPanel(suite, { SANDBOX: 'none', DATA_DIR: dataDir, JWT_SECRET: '' });
    rememberSecret(readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim());
    admin = await register(panel, 'admin');
    probe = await Probe.start(panel, admin, 'probe');
    user = await serverUser(panel, 'probe');
  });

  after(() => {
    killLeftovers([], dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs as the server user, never root: no effective capability, no_new_privs', async () => {
    assert.ok(probe && panel);
    const status = await probe.value<Record<string, string[]>>('status');
    assert.deepEqual(status.Uid, Array(4).fill(String(user.uid)));
    assert.deepEqual(status.Gid, Array(4).fill(String(user.gid)));
    assert.ok(
      (status.Groups ?? []).every((group) => group === String(user.gid)),
      `supplementary groups: ${(status.Groups ?? []).join(' ')}`,
    );
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb']) {
      assert.deepEqual(status[set], [ZERO_CAPS], set);
    }
    assert.deepEqual(status.NoNewPrivs, ['1']);
    const { pid } = await stats(panel, admin, 'probe');
    assert.ok(pid !== null);
    assert.equal(uidOf(pid), user.uid);
  });

  it("runs as a uid of its own: cannot read another server's folder, even knowing its name", async () => {
    assert.ok(probe && panel);
    await createServer(panel, admin, 'tenant-b');
    const other = path.join(panel.config.serversDir, 'tenant-b');
    // As readable as the other tenant could make it: only the folder's owner and mode stand.
    writeFileSync(path.join(other, 'secret.txt'), 'b only\n', { mode: 0o644 });
    // The panel gives the file it did not write to the server at its next start; here, at once.
    const b = await serverUser(panel, 'tenant-b');
    assert.notEqual(b.uid, user.uid, 'two servers, two uids');
    assert.deepEqual([statSync(other).uid, statSync(other).mode & 0o777], [b.uid, 0o700]);
    assert.equal(await probe.outcome('ls', other), 'EACCES');
    assert.equal(await probe.outcome('read', path.join(other, 'secret.txt')), 'EACCES');
  });

  it("cannot read the panel's secrets nor list DATA_DIR: jwt-secret and panel.sqlite are EACCES", async () => {
    assert.ok(probe && panel);
    assert.equal(await probe.outcome('read', path.join(dataDir, 'jwt-secret')), 'EACCES');
    if (testDialect === 'sqlite') {
      assert.equal(await probe.outcome('read', path.join(dataDir, 'panel.sqlite')), 'EACCES');
    }
    assert.equal(await probe.outcome('ls', dataDir), 'EACCES');
    assert.equal(await probe.outcome('ls', panel.config.serversDir), 'EACCES');
    assert.equal(await probe.outcome('read', '/etc/shadow'), 'EACCES');
    // Its own folder is its own.
    assert.equal(await probe.outcome('write', `${probe.dir}/mine.txt`), 'ok');
    assert.equal(statSync(path.join(probe.dir, 'mine.txt')).uid, user.uid);
  });

  it('still reaches what any user of the host can: world-readable files and sockets (what the sandbox hides)', async () => {
    assert.ok(probe);
    assert.equal(await probe.outcome('read', host.etcFile), 'ok');
    assert.equal(await probe.outcome('connect', host.socket), 'ok');
    assert.equal(await probe.outcome('stat', `/proc/${process.pid}`), 'ok');
  });

  it(
    'ends everything a server started, even a double fork that left its session, and removes its cgroup',
    { skip: NO_CGROUPS },
    async () => {
      assert.ok(panel);
      await escapeIsEnded(panel, admin, 'escaper');
    },
  );
});

// ---------------------------------------------------------------------------------------------
// 3. Who servers may run as

// As root, root is refused; as any other user, so is every user but the panel's own.
describe('SERVER_USER', () => {
  for (const value of ['root', '0', '0:0', '0:1000', '65534:0']) {
    it(`SERVER_USER=${value} stops the start with an error naming SERVER_USER`, async () => {
      const { env, cleanup } = await testEnvironment({ SANDBOX: 'none', SERVER_USER: value });
      try {
        const config = loadConfig(env);
        await assert.rejects(
          buildApp(config),
          (error: unknown) =>
            error instanceof ConfigError &&
            error.variable === 'SERVER_USER' &&
            error.message.startsWith('SERVER_USER: ') &&
            !error.message.includes('\n'),
        );
      } finally {
        await cleanup();
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------
// 4. The data directory

describe('the data directory (panel as root)', { skip: NOT_ROOT }, () => {
  let dataDir: string;
  let panel: TestPanel | undefined;
  const modeOf = (file: string) => statSync(file).mode & 0o7777;

  const suite = suiteScope();
  before(async () => {
    dataDir = hostDataDir();
    // As an operator may have made them, open to everyone, with a server folder of root's.
    chmodSync(dataDir, 0o755);
    mkdirSync(path.join(dataDir, 'servers', 'prepared'), { recursive: true, mode: 0o755 });
    chmodSync(path.join(dataDir, 'servers'), 0o755);
    writeFileSync(path.join(dataDir, 'servers', 'prepared', 'world.dat'), 'world\n');
    // An empty file is an empty SQLite database: one left readable by an older panel.
    if (testDialect === 'sqlite')
      writeFileSync(path.join(dataDir, 'panel.sqlite'), '', { mode: 0o644 });
    panel = await startPanel(suite, { SANDBOX: 'none', DATA_DIR: dataDir, JWT_SECRET: '' });
    rememberSecret(readFileSync(path.join(dataDir, 'jwt-secret'), 'utf8').trim());
  });

  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('tightens DATA_DIR and its servers folder from 0755 to 0711: traverse only', () => {
    assert.equal(modeOf(dataDir), 0o711);
    assert.equal(modeOf(path.join(dataDir, 'servers')), 0o711);
  });

  it('keeps the generated JWT secret 0600', () => {
    assert.equal(modeOf(path.join(dataDir, 'jwt-secret')), 0o600);
  });

  const SQLITE_ONLY = testDialect === 'sqlite' ? false : 'the database is PostgreSQL';
  it(
    'makes the SQLite database and its journal 0600, one that was 0644 too',
    { skip: SQLITE_ONLY },
    () => {
      const database = path.join(dataDir, 'panel.sqlite');
      const files = [database, `${database}-wal`, `${database}-shm`].filter((file) =>
        existsSync(file),
      );
      assert.ok(files.includes(database));
      for (const file of files) assert.equal(modeOf(file), 0o600, file);
    },
  );

  it('gives each server folder, new or already there, to the server user with mode 0700', async () => {
    assert.ok(panel);
    const admin = await register(panel, 'admin');
    await createServer(panel, admin, 'fresh');
    await createServer(panel, admin, 'prepared');
    const uids = new Set<number>();
    for (const name of ['fresh', 'prepared']) {
      const user = await serverUser(panel, name);
      uids.add(user.uid);
      const dir = path.join(dataDir, 'servers', name);
      const stat = statSync(dir);
      assert.equal(stat.mode & 0o7777, 0o700, name);
      assert.deepEqual([stat.uid, stat.gid], [user.uid, user.gid], name);
    }
    assert.equal(uids.size, 2, 'each server has a uid of its own');
    const kept = statSync(path.join(dataDir, 'servers', 'prepared', 'world.dat'));
    const prepared = await serverUser(panel, 'prepared');
    assert.deepEqual([kept.uid, kept.gid], [prepared.uid, prepared.gid]);
  });
});
