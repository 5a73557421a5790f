/**
 * What RemoteFiles (remote-files.ts) holds of the agent's: answers read before they are believed
 * (a misfit closes the stream: 503 NODE_UNREACHABLE), and the handles of a stream, each used
 * through the stream that made it: an opened file (read once or closed), a file channel (each
 * operation a call, in the order made) and a folder read in batches.
 */
import { Readable } from 'node:stream';
import type {
  AttributeChanges,
  ByteRange,
  Entry,
  EntryStat,
  FileChannel,
  NamedStat,
  OpenedFile,
} from '../host.js';
import { MAX_BODY_BYTES } from './frames.js';
import {
  BadValue,
  changesToWire,
  entry,
  entryStat,
  flag,
  list,
  namedStat,
  nullable,
  text,
  whole,
  type Reader,
} from './values.js';
import { unreachable } from './wire.js';
import type { Answer, CallOptions, WireClient } from './wire-client.js';

/** The most one channel read answers (FileChannel.read). */
const MAX_CHANNEL_READ = 1024 * 1024;

/** Reads nothing: what a call that answers nothing is read with. */
export const nothing = (): undefined => undefined;

/**
 * `answer` read by `read`; one that does not fit is a broken agent: its stream is closed and
 * the call is 503 NODE_UNREACHABLE, as every other call under way on it.
 */
export function believed<T>(
  client: WireClient,
  method: string,
  read: Reader<T>,
  answer: Answer,
): T {
  try {
    return read(answer.body ?? answer.value, `the answer to ${method}`);
  } catch (error) {
    if (!(error instanceof BadValue)) throw error;
    const why = `the file agent answered wrongly (${error.message})`;
    client.close(why);
    throw unreachable(why);
  }
}

export const handleAnswer: Reader<{ handle: number }> = (value, what) => ({
  handle: whole((value as { handle?: unknown } | null)?.handle, `${what}.handle`),
});

export const openedAnswer: Reader<{
  handle: number;
  name: string;
  size: number;
  modified: Date;
}> = (value, what) => {
  const fields = (value ?? {}) as Record<string, unknown>;
  const modified = fields.modified;
  if (typeof modified !== 'number' || !Number.isFinite(modified)) {
    throw new BadValue(`${what}.modified`, 'a time');
  }
  return {
    ...handleAnswer(value, what),
    name: text(fields.name, `${what}.name`),
    size: whole(fields.size, `${what}.size`),
    modified: new Date(modified),
  };
};

export const channelAnswer: Reader<{ handle: number; writable: boolean }> = (value, what) => ({
  ...handleAnswer(value, what),
  writable: flag((value as { writable?: unknown } | null)?.writable, `${what}.writable`),
});

/** A folder's next batch, or null at its end. */
const folderBatch =
  (batch: number): Reader<readonly NamedStat[] | null> =>
  (value, what) => {
    const fields = (value ?? {}) as Record<string, unknown>;
    if (flag(fields.done, `${what}.done`)) return null;
    return list(namedStat, batch)(fields.value, `${what}.value`);
  };

/** A file the agent opened, read once or closed, through the stream that opened it. */
export function remoteFile(
  client: WireClient,
  opened: { handle: number; name: string; size: number; modified: Date },
): OpenedFile {
  let state: 'open' | 'read' | 'closed' = 'open';
  // Held until it is read (the read's call holds the stream then) or closed.
  const release = client.hold();
  return {
    name: opened.name,
    size: opened.size,
    modified: opened.modified,
    read(range?: ByteRange): Readable {
      if (state !== 'open') throw new Error('an opened file is read once, and not once closed');
      state = 'read';
      const start = range?.start ?? 0;
      const end = range?.end ?? opened.size - 1;
      if (end < start) {
        // Nothing to read (an empty file): the agent lets go of it unread.
        void client.call('file.close', [opened.handle]).answer.catch(nothing);
        release();
        return Readable.from([]);
      }
      const call = client.call('file.read', [opened.handle, start, end], {
        output: true,
        outputBytes: Math.max(0, end - start + 1),
      });
      release();
      // Its failure is the stream's, which the reader hears.
      call.answer.catch(nothing);
      if (call.output === null) throw new Error('a read without its stream');
      return call.output;
    },
    async close(): Promise<void> {
      if (state !== 'open') return;
      state = 'closed';
      const closing = client.call('file.close', [opened.handle]).answer.catch(nothing);
      release();
      await closing;
    },
  };
}

