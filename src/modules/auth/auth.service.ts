/**
 * Registration, password login and token checking. Tokens carry only the user's id and token
 * version; `authenticate` reloads the user on every request, so a role change, ban, deletion or
 * password change takes effect on the very next one.
 */
import { createHash } from 'node:crypto';
import type { RegistrationMode } from '../../config.js';
import { API_KEY_PREFIX } from '../../domain/api-key.js';
import { AlreadyExists } from '../../domain/conflicts.js';
import { can } from '../../domain/policy.js';
import { usernameKey, type Role, type SignIn, type User } from '../../domain/user.js';
import { AppError, invalidLink } from '../../errors.js';
import type { Accounts } from './accounts.js';
import type { RateLimit } from '../../rate-limit.js';
import type { LoginThrottle } from './login-throttle.js';
import type { PasswordHasher } from './passwords.js';
import type { TokenService } from './tokens.js';

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'bearer';
  readonly username: string;
  readonly role: Role;
}

/** The password was right; the second factor is asked for (see two-factor.service.ts). */
export interface ChallengeResponse {
  readonly two_factor_required: true;
  readonly challenge: string;
  readonly expires_at: string;
}

/** What the auth service needs of two-factor sign-in. */
export interface SecondFactor {
  challengeFor(user: User): { challenge: string; expiresAt: Date } | null;
  complete(challenge: string, code: string, address: string): Promise<User>;
  /** The id of the account a live challenge belongs to, without using it. */
  challengedUser(challenge: string): number | null;
  mustEnrol(user: User): boolean;
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

const INVALID_CREDENTIALS = 'Wrong username or password';

/** What sign-in needs of set-password links (src/modules/users/users.service.ts). */
export interface PasswordLinks {
  /** 400 INVALID_LINK unless the token is a live link. */
  checkLink(token: string): Promise<{ username: string; expiresAt: string }>;
  /** Uses the link up and sets the password; 400 INVALID_LINK unless the token is a live link. */
  redeemLink(token: string, password: string): Promise<User>;
}

/** The names of every server (the servers domain keeps them). */
export interface ServerNames {
  allNames(): Promise<string[]>;
}

/**
 * Who may register (docs/security.md, "Registration"): `REGISTRATION` when set decides alone;
 * unset, the first account may always be made (it becomes the admin), later ones only while the
 * admin has opened registration in the panel's settings.
 */
export interface Registration {
  readonly env: RegistrationMode | null;
  /** The admin's setting, read at each registration. */
  openAfterFirst(): Promise<boolean>;
  /** Registrations per client address (429 with Retry-After past it). */
  readonly limit: RateLimit;
}

/** What an AuthService is made from. */
export interface AuthServiceDeps {
  readonly users: Accounts;
  readonly servers: ServerNames;
  readonly hasher: PasswordHasher;
  readonly tokens: TokenService;
  readonly throttle: LoginThrottle;
  readonly registration: Registration;
  readonly now: () => Date;
  readonly secondFactor?: SecondFactor;
  readonly apiKeys?: {
    authenticate(token: string, address: string | null): Promise<User | null>;
  };
  /** Set-password links (the users domain keeps them); without, every link is invalid. */
  readonly passwordLinks?: PasswordLinks;
}

export class AuthService {
  readonly #deps: AuthServiceDeps;

  constructor(deps: AuthServiceDeps) {
    this.#deps = deps;
  }

  /** Whether anyone may create an account now (see {@link Registration}). */
  async registrationOpen(): Promise<boolean> {
    const { registration, users } = this.#deps;
    if (registration.env !== null) return registration.env === 'open';
    return !(await users.anyEverRegistered()) || (await registration.openAfterFirst());
  }

  async tokenResponse(user: User): Promise<TokenResponse> {
    return {
      access_token: await this.#deps.tokens.issue({ userId: user.id, version: user.tokenVersion }),
      token_type: 'bearer',
      username: user.username,
      role: user.role,
    };
  }

  /** `address` is the client's address: each may make only so many accounts per window. */
  async register({ username, password }: Credentials, address: string): Promise<TokenResponse> {
    const { registration, users, hasher, now } = this.#deps;
    if (registration.env === 'closed') throw registrationClosed();
    const taken = registration.limit.take(address);
    if (taken.kind === 'refused') {
      throw new AppError(
        'RATE_LIMITED',
        'Too many accounts were made from this address; try again later',
        { retryAfter: taken.retryAfterSeconds },
      );
    }
    try {
      if (await users.findByUsername(username)) throw usernameTaken();
      const passwordHash = await hasher.hash(password);
      // Read before the accounts lock, which holds SQLite's one connection.
      const openLater = await this.#openAfterFirst();
      const user = await users.transaction(async (locked) => {
        const first = !(await locked.anyEverRegistered());
        if (!first && !openLater) throw registrationClosed();
        const role: Role = first ? 'admin' : 'user';
        return locked.insert({ username, passwordHash, role, now: now() });
      });
      return await this.tokenResponse(user);
    } catch (error) {
      // Only accounts made count against the address.
      taken.release();
      if (error instanceof AlreadyExists) throw usernameTaken();
      throw error;
    }
  }

  /**
   * `address` is the client's address, for throttling failed attempts (`LoginThrottle`). An
   * account with two-factor sign-in gets a challenge instead of a token.
   */
  async login(
    { username, password }: Credentials,
    address: string,
  ): Promise<TokenResponse | ChallengeResponse> {
    const { throttle, users, hasher } = this.#deps;
    const outcome = await throttle.attempt(usernameKey(username), address, async () => {
      const found = await users.findCredentials(username);
      if (found?.passwordHash == null) {
        await hasher.burn(password);
        return null;
      }
      return (await hasher.verify(found.passwordHash, password)) ? found.user : null;
    });
    if (outcome.kind === 'refused') {
      throw new AppError('RATE_LIMITED', 'Too many failed logins; try again later', {
        retryAfter: outcome.retryAfterSeconds,
      });
    }
    if (outcome.kind === 'wrong') throw new AppError('INVALID_CREDENTIALS', INVALID_CREDENTIALS);
    return this.#signedIn(outcome.value);
  }

