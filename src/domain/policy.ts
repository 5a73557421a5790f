/**
 * Who may do what: the panel's only access rules (DECISIONS.md §3). Routes declare the action
 * they perform (`config.access`), services ask about the server at hand; both come here.
 *
 * | role      | may                                                                           |
 * | --------- | ----------------------------------------------------------------------------- |
 * | admin     | everything                                                                    |
 * | support   | list users, read anyone's statistics, see and answer every ticket; servers in |
 * |           | their own list                                                                |
 * | user      | their own servers, profile and tickets                                        |
 * | banned    | nothing but seeing their own account (`GET /api/auth/me`, decided by the route) |
 */
import type { Role, User } from './user.js';

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
  /** See and operate a server: lifecycle, console, files, stats, its harmless settings. */
  | 'server.use'
  /** Change what a server runs on the host and with how much: commands, limits, runtime, image. */
  | 'server.configure-host'
  /** See, answer and move on every ticket. */
  | 'tickets.manage'
  /** Import and delete server templates, and see every variable of a template. */
  | 'templates.manage';

/** What a server-scoped decision needs to know of the server: whether it is in the user's list. */
export interface ServerGrant {
  readonly assigned: boolean;
}

const isStaff = (role: Role): boolean => role === 'admin' || role === 'support';

/** Whether `user` may perform `action` (on `server`, for the server-scoped actions). */
export function can(user: Pick<User, 'role'>, action: Action, server?: ServerGrant): boolean {
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
      return user.role === 'admin';
    case 'server.use':
      return user.role === 'admin' || (server?.assigned ?? false);
    default:
      return unreachable(action);
  }
}

function unreachable(action: never): never {
  throw new Error(`unknown action ${String(action)}`);
}
