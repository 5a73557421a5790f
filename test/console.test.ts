/**
 * The live console socket (DECISIONS.md §3, §4): who may open it, what it sends (history, then
 * live lines and status changes), commands typed into it, sockets closed at once when their owner
 * loses access, a client that does not read, limits on what a client sends, and tokens kept out
 * of the log. Every socket here is a real WebSocket client against a listening panel.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import type {
  ExitInfo,
  ProcessRuntime,
  RunningProcess,
} from '../src/servers/runtime/process-runtime.js';
import { startPanel, testEnvironment, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  createServer,
  eventually,
  gameServerCommand,
  json,
  register,
  sendCommand,
  serverAction,
  setRole,
  type Session,
} from './helpers/factories.js';

type ServerMessage =
  | { readonly type: 'history'; readonly lines: readonly string[] }
  | { readonly type: 'log'; readonly line: string; readonly ts: string }
  | { readonly type: 'status'; readonly status: string }
  | { readonly type: 'error'; readonly code: string; readonly message: string };

type ErrorMessage = Extract<ServerMessage, { type: 'error' }>;

interface Closed {
  readonly code: number;
  readonly reason: string;
}

/** How a handshake presents the token: `Authorization: Bearer`, `?token=`, or not at all. */
type Credential = { readonly header: string } | { readonly query: string } | null;

const WAIT_MS = 10_000;

function consoleUrl(base: string, server: string, query?: string): string {
  const url = new URL(`/ws/servers/${encodeURIComponent(server)}/console`, base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (query !== undefined) url.searchParams.set('token', query);
  return url.href;
}

function handshake(base: string, server: string, credential: Credential): WebSocket {
  const url = consoleUrl(
    base,
    server,
    credential && 'query' in credential ? credential.query : undefined,
  );
  const headers =
    credential && 'header' in credential ? { authorization: `Bearer ${credential.header}` } : {};
  return new WebSocket(url, { headers });
}

const asHeader = (session: Session | string): Credential => ({
  header: typeof session === 'string' ? session : session.token,
});

/** Every socket a test opened, so a failing test cannot leave one behind. */
const opened = new Set<ConsoleClient>();

/** A console socket that collects every message it receives, in order. */
class ConsoleClient {
  readonly messages: ServerMessage[] = [];
  readonly closed: Promise<Closed>;
  #closeInfo: Closed | undefined;
  readonly #waiters = new Set<{
    readonly predicate: (message: ServerMessage) => boolean;
    readonly resolve: (message: ServerMessage) => void;
    readonly reject: (error: Error) => void;
  }>();

  private constructor(readonly ws: WebSocket) {
    opened.add(this);
    ws.on('error', () => undefined); // a cut-off connection may end in ECONNRESET; 'close' follows
    ws.on('message', (data: WebSocket.RawData) => {
      const message = JSON.parse(rawText(data)) as ServerMessage;
      this.messages.push(message);
      for (const waiter of this.#waiters) {
        if (waiter.predicate(message)) {
          this.#waiters.delete(waiter);
          waiter.resolve(message);
        }
      }
    });
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => {
        opened.delete(this);
        this.#closeInfo = { code, reason: reason.toString() };
        for (const waiter of this.#waiters) {
          waiter.reject(new Error(`the socket closed with ${code} ${reason.toString()}`));
        }
        this.#waiters.clear();
        resolve(this.#closeInfo);
      });
    });
  }

  /** Opens a console socket and resolves once it is open; rejects when it is refused. */
  static async connect(base: string, server: string, credential: Credential) {
    const client = new ConsoleClient(handshake(base, server, credential));
    await new Promise<void>((resolve, reject) => {
      client.ws.once('open', resolve);
      client.ws.once('unexpected-response', (_request, response) => {
        response.resume();
        reject(new Error(`the socket was refused with ${response.statusCode}`));
        client.ws.terminate();
      });
      void client.closed.then(() => {
        reject(new Error('the socket closed before it opened'));
      });
    });
    return client;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  logLines(): string[] {
    return this.messages.flatMap((message) => (message.type === 'log' ? [message.line] : []));
  }

  statuses(): string[] {
    return this.messages.flatMap((message) => (message.type === 'status' ? [message.status] : []));
  }

  /**
   * The first message that matches, among those received from index `from` on or arriving
   * later; fails after `timeoutMs` or when the socket closes first.
   */
  waitFor(
    predicate: (message: ServerMessage) => boolean,
    what: string,
    { timeoutMs = WAIT_MS, from = 0 }: { timeoutMs?: number; from?: number } = {},
  ): Promise<ServerMessage> {
    const found = this.messages.slice(from).find(predicate);
    if (found) return Promise.resolve(found);
    if (this.#closeInfo) {
      return Promise.reject(
        new Error(`waiting for ${what}, but the socket closed with ${this.#closeInfo.code}`),
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const waiter = {
        predicate,
        resolve: (message: ServerMessage) => {
          clearTimeout(timer);
          resolve(message);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(new Error(`waiting for ${what}: ${error.message}`));
        },
      };
      this.#waiters.add(waiter);
    });
  }

  /** Waits for an error reply after the messages received so far. */
  async nextError(what: string): Promise<ErrorMessage> {
    const message = await this.next((m) => m.type === 'error', what);
    assert.equal(message.type, 'error');
    return message;
  }

  /** Waits for a message after the ones received so far. */
  next(predicate: (message: ServerMessage) => boolean, what: string): Promise<ServerMessage> {
    return this.waitFor(predicate, what, { from: this.messages.length });
  }

  waitForLine(line: string, from = 0): Promise<ServerMessage> {
    return this.waitFor(
      (message) => message.type === 'log' && message.line === line,
      `the line "${line}"`,
      { from },
    );
  }

  waitForStatus(status: string): Promise<ServerMessage> {
    return this.waitFor(
      (message) => message.type === 'status' && message.status === status,
      `status ${status}`,
    );
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Resolves with the close code and reason; fails if the socket is still open after `timeoutMs`. */
  closedWithin(timeoutMs = WAIT_MS): Promise<Closed> {
    return within(this.closed, timeoutMs, 'the socket to close');
  }

  /** Proves the socket is open and served: a malformed message gets its error reply. */
  async assertServed(): Promise<void> {
    assert.ok(this.isOpen, 'the socket is still open');
    const reply = this.nextError('an error reply');
    this.send({ type: 'not-a-command' });
    assert.equal((await reply).code, 'VALIDATION_FAILED');
  }

  async close(): Promise<Closed> {
    if (this.ws.readyState === WebSocket.CONNECTING || this.ws.readyState === WebSocket.OPEN) {
      this.ws.close(1000);
    }
    return this.closedWithin();
  }
}

/** `promise`, or a failure naming `what` after `timeoutMs`. */
async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}

