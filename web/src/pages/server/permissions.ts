import type { RequestBody } from '../../api/types';

/** One thing a person may do on a server (docs/api.md, "Per-server permissions"). */
export type Permission = RequestBody<
  '/api/servers/{server}/users/{username}',
  'put'
>['permissions'][number];

const DESCRIPTIONS = {
  'console.read': 'Read the console',
  'console.write': 'Type commands into the console',
  power: 'Start, stop, restart and kill',
  'files.read': 'List, read and download files',
  'files.write': 'Create, upload, edit, move and delete files',
  settings: "Change the server's settings and variables, run its install",
  'backups.create': 'Make backups and change their settings',
  'backups.download': 'Download backups (with reading files)',
  'backups.restore': 'Restore backups (with changing files)',
  'backups.delete': 'Delete, lock and unlock backups',
  schedules: 'See and manage schedules',
  users: 'Invite people, never beyond their own permissions',
} as const satisfies Record<Permission, string>;

/** Every permission, in the API's order. */
export const PERMISSIONS = Object.keys(DESCRIPTIONS) as readonly Permission[];

/** Any one of these shows the Backups tab (docs/api.md, "Per-server permissions"). */
export const BACKUP_PERMISSIONS: readonly Permission[] = [
  'backups.create',
  'backups.download',
  'backups.restore',
  'backups.delete',
];

/** What a permission lets one do, in words. */
export const describePermission = (permission: Permission): string => DESCRIPTIONS[permission];

/**
 * The permissions as the page knows them: `null` until the configuration (or the server list)
 * says, then the caller's own (an admin's are all of them).
 */
export type Held = ReadonlySet<Permission> | null;

export const heldFrom = (permissions: readonly Permission[] | undefined): Held =>
  permissions === undefined ? null : new Set(permissions);

/**
 * Whether the caller may change (or remove) someone holding `theirs`: only when every one of
 * theirs is held by the caller too, as the API decides.
 */
export const mayManage = (held: ReadonlySet<Permission>, theirs: readonly Permission[]): boolean =>
  theirs.every((permission) => held.has(permission));

/** The permissions in `wanted` the caller cannot grant, in the API's order. */
export const beyond = (
  held: ReadonlySet<Permission>,
  wanted: ReadonlySet<Permission>,
): Permission[] =>
  PERMISSIONS.filter((permission) => wanted.has(permission) && !held.has(permission));

/** Whether two sets name the same permissions. */
export const samePermissions = (
  one: ReadonlySet<Permission>,
  other: ReadonlySet<Permission>,
): boolean => one.size === other.size && [...one].every((permission) => other.has(permission));
