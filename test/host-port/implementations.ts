/**
 * The implementations of ServerHost the conformance suite runs against, and the one file of it
 * that knows what they are: this machine's host (src/host/local/) with each of its runtimes, a
 * sandboxed process and a Docker container (on the shared test engine, helpers/docker.ts); the
 * process runtime's with its files reached through file agents over their wire
 * (src/host/remote/); and a remote node's host (src/host/remote/node-host.ts) on the shared test
 * node (helpers/docker-nodes.ts). A new implementation adds an entry to `implementations`: how to
 * open a fresh machine, how the stand-in game server (test/fixtures/game-server.mjs) runs there,
 * and how a host is made again on the same data. The test bodies see only `Machine`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Duplex } from 'node:stream';
import { build } from 'esbuild';
import { bundleOptions } from '../../scripts/bundle-server.mjs';
import { panelId } from '../../src/data-dir.js';
import type { ServerConfig } from '../../src/domain/server.js';
import type { ServerHost } from '../../src/host/host.js';
import { createLocalHost } from '../../src/host/local/local-host.js';
import { createDockerRuntime } from '../../src/host/runtime/docker/docker-runtime.js';
import { createProcessRuntime } from '../../src/host/runtime/process/process-runtime.js';
import type { Runtime } from '../../src/host/runtime/runtime.js';
import { serverUserOf } from '../../src/host/runtime/server-user.js';
import { createNodeHost } from '../../src/host/remote/node-host.js';
import { RemoteFiles } from '../../src/host/remote/remote-files.js';
import { SILENT_LOGGER } from '../../src/log.js';
import { dockerForTests, imageGameServerCommand } from '../helpers/docker.js';
import { dockerNodesForTests } from '../helpers/docker-nodes.js';
import { fixtureFolder, gameServerScript } from '../helpers/fixture.js';
import { MemoryRecords, MemoryTemplates, type RecordFields } from './records.js';

/** One machine under test: a host, the records it reads, and how to make it again. */
export interface Machine {
  /** The host under test; a new one after `restartHost`. */
  readonly host: ServerHost;
  readonly records: MemoryRecords;
  readonly templates: MemoryTemplates;
  /**
   * Records a server that runs the stand-in game server with `flags` (fields of the record may
   * be set too) and makes its folder (`host.create`).
   */
  addServer(name: string, options?: { flags?: string[]; fields?: RecordFields }): Promise<void>;
  /**
   * A restart of the panel: the host lets go of its servers (they run on, `shutdown` without
   * stopping them) and a new host is made on the same data and records; it has not recovered yet.
   */
  restartHost(): Promise<ServerHost>;
  /** Stops and forgets every server, closes the host and removes its data. */
  close(): Promise<void>;
}

export interface Implementation {
  readonly name: string;
  /** Why it cannot run here, or false. */
  readonly skip: string | false;
  /**
   * Why the suites of the runtime (lifecycle, console, recovery) leave it out, when it differs
   * from another implementation only in its files.
   */
  readonly skipRuntime?: string;
  /** A fresh machine with no server. */
  open(): Promise<Machine>;
}

/** How the stand-in game server is recorded to run on a machine. */
type Launch = (
  flags: readonly string[],
) => Pick<ServerConfig, 'startCommand' | 'runtime' | 'image'>;

const quoted = (parts: readonly string[]): string =>
  parts.map((part) => JSON.stringify(part)).join(' ');

/** The stand-in game server as a process of the process runtime. */
const processLaunch: Launch = (flags) => ({
  startCommand: quoted([process.execPath, gameServerScript(), ...flags]),
  runtime: 'process',
  image: null,
});

/** A Docker engine for the process runtime's machine: none answers there, none is used. */
const NO_ENGINE = 'unix:///nonexistent/docker.sock';

/** How the machine's files are reached: its own storage, or file agents as child processes. */
type Files = 'storage' | 'agent';

