/**
 * The file agent's end of the wire (wire.ts): it answers the panel's calls from an explicit
 * table of methods (a Map: a name not in it is refused, nothing is looked up on an object or
 * evaluated), many at once, each with its own streams, events and cancellation.
 *
 * A bad call (an unknown method, arguments that do not fit) is answered with an error and the
 * agent goes on; a broken frame is a protocol error and ends the stream. When the stream ends,
 * every call under way is told to stop (its signal, its streams) and `closed` settles once all
 * of them have: what they held (a temporary file, an open channel) is let go of by then.
 */
import type { Duplex, Readable, Writable } from 'node:stream';
import { AppError } from '../../errors.js';
import { FrameDecoder, MAX_BODY_BYTES, ProtocolError, type Frame } from './frames.js';
import {
  creditOf,
  errorToWire,
  FrameWriter,
  idOf,
  Incoming,
  INLINE_RESULT_BYTES,
  Outgoing,
  STREAM_WINDOW_BYTES,
} from './wire.js';

/** What a method is given besides its JSON arguments. */
export interface CallContext {
  /** The call's binary argument, if it sent one. */
  readonly body: Buffer | null;
  /** The call's input stream (methods with `input`). */
  readonly input: Readable | null;
  /** The call's output stream (methods with `output`): ended for it if it does not end it. */
  readonly output: Writable | null;
  /** Aborted when the panel cancels the call or the stream ends. */
  readonly signal: AbortSignal;
  /** Sends a progress event; events arrive in order, all before the result. */
  event(value: unknown): void;
}

export interface Method {
  /** The call comes with an input stream. */
  readonly input?: boolean;
  /** The call answers a stream of bytes before its result. */
  readonly output?: boolean;
  /** Answers the result: JSON, or a Buffer sent as bytes. */
  run(args: readonly unknown[], call: CallContext): Promise<unknown>;
}

export type MethodTable = ReadonlyMap<string, Method>;

export interface WireServerOptions {
  readonly window?: number;
  /** Where faults and protocol errors are told (the agent's stderr); never secrets. */
  readonly log?: (message: string, error?: unknown) => void;
}

interface Running {
  readonly controller: AbortController;
  readonly input: Incoming | null;
  readonly output: Outgoing | null;
}

/** Why a call's work was stopped. */
const stopped = (why: string): AppError => new AppError('VALIDATION_FAILED', why);

export class WireServer {
  readonly #stream: Duplex;
  readonly #methods: MethodTable;
  readonly #writer: FrameWriter;
  readonly #decoder = new FrameDecoder();
  readonly #window: number;
  readonly #log: (message: string, error?: unknown) => void;
  readonly #running = new Map<number, Running>();
  readonly #settled = new Set<Promise<void>>();
  #lastId = 0;
  #ending = false;
  #onClosed: () => void = () => undefined;
  /** Settles once the stream has ended and every call has settled. */
  readonly closed: Promise<void>;

