/**
 * Real Docker engines standing in for remote nodes (issue 30; docs/testing.md): each a `dockerd`
 * in a network namespace of its own, joined to this machine by a veth pair, reached only over
 * mutual TLS on its own address, as an operator's node is. Never a mock, never a pull: the test
 * image of helpers/docker.ts is copied onto each through the Engine API when it lacks it.
 *
 * Node N: namespace `gpn-test-N`; this machine's side 10.231.N.1/24 (veth `gpn-h-N`), the node's
 * 10.231.N.2/24 (`gpn-n-N`); its engine at tcp://10.231.N.2:2376 (`--tlsverify`), and at
 * unix:///run/game-panel-test-node-N.sock for this fixture only; data root
 * /var/lib/game-panel-test-node-N, log /var/tmp/game-panel-dockerd-node-N.log, host name
 * `node-N` (a UTS namespace of its own, so each engine tells its own name). Each keeps the
 * engine's `bridge` network (10.232.N.0/24) so that containers publish ports on the node's
 * address, with iptables on: in its own namespace the rules are its own, this machine's are not
 * touched (without iptables, the engine's userland proxy alone would publish the ports).
 * `--live-restore`: containers outlive a stopped engine, as on a node whose engine restarts.
 *
 * The CA, the client's certificate and each engine's persist in /var/lib/game-panel-test-nodes,
 * so a later test file reads the same material and reuses the running engines; like the engine of
 * helpers/docker.ts, they are started once per machine, detached, under a lock file.
 *
 * Two pools: nodes 1… are shared by the test files that run at once, and never stopped; nodes
 * 11… (`{ stoppable: true }`) are leased to one test file at a time (until its process ends),
 * which may stop and start their engines, or cut them off: a rule of iptables in the node's
 * namespace drops every packet to the engine's port, so the node goes silent (no refusal, no
 * reset) while its engine and containers run on, as behind a dead link. A rule a killed run left
 * is removed when the node is next set up.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { engineClient, type EngineTls } from '../../src/host/remote/engine-connection.js';
import { makeTestCa } from './certificates.js';
import { answers, dockerForTests } from './docker.js';
import { fileLock } from './file-lock.js';

export interface DockerNode {
  /** `node-N`. */
  readonly name: string;
  /** The node's address, where its engine listens and its containers publish ports. */
  readonly address: string;
  /** `tcp://<address>:2376`. */
  readonly dockerHost: string;
  /** PEM texts: the CA that signed the engine's certificate, and a client certificate and key. */
  readonly tls: EngineTls;
  /**
   * A client of the engine over TLS; a call silent for 60 s fails. For streams that may stay
   * silent, make one with `engineClient(node, { timeoutMs: null })`.
   */
  readonly docker: Docker;
  /** The test image of helpers/docker.ts, loaded on the node. */
  readonly image: string;
  /** The node's network namespace (`ip netns`), for this machine's fixtures (helpers/node-sshd.ts). */
  readonly netns: string;
  /** The engine's unix socket, for this machine's fixtures only. */
  readonly socketPath: string;
  /** Stops the node's engine (its containers keep running); only for a stoppable node. */
  stop(): Promise<void>;
  /** Starts the node's engine again, once it answers over TLS. */
  start(): Promise<void>;
  /**
   * Cuts the node off: every packet to its engine's port is dropped in its namespace, those of
   * connections already open too; its engine and containers keep running. Only for a stoppable
   * node (and where iptables is installed).
   */
  cutOff(): Promise<void>;
  /** Lets packets to the node's engine through again (whether or not it was cut off). */
  reconnect(): Promise<void>;
}

export type DockerNodesForTests =
  | { readonly ok: true; readonly nodes: readonly DockerNode[] }
  | { readonly ok: false; readonly why: string };

const TLS_DIR = '/var/lib/game-panel-test-nodes';
const LOCK = '/var/tmp/game-panel-docker-nodes.lock';
const LEASE = '/var/tmp/game-panel-docker-nodes-stoppable.lease';
const FIRST_STOPPABLE = 11;
const PORT = 2376;
/** Ten years: the material persists on the machine; a test CA is never trusted elsewhere. */
const DAYS = 3650;
const PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const execFileAsync = promisify(execFile);

const found = new Map<string, Promise<DockerNodesForTests>>();

