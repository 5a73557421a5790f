/**
 * The panel's end of the file agent's wire (wire.ts): calls with ids over one byte stream, many
 * at once, each answered by a result or an error; a call may send a stream (an upload's body)
 * and receive one (a download, a packing), both held to their credit, and hear progress events.
 *
 * What the agent sends is checked before it is believed: a frame past the limits, of an unknown
 * kind, for a call never made, data past the credit, or a result that does not fit is a protocol
 * error, and the stream is closed. When the stream ends, breaks or is closed, every call under
 * way rejects with 503 NODE_UNREACHABLE, their streams fail with it, later calls reject with it
 * at once, and the client lets go of the stream's listeners.
 */
import type { Duplex, Readable } from 'node:stream';
import { AppError, type ErrorCode } from '../../errors.js';
import { FrameDecoder, ProtocolError, type Frame } from './frames.js';
import {
  creditOf,
  errorFromWire,
  FrameWriter,
  idOf,
  Incoming,
  MAX_RESULT_BYTES,
  Outgoing,
  STREAM_WINDOW_BYTES,
  unreachable,
} from './wire.js';

export interface WireClientOptions {
  /** Credit each stream starts with (tests shrink it). */
  readonly window?: number;
  /** The error codes the agent may answer; others become faults (500). Null: every code. */
  readonly codes?: ReadonlySet<ErrorCode> | null;
}

export interface CallOptions {
  /** One argument as bytes, after the JSON ones (a channel's write). */
  readonly body?: Uint8Array;
  /** Streamed to the agent as the call's input, held to the agent's credit. */
  readonly input?: Readable;
  /** The call answers a stream of bytes before its result. */
  readonly output?: boolean;
  /** The most bytes that stream may carry; more is a broken agent (the stream is closed). */
  readonly outputBytes?: number;
  /** Hears the call's progress events, in order, all before the result. */
  readonly onEvent?: (value: unknown) => void;
}

/** A call's answer: its JSON value, or its bytes. */
export interface Answer {
  readonly value: unknown;
  readonly body: Buffer | null;
}

export interface Call {
  /** Settles with the result or error; after `output` has ended, when there is one. */
  readonly answer: Promise<Answer>;
  /** The bytes the call answers (with `output`); destroying it cancels the call. */
  readonly output: Readable | null;
}

interface Pending {
  readonly resolve: (answer: Answer) => void;
  readonly reject: (error: Error) => void;
  readonly output: Incoming | null;
  readonly input: Outgoing | null;
  readonly onEvent: ((value: unknown) => void) | null;
  /** The caller went away: what the agent still sends for it is dropped. */
  cancelled: boolean;
  /** A large JSON result's bytes so far (`part` frames). */
  parts: Buffer[];
  partBytes: number;
}

export class WireClient {
  readonly #stream: Duplex;
  readonly #writer: FrameWriter;
  readonly #decoder = new FrameDecoder();
  readonly #window: number;
  readonly #codes: ReadonlySet<ErrorCode> | null;
  readonly #pending = new Map<number, Pending>();
  readonly #onClose = new Set<(error: Error) => void>();
  readonly #onIdle = new Set<() => void>();
  /** Handles the panel holds on this stream (an opened file, a channel, a folder). */
  #holds = 0;
  #lastId = 0;
  #closed: Error | null = null;

