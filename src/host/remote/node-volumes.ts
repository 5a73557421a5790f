/**
 * The servers' volumes on a node (docs/nodes.md, "Files on a node"): each server's data is the
 * Docker volume `game-panel-<panelId>-<server>`, labelled as the server's container is
 * (PANEL_LABEL, SERVER_LABEL).
 *
 * The layout is fixed, for the file agent and the server's own container alike: the agent's
 * helper mounts the volume at HELPER_SERVERS (`/servers`) and the server's folder is
 * `/servers/<server>`; on the node that folder is `<the volume's Mountpoint>/<server>`
 * (`volumeServerFolder` in ./node-runtime.ts), which the game container bind-mounts. The volume's root belongs
 * to the server's uid:gid, mode 0700: the agent runs as that user and writes beside the server's
 * folder (a restore's `.restoring~…`, the temporary files of writes). A new volume's root is the
 * engine's (root's), so it is given to the server's user by a one-shot container of the helper
 * image, run as root with every capability dropped but CHOWN, no network, then removed.
 */
import type Docker from 'dockerode';
import { PANEL_LABEL, SERVER_LABEL } from '../runtime/docker/container-spec.js';
import { engineDeadline, reasonOf, statusOf } from '../runtime/docker/engine.js';
import { HELPER_NODE, HELPER_SERVERS } from './helper-image.js';

/** On a helper container of the panel's (and its volume's one-shot chown): the server's name. */
export const HELPER_LABEL = 'game-panel.helper';

/** The name of server `server`'s volume on a node. */
export const volumeName = (panelId: string, server: string): string =>
  `game-panel-${panelId}-${server}`;

/** A server's volume could not be made ready; the message says why. */
export class NodeVolumeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NodeVolumeError';
  }
}

/** How long the one-shot chown may take, from its create to its removal. */
const CHOWN_DEADLINE_MS = 30_000;

const deadline = engineDeadline((message) => new NodeVolumeError(message));

export interface NodeVolumesOptions {
  /** The node's engine, for short calls. */
  readonly docker: Docker;
  readonly panelId: string;
}

/** The servers' volumes on one node. */
export class NodeVolumes {
  readonly #docker: Docker;
  readonly #panelId: string;
  /** `<server>\n<uid>:<gid>` of the volumes made ready by this panel since it started. */
  readonly #ready = new Map<string, Promise<void>>();

  constructor(options: NodeVolumesOptions) {
    this.#docker = options.docker;
    this.#panelId = options.panelId;
  }

  /**
   * Server `server`'s volume, made when missing, its root given to `owner` (once per panel run
   * and owner: the chown is idempotent, so a volume left half made by an earlier run is mended).
   * `image`: the helper image (ensureHelperImage), which runs the chown. Answers its name.
   */
  async ensure(
    server: string,
    owner: { readonly uid: number; readonly gid: number },
    image: string,
  ): Promise<string> {
    const key = `${server}\n${owner.uid}:${owner.gid}`;
    let ready = this.#ready.get(key);
    if (ready === undefined) {
      ready = this.#make(server, owner, image);
      this.#ready.set(key, ready);
      ready.catch(() => this.#ready.delete(key));
    }
    await ready;
    return volumeName(this.#panelId, server);
  }

  async #make(
    server: string,
    owner: { readonly uid: number; readonly gid: number },
    image: string,
  ): Promise<void> {
    if (!Number.isSafeInteger(owner.uid) || !Number.isSafeInteger(owner.gid) || owner.uid <= 0)
      throw new NodeVolumeError('a server on a node needs its own user, never root');
    const name = volumeName(this.#panelId, server);
    try {
      await deadline(this.#docker.getVolume(name).inspect(), 'answer');
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
      try {
        await deadline(
          this.#docker.createVolume({
            Name: name,
            Labels: { [PANEL_LABEL]: this.#panelId, [SERVER_LABEL]: server },
          }),
          'make the volume',
        );
      } catch (failure) {
        if (failure instanceof NodeVolumeError) throw failure;
        throw new NodeVolumeError(`the volume ${name} could not be made: ${reasonOf(failure)}`, {
          cause: failure,
        });
      }
    }
    await this.#chown(server, name, owner, image);
  }

  /** Gives the volume's root to `owner` (mode 0700) from a one-shot root container, removed. */
  async #chown(
    server: string,
    volume: string,
    owner: { readonly uid: number; readonly gid: number },
    image: string,
  ): Promise<void> {
    // Root here has CAP_CHOWN but not CAP_FOWNER: it may chmod only what is its own. So a root
    // that is not as it should be is taken back first, then given away; one that is (a volume
    // this panel readied before a restart) is left alone: the chown holds whatever it finds.
    const dir = JSON.stringify(HELPER_SERVERS);
    const script = [
      `const fs = require('node:fs');`,
      `const now = fs.statSync(${dir});`,
      `if (now.uid !== ${owner.uid} || now.gid !== ${owner.gid} || (now.mode & 0o7777) !== 0o700) {`,
      `fs.chownSync(${dir}, 0, 0); fs.chmodSync(${dir}, 0o700); fs.chownSync(${dir}, ${owner.uid}, ${owner.gid});`,
      `}`,
    ].join(' ');
    const container = await deadline(
      this.#docker.createContainer({
        Image: image,
        Entrypoint: [HELPER_NODE],
        Cmd: ['-e', script],
        User: '0:0',
        Labels: { [PANEL_LABEL]: this.#panelId, [HELPER_LABEL]: server },
        NetworkDisabled: true,
        HostConfig: {
          Binds: [`${volume}:${HELPER_SERVERS}:rw,nocopy`],
          NetworkMode: 'none',
          CapDrop: ['ALL'],
          CapAdd: ['CHOWN'],
          SecurityOpt: ['no-new-privileges'],
          ReadonlyRootfs: true,
          RestartPolicy: { Name: 'no' },
          Memory: 128 * 1024 * 1024,
          PidsLimit: 32,
        },
      }),
      'make the volume’s chown container',
    );
    try {
      const exit = await deadline(
        (async () => {
          const waited = container.wait({ condition: 'next-exit' }) as Promise<{
            StatusCode?: number;
          }>;
          await container.start();
          return (await waited).StatusCode;
        })(),
        'run the volume’s chown',
        CHOWN_DEADLINE_MS,
      );
      if (exit !== 0)
        throw new NodeVolumeError(
          `the volume ${volume} could not be given to its server's user (exit ${String(exit)})`,
        );
    } finally {
      await deadline(container.remove({ force: true }), 'remove the chown container').catch(
        () => undefined,
      );
    }
  }

  /** Removes server `server`'s volume (its helper must be gone); a missing one is no error. */
  async remove(server: string): Promise<void> {
    for (const key of this.#ready.keys())
      if (key.startsWith(`${server}\n`)) this.#ready.delete(key);
    try {
      await deadline(
        this.#docker.getVolume(volumeName(this.#panelId, server)).remove(),
        'remove the volume',
      );
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
  }
}
