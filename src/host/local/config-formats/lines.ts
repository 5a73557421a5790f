/**
 * A text as lines, for the line-based parsers (`properties`, `ini`, `file`): each line kept with
 * the file's line ending and final newline, and `toString` answering the very same string when
 * nothing was set. Also the `file` parser itself: every line that starts with a match is replaced
 * whole; nothing is added when no line matches.
 */
import { decide, singleLine, type Replacement } from './replacement.js';

/** A text as lines, kept with its line ending; `toString` answers the original if untouched. */
export class Lines {
  #lines: string[];
  readonly #eol: string;
  readonly #finalNewline: boolean;
  #changed = false;

  readonly #original: string;

  constructor(original: string) {
    this.#original = original;
    this.#eol = original.includes('\r\n') ? '\r\n' : '\n';
    const lines = original.split(/\r?\n/);
    this.#finalNewline = lines.at(-1) === '';
    if (this.#finalNewline) lines.pop();
    this.#lines = lines;
  }

  get length(): number {
    return this.#lines.length;
  }

  at(index: number): string {
    return this.#lines[index] ?? '';
  }

  set(index: number, line: string): void {
    if (this.#lines[index] === line) return;
    this.#lines[index] = line;
    this.#changed = true;
  }

  /** Inserts lines before `index` (at most once per replacement: it moves every line after). */
  insert(index: number, ...lines: string[]): void {
    this.#lines.splice(index, 0, ...lines);
    this.#changed = true;
  }

  /** Replaces every line: for edits that change the number of lines in many places. */
  replace(lines: string[]): void {
    this.#lines = lines;
    this.#changed = true;
  }

  toString(): string {
    if (!this.#changed) return this.#original;
    return this.#lines.join(this.#eol) + (this.#finalNewline ? this.#eol : '');
  }
}

/** `file`: lines starting with the match are replaced whole (the last replacement that applies). */
export function editLines(content: string, replacements: readonly Replacement[]): string {
  const text = new Lines(content);
  for (let i = 0; i < text.length; i += 1) {
    const line = text.at(i);
    let next: string | null = null;
    for (const replacement of replacements) {
      if (line.startsWith(replacement.match)) next = decide(replacement, line) ?? next;
    }
    if (next !== null) text.set(i, singleLine(next, 'The new line'));
  }
  return text.toString();
}
