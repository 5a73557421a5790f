/**
 * The live console socket, protocol v2 (docs/api.md, contract §3, §4, issue 12): who may open it,
 * what it sends (history, then batches of lines and status changes), commands typed into it and
 * shown to every reader, a server that no longer reads its input, sockets closed at once when their
 * owner loses access, a reader that falls behind (a skipped count, never a cut) or reads nothing
 * (closed after a while), limits on what a client sends, and tokens kept out of the log. Every
 * socket here is a real WebSocket client against a listening panel, and every server the fixture
 * game server or a shell; no test measures a time.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { CLOSE, IN_FLIGHT_BYTES } from '../src/modules/console/console.hub.js';
import type { ExitInfo, Runtime, RunningProcess } from '../src/host/runtime/runtime.js';
import { startPanel, suiteScope, testEnvironment, type TestPanel } from './helpers/app.js';
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
  stats,
  type Session,
} from './helpers/factories.js';

type ServerMessage =
  | { readonly type: 'history'; readonly lines: readonly string[] }
  | { readonly type: 'log'; readonly lines: readonly string[]; readonly ts: string }
  | { readonly type: 'status'; readonly status: string }
  | { readonly type: 'skipped'; readonly lines: number }
  | { readonly type: 'error'; readonly code: string; readonly message: string };

type ErrorMessage = Extract<ServerMessage, { type: 'error' }>;
type LogMessage = Extract<ServerMessage, { type: 'log' }>;

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
  /** Bytes of every message received. */
  receivedBytes = 0;
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
      const text = rawText(data);
      this.receivedBytes += text.length;
      const message = JSON.parse(text) as ServerMessage;
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

  /** The lines of every log batch received, in order. */
  logLines(): string[] {
    return this.messages.flatMap((message) => (message.type === 'log' ? message.lines : []));
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

  /** The batch that holds `line`, among those received from index `from` on or arriving later. */
  waitForLine(line: string, from = 0): Promise<ServerMessage> {
    return this.waitFor(
      (message) => message.type === 'log' && message.lines.includes(line),
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

/** Waits until the fixture said it is up, live or already in the history. */
async function serverUp(client: ConsoleClient): Promise<void> {
  const up = (line: string) => line.startsWith('Done!');
  await client.waitFor(
    (m) => (m.type === 'log' || m.type === 'history') && m.lines.some(up),
    'the server up',
  );
}

describe('console socket: refused before the upgrade', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  let player: Session;
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, {}, { consoleLimits: { socketsPerUser: 2 } });
    base = await panel.listen();
    admin = await register(panel, 'admin');
    player = await register(panel, 'player');
    await createServer(panel, admin, 'alpha');
    await createServer(panel, admin, 'beta');
    await setServers(panel, admin, 'player', ['alpha']);
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
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    base = await panel.listen();
    admin = await register(panel, 'admin');
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

  it('then streams {"type":"log","lines","ts"} and {"type":"status","status"} in order', async () => {
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
        assert.deepEqual(Object.keys(message).sort(), ['lines', 'ts', 'type']);
        assert.ok(message.lines.length > 0, 'a batch is never empty');
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
    // The batch a line came in: a status frame always comes after the lines printed before it.
    const line = (text: string) => at((m) => m.type === 'log' && m.lines.includes(text));
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

  it('sends a flood in batches: every line once, in order, in fewer frames than lines', async () => {
    await createServer(panel, admin, 'batcher');
    await startServer(panel, admin, 'batcher');
    const client = await ConsoleClient.connect(base, 'batcher', asHeader(admin));
    await serverUp(client);
    const from = client.messages.length;
    const response = await sendCommand(panel, admin, 'batcher', 'spam 5000');
    assert.equal(response.statusCode, 200, response.body);
    await client.waitForLine('line 4999', from);

    const after = client.messages.slice(from);
    const batches = after.filter((m): m is LogMessage => m.type === 'log');
    assert.equal(batches.length, after.length, 'nothing but batches of lines');
    assert.deepEqual(
      batches.flatMap((batch) => batch.lines),
      ['[panel] admin> spam 5000', ...numbered(0, 5000)],
    );
    assert.ok(batches.length < 5000, `${batches.length} frames for 5001 lines`);
    let previous = '';
    for (const batch of batches) {
      assert.equal(new Date(batch.ts).toISOString(), batch.ts, 'ts is an ISO date');
      assert.ok(batch.ts >= previous, `ts ${batch.ts} after ${previous}`);
      previous = batch.ts;
    }

    await stopServer(panel, admin, 'batcher');
    await client.close();
  });

  it('gives a socket opened after 5,000 lines exactly the last 1000 lines the console showed', async () => {
    await createServer(panel, admin, 'scroller');
    await startServer(panel, admin, 'scroller');
    const watcher = await ConsoleClient.connect(base, 'scroller', asHeader(admin));
    await serverUp(watcher);
    await say(panel, admin, 'scroller', 'before');
    const response = await sendCommand(panel, admin, 'scroller', 'spam 5000');
    assert.equal(response.statusCode, 200, response.body);
    await watcher.waitForLine('line 4999');
    await say(panel, admin, 'scroller', 'after');
    await watcher.waitForLine('[Server] after');

    const late = await ConsoleClient.connect(base, 'scroller', asHeader(admin));
    const first = await late.waitFor(() => true, 'the history');
    assert.ok(isHistory(first));
    const [history] = watcher.messages;
    assert.ok(isHistory(history));
    const shown = [...history.lines, ...watcher.logLines()];
    assert.deepEqual(first.lines, shown.slice(-1000), 'what the console showed last');
    assert.deepEqual(first.lines, [
      ...numbered(4002, 5000),
      '[panel] admin> say after',
      '[Server] after',
    ]);

    await stopServer(panel, admin, 'scroller');
    await watcher.close();
    await late.close();
  });
});

describe('console socket: commands', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    base = await panel.listen();
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'arena');
    await createServer(panel, admin, 'idle');
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

  it('shows every reader each command as "[panel] <username>> <command>", before its answer', async () => {
    const alice = await register(panel, 'alice');
    const bob = await register(panel, 'bob');
    await setServers(panel, admin, 'alice', ['arena']);
    await setServers(panel, admin, 'bob', ['arena']);
    await startServer(panel, admin, 'arena');
    const hers = await ConsoleClient.connect(base, 'arena', asHeader(alice));
    const his = await ConsoleClient.connect(base, 'arena', asHeader(bob));
    await serverUp(hers);
    await serverUp(his);

    hers.send({ type: 'command', command: 'say hi' });
    for (const client of [hers, his]) await client.waitForLine('[Server] hi');
    const response = await sendCommand(panel, bob, 'arena', 'say there');
    assert.equal(response.statusCode, 200, response.body);
    for (const client of [hers, his]) await client.waitForLine('[Server] there');

    const expected = ['[panel] alice> say hi', '[Server] hi', '[panel] bob> say there'];
    expected.push('[Server] there');
    for (const client of [hers, his]) {
      const lines = client.logLines();
      assert.deepEqual(
        lines.filter((line) => expected.includes(line)),
        expected,
        lines.join(' | '),
      );
    }
    const late = await ConsoleClient.connect(base, 'arena', asHeader(admin));
    const history = await late.waitFor(isHistory, 'the history');
    assert.ok(isHistory(history));
    const since = history.lines.lastIndexOf('[panel] alice> say hi');
    assert.deepEqual(
      history.lines.slice(since).filter((line) => expected.includes(line)),
      expected,
      'the history shows them too',
    );

    await stopServer(panel, admin, 'arena');
    await late.close();
    await his.close();
    await hers.close();
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

for (const [sandbox, env] of [
  ['the default sandbox', {}],
  ['SANDBOX=none', { SANDBOX: 'none' }],
] as const) {
  describe(`console socket: a server that closed its input (${sandbox})`, () => {
    const NOT_READ = '[panel] the server does not read its input: the command was not read';
    let panel: TestPanel;
    let base: string;
    let admin: Session;
    after(closeAll);
    const suite = suiteScope();
    before(async () => {
      panel = await startPanel(suite, env);
      base = await panel.listen();
      admin = await register(panel, 'admin');
      await createServer(panel, admin, 'deaf', {
        startCommand: `sh -c 'exec 0<&-; echo "input closed"; while :; do sleep 1; done'`,
      });
      await createServer(panel, admin, 'listener');
    });

    it('still answers 200 to a command, and the console says it was not read', async () => {
      await startServer(panel, admin, 'deaf');
      const client = await ConsoleClient.connect(base, 'deaf', asHeader(admin));
      await client.waitFor(
        (m) => (m.type === 'log' || m.type === 'history') && m.lines.includes('input closed'),
        'the server to close its input',
      );
      const from = client.messages.length;
      await say(panel, admin, 'deaf', 'anyone?');
      await client.waitForLine(NOT_READ, from);
      const next = client.messages.length;
      client.send({ type: 'command', command: 'say hello?' });
      await client.waitForLine(NOT_READ, next);
      assert.deepEqual(client.logLines().slice(-4), [
        '[panel] admin> say anyone?',
        NOT_READ,
        '[panel] admin> say hello?',
        NOT_READ,
      ]);
      assert.equal(client.messages.filter((m) => m.type === 'error').length, 0);

      await stopServer(panel, admin, 'deaf');
      await client.close();
    });

    it('says nothing of the kind for a server that reads its input, however often it starts', async () => {
      const client = await ConsoleClient.connect(base, 'listener', asHeader(admin));
      // What the panel learns of a server's input as it starts must hold at every start.
      for (let start = 1; start <= 8; start++) {
        const from = client.messages.length;
        await startServer(panel, admin, 'listener');
        await client.waitFor(
          (m) => m.type === 'log' && m.lines.some((line) => line.startsWith('Done!')),
          'the server up',
          { from },
        );
        for (const word of ['one', 'two', 'three', 'four']) {
          const text = `${word} (start ${start})`;
          if (word === 'two') client.send({ type: 'command', command: `say ${text}` });
          else await say(panel, admin, 'listener', text);
          await client.waitForLine(`[Server] ${text}`, from);
        }
        // The notice comes a little after its command, once the panel looked at the server's
        // processes in /proc; the stats look there too, after every check of these commands.
        await stats(panel, admin, 'listener');
        assert.ok(!client.logLines().includes(NOT_READ), client.logLines().join(' | '));
        await stopServer(panel, admin, 'listener');
      }
      await client.close();
    });
  });
}

describe('console socket: losing access closes open sockets at once', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  let bystander: Session;
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    base = await panel.listen();
    admin = await register(panel, 'admin');
    bystander = await register(panel, 'bystander');
    await createServer(panel, admin, 'shared');
    await createServer(panel, admin, 'elsewhere');
    await setServers(panel, admin, 'bystander', ['shared', 'elsewhere']);
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

  /** Makes an API key for `session` (its password given); answers the key's id and token. */
  async function apiKey(
    session: Session,
    body: Record<string, unknown> = {},
  ): Promise<{ id: number; token: string }> {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/profile/api-keys',
      headers: session.headers,
      payload: { name: 'console key', password: PASSWORD, ...body },
    });
    assert.equal(response.statusCode, 200, response.body);
    const { data } = json<{ data: { key: { id: number }; token: string } }>(response);
    return { id: data.key.id, token: data.token };
  }

  it('closes an API key’s sockets with 4401 when it is revoked, and only those', async () => {
    const owner = await register(panel, 'key-owner');
    await setServers(panel, admin, 'key-owner', ['shared']);
    const key = await apiKey(owner);
    const kept = await apiKey(owner, { name: 'kept' });
    const viaKey = await ConsoleClient.connect(base, 'shared', asHeader(key.token));
    const viaOther = await ConsoleClient.connect(base, 'shared', asHeader(kept.token));
    const viaSession = await ConsoleClient.connect(base, 'shared', asHeader(owner));
    await viaKey.assertServed();
    const revoked = await panel.app.inject({
      method: 'DELETE',
      url: `/api/profile/api-keys/${key.id}`,
      headers: owner.headers,
    });
    assert.equal(revoked.statusCode, 200, revoked.body);
    // At once, without the socket sending anything.
    assert.equal((await viaKey.closedWithin()).code, 4401);
    await viaOther.assertServed();
    await viaSession.assertServed();
    await viaOther.close();
    await viaSession.close();
  });

  it('closes an API key’s sockets with 4401 when it expires', async () => {
    const owner = await register(panel, 'key-expiring');
    await setServers(panel, admin, 'key-expiring', ['shared']);
    const key = await apiKey(owner, { expiresAt: new Date(Date.now() + 1_500).toISOString() });
    const viaKey = await ConsoleClient.connect(base, 'shared', asHeader(key.token));
    await viaKey.assertServed();
    assert.equal((await viaKey.closedWithin()).code, 4401);
  });

  it('closes the API keys’ sockets at a password change, unless asked to keep the keys', async () => {
    const owner = await register(panel, 'key-password');
    await setServers(panel, admin, 'key-password', ['shared']);
    let token = owner.token;
    for (const revokeApiKeys of [false, true]) {
      const key = await apiKey({ ...owner, token, headers: { authorization: `Bearer ${token}` } });
      const viaKey = await ConsoleClient.connect(base, 'shared', asHeader(key.token));
      await viaKey.assertServed();
      const response = await panel.app.inject({
        method: 'PUT',
        url: '/api/profile/password',
        headers: { authorization: `Bearer ${token}` },
        payload: { old_password: PASSWORD, new_password: PASSWORD, revokeApiKeys },
      });
      assert.equal(response.statusCode, 200, response.body);
      const data = json<{ data: { access_token: string; revokedApiKeys: number } }>(response).data;
      token = data.access_token;
      if (revokeApiKeys) {
        // The key kept at the first change, and this one.
        assert.equal(data.revokedApiKeys, 2);
        assert.equal((await viaKey.closedWithin()).code, 4401);
      } else {
        assert.equal(data.revokedApiKeys, 0);
        await viaKey.assertServed();
        await viaKey.close();
      }
    }
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
    await serverUp(mine);
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

/**
 * An upper bound on what the kernel holds of a connection whose reader reads nothing: the largest
 * receive buffer of the reader's end and the largest send buffer of the panel's (TCP autotuning
 * never goes past them), and a little for what the reader's process took before it stopped.
 * Past that, and past what the panel handed to the socket (IN_FLIGHT_BYTES), frames for that
 * reader can only wait in the panel's queue for it.
 */
function heldForAStalledReader(): number {
  const largest = (file: string): number => {
    const value = Number(readFileSync(file, 'utf8').trim().split(/\s+/).at(-1));
    assert.ok(Number.isSafeInteger(value) && value > 0, `${file}: ${value}`);
    return value;
  };
  const slack = 1024 * 1024;
  return (
    largest('/proc/sys/net/ipv4/tcp_rmem') +
    largest('/proc/sys/net/ipv4/tcp_wmem') +
    IN_FLIGHT_BYTES +
    slack
  );
}

/** Lines of a `count` burst and their width: a burst is about 512 KiB of frames. */
const BURST_LINES = 4000;
const BURST_WIDTH = 128;
const COUNTED = /^count (\d+)\.*$/;

/** The numbers of the `count` lines among `lines`, in order. */
const counted = (lines: readonly string[]): number[] =>
  lines.flatMap((line) => {
    const match = COUNTED.exec(line);
    return match ? [Number(match[1])] : [];
  });

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i);

/**
 * Has a server print numbered bursts (`count`), each once `reader` received all of the one
 * before: a reader that reads never has more than one burst to catch up with, and the console
 * never falls behind the server.
 */
class PacedPrinter {
  /** Lines printed so far: `count 0` … `count printed-1`. */
  printed = 0;

  constructor(
    private readonly panel: TestPanel,
    private readonly session: Session,
    private readonly server: string,
    private readonly reader: ConsoleClient,
  ) {}

  get lastLine(): string {
    return `count ${this.printed - 1}`.padEnd(BURST_WIDTH, '.');
  }

  async burst(): Promise<void> {
    const from = this.reader.messages.length;
    const command = `count ${BURST_LINES} ${BURST_WIDTH}`;
    const response = await sendCommand(this.panel, this.session, this.server, command);
    assert.equal(response.statusCode, 200, response.body);
    this.printed += BURST_LINES;
    await this.reader.waitForLine(this.lastLine, from);
  }

  /** Bursts until they printed more than `bytes`. */
  async moreThan(bytes: number): Promise<void> {
    const from = this.printed;
    while ((this.printed - from) * BURST_WIDTH <= bytes) await this.burst();
  }
}

/**
 * Checks that the log lines `client` received are `shown` (every line since its history), in
 * order, but for runs of lines replaced, where they were, by a `skipped` count of exactly their
 * number; answers the lines skipped.
 */
function assertGapsCounted(client: ConsoleClient, shown: readonly string[]): number {
  let at = 0;
  let skipped = 0;
  for (const message of client.messages) {
    if (message.type === 'skipped') {
      at += message.lines;
      skipped += message.lines;
    } else if (message.type === 'log') {
      for (const line of message.lines) {
        if (line !== shown[at]) {
          assert.fail(`line ${at} is "${line}", where the console showed "${shown[at]}"`);
        }
        at += 1;
      }
    }
  }
  assert.equal(at, shown.length, 'every line was received or counted as skipped');
  return skipped;
}

describe('console socket: a reader that falls behind', () => {
  // A small queue, so that a reader that stops reading soon has batches dropped; a stall limit
  // out of reach, so that it is never closed for not reading.
  const MAX_QUEUED_BYTES = 1024 * 1024;
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      {},
      { consoleLimits: { maxQueuedBytes: MAX_QUEUED_BYTES, stalledMs: 10 * 60_000 } },
    );
    base = await panel.listen();
    admin = await register(panel, 'admin');
  });

  it('is told {"type":"skipped","lines":N} where its batches were dropped, then gets the lines after, and stays open', async () => {
    await createServer(panel, admin, 'torrent');
    await startServer(panel, admin, 'torrent');
    const reader = await ConsoleClient.connect(base, 'torrent', asHeader(admin));
    await serverUp(reader);
    const slow = await ConsoleClient.connect(base, 'torrent', asHeader(admin));
    await slow.waitFor(isHistory, 'the history');
    // The server is quiet: from here on, both get the same lines.
    const since = reader.logLines().length;
    // Stops reading the connection itself, not only handing on its messages.
    slow.ws.pause();

    const printer = new PacedPrinter(panel, admin, 'torrent', reader);
    await printer.moreThan(heldForAStalledReader() + MAX_QUEUED_BYTES);
    assert.ok(slow.isOpen);
    slow.ws.resume();
    // A burst sent while it still drains what was queued for it may be dropped for it too (and
    // counted as skipped): on a loaded machine that takes a few bursts. Once caught up, it gets
    // the lines that follow.
    const deadline = Date.now() + 60_000;
    for (;;) {
      await printer.burst();
      const caughtUp = await slow
        .waitFor((m) => m.type === 'log' && m.lines.includes(printer.lastLine), 'the last burst', {
          timeoutMs: 5_000,
        })
        .then(
          () => true,
          () => false,
        );
      if (caughtUp) break;
      assert.ok(Date.now() < deadline, 'the reader that reads again gets the lines after');
    }

    const shown = reader.logLines();
    assert.equal(reader.messages.filter((m) => m.type === 'skipped').length, 0);
    assert.deepEqual(counted(shown), range(0, printer.printed), 'the reader saw every line');
    const skipped = assertGapsCounted(slow, shown.slice(since));
    assert.ok(skipped > 0, 'the reader that stopped reading had lines skipped');
    const lastSkip = slow.messages.findLastIndex((m) => m.type === 'skipped');
    assert.ok(
      slow.messages.slice(lastSkip + 1).some((m) => m.type === 'log'),
      'batches follow the skipped count',
    );
    await slow.assertServed();
    await reader.assertServed();

    await stopServer(panel, admin, 'torrent');
    await slow.close();
    await reader.close();
  });

  it('does not hold the server up while a reader reads nothing', async () => {
    await createServer(panel, admin, 'geyser');
    await startServer(panel, admin, 'geyser');
    const reader = await ConsoleClient.connect(base, 'geyser', asHeader(admin));
    await serverUp(reader);
    const stalled = await ConsoleClient.connect(base, 'geyser', asHeader(admin));
    await stalled.waitFor(isHistory, 'the history');
    stalled.ws.pause();

    // The server prints without end, and records in a file how many lines it wrote to its
    // output, a pipe it writes synchronously: the count only rises while the panel reads.
    const pouredFile = path.join(panel.config.serversDir, 'geyser', 'poured');
    const poured = (): number | undefined => {
      try {
        return Number(readFileSync(pouredFile, 'utf8'));
      } catch {
        return undefined;
      }
    };
    const from = reader.messages.length;
    const bytesBefore = reader.receivedBytes;
    const response = await sendCommand(panel, admin, 'geyser', 'pour 200 200');
    assert.equal(response.statusCode, 200, response.body);
    // Once more was sent to every reader than the stalled one's connection can hold, what is
    // sent to it waits in the panel: from then on it is stalled.
    const held = heldForAStalledReader();
    await eventually(
      () => (reader.receivedBytes - bytesBefore > held ? true : undefined),
      'more output than a stalled connection holds',
      120_000,
    );
    const printedThen = poured() ?? 0;
    assert.ok(printedThen > 0);
    await eventually(
      () => ((poured() ?? 0) >= printedThen + 20_000 ? true : undefined),
      'the server to print on',
      60_000,
    );
    await reader.waitFor(
      (m) =>
        m.type === 'log' &&
        m.lines.some((line) => Number(/^pour (\d+)/.exec(line)?.[1] ?? -1) >= printedThen),
      'a line printed after the reader stalled',
      { from, timeoutMs: 60_000 },
    );
    assert.ok(stalled.isOpen, 'the stalled reader is only behind');
    assert.ok(reader.isOpen);

    await stopServer(panel, admin, 'geyser');
    stalled.ws.resume();
    await stalled.close();
    await reader.close();
  });
});

describe('console socket: a reader that reads nothing', () => {
  // A queue limit out of reach: only the stall limit can end the socket.
  const STALLED_MS = 1_000;
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  let sloth: Session;
  const logged: string[] = [];
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      { LOG_LEVEL: 'info' },
      {
        consoleLimits: { stalledMs: STALLED_MS, socketsPerUser: 1, maxQueuedBytes: 1024 ** 3 },
        logStream: {
          write: (line: string) => {
            logged.push(line);
          },
        },
      },
    );
    base = await panel.listen();
    admin = await register(panel, 'admin');
    sloth = await register(panel, 'sloth');
    await createServer(panel, admin, 'firehose');
    await setServers(panel, admin, 'sloth', ['firehose']);
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

  it('is closed once data waited for it for stalledMs, and readers that read go on', async () => {
    await startServer(panel, admin, 'firehose');
    const reader = await ConsoleClient.connect(base, 'firehose', asHeader(admin));
    await serverUp(reader);
    const slow = await ConsoleClient.connect(base, 'firehose', asHeader(sloth));
    await slow.waitFor(isHistory, 'the slow client’s history');
    // The server is quiet: from here on, both get the same lines.
    const since = reader.logLines().length;
    slow.ws.pause();
    assert.equal(await slothLetGo(), false);

    const printer = new PacedPrinter(panel, admin, 'firehose', reader);
    await printer.moreThan(heldForAStalledReader());
    await eventually(
      async () => ((await slothLetGo()) ? true : undefined),
      'the panel to let go of the socket that reads nothing',
      60_000,
    );
    const closings = logged
      .map((line) => JSON.parse(line) as { msg?: string; server?: string })
      .filter(
        (entry) => entry.msg === 'closed a console socket that read nothing while data waited',
      );
    assert.equal(closings.length, 1, logged.join('\n'));
    assert.equal(closings[0]?.server, 'firehose');

    await printer.burst();
    const shown = reader.logLines();
    assert.equal(reader.messages.filter((m) => m.type === 'skipped').length, 0);
    assert.deepEqual(counted(shown), range(0, printer.printed), 'the reader saw every line');
    await reader.assertServed();

    // It reads what the kernel still held for it, then finds the connection closed; the close
    // frame sat behind what it did not read, so it may never see it.
    slow.ws.resume();
    const closed = await slow.closedWithin(60_000);
    assert.ok([CLOSE.notReading, 1006].includes(closed.code), `closed with ${closed.code}`);
    const got = slow.logLines();
    assert.ok(got.length < shown.length - since, 'it missed what came after');
    assert.deepEqual(
      got,
      shown.slice(since, since + got.length),
      'what it got came in order, without a gap',
    );

    await stopServer(panel, admin, 'firehose');
    await reader.close();
  });
});

/**
 * A runtime whose servers run nothing and whose standard input fails with a plain Error, not an
 * AppError: a fault the panel did not foresee, met while handling a console message.
 */
function runtimeWithBrokenStdin(): Runtime {
  return {
    kind: 'process',
    enforces: new Set(),
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
        detach: () => undefined,
        startedAt: new Date(),
        exited,
        onOutput: () => undefined,
        writeLine: () => {
          throw new Error('stdin exploded at /srv/secret/path');
        },
        readsInput: () => Promise.resolve(true),
        terminate: () => {
          end({ code: null, signal: 'SIGTERM', outOfMemory: false });
          return Promise.resolve();
        },
        kill: () => {
          end({ code: null, signal: 'SIGKILL', outOfMemory: false });
          return Promise.resolve();
        },
        usage: () => Promise.resolve({ cpuPercent: 0, memoryBytes: 0, pids: 0 }),
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
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
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
  after(closeAll);
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      {},
      { consoleLimits: { messagesPerSecond: 1, messageBurst: 3 } },
    );
    base = await panel.listen();
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'gate');
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
