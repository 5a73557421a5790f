/**
 * User administration: listing, roles, server access and deletion. The caller's right to do each
 * is checked by the route's access policy; the rules that span users (an admin must remain,
 * server names must exist) are kept here.
 */
import { NoLongerExists } from '../../domain/conflicts.js';
import type { Role } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { User } from '../../domain/user.js';
import type { UserWithServers, UsersRepository } from './users.repository.js';

/** Which of some server names exist (the servers domain keeps them). */
export interface ServerDirectory {
  existing(names: readonly string[]): Promise<string[]>;
}

export interface UsersService {
  list(): Promise<UserWithServers[]>;
  setRole(username: string, role: Role): Promise<UserWithServers>;
  setServers(username: string, servers: readonly string[]): Promise<UserWithServers>;
  /** Deletes the user; answers the name they had. */
  remove(username: string): Promise<string>;
}

export function createUsersService(deps: {
  users: UsersRepository;
  servers: ServerDirectory;
  /** Told whenever a user's rights change, so open consoles are re-checked. */
  events: PanelEvents;
  now: () => Date;
}): UsersService {
  const { users, servers, events, now } = deps;

  /** Inside a transaction, pass its repository: the outer one would wait for the connection. */
  const find = async (username: string, repo: UsersRepository = users): Promise<User> => {
    const user = await repo.findByUsername(username);
    if (!user) throw notFound('User');
    return user;
  };
  const withServers = async (user: User, repo: UsersRepository): Promise<UserWithServers> => ({
    ...user,
    servers: await repo.serverNames(user.id),
    signIn: (await repo.signInOf([user])).get(user.id) ?? {
      hasPassword: user.hasPassword,
      providers: [],
    },
  });
  const refuseLastAdmin = async (user: User, locked: UsersRepository): Promise<void> => {
    if (user.role === 'admin' && (await locked.countAdmins()) <= 1) {
      throw new AppError('LAST_ADMIN', 'The last admin cannot be demoted or deleted');
    }
  };

  return {
    list: () => users.list(),

    async setRole(username, role) {
      return users
        .transaction(async (locked) => {
          const user = await find(username, locked);
          if (role !== 'admin') await refuseLastAdmin(user, locked);
          await locked.setRole(user.id, role);
          return withServers({ ...user, role }, locked);
        })
        .then((changed) => {
          events.emit('access-changed', changed.id);
          return changed;
        });
    },

    async setServers(username, requested) {
      const names = [...new Set(requested)].sort();
      await find(username); // 404 before 400, for an unknown user
      const known = new Set(await servers.existing(names));
      const unknown = names.filter((name) => !known.has(name));
      if (unknown.length > 0) {
        throw new AppError('UNKNOWN_SERVER', `No such server: ${unknown.join(', ')}`, {
          details: unknown.map((name) => ({ path: '/servers', message: `no server "${name}"` })),
        });
      }
      let user: User;
      try {
        // Under the users lock, so a deletion cannot slip in between the lookup and the write.
        user = await users.transaction(async (locked) => {
          const target = await find(username, locked);
          await locked.replaceServers(target.id, names);
          return target;
        });
      } catch (error) {
        // A server deleted between the check above and the insert.
        if (error instanceof NoLongerExists) {
          throw new AppError('UNKNOWN_SERVER', 'One of those servers no longer exists');
        }
        throw error;
      }
      events.emit('access-changed', user.id);
      return withServers(user, users);
    },

    async remove(username) {
      const user = await users.transaction(async (locked) => {
        const target = await find(username, locked);
        await refuseLastAdmin(target, locked);
        await locked.markDeleted(target.id, now());
        return target;
      });
      events.emit('access-changed', user.id);
      return user.username;
    },
  };
}
