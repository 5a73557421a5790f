/**
 * Two-factor sign-in with TOTP (RFC 6238: SHA-1, 6 digits, 30 s, the codes of authenticator
 * apps), for accounts with a password (docs/two-factor.md).
 *
 * - Enrolment: `setup` (the password) makes a secret, kept pending, and answers it as text, an
 *   otpauth URL and a QR code; `enable` with a code from the app turns it on and answers ten
 *   one-time recovery codes, shown once and stored as SHA-256 hashes.
 * - Sign-in: a right password answers a challenge instead of a token; the challenge and a code
 *   (or a recovery code) give the token. Challenges live 5 minutes in memory, are good for one
 *   sign-in and five wrong codes.
 * - A code is good once: the time step of the last one accepted is recorded, and a code of that
 *   step or an earlier one is refused.
 * - Codes are counted by the login throttle like passwords (per account and address, per
 *   address), under their own account key.
 * - `disable` needs the password and a code; `turnOff` (an admin, the command line) needs neither.
 * - Admins choose roles that must use it: their members with a password can do nothing but set
 *   it up until they have (403 TWO_FACTOR_REQUIRED).
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { ROLES, usernameKey, type Role, type User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { SecretBox } from './secret-box.js';
import type { TwoFactorRepository, TwoFactorState } from './two-factor.repository.js';

const ISSUER = 'Game panel';
const RECOVERY_CODES = 10;
/** Base32 without the look-alikes: a recovery code is read off paper. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const CHALLENGE_TTL_MS = 5 * 60_000;
const CHALLENGE_TRIES = 5;
const MAX_CHALLENGES = 10_000;
/** How recent the sign-in of an account without a password must be for `confirm`. */
export const FRESH_SIGN_IN_MS = 10 * 60_000;

/** What `confirm` takes as proof that the account's owner is at the keyboard. */
export interface IdentityProof {
  /** The owner's current password (absent only for an account without one). */
  readonly password?: string | undefined;
  /** A TOTP or recovery code, when the owner has two-factor sign-in. */
  readonly code?: string | undefined;
}

/** `confirm`, as a service that asks for proof before an action is given it. */
export type ConfirmIdentity = (user: User, proof: IdentityProof, address: string) => Promise<void>;

export interface TwoFactorStatus {
  readonly enabled: boolean;
  readonly enabledAt: string | null;
  readonly recoveryCodesLeft: number;
  /** The caller's role must use it. */
  readonly required: boolean;
}

export interface Enrolment {
  /** Base32, for typing into an app. */
  readonly secret: string;
  readonly otpauthUrl: string;
  /** The otpauth URL as an SVG QR code. */
  readonly qrSvg: string;
}

export interface Challenge {
  readonly challenge: string;
  readonly expiresAt: Date;
}

interface PendingChallenge {
  readonly userId: number;
  readonly expiresAt: number;
  tries: number;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** What a TwoFactorService is made from. */
export interface TwoFactorServiceDeps {
  readonly repo: TwoFactorRepository;
  readonly box: SecretBox;
  readonly throttle: LoginThrottle;
  readonly hasher: PasswordHasher;
  readonly users: {
    passwordHash(id: number): Promise<string | null>;
    findById(id: number): Promise<User | undefined>;
  };
  readonly now: () => Date;
}

export class TwoFactorService {
  /** Pending sign-ins, by the SHA-256 of their challenge. */
  readonly #challenges = new Map<string, PendingChallenge>();
  #required: readonly Role[] | null = null;
  readonly #deps: TwoFactorServiceDeps;

  constructor(deps: TwoFactorServiceDeps) {
    this.#deps = deps;
  }

  /** Loads the roles that must use a second factor; before the panel serves. */
  async load(): Promise<void> {
    this.#required = await this.#deps.repo.requiredRoles();
  }

  requiredRoles(): readonly Role[] {
    return this.#required ?? [];
  }

  async setRequiredRoles(roles: readonly Role[]): Promise<readonly Role[]> {
    const kept = ROLES.filter((role) => role !== 'banned' && roles.includes(role));
    await this.#deps.repo.setRequiredRoles(kept);
    this.#required = kept;
    return kept;
  }

  /** The user's role requires a second factor they have not set up (password accounts only). */
  mustEnrol(user: User): boolean {
    return user.hasPassword && !user.twoFactor && this.requiredRoles().includes(user.role);
  }

  async status(user: User): Promise<TwoFactorStatus> {
    const state = await this.#state(user);
    return {
      enabled: state.secret !== null,
      enabledAt: state.enabledAt,
      recoveryCodesLeft:
        state.secret === null ? 0 : await this.#deps.repo.recoveryCodesLeft(user.id),
      required: this.requiredRoles().includes(user.role) && user.hasPassword,
    };
  }

