/**
 * A server's console: output split into lines and kept in a ring buffer of the last 1000.
 * Memory is bounded whatever the server prints: a line longer than 8 KiB is cut (the rest up to
 * the next newline is dropped), and output without newlines never accumulates past that.
 *
 * Splitting works on bytes, one line per call, so that a caller can stop after any line and go
 * on later (ConsoleFeed does, to bound the work of one event-loop turn): a newline byte never
 * occurs inside a UTF-8 character, so each line is decoded on its own.
 */
import type { ConsoleLine } from '../host.js';

export const HISTORY_LINES = 1000;
export const MAX_LINE_BYTES = 8 * 1024;
const CUT_MARK = ' [line cut]';
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Splits one output stream into lines, holding at most one partial line of 8 KiB.
 * `line`: the line in progress is being collected; `cut`: it was emitted cut and the rest of it
 * is dropped; `lost`: part of it was dropped unread (see {@link drop}), so none of it is emitted.
 */
export class LineSplitter {
  /** The line in progress: MAX_LINE_BYTES, plus one byte to tell where a character ends. */
  #partial: Buffer | undefined;
  #partialBytes = 0;
  #state: 'line' | 'cut' | 'lost' = 'line';
  readonly #emit: (line: string) => void;

  constructor(emit: (line: string) => void) {
    this.#emit = emit;
  }

  /** Splits a whole chunk. */
  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) offset = this.pushLine(chunk, offset);
  }

  /**
   * Takes `chunk` from byte `from` up to and including the next newline (or to its end when
   * there is none) and emits at most one line. Returns the offset after what it took: a newline
   * was taken exactly when `chunk[result - 1]` is one.
   */
  pushLine(chunk: Buffer, from: number): number {
    const newline = chunk.indexOf(NEWLINE, from);
    const end = newline < 0 ? chunk.length : newline;
    if (newline >= 0 && this.#state === 'line' && this.#partialBytes === 0) {
      // The common case: a whole line inside the chunk, decoded straight from it.
      if (end - from <= MAX_LINE_BYTES) {
        this.#emit(chunk.toString('utf8', from, withoutCarriageReturn(chunk, from, end)));
        return newline + 1;
      }
    }
    this.#collect(chunk, from, end);
    if (newline < 0) return chunk.length;
    this.#finishLine();
    return newline + 1;
  }

  /** Emits what is left when the stream ends. */
  end(): void {
    if (this.#state === 'line' && this.#partialBytes > 0) this.#finishLine();
    this.#state = 'line';
    this.#partialBytes = 0;
  }

  /**
   * Output of this stream was dropped unread: bytes holding `newlines` newlines, the last of them
   * its final byte when `endsWithNewline`. Returns how many lines were lost: each line that
   * ended in it (the one in progress included, unless it was already emitted cut), and the one
   * it leaves unfinished, which the splitter then drops up to its newline.
   */
  drop(newlines: number, endsWithNewline: boolean): number {
    let lost = 0;
    if (newlines > 0) {
      lost = newlines - (this.#state === 'line' ? 0 : 1);
      this.#state = 'line';
    }
    this.#partialBytes = 0;
    if (!endsWithNewline && this.#state === 'line') {
      lost += 1;
      this.#state = 'lost';
    }
    return lost;
  }

  #collect(chunk: Buffer, from: number, end: number): void {
    if (this.#state !== 'line' || end === from) return;
    this.#partial ??= Buffer.allocUnsafe(MAX_LINE_BYTES + 1);
    const taken = Math.min(end - from, this.#partial.length - this.#partialBytes);
    chunk.copy(this.#partial, this.#partialBytes, from, from + taken);
    this.#partialBytes += taken;
    if (this.#partialBytes > MAX_LINE_BYTES) {
      this.#emit(cut(this.#partial) + CUT_MARK);
      this.#partialBytes = 0;
      this.#state = 'cut';
    }
  }

  #finishLine(): void {
    if (this.#state === 'line') {
      const partial = this.#partial ?? Buffer.alloc(0);
      this.#emit(
        partial.toString('utf8', 0, withoutCarriageReturn(partial, 0, this.#partialBytes)),
      );
    }
    this.#state = 'line';
    this.#partialBytes = 0;
  }
}

/** `end`, less one when the line ends with CR (of a CRLF). */
function withoutCarriageReturn(bytes: Buffer, start: number, end: number): number {
  return end > start && bytes[end - 1] === CARRIAGE_RETURN ? end - 1 : end;
}

/** The first MAX_LINE_BYTES bytes of `bytes` (which holds more), never splitting a character. */
function cut(bytes: Buffer): string {
  let end = MAX_LINE_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1; // back off a continuation byte
  return bytes.toString('utf8', 0, end);
}

/**
 * How many newline bytes `bytes` holds. Output is counted as it arrives, so this reads four
 * bytes at a time: a byte of `word ^ 0x0a0a0a0a` is zero exactly where a newline is, and
 * `((x & 0x7f) + 0x7f) | x` has its top bit clear only for a zero byte x, without carries
 * between bytes.
 */
export function countNewlines(bytes: Uint8Array): number {
  let count = 0;
  let i = 0;
  const misaligned = (4 - (bytes.byteOffset & 3)) & 3;
  for (; i < misaligned && i < bytes.length; i++) if (bytes[i] === NEWLINE) count++;
  const words = (bytes.length - i) >>> 2;
  if (words > 0) {
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset + i, words);
    for (let w = 0; w < words; w++) {
      const x = (view[w] ?? 0) ^ 0x0a0a0a0a;
      const zeros = ~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x | 0x7f7f7f7f) >>> 7;
      // One bit per zero byte; the multiplication adds the four bytes into the top one.
      if (zeros !== 0) count += Math.imul(zeros, 0x01010101) >>> 24;
    }
    i += words * 4;
  }
  for (; i < bytes.length; i++) if (bytes[i] === NEWLINE) count++;
  return count;
}

/** The last {@link HISTORY_LINES} lines, oldest first. */
export class RingBuffer {
  readonly #lines: (ConsoleLine | undefined)[];
  #next = 0;
  #size = 0;

  constructor(readonly capacity = HISTORY_LINES) {
    this.#lines = new Array<ConsoleLine | undefined>(capacity);
  }

  push(line: ConsoleLine): void {
    this.#lines[this.#next] = line;
    this.#next = (this.#next + 1) % this.capacity;
    this.#size = Math.min(this.#size + 1, this.capacity);
  }

  toArray(): ConsoleLine[] {
    const start = (this.#next - this.#size + this.capacity) % this.capacity;
    const out: ConsoleLine[] = [];
    for (let i = 0; i < this.#size; i++) {
      const line = this.#lines[(start + i) % this.capacity];
      if (line) out.push(line);
    }
    return out;
  }
}
