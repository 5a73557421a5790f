/**
 * What Wings' configuration-file parsers do to a file's text, as pure functions: `editConfig`
 * takes the text (`''` for a file that does not exist yet) and answers the new text, or the very
 * same string when nothing changed. Nothing here touches the disk (config-files.ts does).
 *
 * What a `match` means, per parser (docs/templates-config-files.md has examples):
 * - `properties`: a key; a missing key is appended as `key=value`. Values are written escaped
 *   the way Java reads them (`\uXXXX` for anything beyond ASCII, as Wings does).
 * - `ini`: `section.key` (the first dot splits; `[a.b].key` names the section `a.b`), or a bare
 *   key for the lines before the first section. A missing key is added to its section, a missing
 *   section at the end.
 * - `file`: every line that starts with the match is replaced, whole, by the value; nothing is
 *   added when no line matches. An empty match starts every line (Wings' `bytes.HasPrefix`), so
 *   it replaces each of them: how an egg rewrites a one-line file.
 * - `json`, `yaml`: a dotted path; `*` stands for every entry of an object or list, `name[0]` or
 *   a number is a list index. Missing objects on the way are made; `[0]` of a missing list makes
 *   the list.
 * - `xml`: a dotted element path from the root element (`root.child.leaf`, `*` for any element);
 *   missing elements of a path without `*` are made. A value `[attr='v']` sets an attribute.
 *
 * A replacement with `ifValue` changes only a value that exists and equals it (for `file`, the
 * whole line); `regex:<pattern>` instead matches a Go (RE2) regular expression, run in linear time
 * (docs/security.md, "Patterns"), and replaces every match with the value, where `$1`, `${1}` and
 * `${name}` are its groups. Comments, order and
 * untouched lines stay as they were (YAML through the `yaml` Document API, XML through the DOM).
 * Every error is a ConfigFileError (or a RangeError past the stack), and the caller keeps the
 * file as it was.
 */
import { randomBytes } from 'node:crypto';
import {
  DOMParser,
  XMLSerializer,
  onErrorStopParsing,
  type Document as XmlDocument,
  type Element,
  type Node as XmlNode,
} from '@xmldom/xmldom';
import {
  isMap,
  isNode,
  isScalar,
  isSeq,
  parseDocument,
  Scalar,
  YAMLMap,
  YAMLSeq,
  type Document as YamlDocument,
  type Node as YamlNode,
} from 'yaml';
import type { ConfigParser } from '../../domain/template.js';
import { compileRe2 } from '../../templates/patterns.js';

/** One replacement with its value already rendered (placeholders resolved). */
export interface Replacement {
  readonly match: string;
  readonly ifValue: string | null;
  readonly value: string;
}

/** What is wrong with a file's content or with a rule; the file is left as it was. */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

/**
 * Deepest nesting of objects, lists or elements read: deeper files are refused before they are
 * parsed, so a hostile file cannot hold the event loop for seconds or exhaust the stack.
 */
export const MAX_NESTING = 256;

/**
 * Largest YAML or XML file parsed. Their parsers take about a second and a half per MiB at
 * worst, on the event loop; real config files are a few KiB. Line-based files and JSON are read
 * up to the caller's limit (4 MiB: well under half a second).
 */
export const MAX_TREE_BYTES = 256 * 1024;

const REGEX_PREFIX = 'regex:';

export function editConfig(
  parser: ConfigParser,
  content: string,
  replacements: readonly Replacement[],
): string {
  for (const replacement of replacements) {
    if (replacement.match === '' && parser !== 'file') {
      throw new ConfigFileError('A replacement has an empty "match"');
    }
  }
  switch (parser) {
    case 'properties':
      return editProperties(content, replacements);
    case 'ini':
      return editIni(content, replacements);
    case 'file':
      return editLines(content, replacements);
    case 'json':
      return editJson(content, replacements);
    case 'yaml':
      return editYaml(treeSized(content), replacements);
    case 'xml':
      return editXml(treeSized(content), replacements);
  }
}

function treeSized(content: string): string {
  if (Buffer.byteLength(content) > MAX_TREE_BYTES) {
    throw new ConfigFileError(`The file is larger than ${MAX_TREE_BYTES / 1024} KiB`);
  }
  return content;
}

