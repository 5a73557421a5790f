/**
 * The open console sockets. Each server's events are serialised once and sent to every socket
 * watching it. A socket whose unsent data passes the queue limit is cut off, so one client that
 * does not read can neither hold the others back nor grow the panel's memory. Commands typed into
 * a socket are checked against the caller's current rights, like the command endpoint, and a
 * socket whose owner loses access (ban, removal, deletion, password change) is closed at once.
 * What a socket sends is handled outside any request: a failure there is logged and answered
 * with an error message, never thrown, so it cannot end the panel.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from '@fastify/websocket';
import type { RawData } from 'ws';
import { AppError } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { AuthService } from '../auth/auth.service.js';
import type { ConsoleEvent, Supervisor } from '../servers/supervisor.js';
import type { ServersService } from '../servers/servers.service.js';

export interface ConsoleLimits {
  /** Open console sockets one user may hold. */
  readonly socketsPerUser: number;
  /** Unsent bytes a socket may queue before it is cut off. */
  readonly maxQueuedBytes: number;
  /** Incoming messages: sustained rate per second, and burst. */
  readonly messagesPerSecond: number;
  readonly messageBurst: number;
}

export const DEFAULT_CONSOLE_LIMITS: ConsoleLimits = {
  socketsPerUser: 10,
  maxQueuedBytes: 4 * 1024 * 1024,
  messagesPerSecond: 10,
  messageBurst: 20,
};

/** Largest message a client may send; ws closes the socket with 1009 above it. */
export const MAX_INCOMING_BYTES = 16 * 1024;

/** Close codes a client may act on. */
export const CLOSE = {
  tokenInvalid: 4401,
  accessRemoved: 4403,
  serverDeleted: 4404,
  tooManyMessages: 4429,
} as const;

interface Client {
  readonly socket: WebSocket;
  readonly userId: number;
  readonly token: string;
  readonly server: string;
  tokens: number;
  refilledAt: number;
}

type Outgoing =
  | ConsoleEvent
  | { readonly type: 'history'; readonly lines: readonly string[] }
  | { readonly type: 'error'; readonly code: string; readonly message: string };

export class ConsoleHub {
  readonly #byServer = new Map<string, Set<Client>>();
  readonly #byUser = new Map<number, Set<Client>>();
  readonly #unsubscribe = new Map<string, () => void>();

  constructor(
    private readonly deps: {
      readonly supervisor: Supervisor;
      readonly servers: ServersService;
      readonly auth: AuthService;
      readonly events: PanelEvents;
      readonly log: FastifyBaseLogger;
      readonly limits: ConsoleLimits;
    },
  ) {
    deps.events.on('access-changed', (userId) => {
      void this.#recheck(userId);
    });
    deps.events.on('server-deleted', (name) => {
      // Forget the server's clients now rather than at each close handshake, so that a new
      // server of the same name starts with a fresh subscription.
      for (const client of [...(this.#byServer.get(name) ?? [])]) {
        client.socket.close(CLOSE.serverDeleted, 'server deleted');
        this.#detach(client);
      }
    });
  }

  socketsOf(userId: number): number {
    return this.#byUser.get(userId)?.size ?? 0;
  }

  attach(socket: WebSocket, owner: { userId: number; token: string; server: string }): void {
    const client: Client = {
      socket,
      ...owner,
      tokens: this.deps.limits.messageBurst,
      refilledAt: Date.now(),
    };
    add(this.#byServer, owner.server, client);
    add(this.#byUser, owner.userId, client);
    if (!this.#unsubscribe.has(owner.server)) {
      this.#unsubscribe.set(
        owner.server,
        this.deps.supervisor.subscribe(owner.server, (event) => {
          this.#broadcast(owner.server, JSON.stringify(event));
        }),
      );
    }
    socket.on('close', () => {
      this.#detach(client);
    });
    socket.on('error', () => undefined);
    socket.on('message', (data, isBinary) => {
      this.#onMessage(client, data, isBinary).catch((error: unknown) => {
        this.#failed(client, error);
      });
    });
    const lines = this.deps.supervisor.history(owner.server).map((entry) => entry.line);
    this.#send(client, JSON.stringify({ type: 'history', lines } satisfies Outgoing));
    // Access may have been taken away between the check before the upgrade and now.
    void this.#recheckClient(client);
  }

  #detach(client: Client): void {
    remove(this.#byUser, client.userId, client);
    if (remove(this.#byServer, client.server, client)) {
      this.#unsubscribe.get(client.server)?.();
      this.#unsubscribe.delete(client.server);
    }
  }

  #broadcast(server: string, text: string): void {
    for (const client of this.#byServer.get(server) ?? []) this.#send(client, text);
  }

  #send(client: Client, text: string): void {
    const { socket } = client;
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > this.deps.limits.maxQueuedBytes) {
      this.deps.log.info(
        { server: client.server, user: client.userId },
        'cut off a console client that does not read',
      );
      socket.terminate();
      this.#detach(client);
      return;
    }
    socket.send(text);
  }

