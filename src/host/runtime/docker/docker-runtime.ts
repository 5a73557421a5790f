/**
 * Runs each game server in a Docker container, through the Docker Engine API (dockerode); never
 * the `docker` command. Images are pulled by the host before the start that needs them
 * (`images`, in ./images.ts); a start whose image is still missing is refused.
 *
 * One container per start, named `game-panel-<panelId>-<server>` and labelled with both, made
 * from the server's image and its current configuration (./container-spec.ts), removed once
 * its exit has been read:
 * - the server's folder bind-mounted read-write at /home/container, its working directory (the
 *   path Pterodactyl's images expect); a read-only root file system and a small private /tmp;
 * - no capability, `no-new-privileges`, never root: the server's own user, the owner of its
 *   folder (`LaunchSpec.user`), else the panel's own user;
 * - only the environment the process runtime gives (none of the panel's secrets);
 * - the kernel holds it to its memory (no swap), CPU and pids limits;
 * - no published port; the daemon's `bridge` network, or none at all (SERVER_NETWORK=none, or
 *   an engine without a bridge).
 * Standard input, output and error go through an attach stream made before the start, so no
 * output is lost and the console works as with a process (./container-process.ts). A container
 * outlives a panel that was killed: the next panel attaches to it again ({@link Runtime.adopt}).
 * The engine is reached, and its errors read, through ./engine.ts; every short call has a
 * deadline (ENGINE_CALL_MS).
 *
 * The engine is the panel's own (`dockerHost`) or a node's, given as clients (`engine`), with
 * the server's folder in its volume (`serverFolder`); an install's script is put into its
 * container through the engine's API, never mounted from the panel's disk (docs/nodes.md
 * "Servers on a node").
 */
