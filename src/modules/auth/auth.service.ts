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

export interface AuthService {
  /** Whether anyone may create an account now (see {@link Registration}). */
  registrationOpen(): Promise<boolean>;
  /** `address` is the client's address: each may make only so many accounts per window. */
  register(credentials: Credentials, address: string): Promise<TokenResponse>;
  /**
   * `address` is the client's address, for throttling failed attempts (`LoginThrottle`). An
   * account with two-factor sign-in gets a challenge instead of a token.
   */
  login(credentials: Credentials, address: string): Promise<TokenResponse | ChallengeResponse>;
  /**
   * Whose a set-password link is, and until when; 400 INVALID_LINK for a token unknown, used or
   * expired. Throttled per address like logins (`address` is the client's).
   */
  checkPasswordLink(
    token: string,
    address: string,
  ): Promise<{ username: string; expiresAt: string }>;
  /**
   * Sets the password with a set-password link (used up), then answers as a login does: a
   * token, or a challenge when the account has two-factor sign-in. Also names the account, for
   * the audit log. Throttled per address like logins.
   */
  setPasswordWithLink(
    token: string,
    password: string,
    address: string,
  ): Promise<{ account: User; answer: TokenResponse | ChallengeResponse }>;
  /** The second step of a sign-in with two factors: the challenge and a code. */
  completeSignIn(challenge: string, code: string, address: string): Promise<TokenResponse>;
  /** The account a live two-factor challenge belongs to, if any (for the audit log). */
  challengedAccount(challenge: string): Promise<User | undefined>;
  /** The user's role requires a second factor they have not set up. */
  mustEnrolSecondFactor(user: User): boolean;
  /**
   * The current user behind a token (a session's JWT, or an API key: the user narrowed by it,
   * its use recorded with `address`), or `null` when the token is not (or no longer) valid.
   */
  authenticate(token: string, address?: string): Promise<User | null>;
  tokenResponse(user: User): Promise<TokenResponse>;
  /** The servers a user can reach: every server for an admin, else the assigned ones. */
  reachableServers(user: User): Promise<string[]>;
  signIn(user: User): Promise<SignIn>;
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

export function createAuthService(deps: {
  users: Accounts;
  servers: ServerNames;
  hasher: PasswordHasher;
  tokens: TokenService;
  throttle: LoginThrottle;
  registration: Registration;
  now: () => Date;
  secondFactor?: SecondFactor;
  apiKeys?: { authenticate(token: string, address: string | null): Promise<User | null> };
  /** Set-password links (the users domain keeps them); without, every link is invalid. */
  passwordLinks?: PasswordLinks;
}): AuthService {
  const { users, servers, hasher, tokens, throttle, now } = deps;

  const tokenResponse = async (user: User): Promise<TokenResponse> => ({
    access_token: await tokens.issue({ userId: user.id, version: user.tokenVersion }),
    token_type: 'bearer',
    username: user.username,
    role: user.role,
  });

  /** A right password (or a used link): a token, or a challenge for the second factor. */
  const signedIn = async (user: User): Promise<TokenResponse | ChallengeResponse> => {
    const challenge = deps.secondFactor?.challengeFor(user) ?? null;
    if (challenge !== null) {
      return {
        two_factor_required: true,
        challenge: challenge.challenge,
        expires_at: challenge.expiresAt.toISOString(),
      };
    }
    await users.recordLogin(user.id, now());
    return tokenResponse(user);
  };

  /**
   * Runs `use` of a link under the login throttle: a link that is no link counts as a wrong
   * password of the client's address (each token its own account key, so that nobody's failures
   * slow another person's link), and enough of them refuse the address (429).
   */
  const throttledLink = async <T extends object>(
    token: string,
    address: string,
    use: (links: PasswordLinks) => Promise<T>,
  ): Promise<T> => {
    const account = `link:${createHash('sha256').update(token).digest('hex')}`;
    const outcome = await throttle.attempt(account, address, async () => {
      if (!deps.passwordLinks) return null;
      try {
        return await use(deps.passwordLinks);
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
  };

  const { registration } = deps;
  /** Whether an account may be made after the first (the env variable, else the setting). */
  const openAfterFirst = async (): Promise<boolean> =>
    registration.env === null ? registration.openAfterFirst() : registration.env === 'open';

  return {
    async registrationOpen() {
      if (registration.env !== null) return registration.env === 'open';
      return !(await users.anyEverRegistered()) || (await registration.openAfterFirst());
    },
    tokenResponse,

    async register({ username, password }, address) {
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
        const openLater = await openAfterFirst();
        const user = await users.transaction(async (locked) => {
          const first = !(await locked.anyEverRegistered());
          if (!first && !openLater) throw registrationClosed();
          const role: Role = first ? 'admin' : 'user';
          return locked.insert({ username, passwordHash, role, now: now() });
        });
        return await tokenResponse(user);
      } catch (error) {
        // Only accounts made count against the address.
        taken.release();
        if (error instanceof AlreadyExists) throw usernameTaken();
        throw error;
      }
    },

    async login({ username, password }, address) {
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
      return signedIn(outcome.value);
    },

    checkPasswordLink(token, address) {
      return throttledLink(token, address, (links) => links.checkLink(token));
    },

    async setPasswordWithLink(token, password, address) {
      const account = await throttledLink(token, address, (links) =>
        links.redeemLink(token, password),
      );
      return { account, answer: await signedIn(account) };
    },

    async completeSignIn(challenge, code, address) {
      if (!deps.secondFactor) throw new AppError('NOT_FOUND', 'Two-factor sign-in is not set up');
      const user = await deps.secondFactor.complete(challenge, code, address);
      await users.recordLogin(user.id, now());
      return tokenResponse(user);
    },

    async challengedAccount(challenge) {
      const id = deps.secondFactor?.challengedUser(challenge) ?? null;
      return id === null ? undefined : users.findById(id);
    },

    mustEnrolSecondFactor(user) {
      return deps.secondFactor?.mustEnrol(user) ?? false;
    },

    async authenticate(token, address) {
      if (token.startsWith(API_KEY_PREFIX)) {
        return (await deps.apiKeys?.authenticate(token, address ?? null)) ?? null;
      }
      const claims = tokens.verify(token);
      if (!claims) return null;
      const user = await users.findById(claims.userId);
      return user?.tokenVersion === claims.version
        ? { ...user, signedInAt: new Date(claims.issuedAt * 1000) }
        : null;
    },

    async reachableServers(user) {
      const names = can({ role: user.role }, 'servers.list-all')
        ? await servers.allNames()
        : await users.serverNames(user.id);
      const scope = user.key?.servers ?? null;
      return scope === null ? names : names.filter((name) => scope.has(name));
    },

    async signIn(user) {
      return (await users.signInOf([user])).get(user.id) ?? { hasPassword: false, providers: [] };
    },
  };
}

const usernameTaken = (): AppError => new AppError('USERNAME_TAKEN', 'That username is taken');
const registrationClosed = (): AppError =>
  new AppError('REGISTRATION_CLOSED', 'Registration is closed on this panel');
