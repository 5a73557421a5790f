/**
 * The signed-in user's own account: statistics, renaming and changing the password. Both changes
 * ask for the current password again, so a stolen token alone cannot take the account over.
 */
import type { Role } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/database.js';
import { AppError, notFound } from '../../errors.js';
import type { AuthService, TokenResponse } from '../auth/auth.service.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { TicketsRepository } from '../tickets/tickets.repository.js';
import type { User, UsersRepository } from '../users/users.repository.js';

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
  rename(user: User, newUsername: string, password: string): Promise<User>;
  /** Revokes every earlier token; returns a fresh one. */
  changePassword(user: User, oldPassword: string, newPassword: string): Promise<TokenResponse>;
}

export function createProfileService(deps: {
  users: UsersRepository;
  tickets: TicketsRepository;
  auth: AuthService;
  hasher: PasswordHasher;
}): ProfileService {
  const { users, tickets, auth, hasher } = deps;

  const checkPassword = async (user: User, password: string): Promise<void> => {
    const hash = await users.passwordHash(user.id);
    const valid = hash !== null && (await hasher.verify(hash, password));
    if (!valid) throw new AppError('WRONG_PASSWORD', 'The current password is wrong');
  };

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

    async rename(user, newUsername, password) {
      await checkPassword(user, password);
      try {
        await users.rename(user.id, newUsername);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new AppError('USERNAME_TAKEN', 'That username is taken');
        }
        throw error;
      }
      return { ...user, username: newUsername };
    },

    async changePassword(user, oldPassword, newPassword) {
      await checkPassword(user, oldPassword);
      const tokenVersion = await users.setPassword(user.id, await hasher.hash(newPassword));
      return auth.tokenResponse({ ...user, tokenVersion });
    },
  };
}