import { constants } from 'node:os';
import { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { withDeadline } from '../deadline.js';
import {
  containerOptions,
  INSTALL_LABEL,
  installScriptArchive,
  PANEL_LABEL,
  PROGRAM_FOLDERS,
  SERVER_LABEL,
} from './container-spec.js';
import {
  containerHistory,
  containerProcess,
  ENGINE_RETURN_ATTEMPTS,
  never,
  type ContainerEngine,
} from './container-process.js';
import { ENGINE_CALL_MS, engineCall, engineOptions, reasonOf, statusOf } from './engine.js';
import { engineImages } from './images.js';
import { withShell } from '../shells.js';
import {
  RuntimeUnavailableError,
  StartError,
  StartRefusedError,
  type ExitInfo,
  type LaunchSpec,
  type LeftoverProcess,
  type LimitName,
  type Runtime,
  type RunningProcess,
} from '../runtime.js';

/**
 * An engine given as clients of it: a node's, reached as its connection says
 * (src/host/remote/engine-connection.ts `engineClient`).
 */
export interface DockerEngine {
  /** Names the engine in reasons and the start-up line (`node eu-1`); never holds a secret. */
  readonly where: string;
  /**
   * A client of the engine; `timeoutMs`: how long a connection may stay silent, or null for
   * streams that may (attach, waits, pulls). Called twice, once for each kind.
   */
  client(timeoutMs: number | null): Docker;
}

export type DockerRuntimeOptions = (
  | {
      /** `DOCKER_HOST`; null: the local socket. */
      readonly dockerHost: string | null;
      /** `DOCKER_CERT_PATH`: ca.pem, cert.pem and key.pem for an `https://` engine; null: none. */
      readonly dockerCertPath?: string | null;
      readonly engine?: undefined;
    }
  | { readonly engine: DockerEngine; readonly dockerHost?: undefined }
) & {
  /** Names this panel's containers (label `game-panel.panel`), so two panels never share one. */
  readonly panelId: string;
  readonly network: 'host' | 'none';
  /**
   * The server's folder as the engine's machine names it, bind-mounted into the server's
   * container and its install's; default: the spec's `cwd` (the engine shares the panel's
   * disk). On a node: the folder in the server's volume (docs/nodes.md "Servers on a node").
   * Rejects with RuntimeUnavailableError when the engine cannot be reached, or with
   * StartRefusedError when the server has no folder there; any other failure refuses the start
   * with its message.
   */
  readonly serverFolder?: (name: string) => Promise<string>;
  /**
   * How long a container's wait and attach ask again, a second apart, for an engine that went
   * away while the container ran, before its end is told unknown (`ExitInfo.lost`); default a
   * minute (ENGINE_RETURN_ATTEMPTS).
   */
  readonly engineReturnAttempts?: number;
};

/** How often a running container is asked after besides the engine's wait (see waitFor). */
const WATCH_MS = 10_000;
/** How long the start-up ping may take before the engine is said to be unreachable. */
const PING_TIMEOUT_MS = 3_000;
/** Signal names by number, to tell an exit code above 128 as the signal that ended the server. */
const SIGNAL_NAMES = new Map(
  Object.entries(constants.signals).map(([name, number]) => [number, name] as const),
);

export async function createDockerRuntime(options: DockerRuntimeOptions): Promise<Runtime> {
  const { where, api, streams } = clientsOf(options);
  // Short calls have a deadline whatever the transport; a pull's request waits for a registry.
  const call = engineCall(where, { deadlineMs: ENGINE_CALL_MS });
  const open = engineCall(where);
  const returnAttempts = options.engineReturnAttempts ?? ENGINE_RETURN_ATTEMPTS;

  /** The bind source of server `spec.name`'s folder (see DockerRuntimeOptions.serverFolder). */
  const folderOf = async (spec: LaunchSpec): Promise<string> => {
    if (options.serverFolder === undefined) return spec.cwd;
    try {
      return await options.serverFolder(spec.name);
    } catch (error) {
      if (error instanceof RuntimeUnavailableError || error instanceof StartRefusedError)
        throw error;
      throw new StartRefusedError(
        `the folder of ${spec.name} on ${where} cannot be found: ${reasonOf(error)}`,
        { cause: error },
      );
    }
  };

  /** `bridge` when the engine has it and servers may have a network; else `none`. */
  const networkMode = async (): Promise<'bridge' | 'none'> => {
    if (options.network === 'none') return 'none';
    try {
      await call(() => api.getNetwork('bridge').inspect());
      return 'bridge';
    } catch (error) {
      if (statusOf(error) === 404) return 'none';
      throw error;
    }
  };

  /** This panel's containers of server `name`, running or not. */
  const containersOf = (name: string) =>
    call(() =>
      api.listContainers({
        all: true,
        filters: { label: [`${PANEL_LABEL}=${options.panelId}`, `${SERVER_LABEL}=${name}`] },
      }),
    );

  const remove = async (id: string): Promise<void> => {
    try {
      await call(() => api.getContainer(id).remove({ force: true, v: true }));
    } catch (error) {
      // Gone already, or being removed by the engine.
      if (statusOf(error) !== 404 && statusOf(error) !== 409) throw error;
    }
  };

  /** This panel's install containers of server `name`. */
  const installsOf = (name: string) =>
    call(() =>
      api.listContainers({
        all: true,
        filters: { label: [`${PANEL_LABEL}=${options.panelId}`, `${INSTALL_LABEL}=${name}`] },
      }),
    );

  /** Removes every container of server `name`, its install's included. */
  const removeAll = async (name: string): Promise<boolean> => {
    const found = [...(await containersOf(name)), ...(await installsOf(name))];
    for (const container of found) await remove(container.Id);
    return found.length > 0;
  };

  /**
   * Whether an image has `program` (a path, or a name on the servers' PATH), asked of a container
   * made from it and never started (the engine reads its files for the archive endpoint), then
   * removed. Answered once per image content and program.
   */
  const imagePrograms = new Map<string, Promise<boolean>>();
  const imageHas = async (image: string, program: string): Promise<boolean> => {
    const { Id } = await call(() => api.getImage(image).inspect());
    const key = `${Id}\n${program}`;
    let known = imagePrograms.get(key);
    if (known === undefined) {
      known = probeImage(Id, program);
      imagePrograms.set(key, known);
      known.catch(() => imagePrograms.delete(key));
    }
    return known;
  };
  const probeImage = async (imageId: string, program: string): Promise<boolean> => {
    const container = await call(() =>
      api.createContainer({
        Image: imageId,
        Entrypoint: [program],
        Labels: { [PANEL_LABEL]: options.panelId },
        NetworkDisabled: true,
        HostConfig: { NetworkMode: 'none', CapDrop: ['ALL'], RestartPolicy: { Name: 'no' } },
      }),
    );
    try {
      const paths = program.includes('/')
        ? [program]
        : PROGRAM_FOLDERS.map((folder) => `${folder}/${program}`);
      for (const file of paths) {
        try {
          await call(() => container.infoArchive({ path: file }));
          return true;
        } catch (error) {
          if (statusOf(error) !== 404) throw error;
        }
      }
      return false;
    } finally {
      await remove(container.id);
    }
  };

  /** How a stopped container ended, read from its inspect; then it is removed. */
  const readExit = async (id: string): Promise<ExitInfo> => {
    let exit: ExitInfo = { code: null, signal: 'SIGKILL', outOfMemory: false };
    try {
      const state = (await call(() => api.getContainer(id).inspect())).State;
      exit = exitOf(state.ExitCode, state.OOMKilled);
    } catch (error) {
      // Removed behind the panel's back: it was ended, and how is not known.
      if (statusOf(error) !== 404) throw error;
    }
    await remove(id);
    return exit;
  };

  /**
   * Resolves once the container has stopped, whatever happens to the connection meanwhile; never
   * once `letGo` is aborted (the panel let go of the container, which runs on). The engine's
   * wait answers at the exit; since a wait whose engine went away may never answer at all (its
   * connection gone without a word), the container is also asked after every WATCH_MS, and
   * every second while its engine does not answer: after `returnAttempts` seconds of that, its
   * end is not known (`lost`).
   */
  const waitFor = async (id: string, letGo: AbortSignal): Promise<ExitInfo> => {
    const answered = new AbortController();
    const signal = AbortSignal.any([letGo, answered.signal]);
    try {
      const end = await Promise.race([engineWait(id, signal), watch(id, signal)]);
      if (letGo.aborted) return await never();
      if (end === 'lost') return { code: null, signal: null, outOfMemory: false, lost: true };
      if (end === 'gone') return { code: null, signal: 'SIGKILL', outOfMemory: false };
      return await readExit(id);
    } finally {
      answered.abort();
    }
  };

  /** The engine's wait for the container's end, asked again after a failure; 'gone' on a 404. */
  const engineWait = async (id: string, signal: AbortSignal): Promise<'ended' | 'gone'> => {
    for (;;) {
      try {
        await streams.getContainer(id).wait({ condition: 'not-running', abortSignal: signal });
        if (signal.aborted) return await never();
        return 'ended';
      } catch (error) {
        if (signal.aborted) return never();
        if (statusOf(error) === 404) return 'gone';
        await sleep(1_000);
      }
    }
  };

  /** Asks after the container (see waitFor). */
  const watch = async (id: string, signal: AbortSignal): Promise<'ended' | 'gone' | 'lost'> => {
    let silentSince: number | null = null;
    for (;;) {
      try {
        await sleep(silentSince === null ? WATCH_MS : 1_000, undefined, { signal });
      } catch {
        return never();
      }
      try {
        const state = (await call(() => api.getContainer(id).inspect())).State;
        silentSince = null;
        if (!state.Running) return 'ended';
      } catch (error) {
        if (signal.aborted) return never();
        if (statusOf(error) === 404) return 'gone';
        if (!(error instanceof RuntimeUnavailableError)) continue;
        silentSince ??= Date.now();
        if (Date.now() - silentSince >= returnAttempts * 1_000) return 'lost';
      }
    }
  };

  /** A hijacked connection to the container's standard input, output and error. */
  const attach = async (id: string): Promise<Duplex> => {
    const stream = await call(() =>
      streams.getContainer(id).attach({
        stream: true,
        stdin: true,
        stdout: true,
        stderr: true,
        hijack: true,
      }),
    );
    if (!(stream instanceof Duplex)) throw new StartError('The engine gave no attach stream');
    return stream;
  };
  const engine: ContainerEngine = { api, call, attach, returnAttempts };

  const start = async (wanted: LaunchSpec): Promise<RunningProcess> => {
    if (wanted.image === null) throw new StartRefusedError('A docker server needs an image');
    const image = wanted.image;
    try {
      await call(() => api.getImage(image).inspect());
    } catch (error) {
      if (statusOf(error) === 404)
        throw new StartRefusedError(
          `image ${image} is not on the Docker host; build or load it there`,
        );
      // Any other answer of the engine about this image (a reference it will not take): refused.
      if (statusOf(error) !== undefined)
        throw new StartRefusedError(`the Docker host refused image ${image}: ${reasonOf(error)}`);
      throw error;
    }
    // The start command's bash, or the shell the image has instead.
    const spec = await withShell(
      wanted,
      (program) => imageHas(image, program),
      `the image ${image}`,
    );
    const network = await networkMode();
    // A container left by an earlier start that was cut short: the new one is made afresh.
    await removeAll(spec.name);
    const program = spec.argv[0];
    const install = spec.install;
    const folder = await folderOf(spec);
    let container: Docker.Container;
    try {
      container = await call(() =>
        api.createContainer(containerOptions(spec, image, options.panelId, network, folder)),
      );
    } catch (error) {
      if (error instanceof RuntimeUnavailableError || error instanceof StartRefusedError)
        throw error;
      throw new StartError(`Cannot create the container: ${reasonOf(error)}`, { cause: error });
    }
    try {
      // An install's script goes into its container before the start, over the engine's API:
      // one way for the panel's own engine and a node's, whose disk the panel cannot see.
      if (install !== null) {
        const archive = installScriptArchive(install.script);
        await call(() => container.putArchive(archive, { path: '/' }));
      }
      // Attached before the start, so that nothing the server prints first is lost.
      const io = await attach(container.id);
      try {
        await call(() => container.start());
      } catch (error) {
        io.destroy();
        throw error;
      }
      const state = (await call(() => container.inspect())).State;
      const letGo = new AbortController();
      return containerProcess(
        engine,
        container.id,
        state.Pid,
        new Date(state.StartedAt),
        io,
        waitFor(container.id, letGo.signal),
        letGo,
      );
    } catch (error) {
      await remove(container.id).catch(() => undefined);
      if (error instanceof RuntimeUnavailableError) throw error;
      throw new StartError(`Cannot start ${program}: ${reasonOf(error)}`, { cause: error });
    }
  };

  const adopt = async (leftover: LeftoverProcess): Promise<RunningProcess | null> => {
    const found = await containersOf(leftover.name);
    const [first, ...rest] = found;
    for (const extra of rest) await remove(extra.Id);
    if (first === undefined) return null;
    const state = (await call(() => api.getContainer(first.Id).inspect())).State;
    const letGo = new AbortController();
    if (!state.Running) {
      // It ended while no panel watched: its last output, then that exit, told like a crash.
      const printed = await containerHistory(engine, first.Id, Date.now() / 1000);
      const exit = await readExit(first.Id);
      return containerProcess(
        engine,
        first.Id,
        state.Pid || (leftover.pid ?? 0),
        new Date(state.StartedAt),
        null,
        Promise.resolve(exit),
        letGo,
        printed,
      );
    }
    // Attached first, then what it printed up to that moment (the attach stream holds what
    // comes meanwhile): the console's history spans the time no panel watched.
    const io = await attach(first.Id);
    const printed = await containerHistory(engine, first.Id, Date.now() / 1000);
    return containerProcess(
      engine,
      first.Id,
      state.Pid,
      new Date(state.StartedAt),
      io,
      waitFor(first.Id, letGo.signal),
      letGo,
      printed,
    );
  };

  const description = await describe();

  async function describe(): Promise<string> {
    try {
      await call(() =>
        withDeadline(api.ping(), PING_TIMEOUT_MS, () =>
          Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }),
        ),
      );
      const network = await networkMode();
      return `docker runtime: the engine at ${where} answers; containers of panel ${options.panelId} run on network ${network}`;
    } catch (error) {
      const why =
        error instanceof RuntimeUnavailableError
          ? error.message
          : `The Docker engine at ${where} answers with an error (${reasonOf(error)})`;
      return `docker runtime: ${why}; docker servers cannot start until it does`;
    }
  }

  return {
    kind: 'docker',
    enforces: new Set<LimitName>(['memoryBytes', 'cpuPercent', 'pids']),
    description,
    isolated: true,
    /**
     * An answer of the engine that none of the steps expected (an error status while removing
     * an old container, reading the networks…) refuses the start with the engine's reason, like
     * a missing image: never an error of the panel.
     */
    start: (spec) =>
      start(spec).catch((error: unknown) => {
        if (statusOf(error) === undefined) throw error;
        throw new StartRefusedError(`the Docker host refused to run it: ${reasonOf(error)}`, {
          cause: error,
        });
      }),
    adopt,
    images: engineImages(api, streams, call, open),
    // An engine that cannot be reached has nothing to end or remove that the panel could reach
    // either: the panel starts (and deletes servers of other runtimes) all the same.
    reap: (leftover) => removeAll(leftover.name).catch(ignoreUnreachable(false)),
    discard: async (name) => {
      await removeAll(name).catch(ignoreUnreachable(false));
    },
  };
}

/** The engine's clients: one whose calls time out, one for streams that may stay silent. */
function clientsOf(options: DockerRuntimeOptions): { where: string; api: Docker; streams: Docker } {
  if (options.engine !== undefined)
    return {
      where: options.engine.where,
      api: options.engine.client(ENGINE_CALL_MS),
      streams: options.engine.client(null),
    };
  const engine = engineOptions(options.dockerHost, options.dockerCertPath ?? null);
  return {
    where: options.dockerHost ?? 'unix:///var/run/docker.sock',
    api: new Docker({ ...engine, timeout: ENGINE_CALL_MS }),
    streams: new Docker(engine),
  };
}

const ignoreUnreachable =
  <T>(value: T) =>
  (error: unknown): T => {
    if (error instanceof RuntimeUnavailableError) return value;
    throw error;
  };

export { demultiplex } from './container-process.js';

/** An exit code above 128 is the signal that ended the main process (as the engine reports it). */
export function exitOf(code: number, outOfMemory: boolean): ExitInfo {
  const signal = code > 128 ? SIGNAL_NAMES.get(code - 128) : undefined;
  return signal === undefined
    ? { code, signal: null, outOfMemory }
    : { code: null, signal, outOfMemory };
}
