/**
 * The last lines a process printed (both streams, in the order they came), kept beside the
 * console for what the panel says about it afterwards: why an install failed. Bounded whatever
 * the process prints: at most `count` lines of at most {@link TAIL_LINE_CHARACTERS} characters,
 * split by the console's own splitter (a line over 8 KiB is cut there). Blank lines are skipped,
 * ANSI colours removed and other control characters written out (src/text.ts), so that a line
 * can be quoted in a message.
 */
import { escapeControl } from '../../text.js';
import type { OutputStream } from '../runtime/runtime.js';
import { LineSplitter } from './console-log.js';

/** A kept line is cut to this many characters (and `…`). */
export const TAIL_LINE_CHARACTERS = 300;

// eslint-disable-next-line no-control-regex -- the escape character starts every ANSI sequence
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

export class OutputTail {
  readonly #lines: string[] = [];
  readonly #splitters: Record<OutputStream, LineSplitter>;
  readonly #count: number;

  constructor(count: number) {
    this.#count = count;

    const keep = (line: string) => {
      const plain = escapeControl(line.replace(ANSI, '')).trim();
      if (plain === '') return;
      this.#lines.push(
        plain.length > TAIL_LINE_CHARACTERS ? `${plain.slice(0, TAIL_LINE_CHARACTERS)}…` : plain,
      );
      if (this.#lines.length > this.#count) this.#lines.shift();
    };
    this.#splitters = { stdout: new LineSplitter(keep), stderr: new LineSplitter(keep) };
  }

  write(chunk: Buffer, stream: OutputStream): void {
    this.#splitters[stream].push(chunk);
  }

  /** The process ended: a last line without a newline counts too. */
  end(): void {
    this.#splitters.stdout.end();
    this.#splitters.stderr.end();
  }

  /** The kept lines, oldest first. */
  lines(): string[] {
    return [...this.#lines];
  }
}
