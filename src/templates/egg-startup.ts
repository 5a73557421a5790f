/**
 * How an egg starts and stops: its start commands (`startup` or PLCN_v3's `startup_commands`)
 * with every placeholder in the Pterodactyl form and renamed variables followed, its `config.stop`
 * as a StopMethod, and its `config.startup.done` lines. A line this panel cannot use (a pattern
 * RE2 cannot run, a stop signal it does not know) is a warning; a field that cannot be read
 * throws, as egg.ts promises.
 */
import type { EggFormat, StopMethod, TemplateDefinition } from '../domain/template.js';
import {
  EGG_LIMITS,
  embedded,
  invalid,
  key,
  optionalText,
  own,
  record,
  requiredText,
  type Json,
} from './egg-fields.js';
import {
  changedName,
  NO_CHANGES,
  renameReservedWords,
  renameShellReferences,
  type NameChanges,
} from './egg-names.js';
import { compileLinePattern } from './patterns.js';

export function readStartup(
  egg: Json,
  format: EggFormat,
  renames: NameChanges,
): TemplateDefinition['startupCommands'] {
  const commands = own(egg, 'startup_commands');
  const single = own(egg, 'startup');
  const present = (value: unknown): boolean => value !== undefined && value !== null;
  // PLCN_v3 has `startup_commands`, the others `startup`; either is taken when the other is absent.
  const useCommands =
    format === 'PLCN_v3'
      ? present(commands) || !present(single)
      : !present(single) && present(commands);
  let read: { name: string; command: string }[];
  if (useCommands) {
    if (!present(commands)) throw invalid('startup_commands', 'is missing');
    const entries = Object.entries(record(commands, 'startup_commands'));
    if (entries.length === 0) throw invalid('startup_commands', 'has no command');
    if (entries.length > EGG_LIMITS.commands) {
      throw invalid('startup_commands', `has more than ${EGG_LIMITS.commands} commands`);
    }
    read = entries.map(([name, command]) => {
      const path = key('startup_commands', name);
      if (name.trim() === '' || name.length > EGG_LIMITS.name) {
        throw invalid(path, `the name must be 1 to ${EGG_LIMITS.name} characters`);
      }
      return { name, command: requiredText(command, path, EGG_LIMITS.command) };
    });
  } else {
    if (!present(single)) throw invalid('startup', 'is missing');
    read = [{ name: 'Default', command: requiredText(single, 'startup', EGG_LIMITS.command) }];
  }
  // Placeholders first (ignoring case), then `$name` references, then Pelican's whole words.
  return read.map(({ name, command }) => ({
    name,
    command: renameReservedWords(
      renameShellReferences(normalizePlaceholders(command, renames), renames),
      renames,
    ),
  }));
}

/** Built-in values Wings used to offer as environment variables, and what they became. */
export const LEGACY_ENV: ReadonlyMap<string, string> = new Map([
  ['SERVER_IP', 'server.build.default.ip'],
  ['SERVER_PORT', 'server.build.default.port'],
  ['SERVER_MEMORY', 'server.build.memory'],
]);

/** Pelican's placeholder names (left) in the Pterodactyl form this panel keeps (right). */
export const PELICAN_PLACEHOLDERS: ReadonlyMap<string, string> = new Map([
  ['server.allocations.default.ip', 'server.build.default.ip'],
  ['server.allocations.default.port', 'server.build.default.port'],
  ['server.build.memory_limit', 'server.build.memory'],
]);

/** The prefixes naming an environment value, and the one each becomes. */
export const ENV_PREFIXES: readonly (readonly [string, string])[] = [
  ['server.environment.', 'server.build.env.'],
  ['server.build.environment.', 'server.build.env.'],
  ['server.build.env.', 'server.build.env.'],
  ['env.', 'env.'],
];

/**
 * Every `{{…}}` placeholder in the Pterodactyl form: Pelican's names mapped back, the legacy
 * `env.SERVER_PORT` family mapped to the build values (as both panels do), and a reference to a
 * renamed or repeated variable (`{{hostname}}`, `{{server.build.env.hostname}}`, any case)
 * following the name kept (src/templates/egg-names.ts).
 */
