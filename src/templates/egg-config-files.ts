/**
 * An egg's `config.files` as ConfigFileRules: each path checked to stay inside the server's
 * folder, each parser one this panel runs (Wings' aliases accepted), each `find` a list of
 * replacements whose values carry placeholders in the Pterodactyl form. What Wings skips or
 * reads its own way (no `find`, a leading `/`, a pattern RE2 cannot run) is a warning; anything
 * else wrong throws, as egg.ts promises. What each parser then does is in
 * src/host/local/config-formats.ts.
 */
import {
  CONFIG_PARSERS,
  type ConfigFileRule,
  type ConfigParser,
  type ConfigReplacement,
} from '../domain/template.js';
import {
  CONTROL,
  describe,
  EGG_LIMITS,
  embedded,
  invalid,
  isRecord,
  key,
  own,
  record,
  scalar,
  type Json,
} from './egg-fields.js';
import type { NameChanges } from './egg-names.js';
import { normalizePlaceholders } from './egg-startup.js';
import { compileRe2 } from './patterns.js';

export function readConfigFiles(
  config: Json,
  renames: NameChanges,
  warnings: string[],
): ConfigFileRule[] {
  const files = embedded(own(config, 'files'), 'config.files');
  if (files === null) return [];
  if (Array.isArray(files)) {
    if (files.length === 0) return [];
    throw invalid('config.files', 'must be a mapping of file paths to {parser, find}');
  }
  const entries = Object.entries(files);
  if (entries.length > EGG_LIMITS.configFiles) {
    throw invalid('config.files', `has more than ${EGG_LIMITS.configFiles} files`);
  }
  const rules: ConfigFileRule[] = [];
  for (const [written, spec] of entries) {
    const path = key('config.files', written);
    const file = readFilePath(written, path, warnings);
    const fields = record(spec, path, 'must be a mapping with parser and find');
    const parser = readParser(own(fields, 'parser'), `${path}.parser`, warnings);
    const find = own(fields, 'find');
    if (find === undefined || find === null) {
      // Pterodactyl and Pelican skip such a file too.
      warnings.push(`${path}: has no "find"; the file is left alone`);
      continue;
    }
    const replace = readReplacements(find, `${path}.find`, parser, renames, warnings);
    rules.push({ file, parser, replace });
  }
  return rules;
}

/**
 * Relative, inside the server's folder, printable; the storage checks containment again. A
 * leading `/` is read inside the server's folder, as Wings reads every path (`/ddnet/x.cfg` is
 * `ddnet/x.cfg`), with a warning; a drive letter or a leading `\` is refused.
 */
export function readFilePath(written: string, path: string, warnings: string[]): string {
  if (written.trim() === '') throw invalid(path, 'the file path is empty');
  if (written.length > EGG_LIMITS.path) {
    throw invalid(path, `the file path is longer than ${EGG_LIMITS.path} characters`);
  }
  if (written.includes('\0')) throw invalid(path, 'the file path contains a NUL character');
  if (CONTROL.test(written)) {
    throw invalid(path, 'the file path contains a control character');
  }
  const file = written.replace(/^\/+/, '');
  if (file.split(/[/\\]/).includes('..')) {
    throw invalid(path, 'the file path must not contain ".." segments');
  }
  if (file.startsWith('\\') || /^[A-Za-z]:/.test(file)) {
    throw invalid(path, 'the file path must be relative to the server folder');
  }
  if (file.trim() === '') throw invalid(path, 'the file path is empty');
  if (/[/\\]$/.test(file)) throw invalid(path, 'the file path names a folder');
  if (file !== written) {
    warnings.push(
      `${path}: the path is read inside the server folder, as Wings does: ${JSON.stringify(file)}`,
    );
  }
  return file;
}

/** Parsers Wings accepts under another name. */
export const PARSER_ALIASES: ReadonlyMap<string, ConfigParser> = new Map([['yml', 'yaml']]);

export function readParser(value: unknown, path: string, warnings: string[]): ConfigParser {
  if (typeof value !== 'string' || value === '') {
    throw invalid(path, `is missing; one of ${CONFIG_PARSERS.join(', ')}`);
  }
  const lower = value.toLowerCase();
  const parser = CONFIG_PARSERS.find((known) => known === lower);
  if (parser !== undefined) return parser;
  const alias = PARSER_ALIASES.get(lower);
  if (alias !== undefined) {
    warnings.push(`${path}: ${describe(value)} is read as "${alias}", as Wings does`);
    return alias;
  }
  throw invalid(path, `${describe(value)} is not a parser; one of ${CONFIG_PARSERS.join(', ')}`);
}

/**
 * `find`: key → value, or key → `{ "old": "new", … }` (replace only where the current value is
 * "old"; `regex:` keys are patterns, as Wings reads them). Values are placeholders' text.
 */
export function readReplacements(
  find: unknown,
  path: string,
  parser: ConfigParser,
  renames: NameChanges,
  warnings: string[],
): ConfigReplacement[] {
  if (Array.isArray(find) && find.length === 0) return [];
  const entries = Object.entries(record(find, path));
  const out: ConfigReplacement[] = [];
  const value = (raw: unknown, at: string): string =>
    normalizePlaceholders(scalar(raw, at, EGG_LIMITS.value), renames);
  for (const [match, replacement] of entries) {
    const at = key(path, match);
    if (parser === 'file') {
      // Wings' `file` parser replaces every line that starts with the key: "" is every line.
      if (match === '') {
        warnings.push(`${at}: an empty key replaces every line of the file, as Wings does`);
      }
    } else if (match.trim() === '') {
      throw invalid(at, 'the key is empty');
    }
    if (isRecord(replacement)) {
      for (const [ifValue, replaceWith] of Object.entries(replacement)) {
        // Wings reads a `regex:` key as a Go pattern; one RE2 cannot run is left out, as a
        // done line is (docs/templates.md).
        const compiled = ifValue.startsWith('regex:') ? compileRe2(ifValue.slice(6)) : null;
        if (compiled !== null && !compiled.ok) {
          warnings.push(
            `${key(at, ifValue)}: the pattern ${compiled.reason}; this replacement is dropped`,
          );
          continue;
        }
        out.push({ match, ifValue, value: value(replaceWith, key(at, ifValue)) });
      }
    } else {
      out.push({ match, ifValue: null, value: value(replacement, at) });
    }
    if (out.length > EGG_LIMITS.replacements) {
      throw invalid(path, `has more than ${EGG_LIMITS.replacements} replacements`);
    }
  }
  return out;
}

/** Not used by this panel, but Pterodactyl refuses an egg whose `config.logs` is not JSON. */
export function readConfigLogs(config: Json): void {
  embedded(own(config, 'logs'), 'config.logs');
}