/**
 * `count` engines as nodes, and the test image on each; or why there cannot be any here (in CI,
 * where they can always be had, a failure instead). Shared nodes must not be stopped: a file
 * that stops one asks for `{ stoppable: true }` and waits for the other such files to end.
 */
export function dockerNodesForTests(
  count = 2,
  { stoppable = false }: { stoppable?: boolean } = {},
): Promise<DockerNodesForTests> {
  if (!Number.isInteger(count) || count < 1 || count > 9) throw new RangeError('1 to 9 nodes');
  const key = `${count}:${stoppable}`;
  let result = found.get(key);
  if (result === undefined) {
    result = find(count, stoppable).then((nodes) => {
      if (!nodes.ok && process.env.CI)
        throw new Error(`CI must run the tests of remote nodes, but: ${nodes.why}`);
      return nodes;
    });
    found.set(key, result);
  }
  return result;
}

const nodeAddress = (n: number) => `10.231.${n}.2`;
const hostAddress = (n: number) => `10.231.${n}.1`;
const netns = (n: number) => `gpn-test-${n}`;
const pidFile = (n: number) => `/run/game-panel-test-node-${n}.pid`;
const socket = (n: number) => `/run/game-panel-test-node-${n}.sock`;
const logFile = (n: number) => `/var/tmp/game-panel-dockerd-node-${n}.log`;

async function find(count: number, stoppable: boolean): Promise<DockerNodesForTests> {
  if (process.getuid?.() !== 0) return { ok: false, why: 'only root can start engines as nodes' };
  const dockerd = ['/usr/sbin/dockerd', '/usr/bin/dockerd'].find((file) => existsSync(file));
  if (dockerd === undefined) return { ok: false, why: 'dockerd is not installed' };
  if (!commandExists('ip')) return { ok: false, why: 'ip (iproute2) is not installed' };
  const main = await dockerForTests();
  if (!main.ok) return main;
  const first = stoppable ? FIRST_STOPPABLE : 1;
  const numbers = Array.from({ length: count }, (_, index) => first + index);
  if (stoppable) await lease();
  const release = await lock();
  try {
    const tls = material(numbers);
    for (const n of numbers) {
      const why = await ensureEngine(n, dockerd, tls);
      if (why !== null) return { ok: false, why };
    }
    const nodes = numbers.map((n) => node(n, dockerd, tls, main.image, stoppable));
    for (const each of nodes) await loadImage(main.docker, each.docker, main.image);
    return { ok: true, nodes };
  } catch (error) {
    return { ok: false, why: `the nodes could not be set up: ${String(error)}` };
  } finally {
    release();
  }
}

function node(
  n: number,
  dockerd: string,
  tls: EngineTls,
  image: string,
  stoppable: boolean,
): DockerNode {
  const address = nodeAddress(n);
  const dockerHost = `tcp://${address}:${PORT}`;
  const shared = () =>
    Promise.reject(
      new Error(
        `node-${n} is shared by the test files running at once: ask dockerNodesForTests(count, { stoppable: true }) for nodes this file may stop`,
      ),
    );
  return {
    name: `node-${n}`,
    address,
    dockerHost,
    tls,
    docker: engineClient({ dockerHost, tls }, { timeoutMs: 60_000 }),
    image,
    netns: netns(n),
    socketPath: socket(n),
    stop: stoppable ? () => stopEngine(n) : shared,
    start: stoppable
      ? async () => {
          const why = await ensureEngine(n, dockerd, tls);
          if (why !== null) throw new Error(why);
        }
      : shared,
    cutOff: stoppable ? () => cutOff(n) : shared,
    reconnect: stoppable ? () => reconnect(n) : shared,
  };
}

/** One test file at a time sets nodes up. */
const lock = (): Promise<() => void> => fileLock(LOCK, { waitMs: 360_000, staleMs: 300_000 });

/**
 * Leases the stoppable nodes to this test file's process until it ends; a lease whose process
 * is gone (a killed run) is taken over.
 */
