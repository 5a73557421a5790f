/**
 * The one-time link an admin hands over (`<PUBLIC_URL>/set-password#token=<token>`, docs/api.md):
 * its token travels in the fragment, which a browser never sends to a server nor puts in a
 * `Referer`. The page reads it from there, sends it only in the body of the two set-password
 * requests, and removes it from the address bar and the history entry at once.
 */

/**
 * The token of a `#token=…` fragment, or `null` when there is none (or it is empty). The value is
 * percent-decoded but a `+` stays a `+` (`URLSearchParams` would make it a space, breaking a
 * token in standard base64); other parameters beside it are ignored.
 */
export function linkTokenFrom(hash: string): string | null {
  const fragment = hash.startsWith('#') ? hash.slice(1) : hash;
  for (const part of fragment.split('&')) {
    if (!part.startsWith('token=')) continue;
    let token: string;
    try {
      token = decodeURIComponent(part.slice('token='.length));
    } catch {
      // Broken percent-encoding: not a token the panel made.
      return null;
    }
    return token.trim() === '' ? null : token.trim();
  }
  return null;
}

interface Place {
  readonly location: Pick<Location, 'hash' | 'pathname' | 'search'>;
  readonly history: Pick<History, 'replaceState' | 'state'>;
}

/**
 * Removes the fragment from the address bar by replacing the current history entry (not adding
 * one), so the token is neither shown nor left in Back/Forward. The entry's state is kept: the
 * router keeps its own bookkeeping there. A place without a fragment is left alone.
 */
export function forgetFragment(place: Place): void {
  if (place.location.hash === '') return;
  const { pathname, search } = place.location;
  place.history.replaceState(place.history.state, '', `${pathname}${search}`);
}
