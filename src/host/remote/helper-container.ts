/**
 * The file agent's helper containers on a node (docs/nodes.md, "Files on a node"): what
 * RemoteFiles' `connect(server)` is on a node. Each connect makes sure of the helper image
 * (helper-image.ts) and the server's volume (node-volumes.ts), then makes and starts a helper:
 * `node <agent> /servers` as the server's own uid:gid, with only the server's volume mounted at
 * /servers, no network, every capability dropped, no new privileges, a read-only root, a small
 * private /tmp and memory and pids limits, labelled with the panel and HELPER_LABEL (the
 * server). Its stdin and stdout, over the engine's attach stream (hijacked), are the byte stream
 * answered: what is written goes to its stdin; its stdout, taken out of the engine's 8-byte frame
 * headers, is what is read; its stderr (the agent's log, one JSON object a line) goes to the
 * panel's log.
 *
 * Warm: the helper lives as long as its stream (RemoteFiles' `idleMs` ends a stream idle that
 * long, docs/nodes.md "The warm helper"). When the stream is destroyed its stdin is ended
 * (`StdinOnce`: the engine closes the agent's stdin), the agent lets go of what it held and
 * exits, and the container is removed; one that does not exit in time is removed by force.
 * A helper that does not start within the deadline fails the connect (RemoteFiles answers 503
 * NODE_UNREACHABLE). Every call to the engine has a deadline.
 */
import { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { Logger } from '../../log.js';
import { SILENT_LOGGER } from '../../log.js';
import { withDeadline } from '../runtime/deadline.js';
import { PANEL_LABEL } from '../runtime/docker/container-spec.js';
import { ENGINE_CALL_MS, engineDeadline, reasonOf, statusOf } from '../runtime/docker/engine.js';
import {
  ensureHelperImage,
  HELPER_AGENT,
  HELPER_NODE,
  HELPER_SERVERS,
  type HelperImage,
} from './helper-image.js';
import { HELPER_LABEL, NodeVolumes } from './node-volumes.js';

export interface ServerOwner {
  readonly uid: number;
  readonly gid: number;
}

export interface HelperContainersOptions {
  /** The node's engine for short calls (a client with a time limit). */
  readonly api: Docker;
  /** The node's engine for attach streams, which may stay silent (a client without one). */
  readonly streams: Docker;
  readonly panelId: string;
  /** The user server `server`'s files belong to, whom its helper runs as (never root). */
  readonly userOf: (server: string) => ServerOwner | Promise<ServerOwner>;
  readonly log?: Logger;
  /** The file agent's bundle: dist/file-agent.mjs when not given. */
  readonly agentFile?: string;
  /** How long a helper may take to be made, attached and started (15 s). */
  readonly startDeadlineMs?: number;
  /** How long a let-go helper may take to exit before it is removed by force (10 s). */
  readonly exitDeadlineMs?: number;
  /** The helper's memory (512 MiB, no swap). */
  readonly memoryBytes?: number;
}

/**
 * How long a helper is kept after its last use: what RemoteFiles' `idleMs` is given for a node
 * (docs/nodes.md, "The warm helper").
 */
export const HELPER_IDLE_MS = 60_000;

/** The helper's private /tmp: small, no set-uid programs, no devices, nothing run from it. */
const TMP_OPTIONS = 'rw,nosuid,nodev,noexec,size=16m';
/** The helper's processes: Node's own threads, and room. */
const HELPER_PIDS = 64;
/** The longest stderr line kept for the log. */
const MAX_LOG_LINE = 8192;

/** A helper could not be made or started; the message says why (no secret in it). */
export class HelperStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'HelperStartError';
  }
}

const deadline = engineDeadline((message) => new HelperStartError(message));

/** The helper containers of one node. */
export class HelperContainers {
  readonly #options: HelperContainersOptions;
  readonly #log: Logger;
  readonly #volumes: NodeVolumes;
  #image: Promise<HelperImage & { imported: boolean }> | null = null;
  /** Helpers being let go of: their removal, awaited by `close`. */
  readonly #leaving = new Set<Promise<void>>();
  /** Helpers running: their ids. */
  readonly #running = new Set<string>();

  constructor(options: HelperContainersOptions) {
    this.#options = options;
    this.#log = options.log ?? SILENT_LOGGER;
    this.#volumes = new NodeVolumes({ docker: options.api, panelId: options.panelId });
  }

  /** The servers' volumes of this node. */
  get volumes(): NodeVolumes {
    return this.#volumes;
  }

