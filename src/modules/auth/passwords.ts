/**
 * Password hashing: Argon2id with OWASP's minimum parameters (19 MiB, 2 passes, 1 lane), which
 * keeps a login near 25 ms on a small host while making offline guessing expensive.
 */
import argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password and for a hash that cannot be parsed. */
  verify(hash: string, password: string): Promise<boolean>;
  /**
   * Spends the time of one verification without a stored hash, so that a login for an unknown
   * user takes as long as one with a wrong password.
   */
  burn(password: string): Promise<void>;
}

export function createPasswordHasher(): PasswordHasher {
  let dummy: Promise<string> | undefined;
  const verify = async (hash: string, password: string): Promise<boolean> => {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  };
  return {
    hash: (password) => argon2.hash(password, OPTIONS),
    verify,
    async burn(password) {
      dummy ??= argon2.hash('not a real password', OPTIONS);
      await verify(await dummy, password);
    },
  };
}