  #reply(client: Client, message: Outgoing): void {
    this.#send(client, JSON.stringify(message));
  }

  async #onMessage(client: Client, data: RawData, isBinary: boolean): Promise<void> {
    if (!this.#takeToken(client)) {
      client.socket.close(CLOSE.tooManyMessages, 'too many messages');
      return;
    }
    const message = isBinary ? undefined : parseCommandMessage(rawText(data));
    if (message === undefined) {
      this.#reply(client, {
        type: 'error',
        code: 'VALIDATION_FAILED',
        message: 'Send {"type":"command","command":"…"} as one text frame, one line per command',
      });
      return;
    }
    try {
      const user = await this.deps.auth.authenticate(client.token);
      if (!user) {
        client.socket.close(CLOSE.tokenInvalid, 'token no longer valid');
        return;
      }
      await this.deps.servers.command(user, client.server, message);
    } catch (error) {
      if (!(error instanceof AppError)) {
        this.#failed(client, error);
        return;
      }
      if (error.statusCode === 403 || error.statusCode === 404) {
        client.socket.close(CLOSE.accessRemoved, 'access removed');
        return;
      }
      this.#reply(client, { type: 'error', code: error.code, message: error.message });
    }
  }

  /** Logs what went wrong with a client's message; the client learns only that it failed. */
  #failed(client: Client, error: unknown): void {
    this.deps.log.error(
      { err: error, server: client.server, user: client.userId },
      'a console message failed',
    );
    this.#reply(client, { type: 'error', code: 'INTERNAL', message: 'Internal server error' });
  }

  /** Token bucket: false once the client sends faster than the limit allows. */
  #takeToken(client: Client): boolean {
    const now = Date.now();
    const { messagesPerSecond, messageBurst } = this.deps.limits;
    client.tokens = Math.min(
      messageBurst,
      client.tokens + ((now - client.refilledAt) / 1000) * messagesPerSecond,
    );
    client.refilledAt = now;
    if (client.tokens < 1) return false;
    client.tokens -= 1;
    return true;
  }

  async #recheck(userId: number): Promise<void> {
    await Promise.all(
      [...(this.#byUser.get(userId) ?? [])].map((client) => this.#recheckClient(client)),
    );
  }

  /** Closes the socket if its token or its access to the server is gone. */
  async #recheckClient(client: Client): Promise<void> {
    try {
      const user = await this.deps.auth.authenticate(client.token);
      if (!user) client.socket.close(CLOSE.tokenInvalid, 'token no longer valid');
      else if (!(await this.deps.servers.canAccess(user, client.server))) {
        client.socket.close(CLOSE.accessRemoved, 'access removed');
      }
    } catch (error) {
      this.deps.log.error({ err: error }, 'could not re-check a console socket; closing it');
      client.socket.close(CLOSE.accessRemoved, 'access could not be checked');
    }
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}

/** The command of a `{"type":"command","command":"…"}` message, or undefined. */
function parseCommandMessage(text: string): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null) return undefined;
  const { type, command } = message as { type?: unknown; command?: unknown };
  if (type !== 'command' || typeof command !== 'string') return undefined;
  if (command.length === 0 || command.length > 4096 || /[\r\n]/.test(command)) return undefined;
  return command;
}

function add<K>(map: Map<K, Set<Client>>, key: K, client: Client): void {
  const set = map.get(key);
  if (set) set.add(client);
  else map.set(key, new Set([client]));
}

/** Removes `client`; true when that left no client under `key`. */
function remove<K>(map: Map<K, Set<Client>>, key: K, client: Client): boolean {
  const set = map.get(key);
  if (!set) return false;
  set.delete(client);
  if (set.size > 0) return false;
  map.delete(key);
  return true;
}
