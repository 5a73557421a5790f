/**
 * The SFTP server's host key: Ed25519, generated once into `DATA_DIR/sftp-host-key` (mode 0600,
 * OpenSSH's private key format) and kept, so that clients that trusted it keep trusting it.
 * Its fingerprint is printed as OpenSSH prints it (`SHA256:` and unpadded base64), in the
 * start-up log, the Profile page and docs/sftp.md's "first connection".
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';
import { ConfigError } from '../../config.js';

export const HOST_KEY_FILE = 'sftp-host-key';

export interface HostKey {
  /** The private key, for ssh2's `hostKeys`. */
  readonly privateKey: Buffer;
  /** `SHA256:…`, as `ssh-keygen -lf` and every client print it. */
  readonly fingerprint: string;
  readonly algorithm: string;
}

/** OpenSSH's fingerprint of a public key blob (the SSH wire form). */
export const fingerprintOf = (blob: Buffer): string =>
  `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;

const code = (error: unknown): string =>
  (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);

/**
 * The host key of `dataDir`, made when there is none. A new key is written to a temporary file
 * and linked into place, so a second panel starting at once, or a crash, never leaves half a key.
 */
export function loadHostKey(dataDir: string): HostKey {
  const file = path.join(dataDir, HOST_KEY_FILE);
  let text: Buffer;
  try {
    text = readOwnFile(file);
  } catch (error) {
    if (code(error) !== 'ENOENT') throw error;
    const made = ssh2.utils.generateKeyPairSync('ed25519');
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const fd = openSync(temporary, 'wx', 0o600);
    try {
      writeSync(fd, made.private);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, file);
    } catch (linkError) {
      if (code(linkError) !== 'EEXIST') {
        throw new ConfigError('SFTP_PORT', `cannot create ${file} (${code(linkError)})`);
      }
    } finally {
      unlinkSync(temporary);
    }
    text = readOwnFile(file);
  }
  const parsed = ssh2.utils.parseKey(text);
  if (parsed instanceof Error || Array.isArray(parsed) || !parsed.isPrivateKey()) {
    throw new ConfigError('SFTP_PORT', `${file} is not an OpenSSH private key; move it away`);
  }
  return {
    privateKey: text,
    fingerprint: fingerprintOf(parsed.getPublicSSH()),
    algorithm: parsed.type,
  };
}

function readOwnFile(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    if ((fstatSync(fd).mode & 0o077) !== 0) {
      throw new ConfigError('SFTP_PORT', `${file} must not be readable by others (chmod 600)`);
    }
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
