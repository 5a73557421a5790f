/**
 * The file agent's wire: a small multiplexed RPC over one byte stream (a helper container's
 * attached stdin and stdout; in tests a child process's), between the panel (wire-client.ts)
 * and the file agent (wire-server.ts). docs/nodes.md, "Files on a node", tells the whole design.
 *
 * Frames (frames.ts) carry, by their header's `t`:
 *
 * - `call` (panel): `id`, `method` (a name in the agent's explicit table, never evaluated),
 *   `args` (JSON), `input` (true: an input stream follows); a body, when present, is one more
 *   argument, as bytes.
 * - `result` (agent): `value` (JSON), or the body (bytes; `binary`), or JSON too large for a
 *   header sent before it in `part` frames (`parts`, at most MAX_RESULT_BYTES); `error` (agent):
 *   an error that re-throws on the panel as the same AppError code, message and details.
 * - `event` (agent): progress of a call under way (`value`), all of them before its result.
 * - `data` (body: bytes), `end`, `abort`: the call's stream from the side that sends it (input
 *   from the panel, output from the agent; at most one each way per call), then `result`.
 * - `credit` (`bytes`): the receiver of a stream lets the sender send that many more bytes.
 *   Each stream starts with STREAM_WINDOW_BYTES of credit, and a receiver gives more only as its
 *   reader takes bytes away: neither side ever holds more than a window of a stream, however
 *   slow the other end (a slow HTTP client slows the agent's reads). Bytes past the credit given
 *   are a protocol error.
 * - `cancel` (panel): the call's caller went away (a download's client): the agent stops it.
 *
 * When the stream ends or breaks, every call under way rejects with 503 NODE_UNREACHABLE and
 * every handle the agent held for this stream is let go of.
 */
import { Readable, Writable, type Duplex } from 'node:stream';
import { AppError, isErrorCode, statusOf, type ErrorCode, type ErrorDetail } from '../../errors.js';
import { MAX_BODY_BYTES, ProtocolError, encodeFrame } from './frames.js';

/** Credit each stream starts with, and the most a receiver lets the sender have outstanding. */
export const STREAM_WINDOW_BYTES = 2 * 1024 * 1024;
/** The most one `data` frame carries. */
export const CHUNK_BYTES = 256 * 1024;
/** A JSON result up to this size goes in its `result` header; a larger one in `part` frames. */
export const INLINE_RESULT_BYTES = 64 * 1024;
/** The most a JSON result sent in parts may hold (a listing of some 500,000 entries). */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;

/** 503: the machine cannot be reached; `why` says how the stream ended. */
export const unreachable = (why: string): AppError =>
  new AppError('NODE_UNREACHABLE', `The server's node cannot be reached: ${why}`);

/** An error as it crosses: an AppError's code, status, message and details, or a fault's. */
export interface WireError {
  /** An ErrorCode, or absent for a fault (a 500 on the panel, its message only logged). */
  readonly code?: string;
  readonly status?: number;
  readonly message: string;
  readonly details?: readonly ErrorDetail[];
  /** A fault's errno code (ENOSPC, EIO…), kept so the panel tells a disk's failure. */
  readonly errno?: string;
}

/** The longest message or detail that crosses; longer ones are cut. */
const MAX_MESSAGE = 2000;
const MAX_DETAILS = 20;

const cut = (text: string): string =>
  text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;

export function errorToWire(error: unknown): WireError {
  if (error instanceof AppError) {
    return {
      code: error.code,
      status: error.statusCode,
      message: cut(error.message),
      ...(error.options.details
        ? {
            details: error.options.details.slice(0, MAX_DETAILS).map((detail) => ({
              path: cut(detail.path),
              message: cut(detail.message),
            })),
          }
        : {}),
    };
  }
  const errno = (error as { code?: unknown } | null)?.code;
  return {
    message: cut(error instanceof Error ? error.message : String(error)),
    ...(typeof errno === 'string' && /^E[A-Z]+$/.test(errno) ? { errno } : {}),
  };
}

/**
 * The error a WireError stands for: an AppError of its code when the code is one of `codes`
 * and its status the code's own; anything else a plain Error (a 500: logged, never shown).
 */
