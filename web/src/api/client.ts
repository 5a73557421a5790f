/**
 * The typed API client: every path, body and answer comes from `schema.d.ts`, generated from the
 * panel's OpenAPI document (`npm run gen:api`), so the UI never builds an API URL by hand.
 *
 * The bearer token of the current session goes on every request. A 401 on a request that carried
 * one means the session is over (expired, revoked by a password change, account deleted): the
 * session ends and the app returns to sign-in. A 403 `BANNED` or `TWO_FACTOR_REQUIRED` tells the
 * app to look at the account again, which then shows the banned page or the enrolment.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { SessionStore } from '../session/store';
import { apiErrorFrom } from './errors';
import type { paths } from './schema';

export type Api = ReturnType<typeof createApi>;

export interface ApiEvents {
  /**
   * The account turned out banned, or required to set up two-factor sign-in first: look at it
   * again (the shell then shows the banned page, or the enrolment).
   */
  readonly onBanned: () => void;
}

export interface ApiOptions {
  /** Where the API is: the page's own origin (`''`) unless a test says otherwise. */
  readonly baseUrl?: string;
  readonly fetch?: typeof fetch;
}

export function createApi(sessions: SessionStore, events: ApiEvents, options: ApiOptions = {}) {
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? '',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const auth: Middleware = {
    onRequest({ request }) {
      const token = sessions.getSnapshot().session?.token;
      if (token !== undefined) request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
    async onResponse({ request, response }) {
      const sent = request.headers.get('Authorization');
      const current = sessions.getSnapshot().session?.token;
      // Only the current token's refusal ends the session: a request sent just before a
      // password change replaced the token is answered 401, and the new session stays.
      if (response.status === 401 && sent !== null && sent === `Bearer ${current ?? ''}`) {
        sessions.signOut('Your session has ended; sign in again');
      } else if (response.status === 403) {
        const body: unknown = await response
          .clone()
          .json()
          .catch(() => null);
        const { code } = apiErrorFrom(403, response.headers, body);
        if (code === 'BANNED' || code === 'TWO_FACTOR_REQUIRED') events.onBanned();
      }
      return response;
    },
  };
  client.use(auth);
  return client;
}

interface Answer {
  readonly data?: unknown;
  readonly error?: unknown;
  readonly response: Response;
}

/** The data of a successful answer; throws the API's error (an `ApiError`) otherwise. */
export async function unwrap<A extends Answer>(
  request: Promise<A>,
): Promise<Exclude<A['data'], undefined>> {
  const { data, error, response } = await request;
  if (error !== undefined || !response.ok || data === undefined) {
    throw apiErrorFrom(response.status, response.headers, error);
  }
  return data as Exclude<A['data'], undefined>;
}

/**
 * The `data` of a successful answer's envelope (`{ message, data }`, docs/api.md): what
 * `(await unwrap(request)).data` was written out for. Throws the API's error as `unwrap` does.
 */
export async function unwrapData<A extends Answer & { readonly data?: { readonly data: unknown } }>(
  request: Promise<A>,
): Promise<Exclude<A['data'], undefined>['data']> {
  return (await unwrap(request)).data;
}

/** Resolves when an answer without a body (204) succeeded; throws the API's error otherwise. */
export async function succeeded(request: Promise<Answer>): Promise<void> {
  const { error, response } = await request;
  if (!response.ok) throw apiErrorFrom(response.status, response.headers, error);
}
