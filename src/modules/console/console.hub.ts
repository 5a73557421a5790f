/**
 * The open console sockets (protocol v2). Each server's events come in batches of lines; each is
 * encoded once, into one buffer that every socket watching the server then sends.
 *
 * A socket takes frames while less than {@link IN_FLIGHT_BYTES} of what it was given is still
 * unwritten; past that, frames wait in its own queue. When what waits passes the queue limit,
 * the waiting batches of lines are dropped and replaced by one `{"type":"skipped","lines":N}`, so
 * a slow reader keeps a live console with a visible gap, never holds the others back and never
 * grows the panel's memory. Only a socket that takes nothing at all for `stalledMs` (30 s) while
 * data waits is closed, with 4408. Commands typed into
 * a socket are checked against the caller's current rights, like the command endpoint, and a
 * socket whose owner loses access (ban, removal, deletion, password change) is closed at once,
 * or within `recheckMs` when another process made the change (the operator's command line).
 * What a socket sends is handled outside any request: a failure there is logged and answered
 * with an error message, never thrown, so it cannot end the panel.
 */
import type { WebSocket } from '@fastify/websocket';
import type { RawData } from 'ws';
import { AppError } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { AuthService } from '../auth/auth.service.js';
import type { ConsoleEvent, ServerConsole } from '../../host/host.js';
import type { Logger } from '../../log.js';
import type { ServersService } from '../servers/servers.service.js';

export interface ConsoleLimits {
  /** Open console sockets one user may hold. */
  readonly socketsPerUser: number;
  /** Bytes that may wait for a slow socket before its waiting batches are dropped. */
  readonly maxQueuedBytes: number;
  /** A socket that takes nothing for this long while data waits for it is closed. */
  readonly stalledMs: number;
  /** Incoming messages: sustained rate per second, and burst. */
  readonly messagesPerSecond: number;
  readonly messageBurst: number;
  /**
   * Every open socket's token and access are checked again this often: a change made by another
   * process on the same database (the operator's command line: a password, a role) emits no
   * event in this one, so it is noticed at the next check rather than at once.
   */
  readonly recheckMs: number;
}

export const DEFAULT_CONSOLE_LIMITS: ConsoleLimits = {
  socketsPerUser: 10,
  maxQueuedBytes: 4 * 1024 * 1024,
  stalledMs: 30_000,
  messagesPerSecond: 10,
  messageBurst: 20,
  recheckMs: 10_000,
};

/** Largest message a client may send; ws closes the socket with 1009 above it. */
export const MAX_INCOMING_BYTES = 16 * 1024;

/** Close codes a client may act on. */
export const CLOSE = {
  tokenInvalid: 4401,
  accessRemoved: 4403,
  serverDeleted: 4404,
  notReading: 4408,
  tooManyMessages: 4429,
} as const;

/** What a socket was given and has not yet written out, past which frames wait in its queue. */
export const IN_FLIGHT_BYTES = 256 * 1024;
/** The longest a timer may wait (setTimeout's limit, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;
/** A socket closed for not reading is ended this long after its close frame. */
const CLOSE_GRACE_MS = 1_000;

/**
 * A frame waiting for a socket: a batch of `lines` lines, another message (never dropped), or
 * lines skipped in its place.
 */
type Waiting =
  | { readonly kind: 'lines'; readonly data: Buffer; readonly lines: number }
  | { readonly kind: 'other'; readonly data: Buffer }
  | { readonly kind: 'skipped'; lines: number };

interface Client {
  readonly socket: WebSocket;
  readonly userId: number;
  readonly token: string;
  readonly server: string;
  /** When the API key the socket was opened with expires: the socket is checked again then. */
  readonly expiresAt?: Date | undefined;
  expiryTimer: NodeJS.Timeout | null;
  tokens: number;
  refilledAt: number;
  /** Bytes given to the socket and not yet written out. */
  inFlight: number;
  readonly waiting: Waiting[];
  waitingBytes: number;
  /** When the socket last wrote something out, or when data began to wait for it. */
  progressAt: number;
}

