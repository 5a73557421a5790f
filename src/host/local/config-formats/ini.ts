/**
 * The `ini` parser. A match is `section.key` (the first dot splits; `[a.b].key` names the section
 * `a.b`) or a bare key for the lines before the first section. A value keeps its quotes and its
 * inline comment; a missing key is added after its section's last entry, a missing section at the
 * end of the file. Comments and untouched lines stay as they were.
 */
import { Lines } from './lines.js';
import { decide, singleLine, type Replacement } from './replacement.js';

const INI_SECTION = /^\s*\[(.*)\]\s*(?:[;#].*)?$/;
const INI_COMMENT = /^\s*(?:[;#]|$)/;

interface IniEntry {
  readonly key: string;
  readonly value: string;
  /** The key, its separator and the space after it, as written. */
  readonly prefix: string;
  readonly quote: string;
  /** What follows the value: an inline comment, with the space before it. */
  readonly suffix: string;
}

function iniEntry(line: string): IniEntry | null {
  if (INI_COMMENT.test(line) || INI_SECTION.test(line)) return null;
  const separator = line.search(/[=:]/);
  if (separator < 0) {
    return { key: line.trim(), value: '', prefix: `${line.trimEnd()} = `, quote: '', suffix: '' };
  }
  const after = line.slice(separator + 1);
  const space = /^\s*/.exec(after)?.[0] ?? '';
  const rest = after.slice(space.length);
  const prefix = line.slice(0, separator + 1) + space;
  const key = line.slice(0, separator).trim();
  const quote = rest.startsWith('"') ? '"' : rest.startsWith("'") ? "'" : '';
  const close = quote ? rest.indexOf(quote, 1) : -1;
  if (close > 0) {
    return { key, value: rest.slice(1, close), prefix, quote, suffix: rest.slice(close + 1) };
  }
  const comment = rest.search(/\s[;#]/);
  const value = (comment < 0 ? rest : rest.slice(0, comment)).trimEnd();
  return { key, value, prefix, quote: '', suffix: rest.slice(value.length) };
}

/** Wings' reading of an ini match: `section.key`, `[a.b].key`, or a key of the top. */
function iniMatch(match: string): { readonly section: string; readonly key: string } {
  const path: string[] = [];
  let depth = 0;
  let part = '';
  for (const char of match) {
    if (char === '[') depth += 1;
    else if (char === ']') depth -= 1;
    else if (char === '.' && depth === 0 && path.length === 0) {
      path.push(part);
      part = '';
    } else part += char;
  }
  path.push(part);
  const [first = '', second] = path;
  return second === undefined ? { section: '', key: first } : { section: first, key: second };
}

export function editIni(content: string, replacements: readonly Replacement[]): string {
  const text = new Lines(content);
  for (const replacement of replacements) {
    const { section, key } = iniMatch(singleLine(replacement.match, 'The match'));
    let current = '';
    let found = false;
    let seen = section === '';
    /** Where a new key of the section goes: after its last entry (or its header). */
    let last = -1;
    for (let i = 0; i < text.length; i += 1) {
      const line = text.at(i);
      const header = INI_SECTION.exec(line);
      if (header) {
        current = (header[1] ?? '').trim();
        if (current === section) {
          seen = true;
          last = i;
        }
        continue;
      }
      if (current !== section) continue;
      const entry = iniEntry(line);
      if (!entry) continue;
      last = i;
      if (entry.key !== key) continue;
      found = true;
      const next = decide(replacement, entry.value);
      if (next !== null && next !== entry.value) {
        const value = singleLine(next, 'The value');
        text.set(i, entry.prefix + entry.quote + value + entry.quote + entry.suffix);
      }
    }
    if (found || replacement.ifValue !== null) continue;
    const entry = `${key} = ${singleLine(replacement.value, 'The value')}`;
    if (seen) text.insert(last + 1, entry);
    else {
      const gap = text.length > 0 && text.at(text.length - 1).trim() !== '';
      text.insert(text.length, ...(gap ? [''] : []), `[${section}]`, entry);
    }
  }
  return text.toString();
}
