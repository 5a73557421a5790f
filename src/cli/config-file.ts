/**
 * The panel's configuration file as the command line writes it: where it is, its text, and an
 * atomic write that is never readable by others, not even for an instant.
 *
 * Where: `configFileTarget` of src/config-file.ts (`PANEL_CONFIG` when set; else
 * `/etc/game-panel/panel.env` for root; else `.env` in the checkout), the places the panel reads
 * first. The panel reads the file with Node's `util.parseEnv`, the environment overriding it; so
 * the text written here is checked against that very parser before it reaches the disk.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';

/** A fresh `JWT_SECRET`: 48 random bytes in base64url (64 characters, so ≥ 32 bytes). */
export function newSecret(): string {
  return randomBytes(48).toString('base64url');
}

/** A value that cannot be written so that `util.parseEnv` reads it back unchanged. */
export class UnwritableValue extends Error {
  constructor(readonly variable: string) {
    super(`${variable}: the value cannot be written to the configuration file as it is`);
    this.name = 'UnwritableValue';
  }
}

/**
 * The file's text: the header (each line becomes a `#` comment), then one `NAME=value` line per
 * entry, in order; an entry whose value is `null` is a comment line of its own (`# text`).
 * Throws {@link UnwritableValue} unless `util.parseEnv` reads exactly these values back.
 */
export function renderConfigFile(
  header: readonly string[],
  entries: readonly (readonly [string, string | null])[],
): string {
  const lines = [...header.map((line) => (line === '' ? '#' : `# ${line}`)), ''];
  const values: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (value === null) {
      lines.push(name === '' ? '' : `# ${name}`);
      continue;
    }
    if (!/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new UnwritableValue(name);
    lines.push(`${name}=${quote(name, value)}`);
    values[name] = value;
  }
  const text = `${lines.join('\n')}\n`;
  const read = parseEnv(text);
  for (const [name, value] of Object.entries(values)) {
    if (read[name] !== value) throw new UnwritableValue(name);
  }
  return text;
}

/**
 * Bare when plain; else in the first quotes that fit: double quotes (where Node turns `\n` into
 * a new line and knows no other escape), single quotes, back quotes (both taken literally).
 */
function quote(name: string, value: string): string {
  if (/^[\w.,:/@%+=~[\]-]+$/.test(value)) return value;
  if (/[\r\n\0]/.test(value)) throw new UnwritableValue(name);
  if (!value.includes('"') && !value.includes('\\n')) return `"${value}"`;
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes('`')) return `\`${value}\``;
  throw new UnwritableValue(name);
}

/** The variables of an existing file; `null` when there is none. Other errors are thrown. */
export function previousValues(file: string): Record<string, string> | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
  return parseEnv(text) as Record<string, string>;
}

/**
 * Writes `text` to `file` with `mode` (0600 by default), atomically: a temporary file beside it,
 * created with that mode (so never more readable than that, whatever the umask), synced, then
 * moved into place. Without `replace`, an existing file is kept and `false` answered (a hard
 * link cannot clobber, so this holds even against a file made meanwhile). Creates the folder
 * (0755, whatever the umask) when it is missing.
 */
export function writeFileAtomically(
  file: string,
  text: string,
  replace: boolean,
  mode = 0o600,
): boolean {
  const dir = path.dirname(file);
  // 0755 whatever the umask: the folder lets others pass, the file itself (0600) does not.
  if (mkdirSync(dir, { recursive: true, mode: 0o755 }) !== undefined) chmodSync(dir, 0o755);
  const temporary = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}`);
  const fd = openSync(temporary, 'wx', 0o600);
  let renamed = false;
  try {
    try {
      fchmodSync(fd, mode);
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (replace) {
      renameSync(temporary, file);
      renamed = true;
    } else {
      try {
        linkSync(temporary, file);
      } catch (error) {
        if (errorCode(error) === 'EEXIST') return false;
        throw error;
      }
    }
  } finally {
    if (!renamed) unlinkSync(temporary);
  }
  syncFolder(dir);
  return true;
}

/** Makes the new name itself durable; a folder that cannot be opened for that is left as is. */
function syncFolder(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a folder; the rename has happened all the same.
  } finally {
    closeSync(fd);
  }
}

export function errorCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : 'unknown error';
}
