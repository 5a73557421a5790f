/**
 * The people of a server (Pterodactyl's subusers): who has it in their list, and with which
 * permissions. Admins manage everyone's; a user holding the server's `users` permission invites
 * others and sets their permissions, never beyond their own: they may grant only permissions
 * they hold, and change or remove only people whose permissions are all within their own.
 *
 * The server's owner (docs/api.md, "A server's owner") holds every permission: no sub-user may
 * change or remove them, and an admin changes who it is with `setOwner`. An invite names an
 * account by its username and answers the same whether that account exists, is an admin or is
 * an ordinary user, so that `users` tells nobody which accounts exist or who the admins are.
 */
import { NoLongerExists } from '../../domain/conflicts.js';
import { SERVER_PERMISSIONS, type ServerPermission } from '../../domain/policy.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { ServersService } from '../servers/servers.service.js';

/** Whose list holds which server (the users domain keeps them): what this module asks of it. */
export interface ServerPeople {
  findByUsername(username: string): Promise<User | undefined>;
  /** Everyone with the server in their list: their permissions, and whether they own it. */
  holdersOf(
    server: string,
  ): Promise<{ user: User; permissions: readonly ServerPermission[]; owner: boolean }[]>;
  /** The permissions of the user's list on the server (null: not in it), and whether they own it. */
  accessOn(
    userId: number,
    server: string,
  ): Promise<{ permissions: ReadonlySet<ServerPermission> | null; owner: boolean }>;
  /**
   * Puts the server in the user's list with exactly these permissions. Throws `NoLongerExists`
   * when the server or the user is gone.
   */
  grant(userId: number, server: string, permissions: readonly ServerPermission[]): Promise<void>;
  /** Takes the server out of the user's list (and its ownership); false when it was not there. */
  revoke(userId: number, server: string): Promise<boolean>;
  /**
   * Makes the user the server's owner; undefined when the server is gone. Throws
   * `NoLongerExists` when the user was deleted meanwhile.
   */
  setOwner(server: string, userId: number | null): Promise<{ previous: number | null } | undefined>;
}

export interface ServerPerson {
  readonly username: string;
  readonly role: string;
  readonly permissions: readonly ServerPermission[];
  /** Whether they own the server. */
  readonly owner: boolean;
}

/** The answer to an invite, the same shape whoever the name turned out to be. */
export interface Invited {
  readonly username: string;
  readonly permissions: readonly ServerPermission[];
  readonly owner: boolean;
}

/** What a ServerUsersService is made from. */
export interface ServerUsersServiceDeps {
  readonly servers: Pick<ServersService, 'require' | 'requireHeld' | 'ownerNamed'>;
  readonly users: ServerPeople;
  readonly events: PanelEvents;
}

export class ServerUsersService {
  readonly #deps: ServerUsersServiceDeps;

  constructor(deps: ServerUsersServiceDeps) {
    this.#deps = deps;
  }

