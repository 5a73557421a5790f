/**
 * The data directory on disk: made, with the generated JWT secret, only once every check of the
 * start has passed (`prepareDataDir`), so that a start that fails leaves nothing behind.
 *
 * Its permissions: the database, the secrets and the server folders belong to the panel alone.
 * DATA_DIR and its `servers` folder are 0700, or 0711 when servers run as another user (it must
 * pass through them to reach its own folder, without listing them); the SQLite database is 0600
 * (SQLite gives its journal files the same mode). A directory that was readable by others is
 * tightened, and the panel says so.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { ConfigError, MIN_SECRET_BYTES, type Config } from './config.js';

const SECRET_FILE = 'jwt-secret';

/**
 * The folder that servers' users must be able to pass through before the panel makes anything:
 * the nearest existing folder above DATA_DIR. DATA_DIR itself, and whatever is missing above it,
 * the panel makes (or chmods) passable itself.
 */
export function folderAboveDataDir(dataDir: string): string {
  let dir = path.dirname(dataDir);
  while (!existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/**
 * Makes DATA_DIR (and any missing folder above it), the generated JWT secret when `JWT_SECRET`
 * is unset, and the folders and modes of {@link secureDataDir}. Call it only once every other
 * check of the start has passed. Returns the JWT secret and what the start-up log should warn
 * about.
 */
export function prepareDataDir(
  config: Config,
  serversRunAsOtherUser: boolean,
): { jwtSecret: Uint8Array; warnings: string[] } {
  try {
    mkdirSync(config.dataDir, { recursive: true, mode: serversRunAsOtherUser ? 0o711 : 0o700 });
  } catch (error) {
    throw new ConfigError('DATA_DIR', `cannot create ${config.dataDir} (${errorCode(error)})`);
  }
  // Before the folders below are made: a stored secret that is refused stops the start there.
  const jwtSecret = config.jwtSecret ?? storedSecret(config.dataDir);
  return { jwtSecret, warnings: secureDataDir(config, serversRunAsOtherUser) };
}

/** Applies the modes; returns what the start-up log should warn about. */
export function secureDataDir(config: Config, serversRunAsOtherUser: boolean): string[] {
  const warnings: string[] = [];
  const folderMode = serversRunAsOtherUser ? 0o711 : 0o700;
  const before = statSync(config.dataDir).mode & 0o777;
  if ((before & 0o066) !== 0) {
    warnings.push(
      `DATA_DIR ${config.dataDir} was open to others (mode ${octal(before)}): now ${octal(folderMode)}`,
    );
  }
  chmodSync(config.dataDir, folderMode);
  mkdirSync(config.serversDir, { recursive: true, mode: folderMode });
  chmodSync(config.serversDir, folderMode);
  // Backups hold every server's files: the panel's alone, whatever the servers run as.
  try {
    mkdirSync(config.backupDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new ConfigError('BACKUP_DIR', `cannot create ${config.backupDir} (${errorCode(error)})`);
  }
  chmodSync(config.backupDir, 0o700);
  if (config.database.kind === 'sqlite') {
    closeSync(openSync(config.database.file, 'a', 0o600));
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        chmodSync(`${config.database.file}${suffix}`, 0o600);
      } catch {
        // No journal file yet.
      }
    }
  }
  return warnings;
}

const octal = (mode: number): string => `0${mode.toString(8).padStart(3, '0')}`;

/**
 * The secret kept in `DATA_DIR/jwt-secret`, generated on first start with mode 0600. The file is
 * created exclusively, so two panels starting at once on a fresh directory end up with the same
 * secret.
 */
function storedSecret(dataDir: string): Uint8Array {
  const file = path.join(dataDir, SECRET_FILE);
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, randomBytes(48).toString('base64url'));
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') {
      throw new ConfigError('JWT_SECRET', `cannot create ${file} (${errorCode(error)})`);
    }
  }

  let stored: Buffer;
  try {
    const fd = openSync(file, 'r');
    try {
      if ((fstatSync(fd).mode & 0o077) !== 0) {
        throw new ConfigError('JWT_SECRET', `${file} must not be readable by others (chmod 600)`);
      }
      stored = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError('JWT_SECRET', `cannot read ${file} (${errorCode(error)})`);
  }
  const secret = stored.toString('utf8').trim();
  if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    throw new ConfigError('JWT_SECRET', `${file} holds fewer than ${MIN_SECRET_BYTES} bytes`);
  }
  return new Uint8Array(Buffer.from(secret, 'utf8'));
}

function errorCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : 'unknown error';
}

/**
 * For a program beside the panel (the command line): makes DATA_DIR when no panel ran yet (the
 * panel's alone, 0700; the panel sets its modes at its start), and answers the JWT secret:
 * `JWT_SECRET`, else the one kept in DATA_DIR, made there when missing. It never changes the
 * modes of an existing DATA_DIR, which a running panel set.
 */
export function openDataDir(config: Config): { jwtSecret: Uint8Array } {
  try {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new ConfigError('DATA_DIR', `cannot create ${config.dataDir} (${errorCode(error)})`);
  }
  return { jwtSecret: config.jwtSecret ?? storedSecret(config.dataDir) };
}

/**
 * Names this panel on the machine (from its data directory): its parent cgroup and the label of
 * its containers, so that two panels never take each other's servers.
 */
export function panelId(dataDir: string): string {
  return createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
}
