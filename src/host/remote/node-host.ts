/**
 * The ServerHost of a remote node (docs/nodes.md, "A node's host"): the panel's own supervisor,
 * console and config-file code, as on its machine (src/host/local/local-host.ts), over
 *
 * - the node's engine as the runtime (./node-runtime.ts): every server in a container there,
 *   its folder bind-mounted from its volume;
 * - the servers' files through file agents in helper containers on the node
 *   (./helper-container.ts, ./remote-files.ts): each volume touched by the panel's storage code
 *   inside a container that sees nothing else;
 * - the servers' folders as volumes: made (and given to the server's user) at a server's
 *   creation, removed after its deletion.
 *
 * A node runs containers only: a server whose template runs a process on the host is refused
 * there with a clear reason (409).
 */
import type { Logger } from '../../log.js';
import type { ServerHost, ServerRecords, TemplateSource, RegistryPolicy } from '../host.js';
import type { EventExit, ServerEventKind, ServerRecord } from '../../domain/server.js';
import { createLocalHost, type ServerFolders } from '../local/local-host.js';
import type { FileOwner } from '../local/storage/types.js';
import { StartRefusedError, type LimitName, type Runtime } from '../runtime/runtime.js';
import { ENGINE_CALL_MS } from '../runtime/docker/engine.js';
import { engineClient, type EngineConnection } from './engine-connection.js';
import { HELPER_IDLE_MS, HelperContainers } from './helper-container.js';
import { HELPER_SERVERS } from './helper-image.js';
import { createNodeRuntime } from './node-runtime.js';
import { RemoteFiles } from './remote-files.js';

export interface NodeHostOptions {
  /** The node's name (`eu-1`). */
  readonly node: string;
  readonly connection: EngineConnection;
  readonly panelId: string;
  /** The records of the servers on this node only (routed-host.ts `recordsOn`). */
  readonly records: ServerRecords;
  readonly templates: TemplateSource;
  /** Each server's own user on the node (never root): its files and its processes. */
  readonly userOf: (record: ServerRecord) => FileOwner;
  readonly log: Logger;
  readonly now: () => Date;
  readonly diskGraceSeconds: number;
  readonly network: 'host' | 'none';
  readonly registries?: RegistryPolicy | undefined;
  /** See SupervisorDeps.refuseStart: the node's maintenance. */
  readonly refuseStart?: (() => Promise<void>) | undefined;
  readonly onServerEvent?:
    ((server: string, kind: ServerEventKind, exit?: EventExit) => void) | undefined;
  /** How long a helper is kept after its last use (HELPER_IDLE_MS). */
  readonly helperIdleMs?: number | undefined;
  /** The file agent's bundle (dist/file-agent.mjs by default). */
  readonly agentFile?: string | undefined;
  /** See DockerRuntimeOptions.engineReturnAttempts (a minute by default); tests shorten it. */
  readonly engineReturnAttempts?: number | undefined;
}

/** The runtime of a template that runs a process on the host: none on a node. */
function noProcesses(node: string): Runtime {
  const refuse = (): never => {
    throw new StartRefusedError(
      `node ${node} runs servers in containers only: give the template a Docker image, or place the server on local`,
    );
  };
  return {
    kind: 'process',
    // Every limit, so that the start reaches `start` and is refused for what it is: nothing
    // ever runs here.
    enforces: new Set<LimitName>(['memoryBytes', 'cpuPercent', 'pids']),
    description: `node ${node}: no servers as processes`,
    isolated: true,
    start: () => Promise.resolve().then(refuse),
    reap: () => Promise.resolve(false),
  };
}

export async function createNodeHost(options: NodeHostOptions): Promise<ServerHost> {
  const { node, connection, panelId } = options;
  const ownerOf = async (server: string): Promise<FileOwner> => {
    const record = await options.records.find(server);
    if (record === undefined) throw new Error(`${server} is not a server on node ${node}`);
    return options.userOf(record);
  };
  const helpers = new HelperContainers({
    api: engineClient(connection, { timeoutMs: ENGINE_CALL_MS }),
    streams: engineClient(connection, { timeoutMs: null }),
    panelId,
    userOf: ownerOf,
    log: options.log,
    ...(options.agentFile === undefined ? {} : { agentFile: options.agentFile }),
  });
  const files = new RemoteFiles({
    connect: (server) => helpers.connect(server),
    serversDir: HELPER_SERVERS,
    idleMs: options.helperIdleMs ?? HELPER_IDLE_MS,
  });
  const folders: ServerFolders = {
    // The helper makes the volume and gives it to the server's user; the agent, the folder.
    create: (name, owner) => files.create(name, owner),
    directoryOf: (name) => files.directoryOf(name),
    diskUsage: (name) => files.diskUsage(name),
    discard: (name) =>
      Promise.resolve({
        // The volume stays until the deletion is through: nothing to put back.
        restore: () => Promise.resolve(),
        purge: () => {
          void (async () => {
            await files.closeServer(name);
            await helpers.settled();
            // A helper whose removal failed (its node did not answer then) holds the volume.
            await helpers.removeLeftovers(name);
            await helpers.volumes.remove(name);
          })().catch((error: unknown) => {
            options.log.warn(
              { node, server: name, err: error },
              'the volume of a deleted server could not be removed from its node',
            );
          });
        },
      }),
    // A restore cut short is finished by the next helper of its server before it serves
    // (`--finish-restores`): the volume is reached through a helper only.
    finishRestores: () => Promise.resolve(),
    async removeLeftovers() {
      try {
        await helpers.removeLeftovers();
      } catch (error) {
        options.log.warn({ node, err: error }, 'helper containers left on a node not removed');
      }
    },
  };
  const docker = await createNodeRuntime({
    node,
    connection,
    panelId,
    network: options.network,
    engineReturnAttempts: options.engineReturnAttempts,
  });
  const host = createLocalHost({
    serversDir: HELPER_SERVERS,
    ownUsers: true,
    userOf: options.userOf,
    runtimes: { process: noProcesses(node), docker },
    records: options.records,
    templates: options.templates,
    log: options.log,
    now: options.now,
    diskGraceSeconds: options.diskGraceSeconds,
    registries: options.registries,
    onServerEvent: options.onServerEvent,
    refuseStart: options.refuseStart,
    files,
    folders,
    checkPorts: false,
  });
  return {
    ...host,
    async close() {
      await host.close();
      await files.close();
      await helpers.settled();
    },
  };
}
