/**
 * Reads a Pterodactyl or Pelican egg (JSON or YAML; PTDL_v1, PTDL_v2, PLCN_v1–v3) into a
 * TemplateDefinition. Pure: no database, no files. What the two panels' importers do, and what
 * this one does differently, is in docs/templates.md ("Importing eggs: the mapping").
 *
 * Contract: for any text, it returns an ImportedEgg or throws AppError VALIDATION_FAILED whose one
 * detail names the field of the egg that is wrong (`variables[2].env_variable`,
 * `config.files["server.properties"].parser`), or `$` for the document as a whole.
 */
import { parseDocument } from 'yaml';
import {
  CONFIG_PARSERS,
  EGG_FORMATS,
  NO_CONSOLE_INPUT,
  type ConfigFileRule,
  type ConfigParser,
  type ConfigReplacement,
  type EggFormat,
  type InstallScript,
  type StopMethod,
  type TemplateDefinition,
  type TemplateVariable,
} from '../domain/template.js';
import { AppError } from '../errors.js';
import { readDenylist } from './denylist.js';
import {
  changedName,
  NO_CHANGES,
  renameReservedWords,
  renameShellReferences,
  type NameChanges,
} from './egg-names.js';
import { compileLinePattern, compileRe2 } from './patterns.js';
import { checkValue, comparedVariables, parseRules, ruleNotes, unknownRules } from './rules.js';

export interface ImportedEgg {
  readonly format: EggFormat;
  readonly uuid: string | null;
  readonly definition: TemplateDefinition;
  /** What the import noticed and does not enforce, one sentence each. */
  readonly warnings: string[];
}

/** Limits: far above what real eggs need, low enough that an import cannot exhaust anything. */
export const EGG_LIMITS = {
  /** The whole document, in characters (Pelican exports embed a base64 icon). */
  document: 2 * 1024 * 1024,
  name: 191,
  text: 65_536,
  command: 16_384,
  script: 262_144,
  value: 16_384,
  variables: 100,
  rules: 50,
  rule: 1000,
  images: 50,
  image: 255,
  commands: 20,
  configFiles: 50,
  replacements: 500,
  path: 1024,
  donePatterns: 50,
  features: 100,
} as const;

/**
 * Variable names Pelican reserves for what the panel itself sets in the environment; its
 * importer renames an egg variable with one of these names to `SERVER_<NAME>`, and so does this.
 */
export const RESERVED_ENV_NAMES: readonly string[] = [
  'P_SERVER_UUID',
  'P_SERVER_ALLOCATION_LIMIT',
  'SERVER_MEMORY',
  'SERVER_IP',
  'SERVER_PORT',
  'ENV',
  'HOME',
  'USER',
  'STARTUP',
  'MODIFIED_STARTUP',
  'SERVER_UUID',
  'UUID',
  'INTERNAL_IP',
  'HOSTNAME',
  'TERM',
  'LANG',
  'PWD',
  'TZ',
  'TIMEZONE',
];

/** The install image when an egg names none: each panel's own default. */
const DEFAULT_INSTALL_IMAGE: Readonly<Record<'PTDL' | 'PLCN', string>> = {
  PTDL: 'ghcr.io/pterodactyl/installers:alpine',
  PLCN: 'ghcr.io/pelican-eggs/installers:debian',
};
const DEFAULT_ENTRYPOINT = 'bash';

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/i;
const CONTROL = /\p{Cc}/u;

type Json = Readonly<Record<string, unknown>>;

function invalid(path: string, problem: string): AppError {
  return new AppError('VALIDATION_FAILED', `${path}: ${problem}`, {
    details: [{ path, message: problem }],
  });
}

/** `config.files["server.properties"]`: keys that are not identifiers are quoted as JSON. */
const key = (path: string, name: string): string => `${path}[${JSON.stringify(name)}]`;

