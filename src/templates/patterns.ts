/**
 * Every regular expression a user or an egg gives (variable rules, done lines, a backup's saved
 * line, config-file `ifValue` patterns) is compiled here and run by re2js, RE2 in JavaScript:
 * matching takes time linear in the text, whatever the pattern (docs/security.md, "Patterns").
 * The syntax is RE2's, which is Go's (what Wings uses); PCRE spellings with an RE2 equivalent are
 * translated by the callers, and what RE2 cannot run (backreferences, lookaround, possessive and
 * atomic groups, `\G`, `\K`…) is refused with a reason, never run by a backtracking engine.
 *
 * Linear is not enough on its own: the cost per character grows with the compiled program, so
 * programs are bounded (MAX_PROGRAM_SIZE), and so is the text a pattern is matched against
 * (MAX_SUBJECT_LENGTH; console lines are cut at 8 KiB before they are matched anyway).
 */
import { RE2JS, RE2JSException } from 're2js';

/** Longer patterns are not compiled: eggs' patterns are a few dozen characters. */
export const MAX_PATTERN_LENGTH = 500;

/**
 * Largest compiled program (RE2 instructions). Real eggs' patterns compile to 14 to 130
 * (`^[a-zA-Z0-9_]{1,32}$` is 67); every repetition counts once per copy (`.{300}` is 300).
 */
export const MAX_PROGRAM_SIZE = 300;

/** Longest text matched: longer texts never match (variable values are at most 4096). */
export const MAX_SUBJECT_LENGTH = 16 * 1024;

/** A compiled pattern: each call takes time linear in the text. */
export interface Pattern {
  /** The pattern as written (without the caller's prefix). */
  readonly source: string;
  /** What RE2 compiled, to compile it again in another thread (src/host/local/line-watch.ts). */
  readonly program: { readonly source: string; readonly flags: number };
  /** Whether the pattern matches somewhere in `text`. */
  test(text: string): boolean;
  /**
   * Every match in `text` replaced by what `replace` gives for it (its groups by number, the
   * whole match first, and by name), as Go's ReplaceAllStringFunc; `text` itself if none.
   */
  replaceAll(
    text: string,
    replace: (captures: readonly (string | undefined)[], named: Record<string, unknown>) => string,
  ): string;
}

export type Compiled =
  | { readonly ok: true; readonly pattern: Pattern }
  | { readonly ok: false; readonly reason: string };

/** Flags a caller may give besides inline ones: i (case), m (multi-line), s (dot matches \n). */
const FLAG_BITS: Readonly<Record<string, number>> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
};

/**
 * `source` in RE2 (Go) syntax, with `flags` of `ims` (`u` is accepted and changes nothing: RE2
 * always reads Unicode). A reason, in words, when it is too long, too large once compiled, or
 * not RE2 syntax.
 */
export function compileRe2(source: string, flags = ''): Compiled {
  if (source.length > MAX_PATTERN_LENGTH) {
    return refused(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  let bits = 0;
  for (const flag of flags) {
    if (flag === 'u') continue;
    const bit = FLAG_BITS[flag];
    if (bit === undefined) return refused(`has the flag "${flag}", which is not supported`);
    bits |= bit;
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, bits);
  } catch (error) {
    if (error instanceof RE2JSException) return refused(explain(error.message));
    throw error;
  }
  if (re.programSize() > MAX_PROGRAM_SIZE) {
    return refused(
      `is too large once compiled (${re.programSize()} steps, at most ${MAX_PROGRAM_SIZE}); use smaller repetition counts`,
    );
  }
  return { ok: true, pattern: wrap(source, re) };
}

/**
 * A pattern of a console line (a done line, a backup's saved line) as Wings reads one: Go
 * syntax, inline flags (`(?i)`) in the pattern, PCRE's `\h` and `\Z` accepted as in rules.
 */
export function compileLinePattern(source: string): Compiled {
  return compileRe2(translatePcre(source));
}

/**
 * PCRE spellings RE2 lacks but has an equivalent for: `\h` (a space or tab) and `\Z` (the end,
 * or before a final newline: the newline is then part of the match, which only tests use).
 * Everything else is RE2's own syntax (`\A`, `\z`, `\Q…\E`, `(?P<n>`, `(?<n>`, `[[:alpha:]]`,
 * inline flags) or refused by it.
 */
export function translatePcre(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source.charAt(i);
    const next = source[i + 1];
    if (char === '\\' && next === 'Q') {
      const end = source.indexOf('\\E', i + 2);
      const stop = end === -1 ? source.length : end + 2;
      out += source.slice(i, stop);
      i = stop - 1;
    } else if (char === '\\' && next !== undefined) {
      if (next === 'h') out += inClass ? ' \\t' : '[ \\t]';
      else if (next === 'Z' && !inClass) out += '(?:\\n?\\z)';
      else out += char + next;
      i++;
    } else if (inClass) {
      const posix = /^\[:\^?[a-z]+:\]/.exec(source.slice(i))?.[0];
      if (posix !== undefined) {
        out += posix;
        i += posix.length - 1;
        continue;
      }
      if (char === ']') inClass = false;
      out += char;
    } else if (char === '[') {
      inClass = true;
      // A `]` first in a class (after an optional `^`) is a literal one.
      const head = /^\[\^?\]?/.exec(source.slice(i))?.[0] ?? '[';
      out += head;
      i += head.length - 1;
    } else {
      out += char;
    }
  }
  return out;
}

function refused(reason: string): Compiled {
  return { ok: false, reason };
}

function wrap(source: string, re: RE2JS): Pattern {
  return {
    source,
    program: { source: re.pattern(), flags: re.flags() },
    test: (text) => text.length <= MAX_SUBJECT_LENGTH && re.test(text),
    replaceAll: (text, replace) => {
      if (text.length > MAX_SUBJECT_LENGTH) return text;
      let out = '';
      let last = 0;
      for (const match of re.matchAll(text)) {
        const at = match.index ?? last;
        out += text.slice(last, at) + replace([...match], match.groups ?? {});
        last = at + match[0].length;
      }
      return out + text.slice(last);
    },
  };
}

/** RE2's message ("error parsing regexp: invalid escape sequence: `\1`") with what it means. */
function explain(message: string): string {
  const detail = message.replace(/^error parsing regexp: /, '');
  const hint = /Perl syntax: `\(\?[=!<]/.test(detail)
    ? ' (lookahead and lookbehind are not supported)'
    : detail.includes('Perl syntax: `(?>')
      ? ' (atomic groups are not supported)'
      : /escape sequence: `\\[1-9gk]/.test(detail)
        ? ' (backreferences are not supported)'
        : /nested repetition operator: `[*+?}]\+`/.test(detail)
          ? ' (possessive quantifiers are not supported)'
          : '';
  return `is not a regular expression the panel can run in linear time (RE2 syntax): ${detail}${hint}`;
}