  /** The helper image on the node: imported by this panel's first helper there, unless it had it. */
  image(): Promise<HelperImage & { imported: boolean }> {
    if (this.#image === null) {
      const image = ensureHelperImage(
        this.#options.api,
        this.#options.agentFile === undefined ? {} : { agentFile: this.#options.agentFile },
      );
      this.#image = image;
      image.catch(() => {
        if (this.#image === image) this.#image = null;
      });
    }
    return this.#image;
  }

  /** The ids of the helpers running now. */
  get running(): readonly string[] {
    return [...this.#running];
  }

  /**
   * A byte stream to a new helper serving `server`'s folder (`/servers/<server>` on its volume).
   * Rejects, with nothing left behind, when the helper cannot be made or started in time.
   */
  async connect(server: string): Promise<Duplex> {
    const image = await this.image();
    const owner = await this.#options.userOf(server);
    if (owner.uid === 0 || owner.gid === 0)
      throw new HelperStartError('a helper never runs as root: the server needs its own user');
    const volume = await this.#volumes.ensure(server, owner, image.tag);
    const api = this.#options.api;
    const memory = this.#options.memoryBytes ?? 512 * 1024 * 1024;
    // What is made so far: removed again if the start fails or its deadline passes first (a
    // step still under way then finds it abandoned and undoes itself).
    const made: { id: string | null; socket: Duplex | null } = { id: null, socket: null };
    const abandon = new AbortController();
    const goOn = (): void => {
      if (abandon.signal.aborted) throw new HelperStartError('abandoned');
    };
    const undo = async (): Promise<void> => {
      made.socket?.destroy();
      if (made.id !== null) await this.#remove(made.id);
    };
    const start = async (): Promise<{ id: string; socket: Duplex }> => {
      const container = await api.createContainer({
        Image: image.tag,
        Entrypoint: [HELPER_NODE],
        Cmd: [HELPER_AGENT, HELPER_SERVERS, '--finish-restores'],
        Env: [...image.env],
        WorkingDir: '/',
        User: `${owner.uid}:${owner.gid}`,
        Labels: { [PANEL_LABEL]: this.#options.panelId, [HELPER_LABEL]: server },
        Tty: false,
        OpenStdin: true,
        // The engine closes the agent's stdin when this panel's attach ends: it exits.
        StdinOnce: true,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        NetworkDisabled: true,
        HostConfig: {
          // nocopy: the engine would otherwise give the root of a still empty volume back to
          // the image's /servers (root's) at each mount.
          Binds: [`${volume}:${HELPER_SERVERS}:rw,nocopy`],
          NetworkMode: 'none',
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          ReadonlyRootfs: true,
          Tmpfs: { '/tmp': TMP_OPTIONS },
          Memory: memory,
          MemorySwap: memory,
          PidsLimit: HELPER_PIDS,
          RestartPolicy: { Name: 'no' },
        },
      });
      made.id = container.id;
      goOn();
      const attached = await this.#options.streams.getContainer(container.id).attach({
        stream: true,
        stdin: true,
        stdout: true,
        stderr: true,
        hijack: true,
      });
      if (!(attached instanceof Duplex))
        throw new HelperStartError('the engine gave no attach stream');
      made.socket = attached;
      goOn();
      await container.start();
      goOn();
      return { id: container.id, socket: attached };
    };
    const starting = start();
    let helper: { id: string; socket: Duplex };
    try {
      helper = await withDeadline(
        starting,
        this.#options.startDeadlineMs ?? ENGINE_CALL_MS,
        () => new HelperStartError(`the helper of ${server} did not start in time`),
      );
    } catch (error) {
      abandon.abort();
      await undo();
      // A step still under way undoes what it makes when it ends (`settled` waits for it).
      this.#track(starting.then(undo, undo));
      if (error instanceof HelperStartError) throw error;
      throw new HelperStartError(`the helper of ${server} could not start: ${reasonOf(error)}`, {
        cause: error,
      });
    }
    const { id, socket } = helper;
    this.#running.add(id);
    this.#log.debug({ server, container: id }, 'file agent helper started');
    return new HelperStream(socket, {
      stderr: (line) => {
        this.#agentLog(server, line);
      },
      gone: () => {
        this.#letGo(server, id, socket);
      },
    });
  }

  /** One line of an agent's log, into the panel's. */
  #agentLog(server: string, line: string): void {
    let fields: Record<string, unknown>;
    try {
      const parsed = JSON.parse(line) as unknown;
      fields = parsed !== null && typeof parsed === 'object' ? (parsed as typeof fields) : {};
    } catch {
      this.#log.warn({ server, line: line.slice(0, MAX_LOG_LINE) }, 'file agent');
      return;
    }
    const { level, msg, ...details } = fields;
    const message = `file agent: ${typeof msg === 'string' ? msg : 'a line'}`;
    if (level === 'error') this.#log.error({ server, ...details }, message);
    else if (level === 'warn') this.#log.warn({ server, ...details }, message);
    else this.#log.info({ server, ...details }, message);
  }

