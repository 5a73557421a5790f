/**
 * A server that prints as fast as it can (docs/api.md, contract §4, issue 11): the panel keeps
 * reading its output, keeps answering requests and keeps its console readers, and where it had to
 * drop lines it says how many. The history is exactly the last 1000 lines once the flood is over.
 * The servers are coreutils' `seq`, whose numbered lines let every gap be checked; no test here
 * measures a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  createServer,
  eventually,
  historyOf,
  register,
  serverAction,
  type Session,
} from './helpers/factories.js';

const NUMBER = /^\d+$/;

/**
 * A console socket that keeps every line it is shown, history first, and where lines were
 * skipped their number (a `{"type":"skipped","lines":N}` message), and checks the gaps.
 */
class Reader {
  readonly lines: string[] = [];
  /** The lines shown and, as numbers, the counts of lines skipped, in order. */
  readonly shown: (string | number)[] = [];
  readonly statuses: string[] = [];
  #closed = false;

  private constructor(private readonly socket: WebSocket) {
    socket.on('close', () => {
      this.#closed = true;
    });
    socket.on('error', () => undefined); // a cut-off socket ends in ECONNRESET; 'close' follows
  }

  static async open(base: string, server: string, session: Session): Promise<Reader> {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws/servers/${server}/console`, {
      headers: session.headers,
    });
    const reader = new Reader(socket);
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString('utf8')) as {
          type: string;
          lines?: string[] | number;
          status?: string;
        };
        if (message.type === 'history' || message.type === 'log') {
          const lines = Array.isArray(message.lines) ? message.lines : [];
          reader.lines.push(...lines);
          reader.shown.push(...lines);
          if (message.type === 'history') resolve();
        } else if (message.type === 'skipped' && typeof message.lines === 'number') {
          reader.shown.push(message.lines);
        } else if (message.type === 'status' && message.status !== undefined) {
          reader.statuses.push(message.status);
        }
      });
      socket.once('close', () => {
        reject(new Error('the socket closed before its history'));
      });
    });
    return reader;
  }

  get isOpen(): boolean {
    return !this.#closed && this.socket.readyState === WebSocket.OPEN;
  }

  /** The numbered lines received, in order. */
  numbers(): number[] {
    return this.lines.filter((line) => NUMBER.test(line)).map(Number);
  }

  /** Lines the panel said it skipped. */
  skipped(): number {
    return this.shown.reduce<number>((sum, item) => sum + (typeof item === 'number' ? item : 0), 0);
  }

  /**
   * `seq` counts from 1 without a gap: every number shown follows the one before, or the lines
   * skipped between them.
   */
  assertEveryLineAccountedFor(): void {
    let previous = 0;
    let skipped = 0;
    for (const item of this.shown) {
      if (typeof item === 'number') {
        skipped += item;
        continue;
      }
      if (!NUMBER.test(item)) continue;
      assert.equal(Number(item), previous + skipped + 1, `after ${previous}, ${skipped} skipped`);
      previous = Number(item);
      skipped = 0;
    }
  }

  close(): void {
    this.socket.close();
  }
}

describe('console: a server that prints without pause', () => {
  let panel: TestPanel;
  let base: string;
  let admin: Session;
  const readers: Reader[] = [];
  after(() => {
    for (const reader of readers) reader.close();
  });
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    base = await panel.listen();
    admin = await register(panel, 'admin');
  });

  it('answers requests while its output keeps flowing, and no reader is cut off', async () => {
    await createServer(panel, admin, 'firehose', { startCommand: 'seq 1 1000000000' });
    const watching = [
      await Reader.open(base, 'firehose', admin),
      await Reader.open(base, 'firehose', admin),
    ];
    readers.push(...watching);
    const started = await serverAction(panel, admin, 'firehose', 'start');
    assert.equal(started.statusCode, 200, started.body);
    await eventually(
      () => (watching.every((reader) => reader.numbers().length > 1000) ? true : undefined),
      'the output to reach the readers',
    );

    // Over real HTTP, one request after the other, as a health check does.
    const shownBefore = watching.map((reader) => reader.lines.length);
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${base}/api/health`);
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    }
    await eventually(
      () =>
        watching.every((reader, i) => reader.lines.length > (shownBefore[i] ?? 0))
          ? true
          : undefined,
      'more output meanwhile',
    );
    for (const reader of watching) {
      assert.ok(reader.isOpen, 'a reader that reads is never cut off');
      reader.assertEveryLineAccountedFor();
      assert.ok(reader.skipped() > 0, 'the panel skipped lines rather than hold the server up');
    }

    const stopped = await serverAction(panel, admin, 'firehose', 'stop');
    assert.equal(stopped.statusCode, 200, stopped.body);
  });

  it('ends with exactly the last 1000 lines as history once the flood is over', async () => {
    const last = 3_000_000;
    await createServer(panel, admin, 'burst', { startCommand: `seq 1 ${last}` });
    const reader = await Reader.open(base, 'burst', admin);
    readers.push(reader);
    const started = await serverAction(panel, admin, 'burst', 'start');
    assert.equal(started.statusCode, 200, started.body);
    // seq ends by itself: an exit nobody asked for.
    await eventually(
      () => (reader.statuses.includes('crashed') ? true : undefined),
      'the server to finish',
      60_000,
    );
    reader.assertEveryLineAccountedFor();
    assert.equal(reader.numbers().at(-1), last, 'the live console showed the last line');

    const history = await historyOf(panel, admin, 'burst');
    assert.equal(history.length, 1000);
    const numbers = history.filter((line) => NUMBER.test(line)).map(Number);
    const others = history.filter((line) => !NUMBER.test(line));
    assert.ok(
      others.every((line) => line.startsWith('[panel] ')),
      others.join('\n'),
    );
    assert.deepEqual(
      numbers,
      Array.from({ length: numbers.length }, (_, i) => last - numbers.length + 1 + i),
      'the last lines the server printed, none skipped',
    );
    assert.equal(numbers.length, 1000 - others.length);
  });
});