async function lease(): Promise<void> {
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    const release = await lock();
    try {
      const holder = Number(readFileSync(LEASE, { encoding: 'utf8', flag: 'a+' }).trim());
      if (holder === process.pid) return;
      if (!(holder > 0 && alive(holder))) {
        writeFileSync(LEASE, String(process.pid));
        process.once('exit', () => {
          try {
            if (readFileSync(LEASE, 'utf8').trim() === String(process.pid)) rmSync(LEASE);
          } catch {
            // Gone already.
          }
        });
        return;
      }
    } finally {
      release();
    }
    if (Date.now() > deadline) throw new Error(`the stoppable nodes stay leased (${LEASE})`);
    await sleep(1000);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function commandExists(name: string): boolean {
  return PATH_ENV.split(':').some((dir) => existsSync(path.join(dir, name)));
}

function ip(args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryIp(args: string[]): string | null {
  try {
    return ip(args);
  } catch {
    return null;
  }
}

/**
 * The CA, the client's pair and the engines' certificates of nodes `numbers`, made when missing
 * or no longer signed by the CA on disk; the client's PEM texts.
 */
function material(numbers: readonly number[]): EngineTls {
  const ca = makeTestCa({ dir: TLS_DIR, days: DAYS, name: 'Game panel test nodes CA' });
  const authority = new X509Certificate(ca.caPem);
  const current = (name: string) => {
    const file = path.join(TLS_DIR, `${name}.crt`);
    if (!existsSync(file) || !existsSync(path.join(TLS_DIR, `${name}.key`))) return false;
    return new X509Certificate(readFileSync(file)).verify(authority.publicKey);
  };
  if (!current('client')) ca.issue('client', { usage: 'client' });
  for (const n of numbers)
    if (!current(`node-${n}`)) ca.issue(`node-${n}`, { altNames: [`IP:${nodeAddress(n)}`] });
  writeFileSync(path.join(TLS_DIR, 'daemon.json'), '{}\n');
  return {
    ca: ca.caPem.toString(),
    cert: readFileSync(path.join(TLS_DIR, 'client.crt'), 'utf8'),
    key: readFileSync(path.join(TLS_DIR, 'client.key'), 'utf8'),
  };
}

/** The namespace and veth pair of node `n`, made (again) unless they are as they must be. */
function network(n: number): void {
  const ns = netns(n);
  const outer = `gpn-h-${n}`;
  const inner = `gpn-n-${n}`;
  const up = (text: string | null, address: string) =>
    text !== null && text.includes(`inet ${address}/24`) && /[<,]UP[,>]/.test(text);
  if (
    up(tryIp(['-n', ns, 'addr', 'show', 'dev', inner]), nodeAddress(n)) &&
    up(tryIp(['addr', 'show', 'dev', outer]), hostAddress(n))
  )
    return;
  const clash = ip(['-o', '-4', 'addr', 'show', 'to', `10.231.${n}.0/24`])
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.includes(` ${outer} `));
  if (clash.length > 0)
    throw new Error(`10.231.${n}.0/24 is taken on this machine: ${clash.join('; ')}`);
  tryIp(['link', 'del', outer]);
  tryIp(['netns', 'del', ns]);
  ip(['netns', 'add', ns]);
  ip(['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner, 'netns', ns]);
  ip(['addr', 'add', `${hostAddress(n)}/24`, 'dev', outer]);
  ip(['link', 'set', outer, 'up']);
  ip(['-n', ns, 'addr', 'add', `${nodeAddress(n)}/24`, 'dev', inner]);
  ip(['-n', ns, 'link', 'set', inner, 'up']);
  ip(['-n', ns, 'link', 'set', 'lo', 'up']);
}

/** The pid of node `n`'s dockerd, if one runs. */
function enginePid(n: number): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(n), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!(pid > 0)) return undefined;
  try {
    // The pid may be another process's since (a reboot; /run need not be a tmpfs): only the
    // dockerd that names this pid file is node n's.
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const named = args.indexOf('--pidfile');
    return path.basename(args[0] ?? '') === 'dockerd' && args[named + 1] === pidFile(n)
      ? pid
      : undefined;
  } catch {
    return undefined;
  }
}

/** The rule that cuts node `n` off: packets to its engine's port dropped, in its namespace. */
const cutRule = ['INPUT', '-p', 'tcp', '--dport', String(PORT), '-j', 'DROP'];

/** iptables in node `n`'s namespace (nsenter, as for its engine); rejects on failure. */
async function iptablesOf(n: number, args: string[]): Promise<void> {
  await execFileAsync(
    'nsenter',
    [`--net=/run/netns/${netns(n)}`, '--', 'iptables', '-w', ...args],
    { env: { PATH: PATH_ENV } },
  );
}

async function cutOff(n: number): Promise<void> {
  if (!commandExists('iptables')) throw new Error('iptables is not installed: no node is cut off');
  await reconnect(n);
  await iptablesOf(n, ['-I', ...cutRule]);
}

/** Removes every copy of the rule that cuts node `n` off. */
async function reconnect(n: number): Promise<void> {
  if (!commandExists('iptables') || !existsSync(`/run/netns/${netns(n)}`)) return;
  for (;;) {
    try {
      await iptablesOf(n, ['-D', ...cutRule]);
    } catch {
      return; // No such rule (left).
    }
  }
}

/**
 * Node `n`'s engine answering over TLS: as it runs, else started (again); null, or why not.
 * One that runs without answering over TLS (still starting, or with other certificates) gets a
 * while, then is stopped and started anew.
 */
async function ensureEngine(n: number, dockerd: string, tls: EngineTls): Promise<string | null> {
  network(n);
  // A run killed while it had the node cut off left the rule behind.
  if (n >= FIRST_STOPPABLE) await reconnect(n);
  const docker = engineClient(
    { dockerHost: `tcp://${nodeAddress(n)}:${PORT}`, tls },
    {
      timeoutMs: 2000,
    },
  );
  if (await answers(docker)) return null;
  if (enginePid(n) !== undefined) {
    if (await answers(docker, 15_000)) return null;
    await stopEngine(n);
  }
  rmSync(pidFile(n), { force: true });
  startEngine(n, dockerd);
  return (await answers(docker, 60_000))
    ? null
    : `the engine of node-${n} did not answer over TLS within 60 s (see ${logFile(n)})`;
}

/**
 * Starts node `n`'s dockerd, detached, in its network namespace (nsenter rather than
 * `ip netns exec`, whose fresh /sys hides the cgroup hierarchies dockerd needs) and a UTS
 * namespace named after it; with only PATH from the environment.
 */
function startEngine(n: number, dockerd: string): void {
  const certificate = (name: string) => path.join(TLS_DIR, name);
  const log = openSync(logFile(n), 'a');
  mkdirSync(`/run/game-panel-test-node-${n}`, { recursive: true });
  const child = spawn(
    'nsenter',
    [
      `--net=/run/netns/${netns(n)}`,
      '--',
      'unshare',
      '--uts',
      '--',
      'sh',
      '-c',
      'hostname "$0" && exec "$@"',
      `node-${n}`,
      dockerd,
      '--config-file',
      certificate('daemon.json'),
      '--storage-driver=vfs',
      `--iptables=${commandExists('iptables')}`,
      '--ip6tables=false',
      '--live-restore',
      '--bip',
      `10.232.${n}.1/24`,
      '--cgroup-parent',
      `game-panel-test-node-${n}`,
      '--data-root',
      `/var/lib/game-panel-test-node-${n}`,
      '--exec-root',
      `/run/game-panel-test-node-${n}`,
      '--pidfile',
      pidFile(n),
      '--host',
      `unix://${socket(n)}`,
      '--host',
      `tcp://${nodeAddress(n)}:${PORT}`,
      '--tlsverify',
      '--tlscacert',
      certificate('ca.crt'),
      '--tlscert',
      certificate(`node-${n}.crt`),
      '--tlskey',
      certificate(`node-${n}.key`),
    ],
    { detached: true, stdio: ['ignore', log, log], cwd: '/', env: { PATH: PATH_ENV } },
  );
  child.unref();
  closeSync(log);
}

/** Stops node `n`'s dockerd (SIGTERM, then SIGKILL after 30 s) and waits until it is gone. */
async function stopEngine(n: number): Promise<void> {
  const pid = enginePid(n);
  if (pid === undefined) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (alive(pid)) {
    if (Date.now() > deadline) process.kill(pid, 'SIGKILL');
    await sleep(100);
  }
}

/** The test image copied from the main engine onto `node`, unless it has it. */
async function loadImage(from: Docker, to: Docker, image: string): Promise<void> {
  try {
    await to.getImage(image).inspect();
    return;
  } catch {
    // Not there yet: loaded below.
  }
  const saved = await from.getImage(image).get();
  const loading = await to.loadImage(saved);
  await new Promise<void>((resolve, reject) => {
    to.modem.followProgress(loading, (error) => {
      if (error) reject(error);
      else resolve();
    });
  });
  await to.getImage(image).inspect();
}