/** Ends every socket still open (after each group, so a failure leaves nothing behind). */
async function closeAll(): Promise<void> {
  await Promise.all(
    [...opened].map((client) => {
      client.ws.terminate();
      return client.closed;
    }),
  );
}

/**
 * The HTTP answer to a handshake: the status and error code of a refusal before the upgrade, or
 * status 101 when the socket was accepted (it is closed at once).
 */
function refusal(
  base: string,
  server: string,
  credential: Credential,
): Promise<{ status: number; code: unknown }> {
  const ws = handshake(base, server, credential);
  return new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.once('open', () => {
      ws.terminate();
      resolve({ status: 101, code: undefined });
    });
    ws.once('unexpected-response', (request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        request.destroy();
        let code: unknown;
        try {
          code = (JSON.parse(body) as { code?: unknown }).code;
        } catch {
          code = undefined;
        }
        resolve({ status: response.statusCode ?? 0, code });
      });
    });
  });
}

async function assertRefused(
  base: string,
  server: string,
  credential: Credential,
  status: number,
  code: string,
): Promise<void> {
  assert.deepEqual(await refusal(base, server, credential), { status, code });
}

async function setServers(
  panel: TestPanel,
  admin: Session,
  username: string,
  servers: string[],
): Promise<void> {
  const response = await panel.app.inject({
    method: 'PUT',
    url: `/api/users/${username}/servers`,
    headers: admin.headers,
    payload: { servers },
  });
  assert.equal(response.statusCode, 200, response.body);
}

async function startServer(panel: TestPanel, admin: Session, name: string): Promise<void> {
  const response = await serverAction(panel, admin, name, 'start');
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(json<{ data: { status: string } }>(response).data.status, 'running');
}

async function stopServer(panel: TestPanel, admin: Session, name: string): Promise<void> {
  const response = await serverAction(panel, admin, name, 'stop');
  assert.equal(response.statusCode, 200, response.body);
}

async function say(panel: TestPanel, session: Session, name: string, text: string) {
  const response = await sendCommand(panel, session, name, `say ${text}`);
  assert.equal(response.statusCode, 200, response.body);
}

/** `line 0` … `line n-1`, as `spam n` prints them. */
const numbered = (from: number, to: number): string[] =>
  Array.from({ length: to - from }, (_, i) => `line ${from + i}`);

const isHistory = (
  message: ServerMessage | undefined,
): message is Extract<ServerMessage, { type: 'history' }> => message?.type === 'history';