  /**
   * Whose a set-password link is, and until when; 400 INVALID_LINK for a token unknown, used or
   * expired. Throttled per address like logins (`address` is the client's).
   */
  checkPasswordLink(
    token: string,
    address: string,
  ): Promise<{ username: string; expiresAt: string }> {
    return this.#throttledLink(token, address, (links) => links.checkLink(token));
  }

  /**
   * Sets the password with a set-password link (used up), then answers as a login does: a
   * token, or a challenge when the account has two-factor sign-in. Also names the account, for
   * the audit log. Throttled per address like logins.
   */
  async setPasswordWithLink(
    token: string,
    password: string,
    address: string,
  ): Promise<{ account: User; answer: TokenResponse | ChallengeResponse }> {
    const account = await this.#throttledLink(token, address, (links) =>
      links.redeemLink(token, password),
    );
    return { account, answer: await this.#signedIn(account) };
  }

  /** The second step of a sign-in with two factors: the challenge and a code. */
  async completeSignIn(challenge: string, code: string, address: string): Promise<TokenResponse> {
    const { secondFactor, users, now } = this.#deps;
    if (!secondFactor) throw new AppError('NOT_FOUND', 'Two-factor sign-in is not set up');
    const user = await secondFactor.complete(challenge, code, address);
    await users.recordLogin(user.id, now());
    return this.tokenResponse(user);
  }

  /** The account a live two-factor challenge belongs to, if any (for the audit log). */
  async challengedAccount(challenge: string): Promise<User | undefined> {
    const id = this.#deps.secondFactor?.challengedUser(challenge) ?? null;
    return id === null ? undefined : this.#deps.users.findById(id);
  }

  /** The user's role requires a second factor they have not set up. */
  mustEnrolSecondFactor(user: User): boolean {
    return this.#deps.secondFactor?.mustEnrol(user) ?? false;
  }

  /**
   * The current user behind a token (a session's JWT, or an API key: the user narrowed by it,
   * its use recorded with `address`), or `null` when the token is not (or no longer) valid.
   */
  async authenticate(token: string, address?: string): Promise<User | null> {
    if (token.startsWith(API_KEY_PREFIX)) {
      return (await this.#deps.apiKeys?.authenticate(token, address ?? null)) ?? null;
    }
    const claims = this.#deps.tokens.verify(token);
    if (!claims) return null;
    const user = await this.#deps.users.findById(claims.userId);
    return user?.tokenVersion === claims.version
      ? { ...user, signedInAt: new Date(claims.issuedAt * 1000) }
      : null;
  }

  /** The servers a user can reach: every server for an admin, else the assigned ones. */
  async reachableServers(user: User): Promise<string[]> {
    const names = can({ role: user.role }, 'servers.list-all')
      ? await this.#deps.servers.allNames()
      : await this.#deps.users.serverNames(user.id);
    const scope = user.key?.servers ?? null;
    return scope === null ? names : names.filter((name) => scope.has(name));
  }

  async signIn(user: User): Promise<SignIn> {
    return (
      (await this.#deps.users.signInOf([user])).get(user.id) ?? {
        hasPassword: false,
        providers: [],
      }
    );
  }

  /** A right password (or a used link): a token, or a challenge for the second factor. */
  async #signedIn(user: User): Promise<TokenResponse | ChallengeResponse> {
    const challenge = this.#deps.secondFactor?.challengeFor(user) ?? null;
    if (challenge !== null) {
      return {
        two_factor_required: true,
        challenge: challenge.challenge,
        expires_at: challenge.expiresAt.toISOString(),
      };
    }
    await this.#deps.users.recordLogin(user.id, this.#deps.now());
    return this.tokenResponse(user);
  }

  /**
   * Runs `use` of a link under the login throttle: a link that is no link counts as a wrong
   * password of the client's address (each token its own account key, so that nobody's failures
   * slow another person's link), and enough of them refuse the address (429).
   */
  async #throttledLink<T extends object>(
    token: string,
    address: string,
    use: (links: PasswordLinks) => Promise<T>,
  ): Promise<T> {
    const account = `link:${createHash('sha256').update(token).digest('hex')}`;
    const { passwordLinks } = this.#deps;
    const outcome = await this.#deps.throttle.attempt(account, address, async () => {
      if (!passwordLinks) return null;
      try {
        return await use(passwordLinks);
      } catch (error) {
        if (error instanceof AppError && error.code === 'INVALID_LINK') return null;
        throw error;
      }
    });
    if (outcome.kind === 'refused') {
      throw new AppError('RATE_LIMITED', 'Too many tries; try again later', {
        retryAfter: outcome.retryAfterSeconds,
      });
    }
    if (outcome.kind === 'wrong') throw invalidLink();
    return outcome.value;
  }

  /** Whether an account may be made after the first (the env variable, else the setting). */
  async #openAfterFirst(): Promise<boolean> {
    const { registration } = this.#deps;
    return registration.env === null ? registration.openAfterFirst() : registration.env === 'open';
  }
}

const usernameTaken = (): AppError => new AppError('USERNAME_TAKEN', 'That username is taken');
const registrationClosed = (): AppError =>
  new AppError('REGISTRATION_CLOSED', 'Registration is closed on this panel');