/**
 * The value `replacement` writes where the current value is `current` (undefined: there is
 * none), or null to leave it.
 */
function decide(replacement: Replacement, current: string | undefined): string | null {
  const { ifValue, value } = replacement;
  if (ifValue === null) return value;
  if (current === undefined) return null;
  if (!ifValue.startsWith(REGEX_PREFIX)) return current === ifValue ? value : null;
  const compiled = compileRe2(ifValue.slice(REGEX_PREFIX.length));
  if (!compiled.ok) {
    throw new ConfigFileError(`${JSON.stringify(ifValue)}: the pattern ${compiled.reason}`);
  }
  const { pattern } = compiled;
  if (!pattern.test(current)) return null;
  return pattern.replaceAll(current, (captures, named) => expandGo(value, captures, named));
}

/** Go's Regexp.Expand: `$$` is `$`; `$1`, `${1}`, `$name`, `${name}` a group, or '' if none. */
function expandGo(
  template: string,
  captures: readonly unknown[],
  named: Record<string, unknown>,
): string {
  return template.replace(/\$(?:\$|\{(\w+)\}|(\w+))/g, (all, braced?: string, bare?: string) => {
    if (all === '$$') return '$';
    const name = braced ?? bare ?? '';
    const found = /^\d+$/.test(name) ? captures[Number(name)] : named[name];
    return typeof found === 'string' ? found : '';
  });
}

function singleLine(text: string, what: string): string {
  if (/[\r\n]/.test(text)) {
    throw new ConfigFileError(`${what} ${JSON.stringify(text)} holds a line break`);
  }
  return text;
}

// ---------------------------------------------------------------- line-based: properties, ini, file

/** A text as lines, kept with its line ending; `toString` answers the original if untouched. */
class Lines {
  #lines: string[];
  readonly #eol: string;
  readonly #finalNewline: boolean;
  #changed = false;