describe('console socket: refused before the upgrade', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  let player: Session;
  before(async () => {
    panel = await startPanel({}, { consoleLimits: { socketsPerUser: 2 } });
    base = await panel.listen();
    admin = await register(panel, 'admin');
    player = await register(panel, 'player');
    await createServer(panel, admin, 'alpha');
    await createServer(panel, admin, 'beta');
    await setServers(panel, admin, 'player', ['alpha']);
  });
  after(async () => {
    await closeAll();
    await panel.close();
  });

  it('refuses a missing or bad token with 401', async () => {
    await assertRefused(base, 'alpha', null, 401, 'UNAUTHORIZED');
    await assertRefused(base, 'alpha', { query: '' }, 401, 'UNAUTHORIZED');
    await assertRefused(base, 'alpha', { query: 'not-a-token' }, 401, 'UNAUTHORIZED');
    await assertRefused(base, 'alpha', asHeader('not-a-token'), 401, 'UNAUTHORIZED');
    const forged = `${player.token.slice(0, -4)}AAAA`;
    await assertRefused(base, 'alpha', { query: forged }, 401, 'UNAUTHORIZED');
  });

  it('refuses a banned user with 403, even on a server in their list', async () => {
    const outlaw = await register(panel, 'outlaw');
    await setServers(panel, admin, 'outlaw', ['alpha']);
    (await ConsoleClient.connect(base, 'alpha', asHeader(outlaw))).ws.terminate();
    await setRole(panel, admin, 'outlaw', 'banned');
    await assertRefused(base, 'alpha', asHeader(outlaw), 403, 'BANNED');
    await assertRefused(base, 'alpha', { query: outlaw.token }, 403, 'BANNED');
  });

  it('refuses a user without access to the server with 403', async () => {
    await assertRefused(base, 'beta', asHeader(player), 403, 'FORBIDDEN');
    await assertRefused(base, 'beta', { query: player.token }, 403, 'FORBIDDEN');
  });

  it('refuses an unknown server with 404', async () => {
    await assertRefused(base, 'no-such-server', asHeader(admin), 404, 'NOT_FOUND');
    await assertRefused(base, 'no-such-server', asHeader(player), 404, 'NOT_FOUND');
  });

  it('takes the token from the Authorization header or from the token query parameter', async () => {
    for (const credential of [asHeader(player), { query: player.token }]) {
      const client = await ConsoleClient.connect(base, 'alpha', credential);
      const first = await client.waitFor(() => true, 'the first message');
      assert.deepEqual(first, { type: 'history', lines: [] });
      await client.close();
    }
  });

  it('refuses sockets past the per-user cap with 429, and closing one frees a place', async () => {
    const hoarder = await register(panel, 'hoarder');
    await setServers(panel, admin, 'hoarder', ['alpha']);
    const first = await ConsoleClient.connect(base, 'alpha', asHeader(hoarder));
    const second = await ConsoleClient.connect(base, 'alpha', { query: hoarder.token });
    await assertRefused(base, 'alpha', asHeader(hoarder), 429, 'RATE_LIMITED');
    // The cap counts per user: someone else still gets in.
    const other = await ConsoleClient.connect(base, 'alpha', asHeader(player));
    await other.close();
    assert.ok(first.isOpen && second.isOpen);

    await first.close();
    const third = await eventually(
      () => ConsoleClient.connect(base, 'alpha', asHeader(hoarder)).catch(() => undefined),
      'a place to free up after closing a socket',
      5_000,
    );
    assert.ok(isHistory(await third.waitFor(() => true, 'the first message')));
    await assertRefused(base, 'alpha', asHeader(hoarder), 429, 'RATE_LIMITED');
    await second.close();
    await third.close();
  });
});

