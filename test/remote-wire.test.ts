/**
 * The file agent's wire (src/host/remote/wire.ts): a WireClient and a WireServer joined by a
 * pair of in-process streams, the server answering from a table of test methods. What crosses:
 * calls at once, JSON and bytes, errors that keep their code, streams both ways held to their
 * credit (counted in bytes, never timed), cancellation both ways, a broken stream rejecting all
 * that is pending with NODE_UNREACHABLE, and frames past the limits closing the stream.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { AppError } from '../src/errors.js';
import {
  encodeFrame,
  FrameDecoder,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
  ProtocolError,
} from '../src/host/remote/frames.js';
import { WireClient } from '../src/host/remote/wire-client.js';
import { WireServer, type Method } from '../src/host/remote/wire-server.js';
import { eventually } from './helpers/factories.js';

/** Two ends of one byte stream: what one writes, the other reads; ending one ends the other. */
function streamPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  /** The ends whose reading side has been ended. */
  const over = new Set<Duplex>();
  const deliver = (to: Duplex, chunk: Buffer | null): void => {
    if (over.has(to) || to.destroyed) return;
    if (chunk === null) over.add(to);
    to.push(chunk);
  };
  const end = (other: () => Duplex): Duplex =>
    new Duplex({
      read() {
        // Pushed by the other end.
      },
      // As a pipe: the bytes arrive, and the writer hears they were taken, a turn later.
      write(chunk: Buffer, _encoding, callback) {
        setImmediate(() => {
          deliver(other(), chunk);
          callback();
        });
      },
      final(callback) {
        setImmediate(() => {
          deliver(other(), null);
          callback();
        });
      },
      destroy(error, callback) {
        deliver(other(), null);
        callback(error);
      },
    });
  ends.push(
    end(() => ends[1]!),
    end(() => ends[0]!),
  );
  return [ends[0]!, ends[1]!];
}

/** Lets the streams move: a few turns of the event loop. */
const turns = async (count: number): Promise<void> => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

const KIB = 1024;
const MIB = 1024 * KIB;

/** A source of `total` bytes made as they are read, counting them. */
function countingSource(total: number, chunk = 64 * KIB) {
  const counts = { produced: 0, destroyed: false };
  const stream = new Readable({
    highWaterMark: chunk,
    read() {
      const size = Math.min(chunk, total - counts.produced);
      if (size <= 0) {
        this.push(null);
        return;
      }
      counts.produced += size;
      this.push(Buffer.alloc(size, counts.produced % 251));
    },
    destroy(error, callback) {
      counts.destroyed = true;
      callback(error);
    },
  });
  return { stream, counts };
}

/** A client and a server on one stream pair, the server answering from `methods`. */
function connected(methods: Record<string, Method>, window = 256 * KIB) {
  const [panelEnd, agentEnd] = streamPair();
  const logged: string[] = [];
  const server = new WireServer(agentEnd, new Map(Object.entries(methods)), {
    window,
    log: (message) => logged.push(message),
  });
  const client = new WireClient(panelEnd, { window });
  return { client, server, panelEnd, agentEnd, logged };
}

/** A source that gives only what the test pushes into it. */
const idle = (): Readable =>
  new Readable({
    read() {
      // Fed by the test.
    },
  });

/** Reads `stream` to its end, keeping nothing. */
const drain = async (stream: Readable): Promise<void> => {
  for await (const chunk of stream) assert.ok(Buffer.isBuffer(chunk));
};