  constructor(stream: Duplex, methods: MethodTable, options: WireServerOptions = {}) {
    this.#stream = stream;
    this.#methods = methods;
    this.#writer = new FrameWriter(stream);
    this.#window = options.window ?? STREAM_WINDOW_BYTES;
    this.#log = options.log ?? (() => undefined);
    this.closed = new Promise((resolve) => {
      this.#onClosed = resolve;
    });
    stream.on('data', (chunk: Buffer) => {
      if (this.#ending) return;
      try {
        for (const frame of this.#decoder.push(chunk)) this.#receive(frame);
      } catch (error) {
        this.#log('the panel broke the protocol: closing the stream', error);
        void this.#end();
      }
    });
    stream.on('end', () => void this.#end());
    stream.on('close', () => void this.#end());
    stream.on('error', (error) => {
      this.#log('the stream failed', error);
      void this.#end();
    });
  }

  #receive(frame: Frame): void {
    const { header, body } = frame;
    const id = idOf(header);
    if (header.t === 'call') {
      this.#call(id, header, body);
      return;
    }
    // A frame for a call that has settled meanwhile (data sent before its error arrived).
    const running = this.#running.get(id);
    switch (header.t) {
      case 'data':
        if (body === null) throw new ProtocolError('Data without a body');
        if (running === undefined) return;
        if (running.input === null) throw new ProtocolError('Data for a call without input');
        running.input.receive(body);
        return;
      case 'end':
        if (running?.input) running.input.finish();
        return;
      case 'abort':
        running?.input?.fail(stopped('The input was aborted before its end'));
        return;
      case 'credit': {
        const bytes = creditOf(header);
        running?.output?.credit(bytes);
        return;
      }
      case 'cancel':
        if (running) this.#stop(running, 'The call was cancelled');
        return;
      default:
        throw new ProtocolError('A frame of an unknown kind');
    }
  }

  #call(id: number, header: Readonly<Record<string, unknown>>, body: Buffer | null): void {
    // Ids only grow: a call is never confused with an earlier one.
    if (id <= this.#lastId) throw new ProtocolError('A call id used before');
    this.#lastId = id;
    const name = header.method;
    const method = typeof name === 'string' ? this.#methods.get(name) : undefined;
    const args = header.args;
    const wantsInput = header.input === true;
    let refusal: string | null = null;
    if (method === undefined) refusal = `The file agent has no method ${JSON.stringify(name)}`;
    else if (!Array.isArray(args)) refusal = 'The arguments are not a list';
    else if (wantsInput !== (method.input === true)) {
      refusal = `${String(name)} ${method.input ? 'takes' : 'takes no'} input stream`;
    }
    if (refusal !== null || method === undefined || !Array.isArray(args)) {
      this.#answer({ t: 'error', id, error: errorToWire(stopped(refusal ?? 'A bad call')) });
      return;
    }
    const controller = new AbortController();
    const input = method.input
      ? new Incoming(
          this.#window,
          (bytes) => {
            this.#answer({ t: 'credit', id, bytes });
          },
          () => undefined,
        )
      : null;
    const output = method.output
      ? new Outgoing(this.#window, {
          data: (chunk) => this.#writer.send({ t: 'data', id }, chunk),
          end: () => this.#writer.send({ t: 'end', id }),
          abort: (error) => {
            this.#answer({ t: 'abort', id, error: errorToWire(error) });
          },
        })
      : null;
    // A failed output is told by the call's error; its own 'error' event has nothing to add.
    output?.on('error', () => undefined);
    input?.on('error', () => undefined);
    const running: Running = { controller, input, output };
    this.#running.set(id, running);
    const context: CallContext = {
      body,
      input,
      output,
      signal: controller.signal,
      event: (value) => {
        if (this.#running.get(id) === running) this.#answer({ t: 'event', id, value });
      },
    };
    const work = this.#run(id, method, args, context, running);
    this.#settled.add(work);
    void work.finally(() => this.#settled.delete(work));
  }

  async #run(
    id: number,
    method: Method,
    args: readonly unknown[],
    context: CallContext,
    running: Running,
  ): Promise<void> {
    try {
      const value = await method.run(args, context);
      const output = running.output;
      if (output && !output.writableFinished) {
        if (output.destroyed) throw stopped('The call was cancelled');
        await new Promise<void>((resolve, reject) => {
          output.end((error?: Error | null) => {
            if (error) reject(error);
            else resolve();
          });
        });
      }
      this.#running.delete(id);
      running.input?.destroy();
      if (Buffer.isBuffer(value)) this.#answer({ t: 'result', id, binary: true }, value);
      else this.#answerValue(id, value ?? null);
    } catch (error) {
      this.#running.delete(id);
      running.output?.silence();
      running.output?.destroy();
      running.input?.destroy();
      if (!(error instanceof AppError)) this.#log('a call failed', error);
      this.#answer({ t: 'error', id, error: errorToWire(error) });
    }
  }

  /**
   * A JSON result: in the header when it is small, else in `part` frames of bytes (a folder of
   * many thousand entries) and a `result` that says so.
   */
  #answerValue(id: number, value: unknown): void {
    const json = Buffer.from(JSON.stringify(value), 'utf8');
    if (json.length <= INLINE_RESULT_BYTES) {
      this.#answer({ t: 'result', id, value });
      return;
    }
    for (let at = 0; at < json.length; at += MAX_BODY_BYTES) {
      this.#answer({ t: 'part', id }, json.subarray(at, at + MAX_BODY_BYTES));
    }
    this.#answer({ t: 'result', id, parts: true });
  }

  /** Stops a call under way: its signal, its streams. */
  #stop(running: Running, why: string): void {
    running.controller.abort(stopped(why));
    running.output?.silence();
    running.output?.destroy(stopped(why));
    running.input?.fail(stopped(why));
  }

  #answer(header: object, body: Buffer | null = null): void {
    this.#writer.send(header, body).catch((error: unknown) => {
      if (!this.#ending) this.#log('could not answer', error);
      void this.#end();
    });
  }

  /** The stream is over: every call is stopped; `closed` settles once they all have. */
  async #end(): Promise<void> {
    if (this.#ending) return;
    this.#ending = true;
    for (const running of this.#running.values()) this.#stop(running, 'The stream ended');
    this.#stream.end();
    this.#stream.destroy();
    while (this.#settled.size > 0) await Promise.allSettled([...this.#settled]);
    this.#onClosed();
  }
}