describe('console socket: history and live events', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  before(async () => {
    panel = await startPanel();
    base = await panel.listen();
    admin = await register(panel, 'admin');
  });
  after(async () => {
    await closeAll();
    await panel.close();
  });

  it('first sends the lines printed so far as {"type":"history","lines":[…]}', async () => {
    await createServer(panel, admin, 'storyteller');
    await startServer(panel, admin, 'storyteller');
    const watcher = await ConsoleClient.connect(base, 'storyteller', asHeader(admin));
    for (const text of ['one', 'two', 'three']) await say(panel, admin, 'storyteller', text);
    await watcher.waitForLine('[Server] three');

    const late = await ConsoleClient.connect(base, 'storyteller', { query: admin.token });
    const first = await late.waitFor(() => true, 'the first message');
    assert.ok(isHistory(first), JSON.stringify(first));
    assert.deepEqual(Object.keys(first).sort(), ['lines', 'type']);
    const seen = [...(isHistory(watcher.messages[0]) ? watcher.messages[0].lines : [])];
    seen.push(...watcher.logLines());
    assert.deepEqual(first.lines, seen, 'the history is every line printed so far, in order');
    const said = first.lines.filter((line) => line.startsWith('[Server] '));
    assert.deepEqual(said, ['[Server] one', '[Server] two', '[Server] three']);
    assert.ok(first.lines.includes('Starting fake server'));

    await stopServer(panel, admin, 'storyteller');
    await late.waitForStatus('stopped');
    await watcher.close();
    await late.close();
  });

  it('then streams {"type":"log","line","ts"} and {"type":"status","status"} in order', async () => {
    await createServer(panel, admin, 'narrator');
    const client = await ConsoleClient.connect(base, 'narrator', asHeader(admin));
    await startServer(panel, admin, 'narrator');
    await client.waitForStatus('running');
    await say(panel, admin, 'narrator', 'hello there');
    await client.waitForLine('[Server] hello there');
    await stopServer(panel, admin, 'narrator');
    await client.waitForStatus('stopped');

    const { messages } = client;
    assert.deepEqual(messages[0], { type: 'history', lines: [] });
    assert.deepEqual(client.statuses(), ['starting', 'running', 'stopping', 'stopped']);
    for (const message of messages.slice(1)) {
      if (message.type === 'log') {
        assert.deepEqual(Object.keys(message).sort(), ['line', 'ts', 'type']);
        assert.equal(new Date(message.ts).toISOString(), message.ts, 'ts is an ISO date');
      } else {
        assert.equal(message.type, 'status', JSON.stringify(message));
        assert.deepEqual(Object.keys(message).sort(), ['status', 'type']);
      }
    }
    const at = (predicate: (message: ServerMessage) => boolean): number => {
      const index = messages.findIndex(predicate);
      assert.ok(index >= 0);
      return index;
    };
    const status = (name: string) => at((m) => m.type === 'status' && m.status === name);
    const line = (text: string) => at((m) => m.type === 'log' && m.line === text);
    assert.ok(status('starting') < line('Starting fake server'));
    assert.ok(status('running') < line('[Server] hello there'));
    assert.ok(line('[Server] hello there') < status('stopping'));
    assert.ok(status('stopping') < line('[panel] stopped'));
    assert.ok(line('[panel] stopped') < status('stopped'));
    await client.close();
  });

  it('keeps only the newest 1000 lines of history', async () => {
    await createServer(panel, admin, 'chatterbox');
    await startServer(panel, admin, 'chatterbox');
    const watcher = await ConsoleClient.connect(base, 'chatterbox', asHeader(admin));
    const response = await sendCommand(panel, admin, 'chatterbox', 'spam 1500');
    assert.equal(response.statusCode, 200, response.body);
    await watcher.waitForLine('line 1499');

    const late = await ConsoleClient.connect(base, 'chatterbox', asHeader(admin));
    const first = await late.waitFor(() => true, 'the history');
    assert.ok(isHistory(first));
    assert.equal(first.lines.length, 1000);
    assert.deepEqual(first.lines, numbered(500, 1500));

    await stopServer(panel, admin, 'chatterbox');
    await watcher.close();
    await late.close();
  });
});