/** A promise and its resolve, for methods that wait on the test. */
function gate<T = void>() {
  let open: (value: T) => void = () => undefined;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('the file agent wire', () => {
  it('answers calls at once, out of order, in JSON and in bytes', async () => {
    const later = gate();
    const { client } = connected({
      echo: { run: (args) => Promise.resolve({ args }) },
      slow: { run: async (args) => (await later.opened, args[0]) },
      bytes: {
        run: (_args, call) =>
          Promise.resolve(Buffer.concat([call.body ?? Buffer.alloc(0), Buffer.from('!')])),
      },
    });
    const slow = client.call('slow', ['last']).answer;
    const echo = await client.call('echo', [['world', 'level.dat'], null, 3]).answer;
    assert.deepEqual(echo.value, { args: [['world', 'level.dat'], null, 3] });
    const bytes = await client.call('bytes', [], { body: Buffer.from([0, 1, 2]) }).answer;
    assert.deepEqual(bytes.body, Buffer.from([0, 1, 2, 0x21]));
    assert.equal(client.pending, 1);
    later.open();
    assert.equal((await slow).value, 'last');
    assert.equal(client.pending, 0);
    client.close();
  });

  it('re-throws errors with their class, code, status, message and details', async () => {
    const { client, logged } = connected({
      outside: {
        run: () =>
          Promise.reject(
            new AppError('PATH_OUTSIDE', 'etc/hostname leads outside the folder', {
              details: [{ path: '/path', message: 'leads outside' }],
            }),
          ),
      },
      full: {
        run: () => Promise.reject(Object.assign(new Error('no space left'), { code: 'ENOSPC' })),
      },
      fine: { run: () => Promise.resolve('still here') },
    });
    const outside = await client.call('outside', []).answer.catch((error: unknown) => error);
    assert.ok(outside instanceof AppError);
    assert.equal(outside.code, 'PATH_OUTSIDE');
    assert.equal(outside.statusCode, 403);
    assert.equal(outside.message, 'etc/hostname leads outside the folder');
    assert.deepEqual(outside.options.details, [{ path: '/path', message: 'leads outside' }]);

    // A fault stays a fault (a 500 on the panel), its errno kept; the agent logs it.
    const full = await client.call('full', []).answer.catch((error: unknown) => error);
    assert.ok(full instanceof Error && !(full instanceof AppError));
    assert.equal((full as { code?: unknown }).code, 'ENOSPC');
    assert.deepEqual(logged, ['a call failed']);

    // Only the table's own names are methods: an unknown one, or one an object inherits, is a
    // refused call, and the agent goes on.
    for (const name of ['missing', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const refused = await client.call(name, []).answer.catch((error: unknown) => error);
      assert.ok(refused instanceof AppError, name);
      assert.equal(refused.code, 'VALIDATION_FAILED');
    }
    assert.equal((await client.call('fine', []).answer).value, 'still here');
    client.close();
  });

  it('takes only the codes it was told, from an agent that is not believed', async () => {
    const [panelEnd, agentEnd] = streamPair();
    new WireServer(
      agentEnd,
      new Map<string, Method>([
        ['signOut', { run: () => Promise.reject(new AppError('UNAUTHORIZED', 'sign in again')) }],
        ['missing', { run: () => Promise.reject(new AppError('NOT_FOUND', 'world not found')) }],
      ]),
    );
    const client = new WireClient(panelEnd, { codes: new Set(['NOT_FOUND'] as const) });
    const signOut = await client.call('signOut', []).answer.catch((error: unknown) => error);
    assert.ok(signOut instanceof Error && !(signOut instanceof AppError), String(signOut));
    const missing = await client.call('missing', []).answer.catch((error: unknown) => error);
    assert.ok(missing instanceof AppError && missing.code === 'NOT_FOUND');
    client.close();
  });

  it('holds a download to its credit: a slow reader slows the sender', async () => {
    const window = 256 * KIB;
    const total = 16 * MIB;
    const source = countingSource(total);
    const { client } = connected(
      {
        download: {
          output: true,
          run: async (_args, call) => {
            await pipeline(source.stream, call.output!);
          },
        },
      },
      window,
    );
    const call = client.call('download', [], { output: true });
    let consumed = 0;
    let ahead = 0;
    for await (const chunk of call.output!) {
      consumed += (chunk as Buffer).length;
      ahead = Math.max(ahead, source.counts.produced - consumed);
      // A slow client: the sender gets many turns for every chunk read.
      await turns(20);
      ahead = Math.max(ahead, source.counts.produced - consumed);
    }
    await call.answer;
    assert.equal(consumed, total);
    // The window, and what the streams on the agent's side hold (its source's buffer, a chunk
    // of the output on its way): never the file.
    assert.ok(ahead <= window + 1 * MIB, `the sender ran ${ahead} bytes ahead of the reader`);
    client.close();
  });

  it('holds an upload to its credit: a slow agent slows the panel', async () => {
    const window = 256 * KIB;
    const total = 16 * MIB;
    const source = countingSource(total);
    let consumed = 0;
    let ahead = 0;
    const { client } = connected(
      {
        upload: {
          input: true,
          run: async (_args, call) => {
            for await (const chunk of call.input!) {
              consumed += (chunk as Buffer).length;
              ahead = Math.max(ahead, source.counts.produced - consumed);
              await turns(20);
              ahead = Math.max(ahead, source.counts.produced - consumed);
            }
            return consumed;
          },
        },
      },
      window,
    );
    const answer = await client.call('upload', [], { input: source.stream }).answer;
    assert.equal(answer.value, total);
    assert.ok(ahead <= window + 1 * MIB, `the panel ran ${ahead} bytes ahead of the agent`);
    client.close();
  });

  it('stops the agent’s reading when the reader goes away', async () => {
    // Chunks of several frames each, as a file's stream reads them.
    const source = countingSource(64 * MIB, MIB);
    const cancelled = gate<boolean>();
    const { client } = connected({
      echo: { run: (args) => Promise.resolve(args[0]) },
      download: {
        output: true,
        run: async (_args, call) => {
          call.signal.addEventListener('abort', () => {
            cancelled.open(true);
          });
          await pipeline(source.stream, call.output!);
        },
      },
    });
    const call = client.call('download', [], { output: true });
    const answered = call.answer.then(
      () => 'resolved',
      () => 'rejected',
    );
    let read = 0;
    for await (const chunk of call.output!) {
      read += (chunk as Buffer).length;
      if (read >= MIB) break; // the HTTP client went away
    }
    assert.equal(await cancelled.opened, true);
    await eventually(() => (source.counts.destroyed ? true : undefined), 'the source destroyed');
    assert.equal(await answered, 'rejected');
    assert.ok(source.counts.produced < 8 * MIB, `${source.counts.produced} bytes read`);
    assert.equal(client.pending, 0);
    // Only the call stopped: the stream goes on.
    assert.equal(client.closed, false);
    assert.equal((await client.call('echo', ['on']).answer).value, 'on');
    client.close();
  });

  it('aborts the agent’s copy when an upload’s source fails', async () => {
    const seen = gate<string>();
    const { client } = connected({
      upload: {
        input: true,
        run: async (_args, call) => {
          try {
            await pipeline(
              call.input!,
              new Writable({
                write(_chunk, _encoding, callback) {
                  callback();
                },
              }),
            );
            seen.open('complete');
          } catch (error) {
            seen.open('aborted'); // where the agent removes its private copy
            throw error;
          }
        },
      },
    });
    const source = idle();
    const answer = client.call('upload', [], { input: source }).answer;
    source.push(Buffer.alloc(100 * KIB, 1));
    await turns(10);
    source.destroy(new Error('the client went away'));
    assert.equal(await seen.opened, 'aborted');
    await assert.rejects(answer);
    assert.equal(client.pending, 0);
    client.close();
  });

  it('rejects everything under way with NODE_UNREACHABLE when the stream breaks', async () => {
    const aborted: string[] = [];
    const { client, server, panelEnd, agentEnd } = connected({
      hang: {
        // Settles only when told to stop, as the storage's work does.
        run: (args, call) =>
          new Promise((_resolve, reject) => {
            call.signal.addEventListener('abort', () => {
              aborted.push(String(args[0]));
              reject(call.signal.reason as Error);
            });
          }),
      },
      download: {
        output: true,
        run: async (_args, call) => {
          await pipeline(countingSource(64 * MIB).stream, call.output!);
        },
      },
      upload: {
        input: true,
        run: async (_args, call) => {
          await drain(call.input!);
        },
      },
    });
    const listeners = (['data', 'end', 'close'] as const).map((event) =>
      panelEnd.listenerCount(event),
    );
    const calls = [client.call('hang', ['one']), client.call('hang', ['two'])];
    const download = client.call('download', [], { output: true });
    const upload = client.call('upload', [], { input: idle() });
    const outcomes = [...calls, download, upload].map((call) =>
      call.answer.catch((error: unknown) => error),
    );
    const downloadFailed = once(download.output!, 'error').then(([error]) => error as unknown);
    await once(download.output!, 'readable');

    agentEnd.destroy(); // the agent's container went away

    for (const outcome of await Promise.all(outcomes)) {
      assert.ok(outcome instanceof AppError, String(outcome));
      assert.equal(outcome.code, 'NODE_UNREACHABLE');
      assert.equal(outcome.statusCode, 503);
    }
    const failed = await downloadFailed;
    assert.ok(failed instanceof AppError && failed.code === 'NODE_UNREACHABLE');
    assert.equal(client.closed, true);
    assert.equal(client.pending, 0);
    const later = await client.call('hang', ['three']).answer.catch((error: unknown) => error);
    assert.ok(later instanceof AppError && later.code === 'NODE_UNREACHABLE');

    // The agent stopped every call and settles; the client let go of the stream.
    await server.closed;
    assert.deepEqual(aborted.sort(), ['one', 'two']);
    for (const [i, event] of (['data', 'end', 'close'] as const).entries()) {
      assert.equal(panelEnd.listenerCount(event), (listeners[i] ?? 0) - 1, event);
    }
  });

  it('keeps no listener per call on the stream', async () => {
    const { client, panelEnd } = connected({
      echo: { run: (args) => Promise.resolve(args[0]) },
      download: {
        output: true,
        run: async (_args, call) => {
          call.output!.end(Buffer.from('abc'));
          await once(call.output!, 'finish');
        },
      },
    });
    const before = panelEnd.eventNames().map((name) => panelEnd.listenerCount(name));
    for (let i = 0; i < 200; i++) {
      await client.call('echo', [i]).answer;
      const download = client.call('download', [], { output: true });
      await drain(download.output!);
      await download.answer;
    }
    assert.deepEqual(
      panelEnd.eventNames().map((name) => panelEnd.listenerCount(name)),
      before,
    );
    client.close();
  });
});

describe('the wire’s frames', () => {
  it('refuses a frame past the limits from its lengths alone, before holding it', () => {
    const decoder = new FrameDecoder();
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32BE(MAX_HEADER_BYTES + 1, 0);
    assert.throws(() => decoder.push(prefix), ProtocolError);
    const body = Buffer.alloc(8);
    body.writeUInt32BE(10, 0);
    body.writeUInt32BE(MAX_BODY_BYTES + 1, 4);
    assert.throws(() => new FrameDecoder().push(body), ProtocolError);
    assert.throws(() => encodeFrame({ t: 'data', id: 1 }, Buffer.alloc(MAX_BODY_BYTES + 1)));
    // A whole frame comes back as sent, across any cut of its bytes.
    const bytes = Buffer.concat(encodeFrame({ t: 'data', id: 7 }, Buffer.from('body')));
    const cut = new FrameDecoder();
    const frames = [...bytes].flatMap((byte) => cut.push(Buffer.from([byte])));
    assert.deepEqual(frames, [{ header: { t: 'data', id: 7 }, body: Buffer.from('body') }]);
    assert.equal(cut.buffered, 0);
  });

  /** A client whose agent is the test, writing raw bytes. */
  function rawAgent() {
    const [panelEnd, agentEnd] = streamPair();
    const client = new WireClient(panelEnd, { window: 64 * KIB });
    const send = (header: object, body: Buffer | null = null) => {
      for (const part of encodeFrame(header, body)) agentEnd.write(part);
    };
    return { client, agentEnd, send };
  }

  const untrusted: [string, (agent: ReturnType<typeof rawAgent>) => void][] = [
    [
      'a header over the limit',
      ({ agentEnd }) => {
        const prefix = Buffer.alloc(8);
        prefix.writeUInt32BE(0xffff_fff0, 0);
        agentEnd.write(prefix);
      },
    ],
    [
      'a header that is not JSON',
      ({ agentEnd }) => {
        const prefix = Buffer.alloc(8);
        prefix.writeUInt32BE(3, 0);
        prefix.writeUInt32BE(0xffff_ffff, 4);
        agentEnd.write(Buffer.concat([prefix, Buffer.from('{{{')]));
      },
    ],
    [
      'an answer to a call never made',
      ({ send }) => {
        send({ t: 'result', id: 99, value: 1 });
      },
    ],
    [
      'a frame of an unknown kind',
      ({ send }) => {
        send({ t: 'eval', id: 1 });
      },
    ],
    [
      'data past the credit given',
      ({ send }) => {
        for (let i = 0; i < 3; i++) send({ t: 'data', id: 1 }, Buffer.alloc(32 * KIB));
      },
    ],
  ];
  for (const [what, attack] of untrusted) {
    it(`closes the stream on ${what}, rejecting what is pending`, async () => {
      const agent = rawAgent();
      const call = agent.client.call('download', [], { output: true });
      call.output!.on('error', () => undefined);
      attack(agent);
      const error = await call.answer.catch((failure: unknown) => failure);
      assert.ok(error instanceof AppError && error.code === 'NODE_UNREACHABLE', String(error));
      assert.equal(agent.client.closed, true);
    });
  }

  it('ends the agent’s side on a frame past the limits, answering nothing more', async () => {
    const [panelEnd, agentEnd] = streamPair();
    const logged: string[] = [];
    const server = new WireServer(
      agentEnd,
      new Map([['echo', { run: (args: readonly unknown[]) => Promise.resolve(args) }]]),
      { log: (message) => logged.push(message) },
    );
    const answers: Buffer[] = [];
    panelEnd.on('data', (chunk: Buffer) => answers.push(chunk));
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32BE(16, 0);
    prefix.writeUInt32BE(0x7fff_ffff, 4);
    panelEnd.write(prefix);
    await server.closed;
    assert.deepEqual(answers, []);
    assert.deepEqual(logged, ['the panel broke the protocol: closing the stream']);
  });
});