export function errorFromWire(value: unknown, codes: ReadonlySet<ErrorCode> | null): Error {
  const wire = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  const message = typeof wire.message === 'string' ? cut(wire.message) : 'no message';
  const code = wire.code;
  if (code !== undefined) {
    if (
      isErrorCode(code) &&
      (codes === null || codes.has(code)) &&
      wire.status === statusOf(code)
    ) {
      const details = readDetails(wire.details);
      return new AppError(code, message, details ? { details } : {});
    }
    return new Error(`The file agent answered an error the panel does not take: ${message}`);
  }
  const error = new Error(`The file agent failed: ${message}`);
  if (typeof wire.errno === 'string' && /^E[A-Z]{1,20}$/.test(wire.errno)) {
    Object.assign(error, { code: wire.errno });
  }
  return error;
}

function readDetails(value: unknown): ErrorDetail[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const details: ErrorDetail[] = [];
  for (const item of value.slice(0, MAX_DETAILS) as unknown[]) {
    const { path, message } = (item ?? {}) as { path?: unknown; message?: unknown };
    if (typeof path === 'string' && typeof message === 'string') {
      details.push({ path: cut(path), message: cut(message) });
    }
  }
  return details;
}

/** A header's call id: a positive safe integer, else a protocol error. */
export function idOf(header: Readonly<Record<string, unknown>>): number {
  const id = header.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
    throw new ProtocolError('A frame without a valid call id');
  }
  return id;
}

/** A credit frame's bytes: a positive whole number no larger than a window. */
export function creditOf(header: Readonly<Record<string, unknown>>): number {
  const bytes = header.bytes;
  if (
    typeof bytes !== 'number' ||
    !Number.isSafeInteger(bytes) ||
    bytes <= 0 ||
    bytes > STREAM_WINDOW_BYTES
  ) {
    throw new ProtocolError('A credit that is not a number of bytes within a window');
  }
  return bytes;
}

/**
 * Writes frames to the stream in the order they are sent. `send` resolves once the stream has
 * taken the frame (its write callback: a body's buffer may be reused after that) and rejects
 * when the stream is gone.
 */
export class FrameWriter {
  readonly #stream: Duplex;

  constructor(stream: Duplex) {
    this.#stream = stream;
  }

  send(header: object, body: Uint8Array | null = null): Promise<void> {
    let parts: Buffer[];
    try {
      parts = encodeFrame(header, body);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const stream = this.#stream;
    if (stream.destroyed || stream.writableEnded) {
      return Promise.reject(new Error('the stream is closed'));
    }
    return new Promise((resolve, reject) => {
      stream.cork();
      for (const [i, part] of parts.entries()) {
        if (i < parts.length - 1) stream.write(part);
        else {
          stream.write(part, (error?: Error | null) => {
            if (error) reject(error);
            else resolve();
          });
        }
      }
      process.nextTick(() => {
        stream.uncork();
      });
    });
  }
}

/**
 * A stream the other side sends (`data`, `end`, `abort` frames), as a Readable. Credit is given
 * back as its reader takes bytes, never so much that more than `window` bytes could be held
 * (in flight and buffered together); `data` past the credit is a protocol error. Destroyed
 * before its end (its reader went away), it calls `onAbandon`.
 */
export class Incoming extends Readable {
  readonly #window: number;
  readonly #grant: (bytes: number) => void;
  readonly #onAbandon: () => void;
  #granted: number;
  #received = 0;
  /** No more bytes will be pushed: ended, failed or destroyed. */
  #finished = false;
  /** The sender sent its `end`. */
  #ended = false;

  readonly #most: number;

  /** `most`: the bytes the stream may carry in all (more is a protocol error). */
  constructor(
    window: number,
    grant: (bytes: number) => void,
    onAbandon: () => void,
    most = Number.POSITIVE_INFINITY,
  ) {
    super({ highWaterMark: window });
    this.#most = most;
    this.#window = window;
    this.#granted = window;
    this.#grant = grant;
    this.#onAbandon = onAbandon;
  }