describe('console socket: commands', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  before(async () => {
    panel = await startPanel();
    base = await panel.listen();
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'arena');
    await createServer(panel, admin, 'idle');
  });
  after(async () => {
    await closeAll();
    await panel.close();
  });

  it('writes {"type":"command","command"} to the server and its output comes back', async () => {
    const operator = await register(panel, 'operator');
    await setServers(panel, admin, 'operator', ['arena']);
    await startServer(panel, admin, 'arena');
    const client = await ConsoleClient.connect(base, 'arena', asHeader(operator));
    client.send({ type: 'command', command: 'say hi' });
    await client.waitForLine('[Server] hi');
    assert.equal(client.messages.filter((m) => m.type === 'error').length, 0);
    await stopServer(panel, admin, 'arena');
    await client.close();
  });

  it('answers a malformed message with an error and keeps the socket open', async () => {
    await startServer(panel, admin, 'arena');
    const client = await ConsoleClient.connect(base, 'arena', asHeader(admin));
    const malformed: (string | Buffer)[] = [
      'not json',
      'null',
      '[]',
      '"say hi"',
      JSON.stringify({ type: 'command' }),
      JSON.stringify({ type: 'command', command: 42 }),
      JSON.stringify({ type: 'command', command: '' }),
      JSON.stringify({ type: 'command', command: 'say a\nsay b' }),
      JSON.stringify({ type: 'shout', command: 'say hi' }),
      JSON.stringify({ type: 'command', command: 'x'.repeat(4097) }),
      Buffer.from(JSON.stringify({ type: 'command', command: 'say binary' })),
    ];
    for (const message of malformed) {
      const reply = client.nextError(`an error for ${String(message)}`);
      client.ws.send(message);
      const error = await reply;
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.equal(typeof error.message, 'string');
      assert.ok(client.isOpen);
    }
    client.send({ type: 'command', command: 'say still here' });
    await client.waitForLine('[Server] still here');
    assert.ok(!client.logLines().includes('[Server] binary'));
    assert.ok(!client.logLines().some((line) => line.includes('say a')));
    await stopServer(panel, admin, 'arena');
    await client.close();
  });

  it('answers a command to a stopped server with a CONFLICT error', async () => {
    const client = await ConsoleClient.connect(base, 'idle', asHeader(admin));
    const reply = client.nextError('an error');
    client.send({ type: 'command', command: 'say anyone?' });
    assert.equal((await reply).code, 'CONFLICT');
    await client.assertServed();
    await client.close();
  });

  it('checks every command against current rights and closes the socket when they are gone', async () => {
    // The rows are changed behind the panel's back, so no revocation event closes the socket
    // first: only the check made for the command itself can notice.
    await startServer(panel, admin, 'arena');
    const removed = await register(panel, 'removed');
    const revoked = await register(panel, 'revoked');
    await setServers(panel, admin, 'removed', ['arena']);
    await setServers(panel, admin, 'revoked', ['arena']);
    const lost = await ConsoleClient.connect(base, 'arena', asHeader(removed));
    const stale = await ConsoleClient.connect(base, 'arena', asHeader(revoked));
    const bystander = await ConsoleClient.connect(base, 'arena', asHeader(admin));
    lost.send({ type: 'command', command: 'say before' });
    await lost.waitForLine('[Server] before');

    const ids = await panel.db.kysely
      .selectFrom('users')
      .select(['id', 'username'])
      .where('username', 'in', ['removed', 'revoked'])
      .execute();
    const idOf = (name: string) => ids.find((row) => row.username === name)!.id;
    await panel.db.kysely
      .deleteFrom('user_servers')
      .where('user_id', '=', idOf('removed'))
      .execute();
    await panel.db.kysely
      .updateTable('users')
      .set((eb) => ({ token_version: eb('token_version', '+', 1) }))
      .where('id', '=', idOf('revoked'))
      .execute();
    assert.ok(lost.isOpen && stale.isOpen, 'nothing told the console yet');

    lost.send({ type: 'command', command: 'say after' });
    stale.send({ type: 'command', command: 'say after' });
    assert.equal((await lost.closedWithin()).code, 4403);
    assert.equal((await stale.closedWithin()).code, 4401);
    await bystander.assertServed();
    bystander.send({ type: 'command', command: 'say bystander' });
    await bystander.waitForLine('[Server] bystander');
    assert.ok(!bystander.logLines().includes('[Server] after'), 'neither command ran');

    await stopServer(panel, admin, 'arena');
    await bystander.close();
  });
});