  async list(caller: User, server: string): Promise<ServerPerson[]> {
    await this.#deps.servers.require(caller, server, 'server.users');
    return (await this.#deps.users.holdersOf(server)).map(({ user, permissions, owner }) => ({
      username: user.username,
      role: user.role,
      permissions: owner ? SERVER_PERMISSIONS : permissions,
      owner,
    }));
  }

  /**
   * Puts the server in `username`'s list with exactly `permissions`, or changes them. A name
   * that is no account, or an admin's (who holds everything already), is answered as if the
   * invite was made, and nothing changes: the People list shows only real grants.
   */
  async set(
    caller: User,
    server: string,
    username: string,
    permissions: readonly ServerPermission[],
  ): Promise<Invited> {
    const own = await this.#own(caller, server);
    const beyond = permissions.find((permission) => !own.has(permission));
    if (beyond !== undefined) {
      throw new AppError('FORBIDDEN', `You cannot grant ${beyond}: you do not hold it yourself`);
    }
    const kept = SERVER_PERMISSIONS.filter((permission) => permissions.includes(permission));
    const target = await this.#deps.users.findByUsername(username);
    if (!target || target.role === 'admin') {
      return { username, permissions: kept, owner: false };
    }
    const access = await this.#deps.users.accessOn(target.id, server);
    if (access.owner) {
      throw ownerUntouchable(caller, target, 'change the permissions of');
    }
    this.#refuseBeyond(own, target, access.permissions);
    await this.#deps.users.grant(target.id, server, kept).catch((error: unknown) => {
      if (error instanceof NoLongerExists) throw notFound('Server');
      throw error;
    });
    this.#deps.events.emit('access-changed', target.id);
    return { username, permissions: kept, owner: false };
  }

  /**
   * Takes the server out of `username`'s list. A name that is not on the server (no account, an
   * admin, or someone without it) is one 404. Only an admin removes the owner; the server is
   * then without one.
   */
  async remove(caller: User, server: string, username: string): Promise<void> {
    const own = await this.#own(caller, server);
    const target = await this.#deps.users.findByUsername(username);
    const access = target && (await this.#deps.users.accessOn(target.id, server));
    if (!target || !access || (access.permissions === null && !access.owner)) {
      throw new AppError('NOT_FOUND', `${username} does not have this server`);
    }
    if (access.owner && caller.role !== 'admin') {
      throw ownerUntouchable(caller, target, 'remove');
    }
    this.#refuseBeyond(own, target, access.permissions);
    if (!(await this.#deps.users.revoke(target.id, server))) {
      throw new AppError('NOT_FOUND', `${username} does not have this server`);
    }
    this.#deps.events.emit('access-changed', target.id);
  }

  /**
   * Names the server's owner (null: none), for an admin (the route checks it). The new owner
   * gets the server with every permission; the previous owner loses it.
   */
  async setOwner(
    caller: User,
    server: string,
    username: string | null,
  ): Promise<{ owner: string | null }> {
    await this.#deps.servers.require(caller, server, 'server.configure-host');
    const user =
      username === null ? null : await this.#deps.servers.ownerNamed(username, 'body/owner');
    let changed: { previous: number | null } | undefined;
    try {
      changed = await this.#deps.users.setOwner(server, user?.id ?? null);
    } catch (error) {
      if (error instanceof NoLongerExists) throw notFound('User');
      throw error;
    }
    if (changed === undefined) throw notFound('Server');
    if (changed.previous !== null) this.#deps.events.emit('access-changed', changed.previous);
    if (user) this.#deps.events.emit('access-changed', user.id);
    return { owner: user?.username ?? null };
  }

  /**
   * The caller's own permissions on the server (every one for an admin, narrowed by an API key),
   * once the policy let them manage its people: 404/403 otherwise.
   */
  async #own(caller: User, server: string): Promise<ReadonlySet<ServerPermission>> {
    const { permissions } = await this.#deps.servers.requireHeld(caller, server, 'server.users');
    return new Set(permissions);
  }

  /** 403 when the target holds a permission the caller does not. */
  #refuseBeyond(
    own: ReadonlySet<ServerPermission>,
    target: User,
    theirs: ReadonlySet<ServerPermission> | null,
  ): void {
    const beyond = [...(theirs ?? [])].find((permission) => !own.has(permission));
    if (beyond !== undefined) {
      throw new AppError(
        'FORBIDDEN',
        `${target.username} holds ${beyond}, which you do not: only an admin may change their access`,
      );
    }
  }
}

/** The owner's access is changed by an admin naming another owner, never through People. */
function ownerUntouchable(caller: User, target: User, what: string): AppError {
  return caller.role === 'admin'
    ? new AppError(
        'CONFLICT',
        `${target.username} owns this server and holds every permission: name another owner first`,
      )
    : new AppError(
        'OWNER_PROTECTED',
        `${target.username} owns this server: only an admin may ${what} its owner`,
      );
}
