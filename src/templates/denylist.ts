/**
 * A template's file deny list (an egg's `file_denylist`): the files of a server that nobody but
 * an admin may read or change through the panel. Wings matches the list as gitignore lines
 * (go-gitignore) against the path inside the server's folder; this module gives them git's own
 * meaning (docs/templates.md, "File deny list" says where go-gitignore differs):
 *
 * - `name` (no slash but a trailing one): a file or folder of that name at any depth;
 * - `/name`, `dir/name` (a slash at the start or in the middle): that path from the folder's top;
 * - `dir/` (a trailing slash): folders only;
 * - `*` any run of characters but `/`, `?` one of them, `[a-z]`, `[!a-z]` a class, `\` escapes;
 * - `**` as a whole segment: first, at any depth; last (`dir/**`), everything inside `dir`; in
 *   the middle, any number of folders between;
 * - `!pattern` allows again what an earlier line denied; the last line that matches decides;
 * - a folder that is denied denies everything inside it, whatever a later `!` line says (as git
 *   never looks inside an ignored folder);
 * - blank lines and lines starting with `#` are skipped.
 *
 * Matching never backtracks: a pattern is split into segments, each a literal name or an RE2
 * program for one name (src/templates/patterns.ts), and a path is matched segment by segment by
 * keeping the set of places each pattern may have reached (a non-deterministic automaton, as RE2
 * runs). A path costs at most (segments × pattern segments × rules) name matches, each linear in
 * the name, whatever the patterns: limits below keep that product small.
 */
import { AppError } from '../errors.js';
import { compileRe2 } from './patterns.js';

export const DENYLIST_LIMITS = {
  /** Lines in one list (real eggs have one or two; Wings allows 256). */
  patterns: 64,
  /** Characters in one line: a path. */
  length: 255,
  /** `*`, `?` and `[` in one line (Wings allows 16 `*`). */
  wildcards: 16,
} as const;

/** One segment of a pattern: a name as written, a name glob, or `**` (any number of folders). */
type Part =
  | { readonly kind: 'literal'; readonly name: string }
  | { readonly kind: 'glob'; readonly test: (name: string) => boolean }
  | { readonly kind: 'globstar' };

interface Rule {
  readonly source: string;
  readonly negate: boolean;
  readonly foldersOnly: boolean;
  readonly parts: readonly Part[];
  /** The automaton's first places: 0 and whatever `**` lets it skip to. */
  readonly start: Uint8Array;
}

/**
 * A place in a server's folder as the list sees it. `enter` walks one name down; `rule` says
 * which line decides this path itself (a folder when `folder`), ignoring its parents.
 */
export interface DenyCursor {
  enter(name: string): DenyCursor;
  /** The line that denies this path, or null when none does or a `!` line allows it again. */
  rule(folder: boolean): string | null;
  /** False when no line can match anything below this path. */
  readonly live: boolean;
}

export interface DenyList {
  /** The lines kept, as written (trimmed). */
  readonly patterns: readonly string[];
  /** The top of the server's folder: walk down from here, checking `rule` at each step. */
  root(): DenyCursor;
  /**
   * The line that denies `segments` (a folder when `folder`), or null: a path is denied by the
   * first of its folders, or itself, whose last matching line denies it.
   */
  ruleFor(segments: readonly string[], folder: boolean): string | null;
}

export interface CompiledDenylist {
  readonly list: DenyList;
  /** Lines that could not be compiled, each with the reason, in words. */
  readonly dropped: readonly { readonly pattern: string; readonly reason: string }[];
}

/** The lines that count: trimmed, without blank ones and `#` comments. */
export function denylistLines(patterns: readonly string[]): string[] {
  return patterns.map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
}

/** Compiles `patterns` (one gitignore line each); a line that cannot be compiled is dropped. */
export function compileDenylist(patterns: readonly string[]): CompiledDenylist {
  const rules: Rule[] = [];
  const dropped: { pattern: string; reason: string }[] = [];
  for (const line of denylistLines(patterns)) {
    const rule = compileLine(line);
    if (typeof rule === 'string') dropped.push({ pattern: line, reason: rule });
    else rules.push(rule);
  }
  return { list: listOf(rules), dropped };
}