describe('console socket: losing access closes open sockets at once', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  let bystander: Session;
  before(async () => {
    panel = await startPanel();
    base = await panel.listen();
    admin = await register(panel, 'admin');
    bystander = await register(panel, 'bystander');
    await createServer(panel, admin, 'shared');
    await createServer(panel, admin, 'elsewhere');
    await setServers(panel, admin, 'bystander', ['shared', 'elsewhere']);
  });
  after(async () => {
    await closeAll();
    await panel.close();
  });

  /**
   * Opens a socket on `shared` for a new user `username` with access to it and one for the
   * bystander, runs `revoke`, and checks that the first closes with `code` while the other stays
   * open and served.
   */
  async function expectClosedBy(
    username: string,
    code: number,
    revoke: (victim: Session) => Promise<void>,
  ): Promise<Closed> {
    const victim = await register(panel, username);
    await setServers(panel, admin, username, ['shared']);
    const doomed = await ConsoleClient.connect(base, 'shared', asHeader(victim));
    const other = await ConsoleClient.connect(base, 'shared', asHeader(bystander));
    await doomed.assertServed();

    await revoke(victim);
    const closed = await doomed.closedWithin();
    assert.equal(closed.code, code, `closed with ${closed.code} ${closed.reason}`);
    await other.assertServed();
    await other.close();
    return closed;
  }

  it('closes with 4403 when the user is banned', async () => {
    await expectClosedBy('to-be-banned', 4403, async () => {
      await setRole(panel, admin, 'to-be-banned', 'banned');
    });
  });

  it('closes with 4403 when the server leaves the user’s list', async () => {
    await expectClosedBy('to-be-removed', 4403, async () => {
      await setServers(panel, admin, 'to-be-removed', ['elsewhere']);
    });
  });

  it('closes only the sockets on servers the user lost', async () => {
    const keeper = await register(panel, 'keeper');
    await setServers(panel, admin, 'keeper', ['shared', 'elsewhere']);
    const kept = await ConsoleClient.connect(base, 'shared', asHeader(keeper));
    const lost = await ConsoleClient.connect(base, 'elsewhere', asHeader(keeper));
    await setRole(panel, admin, 'keeper', 'support'); // a change that keeps every right
    await setServers(panel, admin, 'keeper', ['shared']);
    assert.equal((await lost.closedWithin()).code, 4403);
    // The user's sockets are re-checked in the order they were opened: `kept` has been too.
    await kept.assertServed();
    await kept.close();
  });

  it('closes with 4401 when the user is deleted', async () => {
    await expectClosedBy('to-be-deleted', 4401, async () => {
      const response = await panel.app.inject({
        method: 'DELETE',
        url: '/api/users/to-be-deleted',
        headers: admin.headers,
      });
      assert.equal(response.statusCode, 200, response.body);
    });
  });

  it('closes the old token’s socket with 4401 when the password changes', async () => {
    let fresh = '';
    await expectClosedBy('to-be-changed', 4401, async (victim) => {
      const response = await panel.app.inject({
        method: 'PUT',
        url: '/api/profile/password',
        headers: victim.headers,
        payload: { old_password: PASSWORD, new_password: 'a brand new password' },
      });
      assert.equal(response.statusCode, 200, response.body);
      fresh = json<{ data: { access_token: string } }>(response).data.access_token;
    });
    const again = await ConsoleClient.connect(base, 'shared', asHeader(fresh));
    await again.assertServed();
    await again.close();
  });

  it('closes every socket on a deleted server with 4404, and only those', async () => {
    await createServer(panel, admin, 'doomed');
    await setServers(panel, admin, 'bystander', ['shared', 'elsewhere', 'doomed']);
    await startServer(panel, admin, 'doomed');
    const mine = await ConsoleClient.connect(base, 'doomed', asHeader(admin));
    const theirs = await ConsoleClient.connect(base, 'doomed', asHeader(bystander));
    const elsewhere = await ConsoleClient.connect(base, 'elsewhere', asHeader(bystander));
    // Up and running, so the deletion stops it at once (a stop in the first few milliseconds
    // after a start does not reach a sandboxed server and waits for the SIGKILL, 5 s later).
    // The line may come live, or already in the history if the server was quicker.
    await mine.waitFor(
      (m) =>
        (m.type === 'log' && m.line.startsWith('Done!')) ||
        (m.type === 'history' && m.lines.some((line) => line.startsWith('Done!'))),
      'the server up',
    );
    const response = await panel.app.inject({
      method: 'DELETE',
      url: '/api/servers/doomed',
      headers: admin.headers,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((await mine.closedWithin()).code, 4404);
    assert.equal((await theirs.closedWithin()).code, 4404);
    await elsewhere.assertServed();
    await assertRefused(base, 'doomed', asHeader(admin), 404, 'NOT_FOUND');
    await elsewhere.close();
  });
});

describe('console socket: a client that does not read', () => {
  // Each burst is a quarter of the queue limit, and the reader reads all of one before the next
  // is asked for, so a reader never comes near the limit; a client that reads nothing passes it
  // once the kernel's socket buffers are full, after a number of bursts that depends on the host.
  // (One burst larger than the limit is no fair test: the reader shares this process's event
  // loop with the panel, which can queue a whole burst before the reader gets to read.)
  const MAX_QUEUED_BYTES = 256 * 1024;
  const BURST = 1000; // lines; about 66 KiB of log messages
  const MAX_BURSTS = 400; // 26 MB in all: far beyond any kernel buffering
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  let sloth: Session;
  before(async () => {
    panel = await startPanel(
      {},
      { consoleLimits: { maxQueuedBytes: MAX_QUEUED_BYTES, socketsPerUser: 1 } },
    );
    base = await panel.listen();
    admin = await register(panel, 'admin');
    sloth = await register(panel, 'sloth');
    await createServer(panel, admin, 'firehose');
    await setServers(panel, admin, 'sloth', ['firehose']);
  });
  after(async () => {
    await closeAll();
    await panel.close();
  });

  /**
   * Whether the panel has let go of the sloth's socket: with one socket allowed per user, a
   * second one is refused (429) for as long as the first is held.
   */
  async function slothLetGo(): Promise<boolean> {
    const { status } = await refusal(base, 'firehose', asHeader(sloth));
    if (status === 429) return false;
    assert.equal(status, 101, 'the probe was either refused for the cap or accepted');
    return true;
  }

  it('is cut off while a reading client on the same server receives every line', async () => {
    await startServer(panel, admin, 'firehose');
    const reader = await ConsoleClient.connect(base, 'firehose', asHeader(admin));
    const slow = await ConsoleClient.connect(base, 'firehose', asHeader(sloth));
    await reader.waitFor(isHistory, 'the reader’s history');
    await slow.waitFor(isHistory, 'the slow client’s history');
    const tcp = (slow.ws as unknown as { _socket: Socket })._socket;
    tcp.pause();
    assert.equal(await slothLetGo(), false);

    const last = `line ${BURST - 1}`;
    let bursts = 0;
    let cutAfter: number | undefined;
    // Bursts until the panel lets go of the slow client, then two more that only the reader gets.
    while (cutAfter === undefined || bursts < cutAfter + 2) {
      assert.ok(bursts < MAX_BURSTS, `the slow client was still held after ${bursts} bursts`);
      const from = reader.messages.length;
      const response = await sendCommand(panel, admin, 'firehose', `spam ${BURST}`);
      assert.equal(response.statusCode, 200, response.body);
      await reader.waitForLine(last, from);
      bursts += 1;
      if (cutAfter === undefined && (await slothLetGo())) cutAfter = bursts;
    }
    const spam = reader.logLines().filter((line) => /^line \d+$/.test(line));
    assert.equal(spam.length, bursts * BURST, 'the reader saw every line');
    assert.deepEqual(
      spam,
      Array.from({ length: bursts }, () => numbered(0, BURST)).flat(),
      'in order',
    );
    assert.ok(reader.isOpen);

    // A client that does not read cannot see its connection end either: it reads what the
    // kernel still holds for it, then finds the connection gone.
    tcp.resume();
    const closed = await slow.closedWithin();
    assert.equal(closed.code, 1006, 'ended without a close frame, which it could not have read');
    const slowSpam = slow.logLines().filter((line) => /^line \d+$/.test(line));
    assert.ok(slowSpam.length < spam.length, 'the slow client missed the bursts after the cut');
    await reader.assertServed();

    await stopServer(panel, admin, 'firehose');
    await reader.close();
  });
});

/**
 * A runtime whose servers run nothing and whose standard input fails with a plain Error, not an
 * AppError: a fault the panel did not foresee, met while handling a console message.
 */
function runtimeWithBrokenStdin(): ProcessRuntime {
  return {
    description: 'servers run nowhere (a test runtime)',
    isolated: true,
    start: () => {
      let end: (exit: ExitInfo) => void = () => undefined;
      const exited = new Promise<ExitInfo>((resolve) => {
        end = resolve;
      });
      const running: RunningProcess = {
        pid: 1_000_000_000,
        identity: 'test',
        startedAt: new Date(),
        exited,
        onOutput: () => undefined,
        writeLine: () => {
          throw new Error('stdin exploded at /srv/secret/path');
        },
        terminate: () => {
          end({ code: null, signal: 'SIGTERM' });
          return Promise.resolve();
        },
        kill: () => {
          end({ code: null, signal: 'SIGKILL' });
          return Promise.resolve();
        },
        usage: () => Promise.resolve({ cpuPercent: 0, memoryBytes: 0 }),
      };
      return Promise.resolve(running);
    },
    reap: () => Promise.resolve(false),
  };
}

describe('console socket: an unforeseen failure while handling a message', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  const logged: string[] = [];
  before(async () => {
    panel = await startPanel(
      { LOG_LEVEL: 'error' },
      {
        runtime: runtimeWithBrokenStdin(),
        logStream: {
          write: (line: string) => {
            logged.push(line);
          },
        },
      },
    );
    base = await panel.listen();
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'brittle');
  });
  after(async () => {
    await closeAll();
    await panel.close();
  });

  it('answers with an INTERNAL error, logs it with its context, and the panel keeps serving', async () => {
    await startServer(panel, admin, 'brittle');
    const client = await ConsoleClient.connect(base, 'brittle', asHeader(admin));
    const reply = client.nextError('the error for a command that failed');
    client.send({ type: 'command', command: 'say hi' });
    assert.deepEqual(await reply, {
      type: 'error',
      code: 'INTERNAL',
      message: 'Internal server error',
    });
    assert.doesNotMatch(JSON.stringify(client.messages), /exploded|secret/, 'no internals shown');

    // The socket, the panel and other sockets go on as before.
    await client.assertServed();
    const again = client.nextError('the error for the next failed command');
    client.send({ type: 'command', command: 'say hi again' });
    assert.equal((await again).code, 'INTERNAL');
    const health = await fetch(`${base}/api/health`);
    assert.equal(health.status, 200);
    const other = await ConsoleClient.connect(base, 'brittle', { query: admin.token });
    await other.assertServed();

    const entries = logged.map(
      (line) =>
        JSON.parse(line) as {
          msg?: string;
          server?: string;
          user?: number;
          err?: { message?: string };
        },
    );
    const failures = entries.filter((entry) => entry.msg === 'a console message failed');
    assert.equal(failures.length, 2, JSON.stringify(entries));
    const [failure] = failures;
    assert.ok(failure);
    assert.equal(failure.server, 'brittle');
    assert.equal(typeof failure.user, 'number');
    assert.match(failure.err?.message ?? '', /stdin exploded/);

    await other.close();
    await client.close();
  });
});

