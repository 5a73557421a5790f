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

export interface ProfileService {
  stats(user: User): Promise<ProfileStats>;
  statsOf(username: string): Promise<ProfileStats>;
  /** `address` is the client's, for throttling wrong passwords like failed logins. */
  rename(
    user: User,
    newUsername: string,
    password: string | undefined,
    address: string,
  ): Promise<User>;
  /**
   * Revokes every earlier session token, and every API key of the user unless `revokeApiKeys`
   * is false; returns a fresh token and how many keys were revoked.
   */
  changePassword(
    user: User,
    oldPassword: string | undefined,
    newPassword: string,
    address: string,
    revokeApiKeys: boolean,
  ): Promise<TokenResponse & { revokedApiKeys: number }>;
}

export function createProfileService(deps: {
  users: Accounts;
  tickets: { activityOf(userId: number): Promise<TicketActivity> };
  auth: AuthService;
  hasher: PasswordHasher;
  /** Wrong current passwords count as failed logins: a stolen token must not allow guessing. */
  throttle: LoginThrottle;
  /** Told when a password change revokes the user's tokens, so open consoles close. */
  events: PanelEvents;
  apiKeys: { revokeAll(userId: number): Promise<number> };
}): ProfileService {
  const { users, tickets, auth, hasher, throttle, events, apiKeys } = deps;

  /**
   * Checks the current password. An account without one (made by an OpenID Connect sign-in)
   * has nothing to check; for every other account a missing password is a wrong one.
   */
  const checkPassword = async (
    user: User,
    password: string | undefined,
    field: string,
    address: string,
  ): Promise<void> => {
    const hash = await users.passwordHash(user.id);
    if (hash === null && !user.hasPassword) return;
    if (password === undefined) {
      throw new AppError('VALIDATION_FAILED', `body/${field}: is required`, {
        details: [{ path: `body/${field}`, message: 'is required' }],
      });
    }
    const outcome = await throttle.attempt(usernameKey(user.username), address, async () =>
      hash !== null && (await hasher.verify(hash, password)) ? user : null,
    );
    if (outcome.kind === 'refused') {
      throw new AppError('RATE_LIMITED', 'Too many wrong passwords; try again later', {
        retryAfter: outcome.retryAfterSeconds,
      });
    }
    if (outcome.kind === 'wrong') {
      throw new AppError('WRONG_PASSWORD', 'The current password is wrong');
    }
  };
  const gone = (): AppError => new AppError('UNAUTHORIZED', 'This account no longer exists');

  const stats = async (user: User): Promise<ProfileStats> => {
    const [servers, activity] = await Promise.all([
      auth.reachableServers(user),
      tickets.activityOf(user.id),
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
  };

  return {
    stats,

    async statsOf(username) {
      const user = await users.findByUsername(username);
      if (!user) throw notFound('User');
      return stats(user);
    },

    async rename(user, newUsername, password, address) {
      await checkPassword(user, password, 'password', address);
      try {
        if (!(await users.rename(user.id, newUsername))) throw gone();
      } catch (error) {
        if (error instanceof AlreadyExists) {
          throw new AppError('USERNAME_TAKEN', 'That username is taken');
        }
        throw error;
      }
      return { ...user, username: newUsername };
    },

    async changePassword(user, oldPassword, newPassword, address, revokeApiKeys) {
      await checkPassword(user, oldPassword, 'old_password', address);
      const tokenVersion = await users.setPassword(user.id, await hasher.hash(newPassword));
      if (tokenVersion === undefined) throw gone();
      const revokedApiKeys = revokeApiKeys ? await apiKeys.revokeAll(user.id) : 0;
      events.emit('access-changed', user.id);
      return { ...(await auth.tokenResponse({ ...user, tokenVersion })), revokedApiKeys };
    },
  };
}
