/**
 * The validation rules of egg variables: the subset of Laravel's rules that eggs use, with
 * Laravel's meaning (docs/templates.md has the table). A rule this module does not know, or knows
 * but cannot enforce (a malformed parameter, a regular expression RE2 cannot run), is reported by
 * `unknownRules` and ignored by `checkValue`; the importer turns each into a warning. Patterns run
 * in linear time (src/templates/patterns.ts).
 *
 * A value is what the operator typed. Like Laravel behind Pterodactyl's middleware, which trims
 * input and turns an empty string into null, a blank value and null are the same: "empty".
 *
 * A few rules real eggs write that Laravel itself would not read are interpreted (`interpretRule`):
 * `int` is `integer`, and a modifier with a rule after a colon (`nullable:string`, a `|` typed as
 * `:`) is the two rules. `ruleNotes` lists them for the importer's warnings.
 */

import { compileRe2, MAX_PATTERN_LENGTH, translatePcre, type Compiled } from './patterns.js';

/**
 * The rules in `rules`, one string each, trimmed, empty ones dropped. A pipe-separated string is
 * split on `|`, except inside the pattern of a `regex:`/`not_regex:` rule: Laravel itself would
 * split there too (and the rule would then never match), but eggs do write
 * `required|regex:/^(latest|[0-9.]+)$/` and mean the whole pattern.
 */
export function parseRules(rules: string | readonly string[]): string[] {
  if (typeof rules !== 'string') {
    return rules.map((rule) => rule.trim()).filter((rule) => rule !== '');
  }
  const out: string[] = [];
  let start = 0;
  while (start <= rules.length) {
    const end = segmentEnd(rules, start);
    const rule = rules.slice(start, end).trim();
    if (rule !== '') out.push(rule);
    start = end + 1;
  }
  return out;
}

/** Where the rule starting at `start` ends: the index of its closing `|`, or the length. */
function segmentEnd(text: string, start: number): number {
  const pipe = text.indexOf('|', start);
  const naive = pipe === -1 ? text.length : pipe;
  const head = /^\s*(?:not_?)?regex:/i.exec(text.slice(start, start + 20));
  if (head === null) return naive;
  const open = start + head[0].length;
  const delimiter = text[open];
  if (delimiter === undefined || !isDelimiter(delimiter)) return naive;
  // Try each possible closing delimiter in turn: the pattern ends at the first one that is
  // followed by flags and then a `|` or the end of the text.
  let from = open;
  for (;;) {
    const close = closingDelimiter(text, open, from);
    if (close === -1) return naive;
    const flags = /^[imsxuADSUXJn]*/.exec(text.slice(close + 1))?.[0] ?? ''; // PCRE's modifiers
    const after = close + 1 + flags.length;
    if (after === text.length || text[after] === '|') return after;
    from = close;
  }
}

const BRACKETS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}', '<': '>' };

/** PCRE: any character but alphanumerics, backslash, NUL and whitespace delimits a pattern. */
function isDelimiter(char: string): boolean {
  return !/[\p{L}\p{N}\\\s\0]/u.test(char);
}

/**
 * The index of the delimiter closing the pattern opened at `open`, searching after `from`;
 * -1 when there is none. Escaped characters are skipped; bracket-style delimiters nest.
 */