async function openLocal(
  launch: Launch,
  dockerHost: string,
  through: Files = 'storage',
): Promise<Machine> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'host-port-'));
  const serversDir = path.join(dataDir, 'servers');
  // As the panel's start makes them (src/data-dir.ts): servers' own users must enter them.
  await chmod(dataDir, 0o711);
  await mkdir(serversDir, { mode: 0o711 });
  const records = new MemoryRecords();
  const templates = new MemoryTemplates();

  const makeHost = async (): Promise<ServerHost> => {
    const local = await createProcessRuntime({
      sandbox: 'auto',
      searchPath: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      dataDir,
      serversDir,
      serverUser: null,
      serverUidRange: { first: 200_000, last: 299_999 },
      readOnlyPaths: [fixtureFolder()],
      network: 'host',
    });
    const docker: Runtime = await createDockerRuntime({
      dockerHost,
      panelId: panelId(dataDir),
      network: 'none',
    });
    const users = local.serverUsers;
    agents = through === 'agent' ? new FileAgents(serversDir, users !== null) : null;
    return createLocalHost({
      serversDir,
      ownUsers: users !== null,
      userOf: (record) => (users === null ? null : serverUserOf(users, record.id)),
      runtimes: { process: local, docker },
      records,
      templates,
      log: SILENT_LOGGER,
      now: () => new Date(),
      diskGraceSeconds: 60,
      diskUsageTtlMs: 0,
      files: agents?.files,
    });
  };
  let agents: FileAgents | null = null;

  let host = await makeHost();
  return {
    get host() {
      return host;
    },
    records,
    templates,
    async addServer(name, options = {}) {
      records.add(name, { ...launch(options.flags ?? []), ...options.fields });
      await host.create(name);
    },
    async restartHost() {
      await host.shutdown({ stopServers: false });
      await host.close();
      await agents?.close();
      host = await makeHost();
      return host;
    },
    async close() {
      for (const name of await records.allNames()) (await host.discard(name)).purge();
      await host.shutdown({ stopServers: true });
      await host.close();
      await agents?.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A remote node's host (src/host/remote/node-host.ts) on the shared test node
 * (helpers/docker-nodes.ts), as the panel makes it for a node: the stand-in game server in a
 * container of the node's test image, each server's files a volume there answered by helpers
 * (let go of after 2 s idle, so the suites go through new ones too). A node runs containers
 * only, so every server runs in one. The machine is a panel of its own on the node (its
 * containers and volumes labelled with its id), removed at its close.
 */
async function openNode(): Promise<Machine> {
  if (!nodes.ok) throw new Error(nodes.why);
  const node = nodes.nodes[0];
  if (node === undefined) throw new Error('no node');
  const panel = `hp${randomBytes(4).toString('hex')}`;
  const records = new MemoryRecords();
  const templates = new MemoryTemplates();
  const agentFile = await agentBundle();
  const makeHost = () =>
    createNodeHost({
      node: node.name,
      connection: { dockerHost: node.dockerHost, tls: node.tls },
      panelId: panel,
      records,
      templates,
      userOf: (record) => ({ uid: NODE_UID + record.id, gid: NODE_UID + record.id }),
      log: SILENT_LOGGER,
      now: () => new Date(),
      diskGraceSeconds: 60,
      network: 'none',
      agentFile,
      helperIdleMs: 2_000,
    });
  let host = await makeHost();
  return {
    get host() {
      return host;
    },
    records,
    templates,
    async addServer(name, options = {}) {
      records.add(name, {
        startCommand: imageGameServerCommand(...(options.flags ?? [])),
        runtime: 'docker',
        image: node.image,
        ...options.fields,
      });
      await host.create(name);
    },
    async restartHost() {
      await host.shutdown({ stopServers: false });
      await host.close();
      host = await makeHost();
      return host;
    },
    async close() {
      await host.shutdown({ stopServers: true });
      await host.close();
      const mine = { label: [`game-panel.panel=${panel}`] };
      for (const container of await node.docker.listContainers({ all: true, filters: mine }))
        await node.docker.getContainer(container.Id).remove({ force: true });
      const { Volumes } = await node.docker.listVolumes({ filters: mine });
      for (const volume of Volumes) await node.docker.getVolume(volume.Name).remove();
    },
  };
}

/** The first uid of the servers' own users on the node (the server's id is added). */
const NODE_UID = 243_000;

/**
 * The machine's files through file agents (src/host/remote/file-agent.ts), one child process
 * per server on the same servers folder, each spoken to over its stdin and stdout as a helper
 * container on a node is: the wire, the agent and RemoteFiles are what is tested. The agent
 * runs from its source through tsx, so no build is needed; FILE_AGENT=dist/file-agent.mjs runs
 * the bundle `npm run build` makes instead. FILE_AGENT_LOG=1 shows the agents' own log.
 */
class FileAgents {
  readonly files: RemoteFiles;
  readonly #children = new Set<ChildProcess>();

  constructor(serversDir: string, chown: boolean) {
    const entry = process.env.FILE_AGENT;
    const command =
      entry === undefined
        ? ['--import', 'tsx', path.join(ROOT, 'src/host/remote/file-agent.ts')]
        : [path.resolve(ROOT, entry)];
    const args = [...command, serversDir, '--usage-ttl-ms=0', ...(chown ? ['--chown'] : [])];
    this.files = new RemoteFiles({
      serversDir,
      connect: async () => {
        const child = spawn(process.execPath, args, {
          cwd: ROOT,
          stdio: ['pipe', 'pipe', process.env.FILE_AGENT_LOG === '1' ? 'inherit' : 'ignore'],
        });
        this.#children.add(child);
        child.once('exit', () => this.#children.delete(child));
        await once(child, 'spawn');
        return Duplex.from({ readable: child.stdout, writable: child.stdin });
      },
    });
  }

  /** Ends every agent's stdin, and waits for them to exit. */
  async close(): Promise<void> {
    const exits = [...this.#children]
      .filter((child) => child.exitCode === null && child.signalCode === null)
      .map((child) => once(child, 'exit'));
    await this.files.close();
    await Promise.all(exits);
  }
}

let bundled: Promise<string> | undefined;
/** The file agent's bundle, built once per test process into a folder removed at its exit. */
function agentBundle(): Promise<string> {
  bundled ??= (async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'host-port-agent-'));
    process.once('exit', () => {
      rmSync(dir, { recursive: true, force: true });
    });
    const file = path.join(dir, 'file-agent.mjs');
    await build({
      ...bundleOptions(path.join(ROOT, 'src/host/remote/file-agent.ts'), file, []),
      sourcemap: false,
      logLevel: 'error',
    });
    return file;
  })();
  return bundled;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

const docker = await dockerForTests();
const nodes = await dockerNodesForTests(1);

export const implementations: readonly Implementation[] = [
  {
    name: 'local host, process runtime',
    skip: false,
    open: () => openLocal(processLaunch, NO_ENGINE),
  },
  {
    name: 'local host, process runtime, files through the file agent',
    skip: false,
    skipRuntime: 'its runtime is the local host’s process runtime, tested above',
    open: () => openLocal(processLaunch, NO_ENGINE, 'agent'),
  },
  {
    name: 'remote node host',
    skip: nodes.ok ? false : nodes.why,
    open: openNode,
  },
  {
    name: 'local host, docker runtime',
    skip: docker.ok ? false : docker.why,
    open: () => {
      if (!docker.ok) throw new Error(docker.why);
      const { image, dockerHost } = docker;
      return openLocal(
        (flags) => ({ startCommand: imageGameServerCommand(...flags), runtime: 'docker', image }),
        dockerHost,
      );
    },
  },
];
