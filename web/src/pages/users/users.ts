/** The Users page's logic, apart from React: filtering, the server selection, summaries. */
import type { Role } from '../../hooks/useUsers';

/** The roles in the order the select offers them, most trusted first. */
export const ROLES: readonly Role[] = ['admin', 'support', 'user', 'banned'];

/**
 * The users whose name, role or one of whose servers contains every word of the query, letter
 * case aside. An empty query keeps everyone.
 */
export function filterUsers<U extends { username: string; role: Role; servers: readonly string[] }>(
  users: readonly U[],
  query: string,
): U[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...users];
  return users.filter((user) => {
    const haystack = [user.username, user.role, ...user.servers].map((text) => text.toLowerCase());
    return words.every((word) => haystack.some((text) => text.includes(word)));
  });
}

/** The selection with `name` ticked or not: no duplicates, sorted like the API answers it. */
export function withServer(selected: readonly string[], name: string, ticked: boolean): string[] {
  const rest = selected.filter((server) => server !== name);
  return (ticked ? [...rest, name] : rest).sort((a, b) => a.localeCompare(b));
}

/** Whether two selections hold the same servers, in any order. */
export function sameServers(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((server) => set.has(server));
}

/** What a user's row says about their servers. Admins reach every server whatever is assigned. */
export function serversSummary(user: { role: Role; servers: readonly string[] }): string {
  if (user.role === 'admin') return 'Every server (admin)';
  if (user.servers.length === 0) return 'No servers';
  return user.servers.join(', ');
}

/**
 * How an account signs in, in a few words: its ways in ("Password", a provider's name, or "No
 * password yet" for an account whose link is not used), then "+ two-factor" when that is on.
 */
export function signInSummary(user: {
  signIn: { hasPassword: boolean; providers: readonly string[] };
  twoFactor: boolean;
}): string {
  const ways = [...(user.signIn.hasPassword ? ['Password'] : []), ...user.signIn.providers];
  const summary = ways.length === 0 ? 'No password yet' : ways.join(', ');
  return user.twoFactor ? `${summary} + two-factor` : summary;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A date of the API (ISO 8601) in the reader's own way; "Never" for `null`. */
export function formatWhen(iso: string | null, format: Intl.DateTimeFormat = dateFormat): string {
  if (iso === null) return 'Never';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : format.format(date);
}
