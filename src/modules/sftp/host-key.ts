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
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';
import { ConfigError } from '../../config.js';

export const HOST_KEY_FILE = 'sftp-host-key';

/** The length of an Ed25519 public key, as the SSH wire form carries it. */
const ED25519_PUBLIC_BYTES = 32;

/**
 * The Ed25519 public key inside an OpenSSH public key blob (`string "ssh-ed25519"`,
 * `string key`), or null when the blob is not one.
 */
function ed25519PublicOf(blob: Buffer): Buffer | null {
  if (blob.length < 4) return null;
  const nameEnd = 4 + blob.readUInt32BE(0);
  if (blob.subarray(4, nameEnd).toString() !== 'ssh-ed25519' || blob.length < nameEnd + 4) {
    return null;
  }
  return blob.subarray(nameEnd + 4, nameEnd + 4 + blob.readUInt32BE(nameEnd));
}

/**
 * A new Ed25519 key pair in OpenSSH's formats (`private`: the key file; `public`: the one-line
 * form). ssh2's generator drops the leading zero bytes of the public key as if it were a
 * number, so one key in 256 comes out 31 bytes long, a key no client accepts (and its private
 * file carries the same cut key): such a pair is made again.
 */
export function newEd25519Pair(): { readonly private: string; readonly public: string } {
  for (;;) {
    const made = ssh2.utils.generateKeyPairSync('ed25519');
    const blob = Buffer.from(made.public.split(' ')[1] ?? '', 'base64');
    if (ed25519PublicOf(blob)?.length === ED25519_PUBLIC_BYTES) return made;
  }
}

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
  let text: Buffer | null;
  try {
    text = readOwnFile(file);
  } catch (error) {
    if (code(error) !== 'ENOENT') throw error;
    text = null;
  }
  if (text !== null && cutByGenerator(text)) {
    // Made by an earlier panel with ssh2's cut Ed25519 key (see newEd25519Pair): no client ever
    // accepted it, so no trust is lost by making a good one in its place.
    try {
      renameSync(file, `${file}.cut-${Date.now()}`);
    } catch (error) {
      // A second panel starting at once moved it first.
      if (code(error) !== 'ENOENT') throw error;
    }
    text = null;
  }
  if (text === null) {
    const made = newEd25519Pair();
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

/**
 * Whether `text` is an Ed25519 key file whose public half ssh2's generator cut short: ssh2 then
 * refuses to read it back ("Malformed OpenSSH private key"), so it is read here as far as the
 * public key (openssh-key-v1: the magic, cipher, KDF and its options, the number of keys, then
 * the first public key blob).
 */
function cutByGenerator(text: Buffer): boolean {
  const body =
    /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(
      text.toString('latin1'),
    )?.[1];
  if (body === undefined) return false;
  const bytes = Buffer.from(body.replace(/\s+/g, ''), 'base64');
  const magic = Buffer.from('openssh-key-v1\0');
  if (!bytes.subarray(0, magic.length).equals(magic)) return false;
  let at = magic.length;
  const next = (): Buffer | null => {
    if (at + 4 > bytes.length) return null;
    const end = at + 4 + bytes.readUInt32BE(at);
    if (end > bytes.length) return null;
    const field = bytes.subarray(at + 4, end);
    at = end;
    return field;
  };
  // The cipher, the KDF and its options; then the number of keys.
  if (next() === null || next() === null || next() === null || at + 4 > bytes.length) return false;
  at += 4;
  const blob = next();
  const key = blob === null ? null : ed25519PublicOf(blob);
  return key !== null && key.length < ED25519_PUBLIC_BYTES;
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