  constructor(private readonly original: string) {
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
    if (!this.#changed) return this.original;
    return this.#lines.join(this.#eol) + (this.#finalNewline ? this.#eol : '');
  }
}

/** `file`: lines starting with the match are replaced whole (the last replacement that applies). */
function editLines(content: string, replacements: readonly Replacement[]): string {
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

function editProperties(content: string, replacements: readonly Replacement[]): string {
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

function editIni(content: string, replacements: readonly Replacement[]): string {
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

// ---------------------------------------------------------------- trees: json, yaml

type Step = { readonly key: string } | { readonly index: number } | '*';

function stepsOf(match: string): Step[] {
  const steps: Step[] = [];
  for (const part of match.split('.')) {
    if (part === '*') {
      steps.push('*');
      continue;
    }
    const parsed = /^([^[\]]*)((?:\[\d{1,6}\])*)$/.exec(part);
    if (!parsed || part === '') {
      throw new ConfigFileError(`${JSON.stringify(match)} is not a valid key path`);
    }
    if (parsed[1]) steps.push({ key: parsed[1] });
    for (const index of (parsed[2] ?? '').matchAll(/\d+/g)) steps.push({ index: Number(index[0]) });
  }
  return steps;
}

/** How the walk sees one kind of document. `N` is a value in it. */
interface Tree<N> {
  kind(node: N): 'map' | 'seq' | 'scalar' | 'other';
  /** The entry `key` (a list's index as text), or undefined. */
  child(node: N, key: string): N | undefined;
  /** Sets an entry; a list's index may be its length (appends). */
  put(node: N, key: string, value: N): void;
  children(node: N): (readonly [string, N])[];
  /** A scalar's value as text (null as ''); undefined for anything else. */
  text(node: N): string | undefined;
  /** The value to write for `text` where `current` is. */
  leaf(text: string, current: N | undefined): N;
  map(): N;
  seq(): N;
}

/**
 * A new value's type: a string where the current value is a string; else an integer when it is
 * written like one, a boolean for `true` and `false`, and a string otherwise.
 */
function coerce(text: string, currentIsString: boolean): string | number | bigint | boolean {
  if (currentIsString) return text;
  if (/^-?(?:0|[1-9]\d*)$/.test(text)) {
    const number = Number(text);
    return Number.isSafeInteger(number) ? number : BigInt(text);
  }
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

function applyTree<N>(tree: Tree<N>, root: N, replacement: Replacement): void {
  const steps = stepsOf(replacement.match);
  const isCollection = (node: N): boolean => {
    const kind = tree.kind(node);
    return kind === 'map' || kind === 'seq';
  };
  const fail = (at: number, what: string): never => {
    const where = replacement.match
      .split('.')
      .slice(0, at + 1)
      .join('.');
    throw new ConfigFileError(`${JSON.stringify(replacement.match)}: ${where} ${what}`);
  };
  const setLeaf = (node: N, key: string, current: N | undefined): void => {
    const next = decide(replacement, current === undefined ? undefined : tree.text(current));
    if (next !== null) tree.put(node, key, tree.leaf(next, current));
  };
  const walk = (node: N, at: number): void => {
    const step = steps[at];
    if (step === undefined) return;
    const last = at === steps.length - 1;
    if (step === '*') {
      for (const [key, child] of tree.children(node)) {
        if (last) setLeaf(node, key, child);
        else if (isCollection(child)) walk(child, at + 1);
      }
      return;
    }
    const kind = tree.kind(node);
    const key = 'key' in step ? step.key : String(step.index);
    if (kind === 'seq' ? !/^\d+$/.test(key) : 'index' in step) {
      if (replacement.ifValue !== null) return;
      fail(at, kind === 'seq' ? 'is a list, not an object' : 'is not a list');
    }
    const child = tree.child(node, key);
    if (last) {
      setLeaf(node, key, child);
      return;
    }
    if (child !== undefined && isCollection(child)) {
      walk(child, at + 1);
      return;
    }
    if (replacement.ifValue !== null) return;
    if (child !== undefined && tree.text(child) !== '') fail(at, 'is not an object or a list');
    const next = steps[at + 1];
    const made = typeof next === 'object' && 'index' in next ? tree.seq() : tree.map();
    if (tree.kind(made) === 'seq' && typeof next === 'object' && 'index' in next && next.index) {
      fail(at, `has no list to set item ${next.index} of`);
    }
    tree.put(node, key, made);
    walk(made, at + 1);
  };
  const kind = tree.kind(root);
  if (kind !== 'map' && kind !== 'seq') {
    throw new ConfigFileError('The top level of the file is not an object or a list');
  }
  walk(root, 0);
}

/** A list index as a number, when it is one and no further than `length` (appending). */
function indexIn(key: string, length: number): number | null {
  const index = /^\d+$/.test(key) ? Number(key) : NaN;
  return index <= length ? index : null;
}

/**
 * Nesting of `[`/`{` outside JSON strings, and the numbers whose text JSON.parse would not give
 * back (`1.0`, `1e5`, integers past 2^53): those are replaced by marked strings, so that they are
 * written back exactly as they were.
 */
function protectNumbers(content: string, mark: string): string {
  let out = '';
  let copied = 0;
  let depth = 0;
  const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  for (let i = 0; i < content.length; i += 1) {
    const char = content[i] ?? '';
    if (char === '"') {
      for (i += 1; i < content.length && content[i] !== '"'; i += content[i] === '\\' ? 2 : 1);
    } else if (char === '[' || char === '{') {
      depth += 1;
      if (depth > MAX_NESTING) throw tooDeep();
    } else if (char === ']' || char === '}') {
      depth -= 1;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      number.lastIndex = i;
      const raw = number.exec(content)?.[0];
      if (raw === undefined) continue;
      if (String(Number(raw)) !== raw) {
        out += content.slice(copied, i) + JSON.stringify(mark + raw);
        copied = i + raw.length;
      }
      i += raw.length - 1;
    }
  }
  return out + content.slice(copied);
}

const tooDeep = (): ConfigFileError =>
  new ConfigFileError(`The file is nested more than ${MAX_NESTING} levels deep`);

type Json = unknown;

function editJson(content: string, replacements: readonly Replacement[]): string {
  const empty = content.trim() === '';
  const mark = `\u0000${randomBytes(8).toString('hex')}:`;
  let root: Json = {};
  if (!empty) {
    try {
      JSON.parse(content);
    } catch (error) {
      throw new ConfigFileError(`The file is not valid JSON: ${(error as Error).message}`);
    }
    root = JSON.parse(protectNumbers(content, mark));
  }
  const state = { changed: false };
  const isMarked = (value: Json): value is string =>
    typeof value === 'string' && value.startsWith(mark);
  const isObject = (value: Json): value is Record<string, Json> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const tree: Tree<Json> = {
    kind: (node) =>
      Array.isArray(node)
        ? 'seq'
        : isObject(node)
          ? 'map'
          : node === undefined
            ? 'other'
            : 'scalar',
    child(node, key) {
      if (Array.isArray(node)) return node[Number(key)] as Json;
      return isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    },
    put(node, key, value) {
      if (Array.isArray(node)) {
        const index = indexIn(key, node.length);
        if (index === null) throw new ConfigFileError(`The list has no item ${key}`);
        if (node[index] !== value) state.changed = true;
        node[index] = value;
      } else if (isObject(node) && !(Object.hasOwn(node, key) && node[key] === value)) {
        // Defined, never assigned: a key such as `__proto__` is an ordinary entry.
        Object.defineProperty(node, key, {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
        state.changed = true;
      }
    },
    children: (node) =>
      Array.isArray(node)
        ? node.map((value: Json, index) => [String(index), value] as const)
        : isObject(node)
          ? Object.entries(node)
          : [],
    text(node) {
      if (isMarked(node)) return node.slice(mark.length);
      if (node === null) return '';
      if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean') {
        return String(node);
      }
      return undefined;
    },
    leaf(text, current) {
      const value = coerce(text, typeof current === 'string' && !isMarked(current));
      return typeof value === 'bigint' ? mark + text : value;
    },
    map: () => ({}),
    seq: () => [],
  };
  for (const replacement of replacements) applyTree(tree, root, replacement);
  if (!state.changed || (empty && isObject(root) && Object.keys(root).length === 0)) return content;
  const indent = empty
    ? '  '
    : (/^([ \t]+)\S/m.exec(content)?.[1] ?? (content.trim().includes('\n') ? '  ' : ''));
  const escapedMark = JSON.stringify(mark).slice(1, -1).replaceAll('\\', '\\\\');
  const text = JSON.stringify(root, null, indent).replace(
    new RegExp(`"${escapedMark}([^"]*)"`, 'g'),
    (_all, raw: string) => raw,
  );
  return text + (empty || content.endsWith('\n') ? '\n' : '');
}

/** A YAML scalar's value as text: null as ''; undefined for what is not a plain value. */
function scalarText(value: unknown): string | undefined {
  if (value === null || value === undefined) return '';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      return undefined;
  }
}

/** Nesting of flow collections, counted roughly (brackets anywhere count). */
function yamlNesting(content: string): number {
  let depth = 0;
  let deepest = 0;
  for (const char of content) {
    if (char === '[' || char === '{') deepest = Math.max(deepest, (depth += 1));
    else if ((char === ']' || char === '}') && depth > 0) depth -= 1;
  }
  return deepest;
}

type Yaml = YamlNode | null;

function editYaml(content: string, replacements: readonly Replacement[]): string {
  if (yamlNesting(content) > MAX_NESTING) throw tooDeep();
  // Aliases are never expanded (no toJS), so an alias bomb costs nothing.
  // Keys are checked for duplicates where a rule looks them up: the parser's own check
  // (`uniqueKeys`) takes time growing with the square of a map's size.
  const doc: YamlDocument = parseDocument(content, { intAsBigInt: true, uniqueKeys: false });
  const [error] = doc.errors;
  if (error) throw new ConfigFileError(`The file is not valid YAML: ${error.message}`);
  const state = { changed: false };
  const pairOf = (node: YAMLMap, key: string) => {
    const pairs = node.items.filter((pair) =>
      isScalar(pair.key) ? scalarText(pair.key.value) === key : pair.key === key,
    );
    if (pairs.length > 1) throw new ConfigFileError(`The key ${JSON.stringify(key)} is repeated`);
    return pairs[0];
  };
  const asYaml = (value: unknown): Yaml => (isNode(value) ? value : null);
  /** Puts a scalar's new value into the scalar there, keeping its comments and style. */
  const replace = (old: unknown, value: Yaml, assign: (value: Yaml) => void): void => {
    if (isScalar(old) && isScalar(value)) {
      if (old.value !== value.value) {
        old.value = value.value;
        state.changed = true;
      }
    } else {
      assign(value);
      state.changed = true;
    }
  };
  const tree: Tree<Yaml> = {
    kind: (node) =>
      isMap(node)
        ? 'map'
        : isSeq(node)
          ? 'seq'
          : node === null || isScalar(node)
            ? 'scalar'
            : 'other',
    child(node, key) {
      if (isSeq(node)) return asYaml(node.items[Number(key)]);
      if (!isMap(node)) return undefined;
      const pair = pairOf(node, key);
      return pair ? asYaml(pair.value) : undefined;
    },
    put(node, key, value) {
      if (isSeq(node)) {
        const index = indexIn(key, node.items.length);
        if (index === null) throw new ConfigFileError(`The list has no item ${key}`);
        replace(node.items[index], value, (next) => (node.items[index] = next));
      } else if (isMap(node)) {
        const pair = pairOf(node, key);
        if (pair) replace(pair.value, value, (next) => (pair.value = next));
        else {
          node.items.push(doc.createPair(key, value));
          state.changed = true;
        }
      }
    },
    children(node) {
      if (isSeq(node))
        return node.items.map((item, index) => [String(index), asYaml(item)] as const);
      if (!isMap(node)) return [];
      return node.items.flatMap((pair) =>
        isScalar(pair.key) ? [[scalarText(pair.key.value) ?? '', asYaml(pair.value)] as const] : [],
      );
    },
    text(node) {
      if (node === null) return '';
      if (!isScalar(node)) return undefined;
      return scalarText(node.value);
    },
    leaf: (text, current) =>
      new Scalar(coerce(text, isScalar(current) && typeof current.value === 'string')),
    map: () => new YAMLMap(),
    seq: () => new YAMLSeq(),
  };
  const empty = doc.contents === null;
  if (empty) doc.contents = new YAMLMap();
  for (const replacement of replacements) applyTree(tree, doc.contents, replacement);
  if (!state.changed) return content;
  // Sequences stay indented the way the file had them (`key:\n- a` or `key:\n  - a`).
  const indentSeq = !/^([ \t]*)[^\s#-][^\n]*:[ \t]*\r?\n\1- /m.test(content);
  // Flow collections keep their padding (`[ a ]` or `[a]`).
  const flowCollectionPadding = !/[[{][^\s\]}]/.test(content);
  return doc.toString({ lineWidth: 0, indentSeq, flowCollectionPadding });
}

// ---------------------------------------------------------------- xml

/** Element nesting, counted from the tags (comments and CDATA skipped). */
function xmlNesting(content: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = content.indexOf('<'); i !== -1; i = content.indexOf('<', i + 1)) {
    const end = content.startsWith('<!--', i)
      ? content.indexOf('-->', i)
      : content.startsWith('<![CDATA[', i)
        ? content.indexOf(']]>', i)
        : content.indexOf('>', i);
    if (end < 0) break;
    const next = content[i + 1];
    if (next === '/') depth -= 1;
    else if (next !== '!' && next !== '?' && content[end - 1] !== '/') {
      deepest = Math.max(deepest, (depth += 1));
    }
    i = end;
  }
  return deepest;
}

const isBlank = (node: XmlNode | null | undefined): node is XmlNode =>
  node?.nodeType === node?.TEXT_NODE && (node?.nodeValue ?? '').trim() === '';

/**
 * Appends `child` to `parent` indented like its last element (`\n  <last/>\n` gets
 * `\n  <child/>` before the final line break); a parent without that layout gets it plainly.
 */
function appendIndented(doc: XmlDocument, parent: Element, child: Element): void {
  const nodes = Array.from(parent.childNodes);
  const lastElement = nodes.findLastIndex((node) => node.nodeType === node.ELEMENT_NODE);
  const indent = nodes[lastElement - 1];
  const closing = nodes.at(-1);
  if (lastElement > 0 && isBlank(indent) && isBlank(closing) && closing !== indent) {
    parent.insertBefore(doc.createTextNode(indent.nodeValue ?? ''), closing);
    parent.insertBefore(child, closing);
  } else parent.appendChild(child);
}

const XML_NAME = /^(?:\*|[A-Za-z_][\w:-]*)$/;
const XML_ATTRIBUTE = /^\[(\w+)='(.*)'\]$/;

const elementsOf = (parent: Element, name: string): Element[] =>
  Array.from(parent.childNodes).filter(
    (node): node is Element =>
      node.nodeType === node.ELEMENT_NODE && (name === '*' || (node as Element).tagName === name),
  );

function editXml(content: string, replacements: readonly Replacement[]): string {
  if (xmlNesting(content) > MAX_NESTING) throw tooDeep();
  const parse = (text: string): XmlDocument => {
    try {
      return new DOMParser({
        onError: onErrorStopParsing,
        normalizeLineEndings: (source) => source,
      }).parseFromString(text, 'text/xml');
    } catch (error) {
      throw new ConfigFileError(`The file is not valid XML: ${(error as Error).message}`);
    }
  };
  const first = replacements.find((replacement) => replacement.ifValue === null);
  if (content.trim() === '' && !first) return content;
  const rootName = first?.match.split('.')[0] ?? '';
  if (content.trim() === '' && (!XML_NAME.test(rootName) || rootName === '*')) {
    throw new ConfigFileError(`${JSON.stringify(rootName)} is not an element name`);
  }
  const source =
    content.trim() === '' ? `<?xml version="1.0" encoding="utf-8"?>\n<${rootName}/>\n` : content;
  const doc = parse(source);
  const root = doc.documentElement;
  if (!root) throw new ConfigFileError('The file has no root element');
  const state = { changed: content.trim() === '' };
  for (const replacement of replacements) {
    const parts = replacement.match.split('.');
    if (!parts.every((part) => XML_NAME.test(part))) {
      throw new ConfigFileError(`${JSON.stringify(replacement.match)} is not an element path`);
    }
    const [top = '', ...below] = parts;
    if (top !== '*' && top !== root.tagName) {
      if (replacement.ifValue !== null) continue;
      throw new ConfigFileError(`The root element is <${root.tagName}>, not <${top}>`);
    }
    if (replacement.ifValue === null && !parts.includes('*')) {
      let element = root;
      for (const name of below) {
        const found = elementsOf(element, name)[0];
        if (found) element = found;
        else {
          const made = doc.createElement(name);
          appendIndented(doc, element, made);
          element = made;
          state.changed = true;
        }
      }
    }
    let elements = [root];
    for (const name of below) elements = elements.flatMap((element) => elementsOf(element, name));
    const attribute = XML_ATTRIBUTE.exec(replacement.value);
    for (const element of elements) {
      if (attribute) {
        const [, name = '', value = ''] = attribute;
        const current = element.hasAttribute(name) ? element.getAttribute(name) : null;
        const next = decide({ ...replacement, value }, current ?? undefined);
        if (next !== null && next !== current) {
          element.setAttribute(name, next);
          state.changed = true;
        }
        continue;
      }
      // The element's leading text, as Wings' etree reads and sets it; child elements stay.
      const leading: XmlNode[] = [];
      for (const node of Array.from(element.childNodes)) {
        if (node.nodeType !== node.TEXT_NODE && node.nodeType !== node.CDATA_SECTION_NODE) break;
        leading.push(node);
      }
      const current = leading.map((node) => node.nodeValue ?? '').join('');
      const next = decide(replacement, current);
      if (next === null || next === current) continue;
      for (const node of leading) element.removeChild(node);
      element.insertBefore(doc.createTextNode(next), element.firstChild);
      state.changed = true;
    }
  }
  if (!state.changed) return content;
  // The serializer drops what follows the root element; the file's own ending is kept.
  const ending = source.slice(source.trimEnd().length);
  return new XMLSerializer().serializeToString(doc).trimEnd() + ending;
}