/**
 * A file channel the agent holds (FileChannel): each operation a call with its handle, sent in
 * the order made, so writes take their places as they are called; the agent refuses a closed
 * one (400). A write larger than a frame goes as several, at consecutive offsets.
 */
export class RemoteChannel implements FileChannel {
  readonly #client: WireClient;
  readonly #handle: number;
  readonly #release: () => void;
  readonly writable: boolean;

  constructor(client: WireClient, handle: number, writable: boolean) {
    this.#client = client;
    this.#handle = handle;
    this.writable = writable;
    // The stream stays in use until the channel is closed or aborted.
    this.#release = client.hold();
  }

  #answer(method: string, args: readonly unknown[], options?: CallOptions): Promise<Answer> {
    return this.#client.call(method, [this.#handle, ...args], options).answer;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const answer = await this.#answer('channel.read', [offset, length]);
    const most = Math.min(length, MAX_CHANNEL_READ);
    return believed(this.#client, 'channel.read', bytesUpTo(most), answer);
  }

  async write(offset: number, data: Uint8Array): Promise<void> {
    if (data.byteLength <= MAX_BODY_BYTES) {
      await this.#answer('channel.write', [offset], { body: data });
      return;
    }
    const writes: Promise<Answer>[] = [];
    for (let at = 0; at < data.byteLength; at += MAX_BODY_BYTES) {
      const piece = data.subarray(at, at + MAX_BODY_BYTES);
      writes.push(this.#answer('channel.write', [offset + at], { body: piece }));
    }
    await Promise.all(writes);
  }

  async stat(): Promise<EntryStat> {
    return believed(
      this.#client,
      'channel.stat',
      entryStat,
      await this.#answer('channel.stat', []),
    );
  }

  async setAttributes(changes: AttributeChanges): Promise<void> {
    await this.#answer('channel.setAttributes', [changesToWire(changes)]);
  }

  async close(): Promise<Entry | null> {
    const closing = this.#answer('channel.close', []);
    this.#release();
    return believed(this.#client, 'channel.close', nullable(entry), await closing);
  }

  async abort(): Promise<void> {
    const aborting = this.#answer('channel.abort', []).catch(nothing);
    this.#release();
    await aborting;
  }
}

/** Bytes, at most `most` of them. */
const bytesUpTo =
  (most: number): Reader<Buffer> =>
  (value, what) => {
    if (!Buffer.isBuffer(value) || value.length > most) {
      throw new BadValue(what, `at most ${most} bytes`);
    }
    return value;
  };
/**
 * A folder read in batches through a handle of the agent's (`args`: server, path, batch size,
 * deny lines): errors come from the first `next()`; `return()` lets go of the folder.
 */
export async function* folderBatches(
  connected: Promise<WireClient>,
  args: readonly [string, readonly string[], number, readonly string[] | null],
): AsyncGenerator<readonly NamedStat[]> {
  const client = await connected;
  const opened = await client.call('folder.open', args).answer;
  const { handle } = believed(client, 'folder.open', handleAnswer, opened);
  let over = false;
  // The stream stays in use between batches, until the folder is let go of.
  const release = client.hold();
  try {
    for (;;) {
      const next = believed(
        client,
        'folder.next',
        folderBatch(args[2]),
        await client.call('folder.next', [handle]).answer.catch((error: unknown) => {
          over = true; // the agent let go of the folder on its failure
          throw error;
        }),
      );
      if (next === null) {
        over = true;
        return;
      }
      yield next;
    }
  } finally {
    const returning = over ? null : client.call('folder.return', [handle]).answer.catch(nothing);
    release();
    await returning;
  }
}