type Outgoing =
  | ConsoleEvent
  | { readonly type: 'history'; readonly lines: readonly string[] }
  | { readonly type: 'error'; readonly code: string; readonly message: string };

/** What a ConsoleHub is made from. */
export interface ConsoleHubDeps {
  readonly servers: ServersService;
  readonly auth: AuthService;
  readonly events: PanelEvents;
  readonly log: Logger;
  readonly now: () => Date;
  readonly limits: ConsoleLimits;
}

export class ConsoleHub {
  readonly #byServer = new Map<string, Set<Client>>();
  readonly #byUser = new Map<number, Set<Client>>();
  readonly #unsubscribe = new Map<string, () => void>();
  /** Sockets that data waits for; checked for stalls while there are any. */
  readonly #backedUp = new Set<Client>();
  #stallTimer: NodeJS.Timeout | null = null;
  /** Runs while any socket is open: see `ConsoleLimits.recheckMs`. */
  #recheckTimer: NodeJS.Timeout | null = null;
  readonly #deps: ConsoleHubDeps;

  constructor(deps: ConsoleHubDeps) {
    this.#deps = deps;

    deps.events.on('access-changed', (userId) => {
      void this.#recheck(userId);
    });
    deps.events.on('backup-progress', (server, progress) => {
      const clients = this.#byServer.get(server);
      if (!clients) return;
      const data = Buffer.from(JSON.stringify({ type: 'backup', ...progress }));
      for (const client of clients) this.#give(client, { kind: 'other', data });
    });
    deps.events.on('transfer-progress', (server, progress) => {
      const clients = this.#byServer.get(server);
      if (!clients) return;
      const data = Buffer.from(JSON.stringify({ type: 'transfer', ...progress }));
      for (const client of clients) this.#give(client, { kind: 'other', data });
    });
    // The server's console is its new node's now: the sockets open on it hear that one.
    deps.events.on('server-moved', (server) => {
      const unsubscribe = this.#unsubscribe.get(server);
      if (unsubscribe === undefined) return;
      unsubscribe();
      this.#unsubscribe.set(
        server,
        deps.servers.consoleOf(server).subscribe((event) => {
          this.#broadcast(server, event);
        }),
      );
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

  /** Console sockets open now, of every user. */
  openSockets(): number {
    let count = 0;
    for (const clients of this.#byUser.values()) count += clients.size;
    return count;
  }

  /**
   * Takes over a socket whose owner may use the server: `console` is what the servers service
   * gave them, after checking that.
   */
  attach(
    socket: WebSocket,
    owner: { userId: number; token: string; server: string; expiresAt?: Date | undefined },
    console: ServerConsole,
  ): void {
    const client: Client = {
      socket,
      ...owner,
      expiryTimer: null,
      tokens: this.#deps.limits.messageBurst,
      refilledAt: this.#deps.now().getTime(),
      inFlight: 0,
      waiting: [],
      waitingBytes: 0,
      progressAt: this.#deps.now().getTime(),
    };
    add(this.#byServer, owner.server, client);
    add(this.#byUser, owner.userId, client);
    if (this.#recheckTimer === null) {
      this.#recheckTimer = setInterval(() => {
        for (const userId of this.#byUser.keys()) void this.#recheck(userId);
      }, this.#deps.limits.recheckMs);
      this.#recheckTimer.unref();
    }
    if (!this.#unsubscribe.has(owner.server)) {
      this.#unsubscribe.set(
        owner.server,
        console.subscribe((event) => {
          this.#broadcast(owner.server, event);
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
    const lines = console.history().map((entry) => entry.line);
    this.#reply(client, { type: 'history', lines });
    // What the game's last lines raised (its EULA line…), for a console opened afterwards.
    for (const notice of console.notices()) this.#reply(client, { type: 'notice', ...notice });
    this.#watchExpiry(client);
    // Access may have been taken away between the check before the upgrade and now.
    void this.#recheckClient(client);
  }

  /**
   * A socket opened with an expiring API key is checked again when the key expires, and so
   * closes then (4401) rather than at its next command. A timer waits at most MAX_TIMER_MS
   * (setTimeout's limit), and waits again if it woke before the expiry.
   */
  #watchExpiry(client: Client): void {
    if (client.expiresAt === undefined) return;
    const wait = client.expiresAt.getTime() - this.#deps.now().getTime();
    client.expiryTimer = setTimeout(
      () => {
        client.expiryTimer = null;
        const early = client.expiresAt !== undefined && client.expiresAt > this.#deps.now();
        if (early) this.#watchExpiry(client);
        else void this.#recheckClient(client);
      },
      Math.max(0, Math.min(wait, MAX_TIMER_MS)),
    );
    client.expiryTimer.unref();
  }

  #detach(client: Client): void {
    if (client.expiryTimer !== null) clearTimeout(client.expiryTimer);
    client.expiryTimer = null;
    this.#forgetWaiting(client);
    remove(this.#byUser, client.userId, client);
    if (this.#byUser.size === 0 && this.#recheckTimer !== null) {
      clearInterval(this.#recheckTimer);
      this.#recheckTimer = null;
    }
    if (remove(this.#byServer, client.server, client)) {
      this.#unsubscribe.get(client.server)?.();
      this.#unsubscribe.delete(client.server);
    }
  }

  /** Encodes `event` once and gives the same bytes to every socket watching `server`. */
  #broadcast(server: string, event: ConsoleEvent): void {
    const clients = this.#byServer.get(server);
    if (!clients) return;
    const data = Buffer.from(JSON.stringify(event));
    for (const client of clients) {
      if (event.type === 'log')
        this.#give(client, { kind: 'lines', data, lines: event.lines.length });
      else if (event.type === 'skipped') this.#skip(client, event.lines, data);
      else this.#give(client, { kind: 'other', data });
    }
  }

  #reply(client: Client, message: Outgoing): void {
    this.#give(client, { kind: 'other', data: Buffer.from(JSON.stringify(message)) });
  }

  /** Sends `frame` now if the socket keeps up, else queues it, dropping batches past the limit. */
  #give(client: Client, frame: Exclude<Waiting, { kind: 'skipped' }>): void {
    if (client.socket.readyState !== client.socket.OPEN) return;
    if (this.#keepsUp(client)) {
      this.#write(client, frame.data);
      return;
    }
    this.#wait(client, frame, frame.data.length);
    if (client.waitingBytes > this.#deps.limits.maxQueuedBytes) this.#dropBatches(client);
  }

  /** `lines` lines nobody will see: told now if the socket keeps up, else before its next batch. */
  #skip(client: Client, lines: number, data: Buffer): void {
    if (client.socket.readyState !== client.socket.OPEN) return;
    if (this.#keepsUp(client)) {
      this.#write(client, data);
      return;
    }
    const last = client.waiting.at(-1);
    if (last?.kind === 'skipped') last.lines += lines;
    else this.#wait(client, { kind: 'skipped', lines }, 0);
  }

  /** Nothing waits for this socket and it has room in flight: a frame may go straight out. */
  #keepsUp(client: Client): boolean {
    return client.waiting.length === 0 && client.inFlight < IN_FLIGHT_BYTES;
  }

  #wait(client: Client, frame: Waiting, bytes: number): void {
    if (client.waiting.length === 0 && client.inFlight === 0)
      client.progressAt = this.#deps.now().getTime();
    client.waiting.push(frame);
    client.waitingBytes += bytes;
    this.#backedUp.add(client);
    this.#watchStalls();
  }

  /** Replaces the waiting batches of lines by the count of their lines; other frames stay. */
  #dropBatches(client: Client): void {
    const kept: Waiting[] = [];
    let bytes = 0;
    for (const frame of client.waiting) {
      if (frame.kind === 'other') {
        kept.push(frame);
        bytes += frame.data.length;
        continue;
      }
      const last = kept.at(-1);
      if (last?.kind === 'skipped') last.lines += frame.lines;
      else kept.push({ kind: 'skipped', lines: frame.lines });
    }
    client.waiting.splice(0, client.waiting.length, ...kept);
    client.waitingBytes = bytes;
  }

  #write(client: Client, data: Buffer): void {
    if (client.inFlight === 0 && client.waiting.length === 0)
      client.progressAt = this.#deps.now().getTime();
    client.inFlight += data.length;
    client.socket.send(data, { binary: false }, (error) => {
      client.inFlight -= data.length;
      client.progressAt = this.#deps.now().getTime();
      if (!error) this.#pump(client);
    });
  }

  /** Gives a socket that wrote out what it had the frames waiting for it, in order. */
  #pump(client: Client): void {
    while (client.inFlight < IN_FLIGHT_BYTES) {
      const frame = client.waiting.shift();
      if (frame === undefined) break;
      if (frame.kind === 'skipped') {
        this.#write(client, Buffer.from(JSON.stringify({ type: 'skipped', lines: frame.lines })));
      } else {
        client.waitingBytes -= frame.data.length;
        this.#write(client, frame.data);
      }
    }
    if (client.waiting.length === 0) this.#backedUp.delete(client);
  }

  #forgetWaiting(client: Client): void {
    client.waiting.length = 0;
    client.waitingBytes = 0;
    this.#backedUp.delete(client);
  }

