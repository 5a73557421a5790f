/**
 * The people of a server (Pterodactyl's subusers): who has it in their list, and with which
 * permissions. Admins manage everyone's; a user holding the server's `users` permission invites
 * others and sets their permissions, never beyond their own: they may grant only permissions
 * they hold, and change or remove only people whose permissions are all within their own.
 */
import { NoLongerExists } from '../../domain/conflicts.js';
import { SERVER_PERMISSIONS, type ServerPermission } from '../../domain/policy.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { ServersService } from '../servers/servers.service.js';
import type { UsersRepository } from '../users/users.repository.js';

export interface ServerPerson {
  readonly username: string;
  readonly role: string;
  readonly permissions: readonly ServerPermission[];
}

export class ServerUsersService {
  constructor(
    private readonly deps: {
      readonly servers: Pick<ServersService, 'require' | 'requireHeld'>;
      readonly users: Pick<
        UsersRepository,
        'findByUsername' | 'holdersOf' | 'grant' | 'revoke' | 'permissionsOn'
      >;
      readonly events: PanelEvents;
    },
  ) {}

  async list(caller: User, server: string): Promise<ServerPerson[]> {
    await this.deps.servers.require(caller, server, 'server.users');
    return (await this.deps.users.holdersOf(server)).map(({ user, permissions }) => ({
      username: user.username,
      role: user.role,
      permissions,
    }));
  }

  /** Puts the server in `username`'s list with exactly `permissions`, or changes them. */
  async set(
    caller: User,
    server: string,
    username: string,
    permissions: readonly ServerPermission[],
  ): Promise<ServerPerson> {
    const own = await this.#own(caller, server);
    const target = await this.#target(username);
    const beyond = permissions.find((permission) => !own.has(permission));
    if (beyond !== undefined) {
      throw new AppError('FORBIDDEN', `You cannot grant ${beyond}: you do not hold it yourself`);
    }
    await this.#refuseBeyond(own, target, server);
    const kept = SERVER_PERMISSIONS.filter((permission) => permissions.includes(permission));
    await this.deps.users.grant(target.id, server, kept).catch((error: unknown) => {
      if (error instanceof NoLongerExists) throw notFound('Server');
      throw error;
    });
    this.deps.events.emit('access-changed', target.id);
    return { username: target.username, role: target.role, permissions: kept };
  }

  /** Takes the server out of `username`'s list. */
  async remove(caller: User, server: string, username: string): Promise<void> {
    const own = await this.#own(caller, server);
    const target = await this.#target(username);
    await this.#refuseBeyond(own, target, server);
    if (!(await this.deps.users.revoke(target.id, server))) {
      throw new AppError('NOT_FOUND', `${target.username} does not have this server`);
    }
    this.deps.events.emit('access-changed', target.id);
  }

  async #target(username: string): Promise<User> {
    const target = await this.deps.users.findByUsername(username);
    if (!target) throw notFound('User');
    if (target.role === 'admin') {
      throw new AppError('CONFLICT', 'Admins hold every permission on every server');
    }
    return target;
  }

  /**
   * The caller's own permissions on the server (every one for an admin, narrowed by an API key),
   * once the policy let them manage its people: 404/403 otherwise.
   */
  async #own(caller: User, server: string): Promise<ReadonlySet<ServerPermission>> {
    const { permissions } = await this.deps.servers.requireHeld(caller, server, 'server.users');
    return new Set(permissions);
  }

  /** 403 when the target holds a permission the caller does not. */
  async #refuseBeyond(
    own: ReadonlySet<ServerPermission>,
    target: User,
    server: string,
  ): Promise<void> {
    const theirs = await this.deps.users.permissionsOn(target.id, server);
    const beyond = [...(theirs ?? [])].find((permission) => !own.has(permission));
    if (beyond !== undefined) {
      throw new AppError(
        'FORBIDDEN',
        `${target.username} holds ${beyond}, which you do not: only an admin may change their access`,
      );
    }
  }
}