function closingDelimiter(text: string, open: number, from: number): number {
  const opening = text[open] ?? '';
  const closing = BRACKETS[opening] ?? opening;
  let depth = 0;
  for (let i = Math.max(from, open) + 1; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') {
      i++;
    } else if (closing !== opening && char === opening) {
      depth++;
    } else if (char === closing) {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** One rule, read: its normalised name (`alpha_dash`, `alphaDash` → `alphadash`) and parameter. */
interface Rule {
  readonly raw: string;
  readonly name: string;
  readonly param: string | null;
}

function readRule(raw: string): Rule {
  const colon = raw.indexOf(':');
  const name = (colon === -1 ? raw : raw.slice(0, colon)).trim().replaceAll('_', '').toLowerCase();
  return { raw, name, param: colon === -1 ? null : raw.slice(colon + 1) };
}

/** Rule names Laravel does not have, read as the one meant (Laravel's loose `int`). */
const ALIASES: ReadonlyMap<string, string> = new Map([['int', 'integer']]);

/**
 * The rules `raw` stands for: itself, or what a misspelling real eggs carry means. `int` is
 * `integer`; a modifier followed by a colon and a rule without a parameter (`nullable:string`,
 * `required:int`) is the two rules. Anything else is itself (and may be unknown).
 */
export function interpretRule(raw: string): readonly string[] {
  const { name, param } = readRule(raw);
  if (param === null) {
    const alias = ALIASES.get(name);
    return alias === undefined ? [raw] : [alias];
  }
  if (MODIFIERS.has(name) && /^\s*[A-Za-z_]+\s*$/.test(param)) {
    const inner = interpretRule(param.trim());
    if (inner.every((rule) => compile(rule) !== null)) {
      return [raw.slice(0, raw.indexOf(':')).trim(), ...inner];
    }
  }
  return [raw];
}

/** The rules of `rules` that are interpreted, each with what it is read as (`int` → `integer`). */
export function ruleNotes(rules: readonly string[]): { rule: string; readAs: string }[] {
  return rules.flatMap((rule) => {
    const read = interpretRule(rule);
    return read.length === 1 && read[0] === rule ? [] : [{ rule, readAs: read.join('|') }];
  });
}

/**
 * The other variables `rules` compare with (`gt:environment.MIN_PLAYERS` → `MIN_PLAYERS`): the
 * form Pterodactyl's validation data gives them.
 */
export function comparedVariables(rules: readonly string[]): string[] {
  return rules.flatMap((rule) => {
    const { name, param } = readRule(rule);
    if (!COMPARISONS.has(name) || param === null) return [];
    const field = fieldOf(firstParameter(param));
    return field === null ? [] : [field];
  });
}

/** What a check sees beside the value. */
interface Context {
  /** A size is a number, not a length: `integer` or `numeric` is among the rules. */
  readonly numeric: boolean;
  /** The values of the other variables, by name (for comparisons); absent: not known. */
  readonly fields: Readonly<Record<string, string>> | undefined;
}

/** A rule that can be checked: a test of a non-empty value, and what to say when it fails. */
interface Check {
  /** Checks a value that is not empty. */
  readonly test: (value: string, context: Context) => string | null;
  /** Whether an empty value, in rules without `required` or `nullable`, fails this rule. */
  readonly failsEmpty: boolean;
  /** For a rule whose verdict on an empty value depends on the other variables: that verdict. */
  readonly empty?: (context: Context) => string | null;
}

/** The rules that change how the others apply and test nothing themselves. */
const MODIFIERS = new Set(['required', 'nullable', 'sometimes', 'bail']);

/** The compiled form of each rule string, or null for a rule that is not enforced. */
const compiled = new Map<string, Check | null>();
const COMPILED_LIMIT = 1000;

function compile(raw: string): Check | null {
  const cached = compiled.get(raw);
  if (cached !== undefined || compiled.has(raw)) return cached ?? null;
  const check = build(readRule(raw));
  if (compiled.size >= COMPILED_LIMIT) compiled.clear();
  compiled.set(raw, check);
  return check;
}

/** `required` and `nullable` act in checkValue itself; `sometimes` and `bail` change nothing here. */
const modifier: Check = { test: () => null, failsEmpty: false };
/** Every value typed is a string; only the empty value (null to Laravel) fails `string`. */
const string: Check = { test: () => null, failsEmpty: true };

function build(rule: Rule): Check | null {
  const { name, param } = rule;
  if (MODIFIERS.has(name)) return param === null ? modifier : null;
  switch (name) {
    // Laravel: the key is in the data. Every variable is, so it always holds.
    case 'present':
      return param === null ? modifier : null;
    case 'string':
      return param === null ? string : null;
    case 'integer':
      return param === null ? simple(isInteger, 'must be an integer') : null;
    case 'numeric':
      return param === null ? simple(isNumeric, 'must be a number') : null;
    case 'boolean':
      return param === null ? simple(isBoolean, 'must be true, false, 1 or 0') : null;
    case 'alpha':
      return param === null
        ? simple(matches(/^[\p{L}\p{M}]+$/u), 'may only contain letters')
        : null;
    case 'alphanum':
      return param === null
        ? simple(matches(/^[\p{L}\p{M}\p{N}]+$/u), 'may only contain letters and numbers')
        : null;
    case 'alphadash':
      return param === null
        ? simple(
            matches(/^[\p{L}\p{M}\p{N}_-]+$/u),
            'may only contain letters, numbers, dashes and underscores',
          )
        : null;
    case 'url':
      return param === null ? simple(isUrl, 'must be a valid URL') : null;
    case 'min':
    case 'max':
    case 'size':
      return sizeRule(name, numbers(param, 1));
    case 'between':
      return sizeRule(name, numbers(param, 2));
    case 'digits':
      return digitsRule(numbers(param, 1));
    case 'digitsbetween':
      return digitsRule(numbers(param, 2));
    case 'in':
    case 'notin':
      return param === null ? null : listRule(name === 'in', csv(param));
    case 'regex':
    case 'notregex':
      return param === null ? null : regexRule(name === 'regex', param);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return param === null ? null : comparisonRule(name, firstParameter(param));
    case 'startswith':
    case 'endswith':
    case 'doesntstartwith':
    case 'doesntendwith':
      return param === null ? null : affixRule(name, csv(param));
    default:
      return null;
  }
}

function simple(ok: (value: string) => boolean, message: string): Check {
  return { test: (value) => (ok(value) ? null : message), failsEmpty: true };
}

const matches = (pattern: RegExp) => (value: string) => pattern.test(value);

/** PHP's FILTER_VALIDATE_INT: an optional sign, no leading zeros, within 64 bits. */
function isInteger(value: string): boolean {
  const text = value.trim();
  if (!/^[+-]?(?:0|[1-9]\d*)$/.test(text)) return false;
  const big = BigInt(text);
  return big >= -(2n ** 63n) && big < 2n ** 63n;
}

/** PHP's is_numeric: decimal with an optional fraction and exponent; no hex, no `Infinity`. */
function isNumeric(value: string): boolean {
  return /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/.test(value);
}

function isBoolean(value: string): boolean {
  return ['1', '0', 'true', 'false'].includes(value.trim());
}

function isUrl(value: string): boolean {
  if (/\s/.test(value) || !/^[a-z][a-z0-9+.-]*:/i.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.hostname !== '' || ['mailto:', 'tel:', 'urn:', 'data:'].includes(url.protocol);
}

/** `count` numbers separated by commas, or null when the parameter is not that. */
function numbers(param: string | null, count: number): number[] | null {
  if (param === null) return null;
  const parts = param.split(',');
  if (parts.length !== count || !parts.every(isNumeric)) return null;
  return parts.map(Number);
}

function sizeRule(name: string, bounds: number[] | null): Check | null {
  const [low, high] = bounds ?? [];
  if (low === undefined) return null;
  const unit = (numeric: boolean): string => (numeric ? '' : ' characters');
  const exactly = (numeric: boolean): string => (numeric ? '' : 'exactly ');
  // An empty value has size 0 (Laravel measures null as the empty string).
  const failsEmpty =
    name === 'min'
      ? low > 0
      : name === 'max'
        ? low < 0
        : name === 'size'
          ? low !== 0
          : !(low <= 0 && 0 <= (high ?? low));
  return {
    failsEmpty,
    test: (value, { numeric }) => {
      if (numeric && !isNumeric(value)) return null; // the integer/numeric rule says why
      const size = numeric ? Number(value) : codePoints(value);
      switch (name) {
        case 'min':
          return size >= low ? null : `must be at least ${low}${unit(numeric)}`;
        case 'max':
          return size <= low ? null : `must be at most ${low}${unit(numeric)}`;
        case 'size':
          return size === low ? null : `must be ${exactly(numeric)}${low}${unit(numeric)}`;
        default:
          return high !== undefined && size >= low && size <= high
            ? null
            : `must be between ${low} and ${high ?? low}${unit(numeric)}`;
      }
    },
  };
}

/** Characters as PHP's mb_strlen counts them: code points, a surrogate pair being one. */
function codePoints(value: string): number {
  return value.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '_').length;
}

function digitsRule(bounds: number[] | null): Check | null {
  const low = bounds?.[0];
  if (low === undefined) return null;
  const high = bounds?.[1] ?? low;
  return {
    failsEmpty: true,
    test: (value) =>
      /^\d+$/.test(value) && value.length >= low && value.length <= high
        ? null
        : low === high
          ? `must be ${low} digits`
          : `must be between ${low} and ${high} digits`,
  };
}

/** Laravel reads `in:` parameters as one CSV line: `in:"a,b",c` is two values. */
function csv(param: string): string[] {
  const values: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < param.length; i++) {
    const char = param.charAt(i);
    if (quoted) {
      if (char === '"' && param[i + 1] === '"') {
        current += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        current += char;
      }
    } else if (char === '"' && current === '') {
      quoted = true;
    } else if (char === ',') {
      values.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  values.push(current);
  return values;
}

function listRule(allowed: boolean, values: readonly string[]): Check {
  const shown = values.join(', ');
  return {
    failsEmpty: allowed,
    test: (value) =>
      values.includes(value) === allowed
        ? null
        : allowed
          ? `must be one of ${shown}`
          : `must not be one of ${shown}`,
  };
}

/** `gt`, `gte`, `lt`, `lte`: how each compares, and how its message reads. */
const COMPARISONS: ReadonlyMap<
  string,
  {
    readonly holds: (a: number, b: number) => boolean;
    readonly than: string;
    readonly chars: string;
    readonly orEqual: boolean;
  }
> = new Map([
  [
    'gt',
    { holds: (a, b) => a > b, than: 'greater than', chars: 'more characters than', orEqual: false },
  ],
  [
    'gte',
    {
      holds: (a, b) => a >= b,
      than: 'at least',
      chars: 'at least as many characters as',
      orEqual: true,
    },
  ],
  [
    'lt',
    { holds: (a, b) => a < b, than: 'less than', chars: 'fewer characters than', orEqual: false },
  ],
  [
    'lte',
    {
      holds: (a, b) => a <= b,
      than: 'at most',
      chars: 'at most as many characters as',
      orEqual: true,
    },
  ],
]);

/** Laravel reads a parameter list as CSV; a comparison uses the first. */
function firstParameter(param: string): string {
  return (csv(param)[0] ?? '').trim();
}

/** The variable a comparison names: `environment.NAME`, as in Pterodactyl's validation data. */
function fieldOf(param: string): string | null {
  return /^environment\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(param)?.[1] ?? null;
}

/**
 * Laravel's `gt`/`gte`/`lt`/`lte` (ValidatesAttributes::validateGt…). With a number, a numeric
 * value is compared with it and any other value fails. With `environment.NAME`, the value is
 * compared with that variable's: as numbers when both are numeric, otherwise by size (a numeric
 * value's size is the number when `integer`/`numeric` is among the rules or the value itself is
 * numeric, else its length); an empty other value fails the comparison. A variable that is not
 * there (not known to the caller) leaves the rule unchecked; any other parameter is not enforced.
 */
function comparisonRule(name: string, param: string): Check | null {
  const comparison = COMPARISONS.get(name);
  if (comparison === undefined) return null;
  const { holds, than, chars, orEqual } = comparison;
  if (isNumeric(param)) {
    const bound = Number(param);
    return {
      failsEmpty: true,
      test: (value) => {
        if (!isNumeric(value)) return `must be a number ${than} ${param}`;
        return holds(Number(value), bound) ? null : `must be ${than} ${param}`;
      },
    };
  }
  const field = fieldOf(param);
  if (field === null) return null;
  const other = (context: Context): string | undefined =>
    context.fields !== undefined && Object.hasOwn(context.fields, field)
      ? context.fields[field]
      : undefined;
  return {
    failsEmpty: false,
    // Laravel: null against a string is a type mismatch, null against null two sizes of 0.
    empty: (context) => {
      const compared = other(context);
      if (compared === undefined) return null;
      return compared.trim() === '' && orEqual ? null : 'must not be empty';
    },
    test: (value, context) => {
      const compared = other(context);
      if (compared === undefined) return null;
      if (compared.trim() === '') return `cannot be compared with ${field}, which is empty`;
      if (isNumeric(value) && isNumeric(compared)) {
        return holds(Number(value), Number(compared)) ? null : `must be ${than} ${field}`;
      }
      const numeric = context.numeric || isNumeric(value);
      const size = (text: string): number =>
        numeric && isNumeric(text) ? Number(text) : codePoints(text);
      if (holds(size(value), size(compared))) return null;
      return numeric ? `must be ${than} ${field}` : `must have ${chars} ${field}`;
    },
  };
}

/**
 * `starts_with`/`ends_with` and their `doesnt_` forms: Laravel's Str::startsWith and endsWith,
 * case-sensitive, any of the listed texts (empty ones never match). Not enforced without a text.
 */
function affixRule(name: string, values: readonly string[]): Check | null {
  const needles = values.filter((needle) => needle !== '');
  if (needles.length === 0) return null;
  const negated = name.startsWith('doesnt');
  const atStart = name === 'startswith' || name === 'doesntstartwith';
  const shown = needles.length === 1 ? (needles[0] ?? '') : `one of ${needles.join(', ')}`;
  const where = atStart ? 'start' : 'end';
  return {
    failsEmpty: !negated,
    test: (value) => {
      const found = needles.some((needle) =>
        atStart ? value.startsWith(needle) : value.endsWith(needle),
      );
      if (found !== negated) return null;
      return negated ? `must not ${where} with ${shown}` : `must ${where} with ${shown}`;
    },
  };
}

function regexRule(mustMatch: boolean, param: string): Check | null {
  const compiled = compilePattern(param);
  if (!compiled.ok) return null;
  const { pattern } = compiled;
  return {
    failsEmpty: mustMatch,
    test: (value) =>
      pattern.test(value) === mustMatch
        ? null
        : mustMatch
          ? `must match the pattern ${param}`
          : `must not match the pattern ${param}`,
  };
}

/**
 * A PCRE pattern with its delimiters and flags (`/^[a-z]+$/i`, `#…#`, `{…}`) compiled for RE2
 * (src/templates/patterns.ts); refused, with the reason, when it has no delimiters, an unknown
 * flag, or syntax RE2 cannot run (backreferences, lookaround, possessive or atomic groups).
 * Flags: `i`, `m`, `s`, `u` as in PCRE, `x` (whitespace and comments dropped), `U` (ungreedy),
 * `D` and `S` (nothing to do: RE2's `$` ends the text, and it needs no study).
 */
export function compilePattern(param: string): Compiled {
  const delimiter = param[0];
  if (delimiter === undefined || !isDelimiter(delimiter)) {
    return { ok: false, reason: 'has no delimiters (write /pattern/flags)' };
  }
  const close = closingDelimiter(param, 0, 0);
  if (close === -1) return { ok: false, reason: `has no closing ${delimiter}` };
  let source = param.slice(1, close);
  const flags = param.slice(close + 1);
  if (!/^[imsuxDSU]*$/.test(flags)) {
    return { ok: false, reason: `has flags "${flags}"; known are i, m, s, u, x, U, D and S` };
  }
  if (source.length > MAX_PATTERN_LENGTH) {
    return { ok: false, reason: `is longer than ${MAX_PATTERN_LENGTH} characters` };
  }
  if (flags.includes('x')) source = stripExtended(source);
  if (flags.includes('U')) source = `(?U)${source}`;
  return compileRe2(translatePcre(source), flags.replace(/[xDSU]/g, ''));
}

/** PCRE's `x` flag: unescaped whitespace and `#` comments outside classes are not the pattern. */
function stripExtended(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source.charAt(i);
    if (char === '\\') {
      out += source.slice(i, i + 2);
      i++;
    } else if (inClass) {
      if (char === ']') inClass = false;
      out += char;
    } else if (char === '[') {
      inClass = true;
      out += char;
    } else if (char === '#') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (!/\s/.test(char)) {
      out += char;
    }
  }
  return out;
}

/** The rules in `rules` that `checkValue` does not enforce, as written. */
export function unknownRules(rules: readonly string[]): string[] {
  return rules.filter((rule) => interpretRule(rule).some((read) => compile(read) === null));
}

/**
 * Whether `value` satisfies `rules`: null when it does, else what is wrong, to follow the
 * variable's name ("must be at most 20 characters"). Rules `unknownRules` reports are ignored.
 * `min`, `max`, `between` and `size` count characters, or compare the number when `integer` or
 * `numeric` is among the rules. `fields` are the values of the template's other variables, by
 * name, for the rules that compare with one (`gt:environment.MIN`); without them those rules
 * are not checked.
 */
export function checkValue(
  rules: readonly string[],
  value: string | null,
  fields?: Readonly<Record<string, string>>,
): string | null {
  const read = rules.flatMap(interpretRule);
  const names = new Set(read.map((rule) => readRule(rule).name));
  const context: Context = { numeric: names.has('integer') || names.has('numeric'), fields };
  const empty = value === null || value.trim() === '';
  if (empty) {
    if (names.has('required')) return 'is required';
    if (names.has('nullable')) return null;
    for (const rule of read) {
      const check = compile(rule);
      if (check === null) continue;
      const problem = check.empty?.(context) ?? (check.failsEmpty ? 'must not be empty' : null);
      if (problem !== null) return problem;
    }
    return null;
  }
  for (const rule of read) {
    const problem = compile(rule)?.test(value, context) ?? null;
    if (problem !== null) return problem;
  }
  return null;
}
