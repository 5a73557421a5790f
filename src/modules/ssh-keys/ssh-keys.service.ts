/**
 * SSH public keys (src/domain/ssh-key.ts): added, listed and deleted by their owner in a
 * signed-in session (never with an API key), and looked up by the SFTP server when someone signs
 * in with one (docs/sftp.md).
 *
 * Adding a key asks its owner to prove who they are again (the password, and a code with
 * two-factor sign-in), as making an API key does: a key outlives the session, so a stolen session
 * must not become a lasting way into the servers' files. Deleting one tells the panel the owner's
 * access changed (`access-changed`): the SFTP sessions signed in with it end at once.
 *
 * A password change leaves the keys in place (they are not derived from the password, and a
 * person changing a leaked password still holds their private key); a key dies with its account.
 */
import type { SshKey, SshKeyAlgorithm } from '../../domain/ssh-key.js';
import type { User } from '../../domain/user.js';
import { AlreadyExists } from '../../domain/conflicts.js';
import { AppError, invalidField } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { ConfirmIdentity, IdentityProof } from '../two-factor/two-factor.service.js';
import { fingerprintOf, readPublicKey } from './public-key.js';
import type { SshKeysRepository } from './ssh-keys.repository.js';

/** How many keys one user may hold. */
export const MAX_SSH_KEYS_PER_USER = 50;

/** What the owner sends to add a key, with the proof that it is them. */
export interface NewSshKey extends IdentityProof {
  readonly name: string;
  /** As pasted: OpenSSH's line (a comment allowed) or an RFC 4716 block. */
  readonly publicKey: string;
}

/** A key as the SFTP server compares it with what a client offers. */
export interface SignInKey {
  readonly id: number;
  /** The name its owner gave it (the audit log names the key a session signed in with). */
  readonly name: string;
  readonly algorithm: SshKeyAlgorithm;
  /** The SSH wire blob (RFC 4253 §6.6), as ssh2's server hands the offered key (`ctx.key.data`). */
  readonly publicKey: Buffer;
}

/** What an SshKeysService is made from. */
export interface SshKeysServiceDeps {
  readonly keys: SshKeysRepository;
  /** Proof that the owner is at the keyboard (TwoFactorService.confirm); throws when not. */
  readonly confirmIdentity: ConfirmIdentity;
  /** Told of deletions (`access-changed`), so the key's SFTP sessions end. */
  readonly events: PanelEvents;
  readonly now: () => Date;
}

export class SshKeysService {
  readonly #deps: SshKeysServiceDeps;

  constructor(deps: SshKeysServiceDeps) {
    this.#deps = deps;
  }

  /** The user's keys, oldest first. */
  async list(user: User): Promise<SshKey[]> {
    return (await this.#deps.keys.ofUser(user.id)).map(view);
  }

  /**
   * Adds a key to the user's account. 400 VALIDATION_FAILED naming `body/name` or
   * `body/publicKey` with the problem in words; the identity proof's refusals (400, 403
   * WRONG_PASSWORD, 401 INVALID_CREDENTIALS, 403 SIGN_IN_AGAIN, 429); 409 ALREADY_EXISTS for a
   * key the account holds, 409 CONFLICT past MAX_SSH_KEYS_PER_USER. `address` is the client's,
   * for the login throttle that counts wrong passwords and codes.
   */
  async add(user: User, input: NewSshKey, address: string): Promise<SshKey> {
    const name = input.name.trim();
    if (name === '')
      throw invalidField('name', 'Give the key a name, such as the computer it is on');
    const read = readPublicKey(input.publicKey);
    if ('problem' in read) throw invalidField('publicKey', read.problem);
    const { key } = read;
    // After the key is read: a mistake in it is told without spending a password attempt.
    await this.#deps.confirmIdentity(user, { password: input.password, code: input.code }, address);
    const { keys } = this.#deps;
    const held = await keys.byFingerprint(user.id, key.fingerprint);
    if (held) throw alreadyHeld(held.name);
    if ((await keys.countOf(user.id)) >= MAX_SSH_KEYS_PER_USER) {
      throw new AppError(
        'CONFLICT',
        `You hold ${MAX_SSH_KEYS_PER_USER} SSH keys already: delete one first`,
      );
    }
    try {
      return view(
        await keys.insert({
          userId: user.id,
          name,
          algorithm: key.algorithm,
          publicKey: key.line,
          fingerprint: key.fingerprint,
          createdAt: this.#deps.now().toISOString(),
        }),
      );
    } catch (error) {
      // The same key added twice at once: the second insert meets the unique index.
      if (error instanceof AlreadyExists) throw alreadyHeld(null);
      throw error;
    }
  }

  /** Deletes the user's key; the SFTP sessions signed in with it end. 404 for no such key. */
  async remove(user: User, id: number): Promise<SshKey> {
    const key = await this.#deps.keys.delete(user.id, id);
    if (!key) throw new AppError('NOT_FOUND', 'You have no such SSH key');
    this.#deps.events.emit('access-changed', user.id);
    return view(key);
  }

  // What the SFTP server calls. They answer keys whatever the state of their account: the server
  // checks the account (banned, deleted, its servers) itself.

  /** Every key of the user, to compare with the key a client offers. */
  async findForSignIn(userId: number): Promise<SignInKey[]> {
    return (await this.#deps.keys.ofUser(userId)).map(signInKey);
  }

  /**
   * The user's key whose wire blob is `blob` exactly (ssh2's `ctx.key.data`), or null. Found by
   * fingerprint, then compared byte for byte. The signature the client made with it is the
   * caller's to verify.
   */
  async matching(userId: number, blob: Buffer): Promise<SignInKey | null> {
    const key = await this.#deps.keys.byFingerprint(userId, fingerprintOf(blob));
    if (!key) return null;
    const found = signInKey(key);
    return found.publicKey.equals(blob) ? found : null;
  }

  /** Writes the key's last use (a sign-in with it), shown on the profile. */
  async recordUse(id: number, at: Date): Promise<void> {
    await this.#deps.keys.recordUse(id, at.toISOString());
  }

  /** Whether the key is still there: an open session signed in with it re-checks this. */
  exists(id: number): Promise<boolean> {
    return this.#deps.keys.exists(id);
  }
}

const view = (key: SshKey): SshKey => ({
  id: key.id,
  name: key.name,
  algorithm: key.algorithm,
  publicKey: key.publicKey,
  fingerprint: key.fingerprint,
  createdAt: key.createdAt,
  lastUsedAt: key.lastUsedAt,
});

/** The stored line's base64 is the blob, written by the panel from a parsed key. */
const signInKey = (key: SshKey): SignInKey => ({
  id: key.id,
  name: key.name,
  algorithm: key.algorithm,
  publicKey: Buffer.from(key.publicKey.slice(key.algorithm.length + 1), 'base64'),
});

const alreadyHeld = (name: string | null): AppError =>
  new AppError(
    'ALREADY_EXISTS',
    name === null
      ? 'This key is on your account already'
      : `This key is on your account already, as ${JSON.stringify(name)}`,
    { details: [{ path: 'body/publicKey', message: 'This key is on your account already' }] },
  );