export function parseEgg(text: string): ImportedEgg {
  if (typeof text !== 'string') throw invalid('$', 'must be JSON or YAML text');
  if (text.length > EGG_LIMITS.document) {
    throw invalid('$', `is longer than ${EGG_LIMITS.document} characters`);
  }
  const egg = readDocument(text);
  const format = readFormat(egg);
  const warnings: string[] = [];
  const name = requiredText(own(egg, 'name'), 'name', EGG_LIMITS.name).trim();
  const author = optionalText(own(egg, 'author'), 'author', EGG_LIMITS.name).trim() || null;
  const description = optionalText(own(egg, 'description'), 'description', EGG_LIMITS.text);

  const { variables, renames } = readVariables(egg, warnings);
  const config = optionalRecord(own(egg, 'config'), 'config') ?? {};
  const features = readFeatures(egg);

  const definition: TemplateDefinition = {
    name,
    author,
    description,
    startupCommands: readStartup(egg, format, renames),
    stop: readStop(own(config, 'stop'), warnings),
    donePatterns: readDonePatterns(config, warnings),
    configFiles: readConfigFiles(config, renames, warnings),
    install: readInstall(egg, format, renames),
    variables,
    dockerImages: readImages(egg, format, warnings),
    features,
    fileDenylist: readDenylist(own(egg, 'file_denylist'), warnings),
    readsConsoleInput: !features.includes(NO_CONSOLE_INPUT),
  };
  readConfigLogs(config);
  noteIgnored(config, warnings);
  return { format, uuid: readUuid(own(egg, 'uuid')), definition, warnings };
}

/** JSON when it starts with `{` (YAML as a fallback: a flow mapping starts so too), else YAML. */
function readDocument(text: string): Json {
  const body = text.replace(/^\uFEFF/, '');
  let value: unknown;
  if (body.trimStart().startsWith('{')) {
    try {
      value = JSON.parse(body);
    } catch (jsonError) {
      try {
        value = readYaml(body);
      } catch {
        throw invalid('$', `is not valid JSON: ${errorText(jsonError)}`);
      }
    }
  } else {
    try {
      value = readYaml(body);
    } catch (yamlError) {
      throw invalid('$', `is not valid YAML: ${errorText(yamlError)}`);
    }
  }
  if (!isRecord(value)) throw invalid('$', 'must be a mapping (an egg object)');
  return value;
}

/** YAML 1.2 (core schema); every error is fatal, warnings (unknown tags…) are not. */
function readYaml(text: string): unknown {
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  const [error] = document.errors;
  if (error !== undefined) throw error;
  return document.toJS({ maxAliasCount: 100 });
}

/** The parser's message, first line only: YAML adds a drawing of the spot. */
function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : 'unreadable';
  return (message.split('\n')[0] ?? '').slice(0, 200);
}

function readFormat(egg: Json): EggFormat {
  const meta = own(egg, 'meta');
  const version = isRecord(meta) ? own(meta, 'version') : undefined;
  const supported = EGG_FORMATS.join(', ');
  if (version === undefined || version === null || version === '') {
    throw invalid('meta.version', `is missing; supported: ${supported}`);
  }
  const format = EGG_FORMATS.find((known) => known === version);
  if (format === undefined) {
    throw invalid('meta.version', `${describe(version)} is not supported; supported: ${supported}`);
  }
  return format;
}

function readUuid(value: unknown): string | null {
  const uuid = optionalText(value, 'uuid', EGG_LIMITS.name).trim();
  return uuid === '' ? null : uuid;
}

// --- Start commands and placeholders ------------------------------------------------------------

