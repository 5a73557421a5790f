/**
 * Password hashing: Argon2id with OWASP's minimum parameters (19 MiB, 2 passes, 1 lane), which
 * keeps a login near 25 ms on a small host while making offline guessing expensive.
 */
import argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export class PasswordHasher {
  /** A hash of no one's password, made at the first `burn`. */
  #dummy: Promise<string> | undefined;

  hash(password: string): Promise<string> {
    return argon2.hash(password, OPTIONS);
  }

  /** False for a wrong password and for a hash that cannot be parsed. */
  async verify(hash: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  /**
   * Spends the time of one verification without a stored hash, so that a login for an unknown
   * user takes as long as one with a wrong password.
   */
  async burn(password: string): Promise<void> {
    this.#dummy ??= argon2.hash('not a real password', OPTIONS);
    await this.verify(await this.#dummy, password);
  }
}
