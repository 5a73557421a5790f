/**
 * What every parser shares: the Replacement a rule becomes, the one error (ConfigFileError) the
 * editors throw, the nesting limit, and `decide`, which answers what one replacement writes where
 * the current value is: its value, the `regex:` match expanded (Go's rules for `$1`, `${name}`),
 * or null to leave the value alone. Pure: nothing here touches the disk.
 */
import { compileRe2 } from '../../../templates/patterns.js';

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

const REGEX_PREFIX = 'regex:';

/**
 * The value `replacement` writes where the current value is `current` (undefined: there is
 * none), or null to leave it.
 */
export function decide(replacement: Replacement, current: string | undefined): string | null {
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
export function expandGo(
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

export function singleLine(text: string, what: string): string {
  if (/[\r\n]/.test(text)) {
    throw new ConfigFileError(`${what} ${JSON.stringify(text)} holds a line break`);
  }
  return text;
}

export const tooDeep = (): ConfigFileError =>
  new ConfigFileError(`The file is nested more than ${MAX_NESTING} levels deep`);