/** A rule, or why the line cannot be one. */
function compileLine(line: string): Rule | string {
  if (line.length > DENYLIST_LIMITS.length) {
    return `is longer than ${DENYLIST_LIMITS.length} characters`;
  }
  let body = line;
  const negate = body.startsWith('!');
  if (negate) body = body.slice(1);
  else if (body.startsWith('\\!') || body.startsWith('\\#')) body = body.slice(1);
  const wildcards = countWildcards(body);
  if (wildcards > DENYLIST_LIMITS.wildcards) {
    return `has more than ${DENYLIST_LIMITS.wildcards} wildcards`;
  }
  // `\/` is a slash like any other: a name never holds one.
  body = body.replaceAll('\\/', '/');
  const foldersOnly = body.endsWith('/');
  body = body.replace(/\/+$/, '');
  const anchored = body.includes('/');
  const segments = body.split('/').filter((segment, i) => segment !== '' || i > 0);
  if (segments.length === 0 || segments.some((segment) => segment === '')) {
    return body === '' ? 'names no file' : 'has an empty segment (`//`)';
  }
  const parts: Part[] = anchored ? [] : [{ kind: 'globstar' }];
  for (const [i, segment] of segments.entries()) {
    if (segment === '**') {
      // `dir/**` is what is inside `dir`, not `dir` itself: one name at least, then any.
      if (i === segments.length - 1 && segments.length > 1) parts.push(ANY_NAME);
      if (parts.at(-1)?.kind !== 'globstar') parts.push({ kind: 'globstar' });
      continue;
    }
    const part = compileSegment(segment);
    if (typeof part === 'string') return part;
    parts.push(part);
  }
  return { source: line, negate, foldersOnly, parts, start: closure(parts, [0]) };
}

const ANY_NAME: Part = { kind: 'glob', test: () => true };

function countWildcards(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') i++;
    else if (char === '*' || char === '?' || char === '[') count++;
  }
  return count;
}

/** One segment: a literal name when it has no wildcard, else an RE2 program for one name. */
function compileSegment(segment: string): Part | string {
  let source = '';
  let literal = '';
  let wild = false;
  for (let i = 0; i < segment.length; i++) {
    const char = segment.charAt(i);
    if (char === '\\') {
      const next = segment[i + 1];
      if (next === undefined) return 'ends with a lone `\\`';
      source += quote(next);
      literal += next;
      i++;
    } else if (char === '*') {
      // `**` inside a name (`a**b`) is a plain `*`, as in git.
      while (segment[i + 1] === '*') i++;
      source += '.*';
      wild = true;
    } else if (char === '?') {
      source += '.';
      wild = true;
    } else if (char === '[') {
      const bracket = readBracket(segment, i);
      if (typeof bracket === 'string') return bracket;
      source += bracket.source;
      i = bracket.end;
      wild = true;
    } else {
      source += quote(char);
      literal += char;
    }
  }
  if (!wild) return { kind: 'literal', name: literal };
  // (?s): a name on disk may hold a newline, which `*` must match too.
  const compiled = compileRe2(`(?s)^${source}$`);
  if (!compiled.ok) {
    return `cannot be compiled (${compiled.reason.replace(/^is not a regular expression [^:]*: /, '')})`;
  }
  const pattern = compiled.pattern;
  return { kind: 'glob', test: (name) => pattern.test(name) };
}

const POSIX_CLASSES = new Set([
  'alnum',
  'alpha',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'xdigit',
]);

/**
 * The class starting at `segment[start]` (`[`) as RE2 syntax, and the index of its `]`: `!` or
 * `^` first negates, a `]` first is a literal one, `a-z` a range, `[:alpha:]` a POSIX class,
 * `\x` the character x.
 */
function readBracket(segment: string, start: number): { source: string; end: number } | string {
  let i = start + 1;
  let negated = false;
  if (segment[i] === '!' || segment[i] === '^') {
    negated = true;
    i++;
  }
  let body = '';
  let first = true;
  for (; i < segment.length; i++) {
    const char = segment.charAt(i);
    if (char === ']' && !first) {
      if (body === '') return 'has an empty `[]` class';
      return { source: `[${negated ? '^' : ''}${body}]`, end: i };
    }
    first = false;
    if (char === '[' && segment[i + 1] === ':') {
      const close = segment.indexOf(':]', i + 2);
      const name = close === -1 ? '' : segment.slice(i + 2, close);
      if (!POSIX_CLASSES.has(name)) return 'has an unknown `[:class:]`';
      body += `[:${name}:]`;
      i = close + 1;
    } else if (char === '\\') {
      const next = segment[i + 1];
      if (next === undefined) return 'ends with a lone `\\`';
      body += classChar(next);
      i++;
    } else if (char === '-' && body !== '' && segment[i + 1] !== ']') {
      body += '-';
    } else {
      body += classChar(char);
    }
  }
  return 'has a `[` without its `]`';
}

