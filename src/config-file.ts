/**
 * The configuration file: where it is, how it reads, and how it merges with the environment.
 * The panel (src/server.ts) and the command line (src/cli.ts) load their settings the same way,
 * through {@link loadPanelConfig}; `loadConfig` itself stays a pure function of the variables.
 *
 * Lookup: `PANEL_CONFIG` names the file (it must exist and be readable); otherwise the first that
 * exists of `/etc/game-panel/panel.env` (a host install) and `.env` in the working directory (a
 * checkout, for development); none at all is no error (settings come from the environment
 * alone). Format: `NAME=value` lines, `#` comments, values optionally in double quotes, read by
 * Node's own `util.parseEnv`. A variable set in the environment wins over the file.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The file of a host install, written by `game-panel setup` as root. */
export const SYSTEM_CONFIG_FILE = '/etc/game-panel/panel.env';
/** The file of a checkout (relative to the working directory), for development. */
export const DEV_CONFIG_FILE = '.env';

export interface ConfigFileRef {
  /** Absolute path. */
  readonly path: string;
  /** Named by `PANEL_CONFIG`: its absence is an error rather than a reason to look further. */
  readonly named: boolean;
}

/** Where the files are looked for: tests point both elsewhere. */
export interface Lookup {
  /** The working directory, where `.env` and a relative `PANEL_CONFIG` are found. */
  readonly cwd?: string;
  /** Instead of {@link SYSTEM_CONFIG_FILE}. */
  readonly systemFile?: string;
}

/** Which file the settings are read from; `null`: none exists, the environment alone counts. */
export function configFilePath(env: Env, lookup: Lookup = {}): ConfigFileRef | null {
  const cwd = lookup.cwd ?? process.cwd();
  const named = env.PANEL_CONFIG?.trim();
  if (named !== undefined && named !== '') return { path: path.resolve(cwd, named), named: true };
  const system = lookup.systemFile ?? SYSTEM_CONFIG_FILE;
  for (const candidate of [system, path.resolve(cwd, DEV_CONFIG_FILE)]) {
    if (existsSync(candidate)) return { path: candidate, named: false };
  }
  return null;
}

/**
 * Where `setup` writes the file: `PANEL_CONFIG` when set, else the system file as root, else
 * `.env` in the working directory. The same places {@link configFilePath} reads first.
 */
export function configFileTarget(
  env: Env,
  runningAsRoot: boolean = process.getuid?.() === 0,
  cwd: string = process.cwd(),
): string {
  const named = env.PANEL_CONFIG?.trim();
  if (named !== undefined && named !== '') return path.resolve(cwd, named);
  return runningAsRoot ? SYSTEM_CONFIG_FILE : path.resolve(cwd, DEV_CONFIG_FILE);
}

export interface ConfigFile {
  readonly path: string;
  readonly values: Readonly<Record<string, string>>;
  /** The file's permission bits (`stat.mode & 0o777`). */
  readonly mode: number;
}

/**
 * Reads and parses the file. A file that cannot be read, or holds a line that is no
 * `NAME=value`, is a {@link ConfigError} naming the file (and `PANEL_CONFIG` when that named it).
 */
export function readConfigFile(ref: ConfigFileRef): ConfigFile {
  const variable = ref.named ? 'PANEL_CONFIG' : ref.path;
  const where = ref.named ? `${ref.path}: ` : '';
  let text: string;
  let mode: number;
  try {
    const fd = openSync(ref.path, 'r');
    try {
      mode = fstatSync(fd).mode & 0o777;
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new ConfigError(variable, `cannot read ${ref.path} (${errorCode(error)})`);
  }
  // parseEnv skips a line it cannot read, or glues it onto the next name: a typo would go
  // unnoticed, so such a line stops the start. Its number is shown, not its text: that may be
  // a secret pasted on a line of its own.
  const stray = strayLine(text);
  if (stray !== null) {
    throw new ConfigError(variable, `${where}line ${stray} is not NAME=value`);
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (value !== undefined) values[name] = value;
  }
  return { path: ref.path, values, mode };
}

const ASSIGNMENT = /^(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=\s*(.*)$/;

/**
 * The number of the first line that is neither blank, a comment nor `NAME=value`; lines inside a
 * quoted value that spans several lines are part of it.
 */
function strayLine(text: string): number | null {
  let openQuote: string | null = null;
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (openQuote !== null) {
      if (line.includes(openQuote)) openQuote = null;
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const match = ASSIGNMENT.exec(trimmed);
    if (!match) return index + 1;
    const value = match[1] ?? '';
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === '`') && !value.slice(1).includes(quote)) {
      openQuote = quote;
    }
  }
  return null;
}

/** Settings that are secrets: a file holding one must be the panel's alone. */
function secretsIn(values: Readonly<Record<string, string>>): string[] {
  const found: string[] = [];
  for (const name of ['JWT_SECRET', 'METRICS_TOKEN', 'OIDC_PROVIDERS']) {
    if (values[name]?.trim()) found.push(name);
  }
  const database = values.DATABASE_URL?.trim();
  if (database && URL.canParse(database) && new URL(database).password !== '') {
    found.push('DATABASE_URL (its password)');
  }
  return found;
}

export interface PanelConfig {
  readonly config: Config;
  /** The file read, or `null` when none was found. */
  readonly file: string | null;
  /** What the start-up log should warn about (a file holding secrets that others can read). */
  readonly warnings: readonly string[];
}

/**
 * The configuration as the panel and the command line load it: the file (see the module's
 * comment), overridden by `env`, validated by `loadConfig`. A bad value that came from the file
 * is a {@link ConfigError} naming both the variable and the file.
 */
export function loadPanelConfig(env: Env = process.env, lookup: Lookup = {}): PanelConfig {
  const ref = configFilePath(env, lookup);
  const file = ref === null ? null : readConfigFile(ref);
  const merged: Record<string, string | undefined> = { ...file?.values };
  for (const [name, value] of Object.entries(env)) if (value !== undefined) merged[name] = value;
  let config: Config;
  try {
    config = loadConfig(merged);
  } catch (error) {
    if (error instanceof ConfigError && file !== null && isFromFile(error.variable, file, env)) {
      throw new ConfigError(error.variable, error.problem, file.path);
    }
    throw error;
  }
  const warnings: string[] = [];
  const secrets = file === null ? [] : secretsIn(file.values);
  if (file !== null && secrets.length > 0 && (file.mode & 0o077) !== 0) {
    warnings.push(
      `${file.path} holds ${secrets.join(', ')} and others can read it (mode 0${file.mode.toString(8)}): chmod 600 ${file.path}`,
    );
  }
  return { config, file: file?.path ?? null, warnings };
}

function isFromFile(variable: string, file: ConfigFile, env: Env): boolean {
  return Object.hasOwn(file.values, variable) && env[variable] === undefined;
}

function errorCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : 'unknown error';
}