  /** Waits for the helper `id` (whose stdin was ended) to exit, then removes it. */
  #letGo(server: string, id: string, socket: Duplex): void {
    const leaving = (async () => {
      try {
        await withDeadline(
          this.#options.api.getContainer(id).wait({ condition: 'not-running' }),
          this.#options.exitDeadlineMs ?? 10_000,
          () => new HelperStartError('the helper did not exit in time'),
        );
      } catch (error) {
        if (statusOf(error) !== 404)
          this.#log.warn(
            { server, container: id, reason: reasonOf(error) },
            'file agent helper removed by force',
          );
      }
      await this.#remove(id);
      socket.destroy();
      this.#running.delete(id);
      this.#log.debug({ server, container: id }, 'file agent helper let go of');
    })();
    this.#track(leaving);
  }

  /** A removal under way, which `settled` waits for. */
  #track(leaving: Promise<void>): void {
    this.#leaving.add(leaving);
    void leaving.finally(() => this.#leaving.delete(leaving));
  }

  async #remove(id: string): Promise<void> {
    try {
      await deadline(
        this.#options.api.getContainer(id).remove({ force: true, v: false }),
        'remove a helper',
      );
    } catch (error) {
      // Gone already, or being removed.
      if (statusOf(error) !== 404 && statusOf(error) !== 409)
        this.#log.warn({ container: id, reason: reasonOf(error) }, 'a helper could not be removed');
    }
  }

  /**
   * Removes this panel's helpers left by an earlier run (by label), or those of `server` alone
   * that no connection holds (one whose removal failed while its node did not answer); answers
   * how many.
   */
  async removeLeftovers(server?: string): Promise<number> {
    const helper = server === undefined ? HELPER_LABEL : `${HELPER_LABEL}=${server}`;
    const found = await deadline(
      this.#options.api.listContainers({
        all: true,
        filters: { label: [`${PANEL_LABEL}=${this.#options.panelId}`, helper] },
      }),
      'list the helpers',
    );
    const ours = found.filter((container) => !this.#running.has(container.Id));
    for (const container of ours) await this.#remove(container.Id);
    return ours.length;
  }

  /**
   * Waits until every helper let go of, or abandoned at its start, is removed (their streams
   * must be ended first).
   */
  async settled(): Promise<void> {
    while (this.#leaving.size > 0) await Promise.allSettled([...this.#leaving]);
  }
}

/**
 * The helper's stdin and stdout as one byte stream, over the engine's attach stream: stdout's
 * payloads are what is read (held to the reader: the attach stream pauses), stderr's lines go to
 * `stderr`; destroying it ends the helper's stdin and tells `gone`.
 */
class HelperStream extends Duplex {
  readonly #socket: Duplex;
  readonly #stderr: (line: string) => void;
  readonly #gone: () => void;
  #pending: Buffer = Buffer.alloc(0);
  #errLine = '';
  #told = false;

  constructor(socket: Duplex, handlers: { stderr: (line: string) => void; gone: () => void }) {
    super({ allowHalfOpen: true });
    this.#socket = socket;
    this.#stderr = handlers.stderr;
    this.#gone = handlers.gone;
    socket.on('data', (chunk: Buffer) => {
      this.#take(chunk);
    });
    socket.once('end', () => {
      this.#flushErr();
      this.push(null);
    });
    socket.once('close', () => {
      // The helper is gone: once what it printed is read, so is this stream.
      this.#flushErr();
      this.push(null);
      this.#tellGone();
      if (this.readableEnded) this.destroy();
      else this.once('end', () => this.destroy());
    });
    socket.on('error', (error) => {
      this.destroy(error);
    });
  }

  /** Frames of the engine's multiplexed stream: [kind, 0, 0, 0, length (4 bytes)] payload. */
  #take(chunk: Buffer): void {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    let offset = 0;
    while (this.#pending.length - offset >= 8) {
      const kind = this.#pending.readUInt8(offset);
      const length = this.#pending.readUInt32BE(offset + 4);
      if (this.#pending.length - offset < 8 + length) break;
      const payload = this.#pending.subarray(offset + 8, offset + 8 + length);
      offset += 8 + length;
      if (kind === 1) {
        // Once destroyed, what the agent still prints is dropped, never held.
        if (!this.destroyed && !this.push(payload)) this.#socket.pause();
      } else if (kind === 2) this.#takeErr(payload);
    }
    this.#pending = this.#pending.subarray(offset);
  }

  #takeErr(payload: Buffer): void {
    this.#errLine += payload.toString('utf8');
    let newline: number;
    while ((newline = this.#errLine.indexOf('\n')) !== -1) {
      const line = this.#errLine.slice(0, newline);
      this.#errLine = this.#errLine.slice(newline + 1);
      if (line.trim() !== '') this.#stderr(line);
    }
    if (this.#errLine.length > MAX_LOG_LINE) {
      this.#stderr(this.#errLine.slice(0, MAX_LOG_LINE));
      this.#errLine = '';
    }
  }

  #flushErr(): void {
    if (this.#errLine.trim() !== '') this.#stderr(this.#errLine);
    this.#errLine = '';
  }

  #tellGone(): void {
    if (this.#told) return;
    this.#told = true;
    this.#gone();
  }

  override _read(): void {
    this.#socket.resume();
  }

  override _write(
    chunk: Buffer,
    _encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ): void {
    this.#socket.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The helper's stdin ends (the agent exits once its calls stop); its output is dropped.
    this.#socket.end();
    this.#socket.resume();
    this.#tellGone();
    callback(error);
  }
}
