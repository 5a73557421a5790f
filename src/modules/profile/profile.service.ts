/**
 * The signed-in user's own account: statistics, renaming and changing the password. Both changes
 * ask for the current password again, so a stolen token alone cannot take the account over.
 */
import { AlreadyExists } from '../../domain/conflicts.js';
import type { TicketActivity } from '../../domain/ticket.js';
import { usernameKey, type Role, type User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { AuthService, TokenResponse } from '../auth/auth.service.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { Accounts } from '../auth/accounts.js';
import type { LoginThrottle } from '../auth/login-throttle.js';

export interface ProfileStats {
  readonly username: string;
  readonly role: Role;
  readonly createdAt: string;
  readonly lastLoginAt: string | null;
  /** Servers the user can reach: every server for an admin, else the assigned ones. */
  readonly serverCount: number;
  readonly tickets: {
    readonly total: number;
    readonly pending: number;
    readonly in_progress: number;
    readonly closed: number;
  };
  readonly messagesWritten: number;
}

/** What a ProfileService is made from. */
export interface ProfileServiceDeps {
  readonly users: Accounts;
  readonly tickets: { activityOf(userId: number): Promise<TicketActivity> };
  readonly auth: AuthService;
  readonly hasher: PasswordHasher;
  /** Wrong current passwords count as failed logins: a stolen token must not allow guessing. */
  readonly throttle: LoginThrottle;
  /** Told when a password change revokes the user's tokens, so open consoles close. */
  readonly events: PanelEvents;
  readonly apiKeys: { revokeAll(userId: number): Promise<number> };
}

export class ProfileService {
  readonly #deps: ProfileServiceDeps;

  constructor(deps: ProfileServiceDeps) {
    this.#deps = deps;
  }

  async stats(user: User): Promise<ProfileStats> {
    const [servers, activity] = await Promise.all([
      this.#deps.auth.reachableServers(user),
      this.#deps.tickets.activityOf(user.id),
    ]);
    const { pending, in_progress, closed } = activity.ticketsByStatus;
    return {
      username: user.username,
      role: user.role,
      createdAt: user.createdAt,
      lastLoginAt: user.lastLoginAt,
      serverCount: servers.length,
      tickets: { total: pending + in_progress + closed, pending, in_progress, closed },
      messagesWritten: activity.messagesWritten,
    };
  }

  async statsOf(username: string): Promise<ProfileStats> {
    const user = await this.#deps.users.findByUsername(username);
    if (!user) throw notFound('User');
    return this.stats(user);
  }

  /** `address` is the client's, for throttling wrong passwords like failed logins. */
  async rename(
    user: User,
    newUsername: string,
    password: string | undefined,
    address: string,
  ): Promise<User> {
    await this.#checkPassword(user, password, 'password', address);
    try {
      if (!(await this.#deps.users.rename(user.id, newUsername))) throw gone();
    } catch (error) {
      if (error instanceof AlreadyExists) {
        throw new AppError('USERNAME_TAKEN', 'That username is taken');
      }
      throw error;
    }
    return { ...user, username: newUsername };
  }

  /**
   * Revokes every earlier session token, and every API key of the user unless `revokeApiKeys`
   * is false; returns a fresh token and how many keys were revoked.
   */
  async changePassword(
    user: User,
    oldPassword: string | undefined,
    newPassword: string,
    address: string,
    revokeApiKeys: boolean,
  ): Promise<TokenResponse & { revokedApiKeys: number }> {
    const { users, hasher, apiKeys, events, auth } = this.#deps;
    await this.#checkPassword(user, oldPassword, 'old_password', address);
    const tokenVersion = await users.setPassword(user.id, await hasher.hash(newPassword));
    if (tokenVersion === undefined) throw gone();
    const revokedApiKeys = revokeApiKeys ? await apiKeys.revokeAll(user.id) : 0;
    events.emit('access-changed', user.id);
    return { ...(await auth.tokenResponse({ ...user, tokenVersion })), revokedApiKeys };
  }

  /**
   * Checks the current password. An account without one (made by an OpenID Connect sign-in)
   * has nothing to check; for every other account a missing password is a wrong one.
   */
  async #checkPassword(
    user: User,
    password: string | undefined,
    field: string,
    address: string,
  ): Promise<void> {
    const hash = await this.#deps.users.passwordHash(user.id);
    if (hash === null && !user.hasPassword) return;
    if (password === undefined) {
      throw new AppError('VALIDATION_FAILED', `body/${field}: is required`, {
        details: [{ path: `body/${field}`, message: 'is required' }],
      });
    }
    const { hasher } = this.#deps;
    const outcome = await this.#deps.throttle.attempt(
      usernameKey(user.username),
      address,
      async () => (hash !== null && (await hasher.verify(hash, password)) ? user : null),
    );
    if (outcome.kind === 'refused') {
      throw new AppError('RATE_LIMITED', 'Too many wrong passwords; try again later', {
        retryAfter: outcome.retryAfterSeconds,
      });
    }
    if (outcome.kind === 'wrong') {
      throw new AppError('WRONG_PASSWORD', 'The current password is wrong');
    }
  }
}

const gone = (): AppError => new AppError('UNAUTHORIZED', 'This account no longer exists');
