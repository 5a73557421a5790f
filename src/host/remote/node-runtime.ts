/**
 * The docker runtime on a remote node's engine (issue 30; docs/nodes.md "Servers on a node"):
 * the same runtime as on the panel's own engine (src/host/runtime/docker/docker-runtime.ts),
 * given the node's engine as clients made from its connection, and the server's folder inside
 * the server's volume on the node instead of a folder on the panel's disk.
 *
 * The layout (docs/nodes.md): server `name`'s data is the volume
 * `game-panel-<panelId>-<name>`; the file agent mounts it at /servers and keeps the server's
 * folder at `/servers/<name>`; the server's container binds that folder only, at its
 * `<Mountpoint>/<name>` as the node's engine tells it.
 */
import type Docker from 'dockerode';
import { createDockerRuntime } from '../runtime/docker/docker-runtime.js';
import { ENGINE_CALL_MS, engineCall, reasonOf, statusOf } from '../runtime/docker/engine.js';
import { RuntimeUnavailableError, StartRefusedError, type Runtime } from '../runtime/runtime.js';
import { engineClient, type EngineConnection } from './engine-connection.js';
import { volumeName } from './node-volumes.js';

/**
 * The server's folder on the engine `docker` (`<Mountpoint>/<name>` of its volume), for
 * `serverFolder`. Rejects with StartRefusedError when the server has no volume there, with
 * RuntimeUnavailableError when the engine cannot be reached.
 */
export function volumeServerFolder(
  docker: Docker,
  where: string,
  panelId: string,
): (name: string) => Promise<string> {
  const call = engineCall(where, { deadlineMs: ENGINE_CALL_MS });
  return async (name) => {
    // A server's name is one plain path segment (the domain's rule); held to it here as well,
    // since it becomes part of a path on the node.
    if (!/^(?!\.{1,2}$)[A-Za-z0-9_.-]+$/.test(name))
      throw new StartRefusedError(`${JSON.stringify(name)} cannot name a folder on ${where}`);
    const volume = volumeName(panelId, name);
    let mountpoint: unknown;
    try {
      mountpoint = (await call(() => docker.getVolume(volume).inspect())).Mountpoint;
    } catch (error) {
      if (error instanceof RuntimeUnavailableError) throw error;
      if (statusOf(error) === 404)
        throw new StartRefusedError(`${name} has no volume on ${where} (${volume})`);
      throw new StartRefusedError(
        `${where} cannot tell the volume of ${name}: ${reasonOf(error)}`,
        {
          cause: error,
        },
      );
    }
    // A volume driver that keeps its data off the node's disk has no path to bind.
    if (typeof mountpoint !== 'string' || !mountpoint.startsWith('/'))
      throw new StartRefusedError(`the volume ${volume} on ${where} has no folder on its disk`);
    return `${mountpoint.replace(/\/+$/, '')}/${name}`;
  };
}

export interface NodeRuntimeOptions {
  /** The node's name, for reasons and the log (`node eu-1`). */
  readonly node: string;
  readonly connection: EngineConnection;
  readonly panelId: string;
  readonly network: 'host' | 'none';
  /** See DockerRuntimeOptions.engineReturnAttempts (a minute by default). */
  readonly engineReturnAttempts?: number | undefined;
}

/**
 * The docker runtime of a node: its engine reached over its connection (mutual TLS or SSH),
 * servers' folders in their volumes. Throws InvalidEngineConnectionError for a connection that
 * validateConnection refuses.
 */
export function createNodeRuntime(options: NodeRuntimeOptions): Promise<Runtime> {
  const where = `node ${options.node}`;
  const client = (timeoutMs: number | null) => engineClient(options.connection, { timeoutMs });
  return createDockerRuntime({
    engine: { where, client },
    panelId: options.panelId,
    network: options.network,
    serverFolder: volumeServerFolder(client(ENGINE_CALL_MS), where, options.panelId),
    ...(options.engineReturnAttempts === undefined
      ? {}
      : { engineReturnAttempts: options.engineReturnAttempts }),
  });
}