  /** A new secret, pending until `enable`; the password first. */
  async setup(user: User, password: string, address: string): Promise<Enrolment> {
    const state = await this.#state(user);
    if (state.secret !== null) {
      throw new AppError('CONFLICT', 'Two-factor sign-in is on already: turn it off first');
    }
    await this.#checkPassword(user, password, address);
    const secret = new Secret({ size: 20 });
    await this.#deps.repo.setPending(user.id, this.#deps.box.seal(secret.base32));
    const otpauthUrl = this.#totp(user, secret).toString();
    return {
      secret: secret.base32,
      otpauthUrl,
      qrSvg: await QRCode.toString(otpauthUrl, { type: 'svg', margin: 2 }),
    };
  }

  /** Turns it on with a code of the pending secret; answers the recovery codes, once. */
  async enable(user: User, code: string, address: string): Promise<string[]> {
    const state = await this.#state(user);
    if (state.secret !== null) {
      throw new AppError('CONFLICT', 'Two-factor sign-in is on already');
    }
    const pending = state.pending === null ? null : this.#deps.box.open(state.pending);
    if (pending === null) {
      throw new AppError('CONFLICT', 'Start with the setup: there is no secret to confirm');
    }
    let step = 0;
    await this.#throttled(user, address, () => {
      const found = this.#stepOf(user, pending, code);
      if (found === null) return Promise.resolve(false);
      step = found;
      return Promise.resolve(true);
    });
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    await this.#deps.repo.enable(
      user.id,
      this.#deps.box.seal(pending),
      step,
      codes.map((c) => sha256(normalise(c))),
      this.#deps.now().toISOString(),
    );
    return codes;
  }

  /** Turns it off: the password and a code (or a recovery code). */
  async disable(user: User, password: string, code: string, address: string): Promise<void> {
    const state = await this.#state(user);
    if (state.secret === null) throw new AppError('CONFLICT', 'Two-factor sign-in is off');
    await this.#checkPassword(user, password, address);
    await this.#checkCode(user, state, code, address);
    await this.#deps.repo.disable(user.id);
  }

  /**
   * Turns it off without the user's password or a code, for an admin or the operator's command
   * line: the way back in for a person who lost their authenticator and recovery codes. 404 for
   * a deleted user, 409 TWO_FACTOR_OFF when it is not on.
   */
  async turnOff(user: User): Promise<void> {
    const state = await this.#deps.repo.state(user.id);
    if (!state) throw notFound('User');
    if (state.secret === null) {
      throw new AppError('TWO_FACTOR_OFF', `Two-factor sign-in is not on for ${user.username}`);
    }
    await this.#deps.repo.disable(user.id);
  }

  /** New recovery codes in place of the old: the password and a code. */
  async renewRecoveryCodes(
    user: User,
    password: string,
    code: string,
    address: string,
  ): Promise<string[]> {
    const state = await this.#state(user);
    const secret = state.secret === null ? null : this.#deps.box.open(state.secret);
    if (state.secret === null || secret === null) {
      throw new AppError('CONFLICT', 'Two-factor sign-in is off');
    }
    await this.#checkPassword(user, password, address);
    await this.#checkCode(user, state, code, address);
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    const current = await this.#state(user);
    await this.#deps.repo.enable(
      user.id,
      state.secret,
      current.lastStep ?? 0,
      codes.map((c) => sha256(normalise(c))),
      state.enabledAt ?? this.#deps.now().toISOString(),
    );
    return codes;
  }

  /**
   * Proof that the account's owner is at the keyboard, before an action that outlives the session
   * (making an API key): the password, and a code (or a recovery code) when two-factor sign-in
   * is on; both counted by the login throttle. An account without a password (an OpenID Connect
   * sign-in) has nothing to type: its session must have signed in at most ten minutes ago
   * (403 SIGN_IN_AGAIN otherwise). docs/security.md.
   */
  async confirm(user: User, proof: IdentityProof, address: string): Promise<void> {
    const hash = await this.#deps.users.passwordHash(user.id);
    if (hash === null) {
      const at = user.signedInAt?.getTime();
      if (at === undefined || this.#deps.now().getTime() - at > FRESH_SIGN_IN_MS) {
        throw new AppError(
          'SIGN_IN_AGAIN',
          'Sign in again first: an account without a password does this within ten minutes of signing in',
        );
      }
      return;
    }
    const state = await this.#state(user);
    if (proof.password === undefined) throw required('password');
    if (state.secret !== null && proof.code === undefined) throw required('code');
    await this.#checkPassword(user, proof.password, address);
    if (state.secret !== null) await this.#checkCode(user, state, proof.code ?? '', address);
  }

  /** After a right password: a challenge when the user has a second factor, else null. */
  challengeFor(user: User): Challenge | null {
    if (!user.twoFactor) return null;
    this.#prune();
    const challenge = randomBytes(32).toString('base64url');
    const expiresAt = this.#deps.now().getTime() + CHALLENGE_TTL_MS;
    this.#challenges.set(sha256(challenge), { userId: user.id, expiresAt, tries: 0 });
    return { challenge, expiresAt: new Date(expiresAt) };
  }

  /** The user a challenge and its code sign in; 401 for a challenge unknown, used or expired. */
  /** The id of the account a live challenge belongs to (for the audit log), without using it. */
  challengedUser(challenge: string): number | null {
    const pending = this.#challenges.get(sha256(challenge));
    return pending && pending.expiresAt > this.#deps.now().getTime() ? pending.userId : null;
  }

  async complete(challenge: string, code: string, address: string): Promise<User> {
    const key = sha256(challenge);
    const pending = this.#challenges.get(key);
    const expired = (): AppError =>
      new AppError('UNAUTHORIZED', 'The sign-in expired or is unknown: enter the password again');
    if (!pending || pending.expiresAt <= this.#deps.now().getTime()) {
      this.#challenges.delete(key);
      throw expired();
    }
    const user = await this.#deps.users.findById(pending.userId);
    if (!user) {
      this.#challenges.delete(key);
      throw expired();
    }
    const state = await this.#state(user);
    try {
      await this.#checkCode(user, state, code, address);
    } catch (error) {
      pending.tries += 1;
      if (pending.tries >= CHALLENGE_TRIES) this.#challenges.delete(key);
      throw error;
    }
    this.#challenges.delete(key);
    return user;
  }

  async #state(user: User): Promise<TwoFactorState> {
    const state = await this.#deps.repo.state(user.id);
    if (!state) throw new AppError('UNAUTHORIZED', 'This account no longer exists');
    return state;
  }

  #totp(user: User, secret: Secret): TOTP {
    return new TOTP({ issuer: ISSUER, label: user.username, secret });
  }

  /** The time step of a right TOTP code of `secret` (one step either way), or null. */
  #stepOf(user: User, secret: string, code: string): number | null {
    const token = normalise(code);
    if (!/^[0-9]{6}$/.test(token)) return null;
    const totp = this.#totp(user, Secret.fromBase32(secret));
    const timestamp = this.#deps.now().getTime();
    const delta = totp.validate({ token, timestamp, window: 1 });
    return delta === null ? null : totp.counter({ timestamp }) + delta;
  }

  /** A TOTP code not used before, or an unused recovery code; throttled; 401 when wrong. */
  async #checkCode(user: User, state: TwoFactorState, code: string, address: string) {
    const secret = state.secret === null ? null : this.#deps.box.open(state.secret);
    await this.#throttled(user, address, async () => {
      if (secret !== null) {
        const step = this.#stepOf(user, secret, code);
        if (step !== null) return this.#deps.repo.useStep(user.id, step);
      }
      return this.#deps.repo.useRecoveryCode(
        user.id,
        sha256(normalise(code)),
        this.#deps.now().toISOString(),
      );
    });
  }

  async #throttled(user: User, address: string, check: () => Promise<boolean>): Promise<void> {
    const outcome = await this.#deps.throttle.attempt(
      `2fa:${usernameKey(user.username)}`,
      address,
      async () => ((await check()) ? user : null),
    );
    if (outcome.kind === 'refused') {
      throw new AppError('RATE_LIMITED', 'Too many wrong codes; try again later', {
        retryAfter: outcome.retryAfterSeconds,
      });
    }
    if (outcome.kind === 'wrong') {
      throw new AppError('INVALID_CREDENTIALS', 'Wrong or already used code');
    }
  }

  async #checkPassword(user: User, password: string, address: string): Promise<void> {
    const hash = await this.#deps.users.passwordHash(user.id);
    if (hash === null) {
      throw new AppError(
        'CONFLICT',
        'Two-factor sign-in protects password sign-in: set a password first',
      );
    }
    const outcome = await this.#deps.throttle.attempt(
      usernameKey(user.username),
      address,
      async () => ((await this.#deps.hasher.verify(hash, password)) ? user : null),
    );
    if (outcome.kind === 'refused') {
      throw new AppError('RATE_LIMITED', 'Too many wrong passwords; try again later', {
        retryAfter: outcome.retryAfterSeconds,
      });
    }
    if (outcome.kind === 'wrong') throw new AppError('WRONG_PASSWORD', 'The password is wrong');
  }

  /** Expired challenges go; past the cap, the oldest. */
  #prune(): void {
    const now = this.#deps.now().getTime();
    for (const [key, pending] of this.#challenges) {
      if (pending.expiresAt <= now || this.#challenges.size >= MAX_CHALLENGES) {
        this.#challenges.delete(key);
      } else {
        break;
      }
    }
  }
}

const required = (field: string): AppError =>
  new AppError('VALIDATION_FAILED', `body/${field}: is required`, {
    details: [{ path: `body/${field}`, message: 'is required' }],
  });

/** Spaces and hyphens dropped, lower case: codes are typed as they are read. */
const normalise = (code: string): string => code.replace(/[\s-]/g, '').toLowerCase();

function recoveryCode(): string {
  const chars = Array.from(
    { length: 10 },
    () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)] ?? 'a',
  );
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}
