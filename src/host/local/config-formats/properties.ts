/**
 * The `properties` parser: Java's .properties format, as Java reads it (continuation lines,
 * `=`/`:`/space separators, escapes). A match is a key; a missing key is appended as `key=value`;
 * values are written escaped as Java's Properties.store writes them (`\uXXXX` beyond ASCII, as
 * Wings does). Comments and untouched entries stay as they were.
 */
import { Lines } from './lines.js';
import { decide, type Replacement } from './replacement.js';

interface Property {
  readonly key: string;
  readonly value: string;
  /** The key and its separator, as written. */
  readonly prefix: string;
  /** The last physical line of the entry (continuation lines end with `\`). */
  readonly end: number;
}

const PROPERTY_SPACE = /^[ \t\f]*/;

/** The entry starting at line `index`, or null for blank lines and comments. */
function propertyAt(text: Lines, index: number): Property | null {
  const first = text.at(index);
  const indent = PROPERTY_SPACE.exec(first)?.[0].length ?? 0;
  if (indent === first.length || first[indent] === '#' || first[indent] === '!') return null;
  const parts = [first];
  let end = index;
  while (continues(text.at(end)) && end + 1 < text.length) {
    parts[parts.length - 1] = (parts.at(-1) ?? '').slice(0, -1);
    end += 1;
    parts.push(text.at(end).replace(PROPERTY_SPACE, ''));
  }
  const line = parts.join('');
  let keyEnd = indent;
  while (keyEnd < line.length && !'=: \t\f'.includes(line[keyEnd] ?? '')) {
    keyEnd += line[keyEnd] === '\\' ? 2 : 1;
  }
  keyEnd = Math.min(keyEnd, line.length);
  let valueStart = keyEnd + (PROPERTY_SPACE.exec(line.slice(keyEnd))?.[0].length ?? 0);
  if (line[valueStart] === '=' || line[valueStart] === ':') {
    valueStart += 1;
    valueStart += PROPERTY_SPACE.exec(line.slice(valueStart))?.[0].length ?? 0;
  }
  // A key alone (`key`) gets a separator when it is given a value.
  const prefix = valueStart === keyEnd ? `${line.slice(0, keyEnd)}=` : line.slice(0, valueStart);
  return {
    key: unescapeProperty(line.slice(indent, keyEnd)),
    value: unescapeProperty(line.slice(valueStart)),
    prefix,
    end,
  };
}

/** Whether a line ends with an odd number of backslashes: the entry goes on on the next line. */
function continues(line: string): boolean {
  let count = 0;
  while (line[line.length - 1 - count] === '\\') count += 1;
  return count % 2 === 1;
}

function unescapeProperty(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|[^])?/g, (_all, escaped?: string) => {
    if (escaped === undefined) return '';
    if (escaped.length === 5) return String.fromCharCode(parseInt(escaped.slice(1), 16));
    return { t: '\t', n: '\n', r: '\r', f: '\f' }[escaped] ?? escaped;
  });
}

/** Escapes as Java's Properties.store does; `key` also escapes the separators. */
function escapeProperty(text: string, key: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] ?? '';
    const code = text.charCodeAt(i);
    const named = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\f': '\\f' }[char];
    if (named !== undefined) out += named;
    else if (char === ' ' && (key || i === 0)) out += '\\ ';
    else if (key && (char === '=' || char === ':' || ((char === '#' || char === '!') && i === 0))) {
      out += `\\${char}`;
    } else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return out;
}

export function editProperties(content: string, replacements: readonly Replacement[]): string {
  const text = new Lines(content);
  for (const replacement of replacements) {
    let found = false;
    let changed = false;
    // Built anew: an entry on continuation lines becomes one line.
    const lines: string[] = [];
    for (let i = 0; i < text.length; i += 1) {
      const entry = propertyAt(text, i);
      const next = entry?.key === replacement.match ? decide(replacement, entry.value) : null;
      found ||= entry?.key === replacement.match;
      if (entry && next !== null && next !== entry.value) {
        lines.push(entry.prefix + escapeProperty(next, false));
        changed = true;
      } else {
        for (let line = i; line <= (entry?.end ?? i); line += 1) lines.push(text.at(line));
      }
      i = entry?.end ?? i;
    }
    if (!found && replacement.ifValue === null) {
      lines.push(
        `${escapeProperty(replacement.match, true)}=${escapeProperty(replacement.value, false)}`,
      );
      changed = true;
    }
    if (changed) text.replace(lines);
  }
  return text.toString();
}
