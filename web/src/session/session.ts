/**
 * The session: the bearer token and who it belongs to, kept in localStorage so that a reload or a
 * second tab stays signed in (docs/web.md explains the choice over cookies). Also the sign-in
 * callback of OpenID Connect, which hands the token over in the URL fragment.
 */
export type RoleName = 'admin' | 'support' | 'user' | 'banned';

export interface Session {
  readonly token: string;
  readonly username: string;
  readonly role: RoleName;
}

export const STORAGE_KEY = 'game-panel.session';

const ROLES: readonly string[] = ['admin', 'support', 'user', 'banned'];

function isRole(value: unknown): value is RoleName {
  return typeof value === 'string' && ROLES.includes(value);
}

/** A session from its stored form; `null` for anything that is not one (never throws). */
export function parseSession(stored: string | null): Session | null {
  if (stored === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { token, username, role } = value as Record<string, unknown>;
  if (typeof token !== 'string' || token === '' || typeof username !== 'string' || !isRole(role)) {
    return null;
  }
  return { token, username, role };
}

export type Callback =
  | { readonly kind: 'signed-in'; readonly session: Session }
  | { readonly kind: 'failed'; readonly message: string };

/** What each `#error=` of the OpenID Connect callback means to the person (docs/api.md). */
const CALLBACK_ERRORS: Readonly<Record<string, string>> = {
  invalid_state: 'That sign-in expired or was already used; start it again',
  access_denied: 'The provider did not let you sign in',
  login_failed: 'Signing in with the provider failed; try again',
  registration_closed:
    'Registration is closed on this panel, and no account is linked to that sign-in',
};

/**
 * The outcome a URL fragment carries from the OpenID Connect callback
 * (`#access_token=…&token_type=bearer&username=…&role=…` or `#error=…`), or `null` when the
 * fragment is not a callback.
 */
export function parseCallbackFragment(hash: string): Callback | null {
  const params = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const error = params.get('error');
  if (error !== null) {
    return { kind: 'failed', message: CALLBACK_ERRORS[error] ?? `Sign-in failed (${error})` };
  }
  const token = params.get('access_token');
  if (token === null) return null;
  const username = params.get('username');
  const role = params.get('role');
  if (token === '' || username === null || username === '' || !isRole(role)) {
    return { kind: 'failed', message: 'The sign-in answer was incomplete; try again' };
  }
  return { kind: 'signed-in', session: { token, username, role } };
}

interface Place {
  readonly location: Pick<Location, 'hash' | 'pathname' | 'search'>;
  readonly history: Pick<History, 'replaceState' | 'state'>;
}

/**
 * Reads a callback fragment and removes it from the address bar and from history at once
 * (`replaceState`: the entry holding the token is replaced, not kept behind a new one), before
 * anything else runs. Fragments that are not a callback are left alone.
 */
export function takeCallbackFragment(place: Place): Callback | null {
  const callback = parseCallbackFragment(place.location.hash);
  if (callback !== null) {
    const { pathname, search } = place.location;
    place.history.replaceState(place.history.state, '', `${pathname}${search}`);
  }
  return callback;
}
