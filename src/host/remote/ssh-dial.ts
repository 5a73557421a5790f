/**
 * The HTTP agent of a node's engine reached over SSH (docs/nodes.md, "Reaching a node"): each
 * HTTP connection is a `docker system dial-stdio` run on the node, as dockerode's own SSH agent
 * does, but over a few SSH connections kept open and shared, not a new SSH handshake for every
 * request. A panel asks a node's engine about each running server every few seconds (stats), and
 * an SSH handshake costs more than most of those calls.
 *
 * - One SSH connection carries at most {@link CHANNELS_PER_CONNECTION} requests at once (OpenSSH's
 *   `MaxSessions` is 10 by default); past that, another connection is opened.
 * - A connection with no request for {@link IDLE_MS} is closed.
 * - SSH keep-alives find a node that stopped answering: its connection is closed, and every
 *   request on it fails, rather than waiting forever on a silent stream.
 * - A dial-stdio stream takes a socket timeout (`setTimeout`, which HTTP requests with a
 *   `timeout` set): silent that long, it says so, and the request fails as one over TLS would.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import ssh2, { type ClientChannel, type ConnectConfig } from 'ssh2';

/** Requests one SSH connection carries at once. */
export const CHANNELS_PER_CONNECTION = 8;
/** How long a connection with no request stays open. */
export const IDLE_MS = 30_000;
/** How long an HTTP connection (a dial-stdio stream) waits for its next request. */
const FREE_MS = 10_000;
/** The timers of streams waiting for a request. */
const free = new WeakMap<Socket, NodeJS.Timeout>();
/** SSH keep-alives: every 5 s, and a connection that missed 3 in a row is dead. */
const KEEPALIVE = { keepaliveInterval: 5_000, keepaliveCountMax: 3 } as const;

interface Connection {
  readonly client: ssh2.Client;
  readonly ready: Promise<void>;
  readonly channels: Set<ClientChannel>;
  /** Requests dialled and not yet given their channel. */
  dialling: number;
  idle: NodeJS.Timeout | null;
  closed: boolean;
}

export class SshDialAgent extends http.Agent {
  readonly #options: ConnectConfig;
  readonly #idleMs: number;
  readonly #connections = new Set<Connection>();

  constructor(options: ConnectConfig, { idleMs = IDLE_MS }: { idleMs?: number } = {}) {
    // An HTTP connection is kept for the next request: starting `docker system dial-stdio` on
    // the node costs more than most calls.
    super({ keepAlive: true });
    this.#options = { ...options, ...KEEPALIVE };
    this.#idleMs = idleMs;
  }

  /** SSH connections open now (for tests and the node's health). */
  get connections(): number {
    return this.#connections.size;
  }

  // Node's agent calls this for each new HTTP connection, and waits for the callback.
  override createConnection(
    _options: unknown,
    callback: (error: Error | null, stream?: Duplex) => void,
  ): undefined {
    this.#dial().then(
      (stream) => {
        callback(null, stream);
      },
      (error: unknown) => {
        callback(error instanceof Error ? error : new Error(String(error)));
      },
    );
    return undefined;
  }

  // A dial-stdio stream waiting for its next request is closed after FREE_MS; taken again, not.
  override keepSocketAlive(socket: Socket): boolean {
    // Node's answers whether it kept the socket (its types say void).
    const keep = super.keepSocketAlive.bind(this) as (socket: Socket) => boolean;
    const kept = keep(socket);
    if (kept) {
      free.get(socket)?.refresh();
      if (!free.has(socket)) {
        const timer = setTimeout(() => socket.destroy(), FREE_MS);
        timer.unref();
        free.set(socket, timer);
      }
    }
    return kept;
  }

  override reuseSocket(socket: Socket, request: http.ClientRequest): void {
    clearTimeout(free.get(socket));
    free.delete(socket);
    super.reuseSocket(socket, request);
  }

  /** Closes every SSH connection; requests under way fail. */
  override destroy(): void {
    for (const connection of this.#connections) this.#close(connection);
    super.destroy();
  }

  async #dial(): Promise<Duplex> {
    const connection = this.#connectionWithRoom();
    connection.dialling += 1;
    this.#busy(connection);
    try {
      await connection.ready;
      const channel = await new Promise<ClientChannel>((resolve, reject) => {
        connection.client.exec('docker system dial-stdio', (error, stream) => {
          if (error) reject(error);
          else resolve(stream);
        });
      });
      connection.channels.add(channel);
      channel.once('close', () => {
        connection.channels.delete(channel);
        this.#maybeIdle(connection);
      });
      return withSocketTimeout(channel);
    } catch (error) {
      // A connection that failed is not offered again.
      this.#close(connection);
      throw error;
    } finally {
      connection.dialling -= 1;
      this.#maybeIdle(connection);
    }
  }

  #connectionWithRoom(): Connection {
    for (const connection of this.#connections) {
      if (!connection.closed && load(connection) < CHANNELS_PER_CONNECTION) return connection;
    }
    const client = new ssh2.Client();
    const connection: Connection = {
      client,
      ready: new Promise<void>((resolve, reject) => {
        client.once('ready', resolve);
        client.once('error', reject);
        client.once('close', () => {
          reject(new Error('the SSH connection closed before it was ready'));
        });
      }),
      channels: new Set(),
      dialling: 0,
      idle: null,
      closed: false,
    };
    // An error after `ready` (a keep-alive timeout, a reset) ends the connection: forget it.
    client.on('error', () => {
      this.#close(connection);
    });
    client.once('close', () => {
      this.#close(connection);
    });
    this.#connections.add(connection);
    client.connect(this.#options);
    return connection;
  }

  #busy(connection: Connection): void {
    if (connection.idle !== null) clearTimeout(connection.idle);
    connection.idle = null;
  }

  #maybeIdle(connection: Connection): void {
    if (connection.closed || load(connection) > 0 || connection.idle !== null) return;
    connection.idle = setTimeout(() => {
      this.#close(connection);
    }, this.#idleMs);
    connection.idle.unref();
  }

  #close(connection: Connection): void {
    this.#busy(connection);
    this.#connections.delete(connection);
    if (connection.closed) return;
    connection.closed = true;
    for (const channel of connection.channels) channel.destroy();
    connection.client.end();
  }
}

const load = (connection: Connection) => connection.channels.size + connection.dialling;

/**
 * Gives the channel what an HTTP request asks of its socket: `setTimeout` (an idle timeout that
 * emits `timeout`), and `setNoDelay` / `setKeepAlive`, which mean nothing on an SSH channel.
 */
function withSocketTimeout(channel: ClientChannel): Duplex {
  let timer: NodeJS.Timeout | null = null;
  let ms = 0;
  const arm = () => {
    if (timer !== null) clearTimeout(timer);
    timer = ms > 0 ? setTimeout(() => channel.emit('timeout'), ms) : null;
    timer?.unref();
  };
  channel.on('data', arm);
  const write = channel.write.bind(channel) as (...args: unknown[]) => boolean;
  Object.assign(channel, {
    write: (...args: unknown[]) => {
      arm();
      return write(...args);
    },
    setTimeout(timeout: number, onTimeout?: () => void) {
      ms = timeout;
      if (onTimeout) channel.once('timeout', onTimeout);
      arm();
      return channel;
    },
    setNoDelay: () => channel,
    setKeepAlive: () => channel,
    ref: () => channel,
    unref: () => channel,
  });
  channel.once('close', () => {
    if (timer !== null) clearTimeout(timer);
  });
  return channel;
}
