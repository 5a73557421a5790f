/**
 * A server's console: output split into lines and kept in a ring buffer of the last 1000.
 * Memory is bounded whatever the server prints: a line longer than 8 KiB is cut (the rest up to
 * the next newline is dropped), and output without newlines never accumulates past that.
 */
import { StringDecoder } from 'node:string_decoder';

export const HISTORY_LINES = 1000;
export const MAX_LINE_BYTES = 8 * 1024;
const CUT_MARK = ' [line cut]';

export interface ConsoleLine {
  readonly line: string;
  /** ISO-8601 time the line was complete. */
  readonly ts: string;
}

/** Splits one output stream into lines, holding at most one partial line of 8 KiB. */
export class LineSplitter {
  readonly #decoder = new StringDecoder('utf8');
  #partial = '';
  #discarding = false;

  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer): void {
    let text = this.#decoder.write(chunk);
    for (;;) {
      const newline = text.indexOf('\n');
      const piece = newline < 0 ? text : text.slice(0, newline);
      if (!this.#discarding) this.#partial += piece;
      if (Buffer.byteLength(this.#partial) > MAX_LINE_BYTES) {
        this.emit(cut(this.#partial) + CUT_MARK);
        this.#partial = '';
        this.#discarding = true;
      }
      if (newline < 0) return;
      if (this.#discarding) this.#discarding = false;
      else this.emit(this.#partial.replace(/\r$/, ''));
      this.#partial = '';
      text = text.slice(newline + 1);
    }
  }

  /** Emits what is left when the stream ends. */
  end(): void {
    const rest = this.#partial + this.#decoder.end();
    this.#partial = '';
    if (rest !== '' && !this.#discarding) this.emit(cut(rest.replace(/\r$/, '')));
    this.#discarding = false;
  }
}

/** The first MAX_LINE_BYTES bytes of `text`, never splitting a character. */
function cut(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= MAX_LINE_BYTES) return text;
  let end = MAX_LINE_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1; // back off a continuation byte
  return bytes.subarray(0, end).toString('utf8');
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
