/**
 * The API keys section's own logic, without React: the create form's body from what was chosen,
 * and a key's scope in words.
 */
import type { NewApiKey } from '../../hooks/useApiKeys';
import type { Permission } from '../server/permissions';

/** What the create form holds: `null` scope means "all" (the key follows the account). */
export interface ApiKeyForm {
  readonly name: string;
  /** A day (`YYYY-MM-DD` of a date input), or '' for a key that never expires. */
  readonly expires: string;
  readonly servers: ReadonlySet<string> | null;
  readonly permissions: ReadonlySet<Permission> | null;
}

/**
 * The last moment of `day` in the browser's time zone, as the API's ISO date-time: a key "until
 * 31 December" works all of that day. `null` for no day, or one that is not a date.
 */
export function expiryOf(day: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const end = new Date(`${day}T23:59:59.999`);
  return Number.isNaN(end.getTime()) ? null : end.toISOString();
}

/** The API's body for the form: "all" scopes are left out, as the API's default. */
export function newKeyBody(form: ApiKeyForm, order: readonly Permission[]): NewApiKey {
  const expiresAt = expiryOf(form.expires);
  return {
    name: form.name.trim(),
    ...(expiresAt === null ? {} : { expiresAt }),
    ...(form.servers === null ? {} : { servers: [...form.servers].sort() }),
    ...(form.permissions === null
      ? {}
      : { permissions: order.filter((permission) => form.permissions?.has(permission)) }),
  };
}

/** "All your servers", or the servers named. */
export const describeServers = (servers: readonly string[] | null): string =>
  servers === null ? 'All your servers' : servers.length === 0 ? 'None' : servers.join(', ');

/** "All your permissions", or the permissions named. */
export const describePermissions = (permissions: readonly string[] | null): string =>
  permissions === null
    ? 'All your permissions'
    : permissions.length === 0
      ? 'None'
      : permissions.join(', ');