describe('console socket: limits on what a client sends', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  before(async () => {
    panel = await startPanel({}, { consoleLimits: { messagesPerSecond: 1, messageBurst: 3 } });
    base = await panel.listen();
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'gate');
  });
  after(async () => {
    await closeAll();
    await panel.close();
  });

  /** A command message of exactly `bytes` bytes. */
  const commandOfSize = (bytes: number): string => {
    const frame = JSON.stringify({ type: 'command', command: '' });
    return JSON.stringify({ type: 'command', command: 'x'.repeat(bytes - frame.length) });
  };

  it('closes the socket with 1009 on a message over 16 KiB', async () => {
    const client = await ConsoleClient.connect(base, 'gate', asHeader(admin));
    const largest = commandOfSize(16 * 1024);
    assert.equal(Buffer.byteLength(largest), 16 * 1024);
    const reply = client.nextError('the error for a command too long');
    client.send(largest);
    // Exactly 16 KiB is read, and answered (a command that long is refused).
    assert.equal((await reply).code, 'VALIDATION_FAILED');
    assert.ok(client.isOpen);

    client.send(commandOfSize(16 * 1024 + 1));
    assert.equal((await client.closedWithin()).code, 1009);
  });

  it('closes the socket with 4429 when messages come faster than the rate limit', async () => {
    const flooder = await ConsoleClient.connect(base, 'gate', asHeader(admin));
    for (let i = 0; i < 10; i++) flooder.send({ type: 'spam' });
    const closed = await flooder.closedWithin();
    assert.equal(closed.code, 4429);
    const answered = flooder.messages.filter((m) => m.type === 'error').length;
    // The burst of 3 is answered; the bucket refills by 1 per second, so only a stall of the
    // test of a whole second could let a fourth through.
    assert.ok(answered >= 3 && answered <= 4, `${answered} messages answered`);

    const polite = await ConsoleClient.connect(base, 'gate', asHeader(admin));
    for (let i = 0; i < 3; i++) polite.send({ type: 'spam' });
    await polite.waitFor(
      () => polite.messages.filter((m) => m.type === 'error').length === 3,
      'three answers',
    );
    assert.ok(polite.isOpen, 'a burst within the limit is fine');
    // One message per second is the sustained rate: after a second there is room for one more.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await polite.assertServed();
    await polite.close();
  });
});

