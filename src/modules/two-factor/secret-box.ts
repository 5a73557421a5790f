/**
 * Encryption of TOTP secrets at rest: AES-256-GCM under a key derived (HKDF-SHA-256) from the
 * panel's JWT secret, so a copy of the database alone does not give anyone's second factor.
 * Changing JWT_SECRET makes stored secrets unreadable: those users sign in with a recovery code
 * and enrol again (docs/two-factor.md).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * A box whose key is derived for `purpose`: boxes of different purposes cannot open each other's
 * secrets. The TOTP secrets' purpose is the default, so their key never changes.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(masterSecret: Uint8Array, purpose = 'totp secrets') {
    this.#key = Buffer.from(
      hkdfSync('sha256', masterSecret, Buffer.alloc(0), `game-panel ${purpose}`, 32),
    );
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body].map(encode).join('.');
  }

  /** The plain text, or null when it cannot be opened (another key, tampered). */
  open(sealed: string): string | null {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) {
      return null;
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(body, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      return null;
    }
  }
}

const encode = (part: string | Buffer): string =>
  typeof part === 'string' ? part : part.toString('base64url');