function readStartup(
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
const LEGACY_ENV: ReadonlyMap<string, string> = new Map([
  ['SERVER_IP', 'server.build.default.ip'],
  ['SERVER_PORT', 'server.build.default.port'],
  ['SERVER_MEMORY', 'server.build.memory'],
]);

/** Pelican's placeholder names (left) in the Pterodactyl form this panel keeps (right). */
const PELICAN_PLACEHOLDERS: ReadonlyMap<string, string> = new Map([
  ['server.allocations.default.ip', 'server.build.default.ip'],
  ['server.allocations.default.port', 'server.build.default.port'],
  ['server.build.memory_limit', 'server.build.memory'],
]);

/** The prefixes naming an environment value, and the one each becomes. */
const ENV_PREFIXES: readonly (readonly [string, string])[] = [
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

// --- config: stop, startup, files, logs ---------------------------------------------------------

/**
 * `^C` → SIGINT, `^^C` → SIGKILL, `^SIGINT`/`^SIGTERM`/`^SIGKILL` → that signal; any other
 * `^…` → SIGKILL, as Wings sends SIGKILL for every signal name it does not know.
 */
function readStop(value: unknown, warnings: string[]): StopMethod {
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

function readDonePatterns(config: Json, warnings: string[]): string[] {
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

function readConfigFiles(config: Json, renames: NameChanges, warnings: string[]): ConfigFileRule[] {
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
function readFilePath(written: string, path: string, warnings: string[]): string {
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
const PARSER_ALIASES: ReadonlyMap<string, ConfigParser> = new Map([['yml', 'yaml']]);

function readParser(value: unknown, path: string, warnings: string[]): ConfigParser {
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
function readReplacements(
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
function readConfigLogs(config: Json): void {
  embedded(own(config, 'logs'), 'config.logs');
}

/**
 * A field the eggs write as a JSON string (`"{\"done\": \"Ready\"}"`) or, in YAML and newer
 * Pelican exports, as the structure itself. Null when absent or empty.
 */
function embedded(value: unknown, path: string): Json | unknown[] | null {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return null;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw invalid(path, `is not valid JSON: ${errorText(error)}`);
    }
  }
  if (parsed === undefined || parsed === null) return null;
  if (isRecord(parsed) || Array.isArray(parsed)) return parsed;
  throw invalid(path, 'must be a JSON object (as a string or a mapping)');
}

// --- install, images, features ------------------------------------------------------------------

function readInstall(egg: Json, format: EggFormat, renames: NameChanges): InstallScript | null {
  const scripts = optionalRecord(own(egg, 'scripts'), 'scripts');
  const installation =
    scripts === null ? null : optionalRecord(own(scripts, 'installation'), 'scripts.installation');
  if (installation === null) return null;
  const path = 'scripts.installation';
  const script = optionalText(own(installation, 'script'), `${path}.script`, EGG_LIMITS.script);
  if (script.trim() === '') return null;
  const image = optionalText(
    own(installation, 'container'),
    `${path}.container`,
    EGG_LIMITS.image,
  ).trim();
  if (image !== '') checkImage(image, `${path}.container`);
  const entrypoint = optionalText(
    own(installation, 'entrypoint'),
    `${path}.entrypoint`,
    255,
  ).trim();
  if (/[\s\0]/.test(entrypoint)) {
    throw invalid(`${path}.entrypoint`, 'must be a single program (bash, ash, sh)');
  }
  return {
    // Wings writes the script with Unix line endings; exported eggs carry Windows ones. A renamed
    // variable is in the environment under its new name: `$hostname` follows it.
    script: renameShellReferences(script.replace(/\r\n/g, '\n'), renames),
    image: image || DEFAULT_INSTALL_IMAGE[format.startsWith('PTDL') ? 'PTDL' : 'PLCN'],
    entrypoint: entrypoint || DEFAULT_ENTRYPOINT,
  };
}

/**
 * PTDL_v1: `images` (a list) or `image` (one); later: `docker_images`, display name → image, or
 * v1's `images` list when there is no `docker_images` (with a warning: one egg was exported so).
 * (In Pelican's formats `image` is the egg's icon, not a container image.)
 */
function readImages(
  egg: Json,
  format: EggFormat,
  warnings: string[],
): { name: string; image: string }[] {
  const images = own(egg, 'images');
  const image = own(egg, 'image');
  const docker = own(egg, 'docker_images');
  const none =
    docker === undefined ||
    docker === null ||
    (Array.isArray(docker) && docker.length === 0) ||
    (isRecord(docker) && Object.keys(docker).length === 0);
  // Pterodactyl would import such an egg with no image at all; the list is what was meant.
  const v1List = format !== 'PTDL_v1' && none && Array.isArray(images) && images.length > 0;
  if (v1List) {
    warnings.push(`images: ${format} names its images in docker_images; the images list is used`);
  }
  let read: { name: string; image: string; path: string }[];
  let path = 'docker_images';
  if (v1List || (format === 'PTDL_v1' && images !== undefined && images !== null)) {
    path = 'images';
    read = list(images, path).map((ref, i) => {
      const text = requiredText(ref, `${path}[${i}]`, EGG_LIMITS.image);
      return { name: text, image: text, path: `${path}[${i}]` };
    });
  } else if (format === 'PTDL_v1' && image !== undefined && image !== null) {
    path = 'image';
    const text = requiredText(image, path, EGG_LIMITS.image);
    read = [{ name: text, image: text, path }];
  } else {
    if (Array.isArray(docker)) {
      read = docker.map((ref, i) => {
        const text = requiredText(ref, `${path}[${i}]`, EGG_LIMITS.image);
        return { name: text, image: text, path: `${path}[${i}]` };
      });
    } else {
      read = Object.entries(record(docker ?? {}, path)).map(([name, ref]) => {
        const at = key(path, name);
        if (name.trim() === '' || name.length > EGG_LIMITS.name) {
          throw invalid(at, `the name must be 1 to ${EGG_LIMITS.name} characters`);
        }
        return { name, image: requiredText(ref, at, EGG_LIMITS.image), path: at };
      });
    }
  }
  if (read.length === 0) throw invalid(path, 'has no image');
  if (read.length > EGG_LIMITS.images) {
    throw invalid(path, `has more than ${EGG_LIMITS.images} images`);
  }
  return read.map(({ name, image: ref, path: at }) => {
    const trimmed = ref.trim();
    checkImage(trimmed, at);
    return { name, image: trimmed };
  });
}

/** An image reference: one word of printable characters (the runtime resolves it). */
function checkImage(image: string, path: string): void {
  if (image === '') throw invalid(path, 'the image reference is empty');
  if (/\s/.test(image) || CONTROL.test(image)) {
    throw invalid(path, `${describe(image)} is not an image reference`);
  }
}

function readFeatures(egg: Json): string[] {
  const features = list(own(egg, 'features'), 'features');
  if (features.length > EGG_LIMITS.features) {
    throw invalid('features', `has more than ${EGG_LIMITS.features} entries`);
  }
  return features.map((feature, i) => requiredText(feature, `features[${i}]`, EGG_LIMITS.name));
}

/** What eggs carry and this panel does not act on, when it is not empty. */
function noteIgnored(config: Json, warnings: string[]): void {
  const parent = own(config, 'extends');
  if (parent !== undefined && parent !== null && parent !== '') {
    warnings.push(
      'config.extends: inheriting from another egg is not supported; only this egg’s own config is used',
    );
  }
}

// --- variables ----------------------------------------------------------------------------------

/**
 * The variables, in display order, and the names the import changed. A reserved name (any case)
 * is renamed to `SERVER_<NAME>`, as Pelican does; a name repeated (ignoring case, after renames)
 * keeps its last definition, as both panels end up doing (Pterodactyl stores both and the last
 * one fills the environment; Pelican updates the first with the second). Each is a warning.
 */
function readVariables(
  egg: Json,
  warnings: string[],
): { variables: TemplateVariable[]; renames: NameChanges } {
  const raw = list(own(egg, 'variables'), 'variables');
  if (raw.length > EGG_LIMITS.variables) {
    throw invalid('variables', `has more than ${EGG_LIMITS.variables} variables`);
  }
  const read = raw.map((entry, i) => {
    const { variable, sort } = readVariable(entry, `variables[${i}]`);
    const original = variable.envVariable;
    const upper = original.toUpperCase();
    const reserved = RESERVED_ENV_NAMES.includes(upper);
    const env = reserved ? `SERVER_${upper}` : original;
    if (reserved) {
      warnings.push(
        `variables[${i}] (${original}): the name is reserved for the panel; renamed to ${env}, with every reference to it in the start commands, config files and install script (as Pelican does)`,
      );
    }
    return { variable: { ...variable, envVariable: env }, original, reserved, sort, index: i };
  });

  // The last definition of each name (ignoring case) is kept.
  const last = new Map<string, (typeof read)[number]>();
  for (const entry of read) last.set(entry.variable.envVariable.toUpperCase(), entry);
  const byUpper = new Map<string, string>();
  const exact = new Map<string, string>();
  const reservedWords = new Map<string, string>();
  for (const entry of read) {
    const kept = last.get(entry.variable.envVariable.toUpperCase()) ?? entry;
    const env = kept.variable.envVariable;
    if (kept !== entry) {
      warnings.push(
        `variables[${entry.index}] (${entry.original}): variables[${kept.index}] has the same name; the last one is kept, as in the panels`,
      );
    }
    if (entry.original !== env) {
      byUpper.set(entry.original.toUpperCase(), env);
      exact.set(entry.original, env);
    }
    if (entry.reserved) reservedWords.set(entry.original.toUpperCase(), env);
  }
  const out = read.filter((entry) => last.get(entry.variable.envVariable.toUpperCase()) === entry);

  const defaults = Object.fromEntries(
    out.map(({ variable }) => [variable.envVariable, variable.defaultValue]),
  );
  const names = new Set(out.map(({ variable }) => variable.envVariable));
  for (const { variable, index } of out) {
    const label = `variables[${index}] (${variable.envVariable})`;
    for (const { rule, readAs } of ruleNotes(variable.rules)) {
      warnings.push(`${label}: rule ${JSON.stringify(rule)} is read as ${JSON.stringify(readAs)}`);
    }
    for (const rule of unknownRules(variable.rules)) {
      warnings.push(`${label}: rule ${JSON.stringify(rule)} is not enforced`);
    }
    for (const other of comparedVariables(variable.rules)) {
      if (!names.has(other)) {
        warnings.push(
          `${label}: a rule compares it with ${other}, which is not a variable of this egg; that rule is not enforced`,
        );
      }
    }
    const problem = checkValue(variable.rules, variable.defaultValue, defaults);
    if (problem !== null) {
      warnings.push(
        `${label}: the default value ${JSON.stringify(variable.defaultValue)} fails its own rules: ${problem}`,
      );
    }
  }
  // Pelican exports carry each variable's display position as `sort`.
  const variables = out
    .sort((a, b) => a.sort - b.sort || a.index - b.index)
    .map(({ variable }) => variable);
  return { variables, renames: { byUpper, exact, reservedWords } };
}

function readVariable(entry: unknown, path: string): { variable: TemplateVariable; sort: number } {
  const fields = record(entry, path);
  const envVariable = requiredText(
    own(fields, 'env_variable'),
    `${path}.env_variable`,
    EGG_LIMITS.name,
  );
  if (!ENV_NAME.test(envVariable)) {
    throw invalid(
      `${path}.env_variable`,
      `${describe(envVariable)} is not a variable name (letters, digits and _, not starting with a digit)`,
    );
  }
  const sort = own(fields, 'sort');
  return {
    variable: {
      name: requiredText(own(fields, 'name'), `${path}.name`, EGG_LIMITS.name),
      description: optionalText(own(fields, 'description'), `${path}.description`, EGG_LIMITS.text),
      envVariable,
      defaultValue: scalar(own(fields, 'default_value'), `${path}.default_value`, EGG_LIMITS.value),
      userViewable: flag(own(fields, 'user_viewable'), `${path}.user_viewable`),
      userEditable: flag(own(fields, 'user_editable'), `${path}.user_editable`),
      rules: readRules(own(fields, 'rules'), `${path}.rules`),
    },
    sort: typeof sort === 'number' && Number.isFinite(sort) ? sort : Number.MAX_SAFE_INTEGER,
  };
}

function readRules(value: unknown, path: string): string[] {
  if (value === undefined || value === null) return [];
  let rules: string[];
  if (typeof value === 'string') {
    if (value.length > EGG_LIMITS.rule * EGG_LIMITS.rules) throw invalid(path, 'is too long');
    rules = parseRules(value);
  } else {
    rules = parseRules(
      // An empty entry (`["required", "string", ""]`, as Pelican exports `required|string|`) is
      // dropped, as the same trailing pipe in a string is.
      list(value, path).map((rule, i) => optionalText(rule, `${path}[${i}]`, EGG_LIMITS.rule)),
    );
  }
  if (rules.length > EGG_LIMITS.rules)
    throw invalid(path, `has more than ${EGG_LIMITS.rules} rules`);
  const long = rules.findIndex((rule) => rule.length > EGG_LIMITS.rule);
  if (long !== -1)
    throw invalid(`${path}[${long}]`, `is longer than ${EGG_LIMITS.rule} characters`);
  return rules;
}

/** Booleans as the eggs write them: true/false, 1/0, "1"/"0", "true"/"false"; absent is false. */
function flag(value: unknown, path: string): boolean {
  if (value === undefined || value === null) return false;
  if (value === true || value === 1 || value === '1' || value === 'true') return true;
  if (value === false || value === 0 || value === '0' || value === 'false' || value === '')
    return false;
  throw invalid(path, `${describe(value)} is not true or false`);
}

// --- reading values -----------------------------------------------------------------------------

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field of the egg's own, never one inherited from Object.prototype (`constructor`…). */
function own(object: Json, name: string): unknown {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}

/** A mapping; PHP writes an empty one as `[]`, so that is accepted as empty. */
function record(value: unknown, path: string, problem = 'must be a mapping'): Json {
  if (isRecord(value)) return value;
  if (Array.isArray(value) && value.length === 0) return {};
  throw invalid(path, problem);
}

function optionalRecord(value: unknown, path: string): Json | null {
  return value === undefined || value === null ? null : record(value, path);
}

/** A list; absent is empty, and so is `{}` (Symfony's YAML writes an empty list so). */
function list(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  if (isRecord(value) && Object.keys(value).length === 0) return [];
  throw invalid(path, 'must be a list');
}

function requiredText(value: unknown, path: string, max: number): string {
  if (value === undefined || value === null) throw invalid(path, 'is missing');
  const text = optionalText(value, path, max);
  if (text.trim() === '') throw invalid(path, 'is empty');
  return text;
}

function optionalText(value: unknown, path: string, max: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw invalid(path, 'must be a text');
  if (value.length > max) throw invalid(path, `is longer than ${max} characters`);
  return value;
}

/** A value written into a file or the environment: text, or a number or boolean as text. */
function scalar(value: unknown, path: string, max: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return optionalText(value, path, max);
}

/** A value for a message: a text quoted and cut short, anything else by its kind. */
function describe(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : 'a mapping';
}

/** A short id from a name: `Minecraft: Java Edition` → `minecraft-java-edition`. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug === '' ? 'template' : slug;
}