/** A character as RE2 reads it literally inside a class. */
const classChar = (char: string): string => (/[\\\]^[-]/.test(char) ? `\\${char}` : char);

/** A character as RE2 reads it literally outside a class. */
const quote = (char: string): string => (/[\\^$.|?*+()[\]{}]/.test(char) ? `\\${char}` : char);

/** `places` and every place a `**` lets the automaton reach without reading a name. */
function closure(parts: readonly Part[], places: readonly number[]): Uint8Array {
  const set = new Uint8Array(parts.length + 1);
  for (const place of places) {
    let at = place;
    while (set[at] !== 1) {
      set[at] = 1;
      if (parts[at]?.kind !== 'globstar') break;
      at += 1;
    }
  }
  return set;
}

/** The places reached after reading `name` from `from`; null when none is. */
function step(rule: Rule, from: Uint8Array, name: string): Uint8Array | null {
  const next: number[] = [];
  for (let at = 0; at < rule.parts.length; at++) {
    if (from[at] !== 1) continue;
    const part = rule.parts[at];
    if (part === undefined) continue;
    if (part.kind === 'globstar') next.push(at);
    else if (part.kind === 'literal' ? part.name === name : part.test(name)) next.push(at + 1);
  }
  return next.length === 0 ? null : closure(rule.parts, next);
}

function listOf(rules: readonly Rule[]): DenyList {
  /** Each rule's places at one path (null: it can match nothing below). */
  const cursor = (places: readonly (Uint8Array | null)[]): DenyCursor => ({
    live: places.some((at) => at !== null),
    enter: (name) =>
      cursor(
        rules.map((rule, i) => {
          const from = places[i];
          return from ? step(rule, from, name) : null;
        }),
      ),
    rule: (folder) => {
      for (let i = rules.length - 1; i >= 0; i--) {
        const rule = rules[i];
        const at = places[i];
        if (rule === undefined || at?.[rule.parts.length] !== 1) continue;
        if (rule.foldersOnly && !folder) continue;
        return rule.negate ? null : rule.source;
      }
      return null;
    },
  });
  const root = (): DenyCursor => cursor(rules.map((rule) => rule.start));
  return {
    patterns: rules.map((rule) => rule.source),
    root,
    ruleFor: (segments, folder) => {
      let at = root();
      for (const [i, name] of segments.entries()) {
        at = at.enter(name);
        const rule = at.rule(i < segments.length - 1 || folder);
        if (rule !== null) return rule;
      }
      return null;
    },
  };
}

/**
 * An egg's `file_denylist` as the import keeps it: a list of texts (Pterodactyl), a text of lines
 * (what its admin form sends), or `{}` / `""` / null for none; empty entries are dropped, as
 * Pterodactyl's importer drops them. A line that cannot be compiled is dropped with a warning.
 * Too many lines, or an entry that is not a text: VALIDATION_FAILED naming it.
 */
export function readDenylist(value: unknown, warnings: string[]): string[] {
  const path = 'file_denylist';
  let entries: unknown[];
  if (value === undefined || value === null) entries = [];
  else if (typeof value === 'string') entries = value.split(/\r?\n/);
  else if (Array.isArray(value)) entries = value;
  else if (typeof value === 'object' && Object.keys(value).length === 0) entries = [];
  else throw invalid(path, 'must be a list of paths');
  const lines: string[] = [];
  for (const [i, entry] of entries.entries()) {
    if (entry === null || entry === '') continue;
    if (typeof entry !== 'string') throw invalid(`${path}[${i}]`, 'must be a text');
    if (entry.length > DENYLIST_LIMITS.length) {
      warnings.push(`${path}[${i}]: dropped: is longer than ${DENYLIST_LIMITS.length} characters`);
      continue;
    }
    const [line] = denylistLines([entry]);
    if (line === undefined) continue;
    const { dropped } = compileDenylist([line]);
    if (dropped[0] !== undefined) {
      warnings.push(`${path}[${i}] (${JSON.stringify(line)}): dropped: ${dropped[0].reason}`);
      continue;
    }
    lines.push(line);
  }
  if (lines.length > DENYLIST_LIMITS.patterns) {
    throw invalid(path, `has more than ${DENYLIST_LIMITS.patterns} patterns`);
  }
  return lines;
}

function invalid(path: string, problem: string): AppError {
  return new AppError('VALIDATION_FAILED', `${path}: ${problem}`, {
    details: [{ path, message: problem }],
  });
}
