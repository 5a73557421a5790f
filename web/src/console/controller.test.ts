import { describe, expect, it } from 'vitest';
import type { ServerStatus } from '../components/StatusBadge';
import { createConsoleController, type Connection, type SocketLike } from './controller';

class FakeSocket {
  onopen: SocketLike['onopen'] = null;
  onmessage: SocketLike['onmessage'] = null;
  onclose: SocketLike['onclose'] = null;
  onerror: SocketLike['onerror'] = null;
  readyState = 0;
  readonly sent: string[] = [];
  closedWith: number | null = null;

  constructor(readonly url: string) {}

  send(data: string) {
    this.sent.push(data);
  }
  close(code?: number) {
    this.closedWith = code ?? 1005;
  }
  open() {
    this.readyState = 1;
    this.onopen?.call(this as unknown as WebSocket, new Event('open'));
  }
  receive(frame: unknown) {
    const event = { data: JSON.stringify(frame) } as MessageEvent;
    this.onmessage?.call(this as unknown as WebSocket, event);
  }
  drop(code: number) {
    this.readyState = 3;
    this.onclose?.call(this as unknown as WebSocket, { code } as CloseEvent);
  }
}

function setUp() {
  const sockets: FakeSocket[] = [];
  const timers: { run: () => void; ms: number; cleared: boolean }[] = [];
  const calls: (
    | ['reset']
    | ['write', string]
    | ['status', ServerStatus]
    | ['error', string]
    | ['notice', string]
  )[] = [];
  const connections: Connection[] = [];
  let token = 'first';
  const controller = createConsoleController({
    url: () => `ws://panel/ws/servers/mc/console?token=${token}`,
    openSocket: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    sink: {
      reset: () => calls.push(['reset']),
      write: (data) => calls.push(['write', data]),
      status: (status) => calls.push(['status', status]),
      error: (message) => calls.push(['error', message]),
      notice: (notice) => calls.push(['notice', notice.feature]),
      connection: (connection) => connections.push(connection),
    },
    setTimeout: (run, ms) => {
      const timer = { run, ms, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimeout: (handle) => {
      (handle as { cleared: boolean }).cleared = true;
    },
    now: () => 1_000_000,
  });
  const last = () => {
    const socket = sockets[sockets.length - 1];
    if (socket === undefined) throw new Error('no socket');
    return socket;
  };
  const fire = () => {
    const timer = timers.find((candidate) => !candidate.cleared);
    if (timer === undefined) throw new Error('no timer');
    timer.cleared = true;
    timer.run();
  };
  return {
    controller,
    sockets,
    timers,
    calls,
    connections,
    last,
    fire,
    setToken: (value: string) => (token = value),
  };
}

describe('console controller', () => {
  it('writes the history after a reset, and each batch in one write', () => {
    const { calls, last } = setUp();
    last().open();
    last().receive({ type: 'history', lines: ['one', '\x1b[32mtwo\x1b[0m'] });
    last().receive({ type: 'log', lines: ['a', 'b', 'c'], ts: '2026-01-01T00:00:00Z' });
    last().receive({ type: 'skipped', lines: 40 });
    last().receive({ type: 'log', lines: ['d'], ts: '2026-01-01T00:00:01Z' });
    expect(calls).toEqual([
      ['reset'],
      ['write', 'one\r\n\x1b[32mtwo\x1b[0m\r\n'],
      ['write', 'a\r\nb\r\nc\r\n'],
      ['write', '\x1b[2m… 40 lines skipped\x1b[22m\r\n'],
      ['write', 'd\r\n'],
    ]);
  });

  it('reports status changes and refused commands', () => {
    const { calls, last } = setUp();
    last().open();
    last().receive({ type: 'status', status: 'starting' });
    last().receive({ type: 'error', code: 'CONFLICT', message: 'The server is not running' });
    expect(calls).toEqual([
      ['status', 'starting'],
      ['write', '\x1b[2m[status] starting\x1b[22m\r\n'],
      ['error', 'The server is not running'],
    ]);
  });

  it("hands on a feature's notice, and again after the history of a new connection", () => {
    const { calls, last, fire } = setUp();
    last().open();
    last().receive({ type: 'history', lines: [] });
    last().receive({ type: 'notice', feature: 'eula', message: 'accept the EULA' });
    last().drop(1006);
    fire();
    last().open();
    last().receive({ type: 'history', lines: [] });
    last().receive({ type: 'notice', feature: 'eula', message: 'accept the EULA' });
    expect(calls).toEqual([
      ['reset'],
      ['write', ''],
      ['notice', 'eula'],
      ['reset'],
      ['write', ''],
      ['notice', 'eula'],
    ]);
  });

  it('sends commands only while connected', () => {
    const { controller, last } = setUp();
    expect(controller.send('say hi')).toBe(false);
    last().open();
    expect(controller.send('say hi')).toBe(true);
    expect(last().sent).toEqual(['{"type":"command","command":"say hi"}']);
  });

  it('connects again after a network drop, waiting 1 s, 2 s, 4 s… up to 30 s', () => {
    const { sockets, timers, connections, last, fire, setToken } = setUp();
    last().drop(1006);
    // A socket that already closed is done with: a second close event changes nothing.
    last().drop(1006);
    expect(timers.map((timer) => timer.ms)).toEqual([1000]);
    fire();
    last().drop(1006);
    fire();
    last().drop(1006);
    fire();
    last().drop(1006);
    expect(timers.map((timer) => timer.ms)).toEqual([1000, 2000, 4000, 8000]);
    for (let i = 0; i < 4; i += 1) {
      fire();
      last().drop(1006);
    }
    expect(timers.map((timer) => timer.ms).slice(-3)).toEqual([30000, 30000, 30000]);
    expect(connections.at(-1)).toEqual({ state: 'waiting', retryAt: 1_030_000, attempt: 7 });
    // Each attempt asks for the token again (it may have changed).
    setToken('second');
    fire();
    expect(last().url).toContain('token=second');
    expect(sockets.length).toBe(9);
  });

  it('starts the back-off again from 1 s once a connection got its history', () => {
    const { timers, last, fire } = setUp();
    last().drop(1006);
    fire();
    last().drop(1006);
    fire();
    last().open();
    last().receive({ type: 'history', lines: [] });
    last().drop(1001);
    expect(timers.map((timer) => timer.ms)).toEqual([1000, 2000, 1000]);
  });

  it('does not come back when the panel closed the socket on purpose', () => {
    for (const [code, reason] of [
      [4401, 'signed-out'],
      [4403, 'access-removed'],
      [4404, 'deleted'],
      [4408, 'fell-behind'],
    ] as const) {
      const { timers, connections, calls, last } = setUp();
      last().open();
      last().drop(code);
      expect(timers).toEqual([]);
      const closed = connections.at(-1);
      expect(closed).toMatchObject({ state: 'closed', reason });
      expect(calls.at(-1)?.[0]).toBe('write');
    }
  });

  it('reconnects at once when asked, after the console fell behind', () => {
    const { controller, sockets, connections, last } = setUp();
    last().open();
    last().drop(4408);
    controller.reconnect();
    expect(sockets.length).toBe(2);
    expect(connections.at(-1)).toEqual({ state: 'connecting' });
  });

  it('closes the socket and stops retrying once disposed', () => {
    const { controller, sockets, timers, last } = setUp();
    last().drop(1006);
    controller.dispose();
    expect(timers[0]?.cleared).toBe(true);
    controller.reconnect();
    expect(sockets.length).toBe(1);
    const again = setUp();
    again.last().open();
    again.controller.dispose();
    expect(again.last().closedWith).toBe(1000);
    expect(again.last().onmessage).toBeNull();
  });
});
