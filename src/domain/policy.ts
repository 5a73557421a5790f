/**
 * Who may do what: the panel's only access rules (docs/api.md, contract §3). Routes declare the
 * action they perform (`config.access`), services ask about the server at hand; both come here.
 *
 * | role      | may                                                                           |
 * | --------- | ----------------------------------------------------------------------------- |
 * | admin     | everything                                                                    |
 * | support   | list users, read anyone's statistics, see and answer every ticket; servers in |
 * |           | their own list                                                                |
 * | user      | their own servers, profile and tickets                                        |
 * | banned    | nothing but seeing their own account (`GET /api/auth/me`, decided by the route) |
 *
 * On a server in their list, a user or support member holds a set of permissions (Pterodactyl's
 * subusers): `server.view` needs any, `server.backups.view` any of the four `backups.*`, every
 * other server action the permission of its name. A server's owner holds every permission on it,
 * whatever their list says (docs/api.md, "A server's owner"). Admins hold every permission on
 * every server. Some actions need two permissions (docs/api.md, "Permissions"): the services ask
 * for each.
 */
import type { Role, User } from './user.js';

/** What a user may do on a server in their list, beside seeing it. */
export type ServerPermission =
  /** The console's history and live output. */
  | 'console.read'
  /** Typing into the console. */
  | 'console.write'
  /** Start, stop, restart, kill. */
  | 'power'
  /** List, read and download files. */
  | 'files.read'
  /** Create, upload, edit, rename, move, delete, compress and extract files. */
  | 'files.write'
  /** The server's own settings: name, automatic restart, variables, install. */
  | 'settings'
  /** Make backups; change the backup settings (retention also needs `backups.delete`). */
  | 'backups.create'
  /** Download backups (with `files.read`: a backup holds every file). */
  | 'backups.download'
  /** Restore backups (with `files.write`: a restore replaces every file). */
  | 'backups.restore'
  /** Delete, lock and unlock backups. */
  | 'backups.delete'
  /** See and manage schedules. */
  | 'schedules'
  /** See who has the server, invite others and set their permissions (never beyond one's own). */
  | 'users';

export const SERVER_PERMISSIONS: readonly ServerPermission[] = [
  'console.read',
  'console.write',
  'power',
  'files.read',
  'files.write',
  'settings',
  'backups.create',
  'backups.download',
  'backups.restore',
  'backups.delete',
  'schedules',
  'users',
];

/** The permissions any of which lets one see a server's backups and their settings. */
export const BACKUP_PERMISSIONS: readonly ServerPermission[] = [
  'backups.create',
  'backups.download',
  'backups.restore',
  'backups.delete',
];

/**
 * An action on one server: seeing it, seeing its backups (`server.backups.view`: any backups
 * permission), or what one permission allows.
 */
export type ServerAction = 'server.view' | 'server.backups.view' | `server.${ServerPermission}`;

/** The permissions any one of which allows a server action beside seeing the server. */
function permissionsFor(action: Exclude<ServerAction, 'server.view'>): readonly ServerPermission[] {
  if (action === 'server.backups.view') return BACKUP_PERMISSIONS;
  const permission = action.slice('server.'.length) as ServerPermission;
  if (!SERVER_PERMISSIONS.includes(permission)) return unreachable(action as never);
  return [permission];
}

/** Every action about one server: the `server` of its `ServerGrant` names it. */
export type ServerScopedAction = ServerAction | 'server.configure-host';

export type Action =
  /** Use the panel at all: one's own profile and tickets. */
  | 'account.use'
  /** List every account. */
  | 'users.list'
  /** Change anyone's role or servers, delete accounts. */
  | 'users.manage'
  /** Read anyone's statistics. */
  | 'users.read-stats'
  /** See every server, not only one's own. */
  | 'servers.list-all'
  | 'servers.create'
  | 'servers.delete'
  /** See a server (its configuration and statistics), or do what one permission allows. */
  | ServerAction
  /** Change what a server runs on the host and with how much: commands, limits, runtime, image. */
  | 'server.configure-host'
  /** See, answer and move on every ticket. */
  | 'tickets.manage'
  /** Import and delete server templates, and see every variable of a template. */
  | 'templates.manage'
  /** Read the whole audit log. */
  | 'audit.read'
  /** Register, change and delete webhooks, and see their deliveries. */
  | 'webhooks.manage'
  /** Add, change and remove nodes, see how they are, and move servers between them. */
  | 'nodes.manage'
  /**
   * See and change the panel's settings: default limits, backup defaults, registration, container
   * registries.
   */
  | 'panel.settings';

/**
 * What a server-scoped decision needs to know of the server: the permissions the user holds on it
 * (null: it is not in their list).
 */
export interface ServerGrant {
  readonly permissions: ReadonlySet<ServerPermission> | null;
  /** Whether the user is the server's owner: they hold every permission on it. */
  readonly owner?: boolean;
  /** The server's name: a request with an API key reaches only the servers of its key. */
  readonly server?: string;
}

const isStaff = (role: Role): boolean => role === 'admin' || role === 'support';

/**
 * Whether `user` may perform `action` (on `server`, for the server-scoped actions). A request
 * made with an API key may do what its owner may, narrowed by the key (src/domain/api-key.ts): a
 * key with a server list (even an empty one) or a permission list does nothing outside servers but
 * read its owner's own account, and a key with a server list does nothing on a server not named
 * in `server` (an action about a server asked without naming it is refused). docs/security.md.
 */
export function can(
  user: Pick<User, 'role' | 'key'>,
  action: Action,
  server?: ServerGrant,
): boolean {
  if (!byRole(user, action, server)) return false;
  const key = user.key;
  if (key === undefined || action === 'account.use') return true;
  if (!action.startsWith('server.')) {
    // Outside servers, a narrowed key (to some servers, even none, or to some permissions) only
    // reads its owner's own account: no staff or admin action, whatever its owner's role.
    return key.servers === null && key.permissions === null;
  }
  // Every action on one server, configuring its host included, only on the key's servers.
  if (key.servers !== null && (server?.server === undefined || !key.servers.has(server.server))) {
    return false;
  }
  if (action === 'server.view' || key.permissions === null) return true;
  // A key limited to permissions carries no admin right on a server either.
  if (action === 'server.configure-host') return false;
  const carried = key.permissions;
  return permissionsFor(action as Exclude<ServerAction, 'server.view'>).some((p) => carried.has(p));
}

function byRole(user: Pick<User, 'role'>, action: Action, server?: ServerGrant): boolean {
  if (user.role === 'banned') return false;
  switch (action) {
    case 'account.use':
      return true;
    case 'users.list':
    case 'users.read-stats':
    case 'tickets.manage':
      return isStaff(user.role);
    case 'users.manage':
    case 'servers.list-all':
    case 'servers.create':
    case 'servers.delete':
    case 'server.configure-host':
    case 'templates.manage':
    case 'audit.read':
    case 'webhooks.manage':
    case 'nodes.manage':
    case 'panel.settings':
      return user.role === 'admin';
    default: {
      if (user.role === 'admin' || server?.owner === true) return true;
      const held = server?.permissions;
      if (held == null) return false;
      if (action === 'server.view') return true;
      return permissionsFor(action).some((permission) => held.has(permission));
    }
  }
}

function unreachable(action: never): never {
  throw new Error(`unknown action ${String(action)}`);
}