  /** While data waits for some socket, closes those that took nothing for `stalledMs`. */
  #watchStalls(): void {
    if (this.#stallTimer !== null) return;
    const { stalledMs } = this.#deps.limits;
    this.#stallTimer = setTimeout(
      () => {
        this.#stallTimer = null;
        const now = this.#deps.now().getTime();
        for (const client of [...this.#backedUp]) {
          if (now - client.progressAt < stalledMs) continue;
          this.#deps.log.info(
            { server: client.server, user: client.userId },
            'closed a console socket that read nothing while data waited',
          );
          this.#detach(client);
          const { socket } = client;
          socket.close(CLOSE.notReading, 'not reading');
          setTimeout(() => {
            socket.terminate();
          }, CLOSE_GRACE_MS).unref();
        }
        if (this.#backedUp.size > 0) this.#watchStalls();
      },
      Math.min(5_000, Math.max(50, stalledMs / 4)),
    );
    this.#stallTimer.unref();
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
      const user = await this.#deps.auth.authenticate(client.token);
      if (!user) {
        client.socket.close(CLOSE.tokenInvalid, 'token no longer valid');
        return;
      }
      await this.#deps.servers.command(user, client.server, message);
    } catch (error) {
      if (!(error instanceof AppError)) {
        this.#failed(client, error);
        return;
      }
      // Refused: the socket stays open for a reader who may still read (a command needs
      // console.write, reading console.read), and closes for one who lost the server.
      if (error.statusCode === 403 || error.statusCode === 404) {
        const user = await this.#deps.auth.authenticate(client.token);
        const reads =
          error.statusCode === 403 &&
          user !== null &&
          (await this.#deps.servers.permits(user, client.server, 'server.console.read'));
        if (!reads) {
          client.socket.close(CLOSE.accessRemoved, 'access removed');
          return;
        }
      }
      this.#reply(client, { type: 'error', code: error.code, message: error.message });
    }
  }

  /** Logs what went wrong with a client's message; the client learns only that it failed. */
  #failed(client: Client, error: unknown): void {
    this.#deps.log.error(
      { err: error, server: client.server, user: client.userId },
      'a console message failed',
    );
    this.#reply(client, { type: 'error', code: 'INTERNAL', message: 'Internal server error' });
  }

  /** Token bucket: false once the client sends faster than the limit allows. */
  #takeToken(client: Client): boolean {
    const now = this.#deps.now().getTime();
    const { messagesPerSecond, messageBurst } = this.#deps.limits;
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
      const user = await this.#deps.auth.authenticate(client.token);
      if (!user) client.socket.close(CLOSE.tokenInvalid, 'token no longer valid');
      else if (!(await this.#deps.servers.permits(user, client.server, 'server.console.read'))) {
        client.socket.close(CLOSE.accessRemoved, 'access removed');
      }
    } catch (error) {
      this.#deps.log.error({ err: error }, 'could not re-check a console socket; closing it');
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