describe('console socket: tokens in the query string', () => {
  // The panel's own logger settings (redaction included) are only in use when nothing overrides
  // them, so this runs the panel as an operator does (src/server.ts) and reads its output.
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment());
  });
  after(() => cleanup());

  it('never writes them to the log, which shows [redacted] instead', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { PATH: process.env.PATH ?? '', ...env, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const secrets: string[] = [];
    const exited = once(child, 'exit');
    try {
      const listening = new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match?.[1]) resolve(match[1]);
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exited.then(() => {
          reject(new Error(`the panel exited: ${output}`));
        });
      });
      const base = await within(listening, 30_000, 'the panel to listen');
      const post = (url: string, body: object, token?: string) =>
        fetch(`${base}${url}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify(body),
        });
      const registered = await post('/api/auth/register', {
        username: 'watcher',
        password: PASSWORD,
      });
      assert.equal(registered.status, 200);
      const { access_token: token } = (await registered.json()) as { access_token: string };
      secrets.push(token);
      const created = await post(
        '/api/servers/create',
        { name: 'lookout', startCommand: gameServerCommand() },
        token,
      );
      assert.equal(created.status, 200);

      const client = await ConsoleClient.connect(base, 'lookout', { query: token });
      assert.ok(isHistory(await client.waitFor(() => true, 'the history')));
      await client.close();
      const bad = `not-a-valid-token-${'s3cr3t'.repeat(4)}`;
      secrets.push(bad);
      assert.equal((await refusal(base, 'lookout', { query: bad })).status, 401);
      const mixed = new URL(consoleUrl(base, 'lookout'));
      mixed.search = `?before=1&token=${encodeURIComponent(token)}&after=2`;
      const third = new WebSocket(mixed.href);
      third.on('error', () => undefined);
      await within(once(third, 'open'), WAIT_MS, 'the third socket to open');
      third.close();
      await within(once(third, 'close'), WAIT_MS, 'the third socket to close');
      // A parameter name spelled with an escape is still the token to Fastify, and still hidden.
      const escaped = new URL(consoleUrl(base, 'lookout'));
      escaped.search = `?%74oken=${encodeURIComponent(token)}`;
      const fourth = new WebSocket(escaped.href);
      fourth.on('error', () => undefined);
      await within(once(fourth, 'open'), WAIT_MS, 'the fourth socket to open');
      fourth.close();
      await within(once(fourth, 'close'), WAIT_MS, 'the fourth socket to close');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    assert.equal(secrets.length, 2);
    assert.match(output, /\/ws\/servers\/lookout\/console/, 'the socket requests were logged');
    for (const secret of secrets) assert.ok(!output.includes(secret), `${secret} is in the log`);
    assert.ok(!output.includes(secrets[0]!.split('.')[2]!), 'not even the signature');
    // The whole query of a socket URL is hidden, however its parameters are spelled.
    assert.match(output, /\/ws\/servers\/lookout\/console\?\[redacted\]"/);
    assert.doesNotMatch(output, /console\?[^[]/);
  });
});