  readonly #onData = (chunk: Buffer): void => {
    try {
      for (const frame of this.#decoder.push(chunk)) this.#receive(frame);
    } catch (error) {
      this.close(
        error instanceof ProtocolError
          ? `the file agent broke the protocol (${error.message})`
          : `the stream failed (${String(error)})`,
      );
    }
  };
  readonly #onEnd = (): void => {
    this.close('the file agent ended the stream');
  };
  readonly #onError = (error: Error): void => {
    this.close(`the stream failed (${error.message})`);
  };

  constructor(stream: Duplex, options: WireClientOptions = {}) {
    this.#stream = stream;
    this.#writer = new FrameWriter(stream);
    this.#window = options.window ?? STREAM_WINDOW_BYTES;
    this.#codes = options.codes ?? null;
    stream.on('data', this.#onData);
    stream.on('end', this.#onEnd);
    stream.on('close', this.#onEnd);
    stream.on('error', this.#onError);
  }

  /** Whether the stream is gone: every call rejects with NODE_UNREACHABLE. */
  get closed(): boolean {
    return this.#closed !== null;
  }

  /** Calls under way. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Whether the stream is in use: a call under way, or a handle held ({@link hold}). A stream
   * not in use may be ended without anyone noticing (a helper container let go when idle).
   */
  get busy(): boolean {
    return this.#pending.size + this.#holds > 0;
  }

  /**
   * Marks the stream in use while a handle of it is held (between the calls that use it);
   * answers the release, which does something once.
   */
  hold(): () => void {
    this.#holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds--;
      this.#idleNow();
    };
  }

  /** Calls `listener` each time the stream stops being {@link busy}; answers how to stop. */
  onIdle(listener: () => void): () => void {
    this.#onIdle.add(listener);
    return () => this.#onIdle.delete(listener);
  }

  #idleNow(): void {
    if (this.#closed !== null || this.busy) return;
    for (const listener of this.#onIdle) listener();
  }

  /** Calls `listener` once, when the stream is gone; answers how to stop listening. */
  onClose(listener: (error: Error) => void): () => void {
    this.#onClose.add(listener);
    return () => this.#onClose.delete(listener);
  }

  call(method: string, args: readonly unknown[], options: CallOptions = {}): Call {
    if (this.#closed) {
      options.input?.destroy();
      return { answer: Promise.reject(this.#closed), output: null };
    }
    const id = ++this.#lastId;
    let resolve: (answer: Answer) => void = () => undefined;
    let reject: (error: Error) => void = () => undefined;
    const answer = new Promise<Answer>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    const output = options.output
      ? new Incoming(
          this.#window,
          (bytes) => {
            this.#sendQuietly({ t: 'credit', id, bytes });
          },
          () => {
            const pending = this.#pending.get(id);
            if (pending && !pending.cancelled) {
              pending.cancelled = true;
              this.#sendQuietly({ t: 'cancel', id });
            }
          },
          options.outputBytes,
        )
      : null;
    const input = options.input ? this.#outgoing(id) : null;
    this.#pending.set(id, {
      resolve,
      reject,
      output,
      input,
      onEvent: options.onEvent ?? null,
      cancelled: false,
      parts: [],
      partBytes: 0,
    });
    const body = options.body ?? null;
    this.#writer
      .send({ t: 'call', id, method, args, ...(input ? { input: true } : {}) }, body)
      .catch((error: unknown) => {
        if (error instanceof ProtocolError) {
          // Too large to send (a list of paths past 1 MiB): this call fails, the stream is fine.
          this.#settle(
            id,
            new AppError('PAYLOAD_TOO_LARGE', 'The request is too large to send to the node'),
          );
        } else this.close(`the stream failed (${String(error)})`);
      });
    if (input && options.input) pump(options.input, input);
    return { answer, output };
  }

  /**
   * Ends the stream: every call under way rejects with NODE_UNREACHABLE (`why` tells how),
   * their streams fail, and the stream's listeners are removed. Calling it again does nothing.
   */
  close(why = 'the connection was closed'): void {
    if (this.#closed) return;
    const error = unreachable(why);
    this.#closed = error;
    this.#stream.off('data', this.#onData);
    this.#stream.off('end', this.#onEnd);
    this.#stream.off('close', this.#onEnd);
    this.#stream.off('error', this.#onError);
    // A late error of the stream's must not go unhandled.
    this.#stream.on('error', () => undefined);
    this.#stream.destroy();
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.input?.silence();
      pending.input?.destroy(error);
      pending.output?.fail(error);
      pending.reject(error);
    }
    for (const listener of this.#onClose) listener(error);
    this.#onClose.clear();
    this.#onIdle.clear();
  }

  #sendQuietly(header: object): void {
    this.#writer.send(header).catch((error: unknown) => {
      this.close(`the stream failed (${String(error)})`);
    });
  }

  #outgoing(id: number): Outgoing {
    return new Outgoing(this.#window, {
      data: (chunk) => this.#writer.send({ t: 'data', id }, chunk),
      end: () => this.#writer.send({ t: 'end', id }),
      abort: () => {
        this.#sendQuietly({ t: 'abort', id });
      },
    });
  }

  #receive(frame: Frame): void {
    const { header, body } = frame;
    const id = idOf(header);
    const pending = this.#pending.get(id);
    if (pending === undefined) throw new ProtocolError(`A frame for no call (${id})`);
    switch (header.t) {
      case 'result':
        if (pending.output && !pending.output.finished && !pending.cancelled) {
          throw new ProtocolError('A result before the end of its stream');
        }
        {
          const value = header.parts === true ? parseParts(pending.parts) : (header.value ?? null);
          this.#pending.delete(id);
          this.#stopInput(pending);
          pending.resolve({ value, body: header.binary === true ? body : null });
          this.#idleNow();
          return;
        }
      case 'part':
        if (body === null) throw new ProtocolError('A part of a result without a body');
        pending.partBytes += body.length;
        if (pending.partBytes > MAX_RESULT_BYTES) {
          throw new ProtocolError('A result larger than the most one may hold');
        }
        pending.parts.push(body);
        return;
      case 'error':
        this.#settle(id, errorFromWire(header.error, this.#codes));
        return;
      case 'event':
        if (!pending.cancelled) {
          try {
            pending.onEvent?.(header.value);
          } catch {
            // The listener's own failure is not the agent's: the call goes on.
          }
        }
        return;
      case 'data':
        if (!pending.output || body === null) {
          throw new ProtocolError('Data for a call without a stream');
        }
        // Counted against the credit even when its reader went away, and then dropped.
        pending.output.receive(body);
        return;
      case 'end':
        if (!pending.output) throw new ProtocolError('An end for a call without a stream');
        if (!pending.cancelled && !pending.output.destroyed) pending.output.finish();
        return;
      case 'abort':
        if (!pending.output) throw new ProtocolError('An abort for a call without a stream');
        pending.output.fail(errorFromWire(header.error, this.#codes));
        return;
      case 'credit':
        if (!pending.input) throw new ProtocolError('Credit for a call without a stream');
        pending.input.credit(creditOf(header));
        return;
      default:
        throw new ProtocolError('A frame of an unknown kind');
    }
  }

  /** Rejects the call with `error`, failing its streams. */
  #settle(id: number, error: Error): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    this.#stopInput(pending);
    pending.output?.fail(error);
    pending.reject(error);
    this.#idleNow();
  }

  /** The call is over: an input still being sent stops (the agent takes no more of it). */
  #stopInput(pending: Pending): void {
    const input = pending.input;
    if (input && !input.writableFinished && !input.destroyed) {
      input.silence();
      input.destroy(new Error('the call ended before its input'));
    }
  }
}

/**
 * Streams `source` into a call's input. A source that fails aborts the input (the agent drops
 * what it wrote); an input that stops first (the call settled) stops the source, as a pipeline
 * does.
 */
function pump(source: Readable, input: Outgoing): void {
  source.pipe(input);
  source.once('error', (error) => {
    input.destroy(error);
  });
  input.once('error', () => {
    source.unpipe(input);
    source.destroy();
  });
}

/** A JSON result sent in parts, whole again. */
function parseParts(parts: readonly Buffer[]): unknown {
  try {
    return JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
  } catch {
    throw new ProtocolError('A result in parts that is not JSON');
  }
}