export function normalizePlaceholders(text: string, renames: NameChanges = NO_CHANGES): string {
  return text.replace(/\{\{([\w.-]*)\}\}/g, (whole, name: string) => {
    const pelican = PELICAN_PLACEHOLDERS.get(name);
    if (pelican !== undefined) return `{{${pelican}}}`;
    for (const [prefix, canonical] of ENV_PREFIXES) {
      if (!name.startsWith(prefix)) continue;
      const env = name.slice(prefix.length);
      const legacy = LEGACY_ENV.get(env);
      if (legacy !== undefined) return `{{${legacy}}}`;
      return `{{${canonical}${changedName(env, renames)}}}`;
    }
    if (/^[A-Za-z_]\w*$/.test(name)) return `{{${changedName(name, renames)}}}`;
    return whole;
  });
}

/**
 * `^C` → SIGINT, `^^C` → SIGKILL, `^SIGINT`/`^SIGTERM`/`^SIGKILL` → that signal; any other
 * `^…` → SIGKILL, as Wings sends SIGKILL for every signal name it does not know.
 */
export function readStop(value: unknown, warnings: string[]): StopMethod {
  if (value === undefined || value === null || value === '') {
    warnings.push('config.stop: missing; the server is stopped with SIGINT (Ctrl+C)');
    return { type: 'signal', signal: 'SIGINT' };
  }
  const stop = requiredText(value, 'config.stop', 1024);
  if (!stop.startsWith('^')) {
    if (/[\r\n]/.test(stop)) throw invalid('config.stop', 'must be one line');
    return { type: 'command', command: stop };
  }
  switch (stop.slice(1).toUpperCase()) {
    case 'C':
    case 'SIGINT':
      return { type: 'signal', signal: 'SIGINT' };
    case 'SIGTERM':
      return { type: 'signal', signal: 'SIGTERM' };
    case '^C':
    case 'SIGKILL':
      return { type: 'signal', signal: 'SIGKILL' };
    default:
      warnings.push(
        `config.stop: ${JSON.stringify(stop)} is not a signal this panel knows; SIGKILL is sent, as Wings does`,
      );
      return { type: 'signal', signal: 'SIGKILL' };
  }
}

export function readDonePatterns(config: Json, warnings: string[]): string[] {
  const startup = embedded(own(config, 'startup'), 'config.startup');
  if (startup === null) return [];
  if (Array.isArray(startup)) {
    if (startup.length === 0) return [];
    throw invalid('config.startup', 'must be a mapping');
  }
  const done = own(startup, 'done');
  const path = 'config.startup.done';
  let patterns: { pattern: string; path: string }[];
  if (done === undefined || done === null) return [];
  if (typeof done === 'string') {
    patterns = [{ pattern: optionalText(done, path, EGG_LIMITS.value), path }];
  } else if (Array.isArray(done)) {
    if (done.length > EGG_LIMITS.donePatterns) {
      throw invalid(path, `has more than ${EGG_LIMITS.donePatterns} lines`);
    }
    patterns = done.map((pattern, i) => ({
      pattern: optionalText(pattern, `${path}[${i}]`, EGG_LIMITS.value),
      path: `${path}[${i}]`,
    }));
  } else {
    throw invalid(path, 'must be a text or a list of texts');
  }
  const kept: string[] = [];
  for (const { pattern, path: at } of patterns) {
    // An empty line would match every line of the console: Wings' `bytes.Contains` does.
    if (pattern === '') continue;
    const compiled = pattern.startsWith('regex:') ? compileLinePattern(pattern.slice(6)) : null;
    if (compiled !== null && !compiled.ok) {
      warnings.push(`${at}: ${JSON.stringify(pattern)} ${compiled.reason}; the line is dropped`);
      continue;
    }
    kept.push(pattern);
  }
  return kept;
}
