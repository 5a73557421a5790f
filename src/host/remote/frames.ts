/**
 * The frames of the file agent's wire (wire.ts): one byte stream cut into frames, each a JSON
 * header and an optional binary body, both length-prefixed:
 *
 *     u32 header length · u32 body length · header (UTF-8 JSON, an object) · body
 *
 * (big-endian). Neither side trusts the other's lengths: a header over MAX_HEADER_BYTES, a body
 * over MAX_BODY_BYTES, an empty header or one that is not a JSON object is a protocol error, seen
 * as soon as the eight bytes of lengths arrive, before anything is allocated for the frame; the
 * side that sees it closes the stream. What the decoder holds is one frame's bytes at most, plus
 * what arrived with them.
 */

/** A JSON header: paths, arguments, entries. A folder's batch of 1,000 entries fits well. */
export const MAX_HEADER_BYTES = 1024 * 1024;
/** A binary body: a chunk of a stream, a channel's read or write (at most 1 MiB, see host.ts). */
export const MAX_BODY_BYTES = 1024 * 1024;
const PREFIX_BYTES = 8;

/** The other side broke the protocol: the stream cannot be trusted any more and is closed. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export interface Frame {
  readonly header: Readonly<Record<string, unknown>>;
  /** Null when the frame has no body (a body of zero bytes is an empty buffer). */
  readonly body: Buffer | null;
}

/** One frame as bytes: the header and lengths, then the body (never copied). */
export function encodeFrame(header: object, body: Uint8Array | null): Buffer[] {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  if (json.length === 0 || json.length > MAX_HEADER_BYTES) {
    throw new ProtocolError(`A frame's header of ${json.length} bytes is over the limit`);
  }
  const bodyLength = body === null ? 0 : body.byteLength;
  if (bodyLength > MAX_BODY_BYTES) {
    throw new ProtocolError(`A frame's body of ${bodyLength} bytes is over the limit`);
  }
  const prefix = Buffer.allocUnsafe(PREFIX_BYTES);
  prefix.writeUInt32BE(json.length, 0);
  // A frame without a body says so with a length of 2^32 - 1, so that an empty body is kept.
  prefix.writeUInt32BE(body === null ? NO_BODY : bodyLength, 4);
  return body === null || bodyLength === 0
    ? [prefix, json]
    : [prefix, json, Buffer.from(body.buffer, body.byteOffset, body.byteLength)];
}

const NO_BODY = 0xffff_ffff;

/**
 * Cuts a byte stream into frames. `push` takes what arrived and answers the frames it completed;
 * it throws a ProtocolError on a frame past the limits or a header that is not a JSON object,
 * after which the decoder must not be used again.
 */
export class FrameDecoder {
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** The lengths of the frame being read, once its prefix is in. */
  #next: { header: number; body: number | null } | null = null;

  /** Bytes held, the frame being read included. */
  get buffered(): number {
    return this.#buffered;
  }

  push(chunk: Buffer): Frame[] {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const frames: Frame[] = [];
    for (;;) {
      if (this.#next === null) {
        if (this.#buffered < PREFIX_BYTES) break;
        const prefix = this.#take(PREFIX_BYTES);
        const header = prefix.readUInt32BE(0);
        const body = prefix.readUInt32BE(4);
        if (header === 0 || header > MAX_HEADER_BYTES) {
          throw new ProtocolError(`A frame's header of ${header} bytes is over the limit`);
        }
        if (body !== NO_BODY && body > MAX_BODY_BYTES) {
          throw new ProtocolError(`A frame's body of ${body} bytes is over the limit`);
        }
        this.#next = { header, body: body === NO_BODY ? null : body };
      }
      const { header, body } = this.#next;
      if (this.#buffered < header + (body ?? 0)) break;
      this.#next = null;
      frames.push({
        header: parseHeader(this.#take(header)),
        body: body === null ? null : this.#take(body),
      });
    }
    return frames;
  }

  /** The first `length` bytes held (length ≤ buffered), taken out. */
  #take(length: number): Buffer {
    this.#buffered -= length;
    const first = this.#chunks[0];
    if (first !== undefined && first.length >= length) {
      if (first.length === length) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(length);
      return first.subarray(0, length);
    }
    const out = Buffer.allocUnsafe(length);
    let filled = 0;
    while (filled < length) {
      const chunk = this.#chunks[0];
      if (chunk === undefined) throw new ProtocolError('A frame ended early');
      const part = Math.min(chunk.length, length - filled);
      chunk.copy(out, filled, 0, part);
      filled += part;
      if (part === chunk.length) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(part);
    }
    return out;
  }
}

function parseHeader(bytes: Buffer): Readonly<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ProtocolError("A frame's header is not JSON");
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProtocolError("A frame's header is not a JSON object");
  }
  return value as Record<string, unknown>;
}