  /** Bytes received and not yet read, and credit given and not yet used: at most a window. */
  get outstanding(): number {
    return this.#granted - this.#received + this.readableLength;
  }

  /** Whether the sender is done: ended, aborted or destroyed. */
  get finished(): boolean {
    return this.#finished || this.destroyed;
  }

  /**
   * Takes a `data` frame's bytes: counted against the credit given in any case, then dropped
   * when the reader went away.
   */
  receive(chunk: Buffer): void {
    if (this.#received + chunk.length > this.#granted) {
      throw new ProtocolError('Data past the credit given');
    }
    this.#received += chunk.length;
    if (this.#received > this.#most) throw new ProtocolError('A stream longer than it may be');
    if (this.#ended) throw new ProtocolError('Data after the end of a stream');
    if (this.destroyed || chunk.length === 0) return;
    this.push(chunk);
  }

  /** Takes an `end` frame (dropped when the reader went away). */
  finish(): void {
    if (this.#ended) throw new ProtocolError('The end of a stream that had ended');
    this.#ended = true;
    if (this.destroyed) return;
    this.#finished = true;
    this.push(null);
  }

  fail(error: Error): void {
    if (this.finished) return;
    this.#finished = true;
    this.destroy(error);
  }

  override _read(): void {
    if (this.#finished) return;
    const inFlight = this.#granted - this.#received;
    const room = this.#window - inFlight - this.readableLength;
    // Credit in useful amounts: a quarter of the window, or all of it when nothing is on its way.
    if (room > 0 && (room >= this.#window / 4 || inFlight === 0)) {
      this.#granted += room;
      this.#grant(room);
    } else {
      // Nothing to give now: an empty push tells the stream this read is over, so that it asks
      // again when its reader takes bytes (else it would wait for a push that never comes).
      this.push(Buffer.alloc(0));
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.#finished) {
      this.#finished = true;
      this.#onAbandon();
    }
    callback(error);
  }
}

/** How an Outgoing stream reaches the other side. */
export interface OutgoingSink {
  data(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
  /** The sending failed before its end: tells the other side (best effort). */
  abort(error: Error): void;
}

/**
 * A stream this side sends, as a Writable: each write waits for credit, goes in `data` frames of
 * at most CHUNK_BYTES, and calls back once the byte stream has taken them (the writer may reuse
 * its buffer then). `end` sends `end`; destroyed with an error, it sends `abort`, unless
 * `silence` was called first (the other side asked for the stop, or the call failed: its error
 * says the rest).
 */
export class Outgoing extends Writable {
  readonly #sink: OutgoingSink;
  #credit: number;
  #wake: (() => void) | null = null;
  #silent = false;

  constructor(window: number, sink: OutgoingSink) {
    super({ highWaterMark: CHUNK_BYTES });
    this.#credit = window;
    this.#sink = sink;
  }

  credit(bytes: number): void {
    this.#credit += bytes;
    this.#wake?.();
  }

  /** Destroying it from now on tells the other side nothing. */
  silence(): void {
    this.#silent = true;
  }

  override _write(
    chunk: Buffer,
    _encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ): void {
    this.#send(chunk).then(() => {
      callback();
    }, callback);
  }

  async #send(chunk: Buffer): Promise<void> {
    let rest = chunk;
    while (rest.length > 0) {
      // Once stopped, nothing more is sent: the call's answer may already be on its way.
      this.#checkGoing();
      while (this.#credit <= 0) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = null;
        this.#checkGoing();
      }
      const size = Math.min(rest.length, this.#credit, CHUNK_BYTES, MAX_BODY_BYTES);
      this.#credit -= size;
      await this.#sink.data(rest.subarray(0, size));
      rest = rest.subarray(size);
    }
  }

  #checkGoing(): void {
    if (this.destroyed) throw new Error('the stream was stopped');
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#sink.end().then(() => {
      callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#wake?.();
    if (error && !this.#silent && !this.writableFinished) this.#sink.abort(error);
    callback(error);
  }
}

/** What a header's `t` may be. */
export type FrameType =
  'call' | 'result' | 'error' | 'event' | 'data' | 'end' | 'abort' | 'credit' | 'cancel';
