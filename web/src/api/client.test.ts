import { describe, expect, it, vi } from 'vitest';
import { STORAGE_KEY } from '../session/session';
import { createSessionStore } from '../session/store';
import { createApi, unwrap, unwrapData } from './client';
import { ApiError } from './errors';

const session = { token: 'tok.en.value', username: 'alex', role: 'user' } as const;

function setUp(answer: (request: Request) => Response) {
  const items = new Map([[STORAGE_KEY, JSON.stringify(session)]]);
  const sessions = createSessionStore({
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => items.set(key, value),
    removeItem: (key) => items.delete(key),
  });
  const requests: Request[] = [];
  const onBanned = vi.fn();
  const fetchImpl = (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    requests.push(request);
    return Promise.resolve(answer(request));
  };
  const api = createApi(sessions, { onBanned }, { baseUrl: 'http://panel.test', fetch: fetchImpl });
  return { api, sessions, requests, onBanned };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('the API client', () => {
  it('sends the bearer token and returns the data', async () => {
    const { api, requests } = setUp(() => json(200, { message: 'OK', data: [] }));
    expect(await unwrap(api.GET('/api/servers'))).toEqual({ message: 'OK', data: [] });
    expect(requests[0]?.headers.get('Authorization')).toBe('Bearer tok.en.value');
  });

  it("answers the envelope's data, and throws the API's error of a refusal", async () => {
    const { api } = setUp(() => json(200, { message: 'OK', data: [] }));
    expect(await unwrapData(api.GET('/api/servers'))).toEqual([]);
    const refused = setUp(() => json(403, { message: 'Not yours', code: 'FORBIDDEN' }));
    await expect(unwrapData(refused.api.GET('/api/servers'))).rejects.toThrow('Not yours');
  });

  it('ends the session on a 401 of a request that carried a token', async () => {
    const { api, sessions } = setUp(() =>
      json(401, { message: 'Invalid, expired or revoked token', code: 'UNAUTHORIZED' }),
    );
    await expect(unwrap(api.GET('/api/servers'))).rejects.toThrow(ApiError);
    expect(sessions.getSnapshot()).toEqual({
      session: null,
      notice: 'Your session has ended; sign in again',
    });
  });

  it('keeps a session whose token changed while a request with the old one was out', async () => {
    const fresh = { ...session, token: 'fresh.to.ken' };
    let replace: () => void = () => undefined;
    const { api, sessions } = setUp(() => {
      // The password change answered first: the session holds the new token by now.
      replace();
      return json(401, { message: 'Invalid, expired or revoked token', code: 'UNAUTHORIZED' });
    });
    replace = () => {
      sessions.signIn(fresh);
    };
    await expect(unwrap(api.GET('/api/servers'))).rejects.toThrow(ApiError);
    expect(sessions.getSnapshot()).toEqual({ session: fresh, notice: null });
  });

  it('keeps no session on a wrong password, and shows the API message', async () => {
    const { api, sessions } = setUp(() =>
      json(401, { message: 'Invalid username or password', code: 'INVALID_CREDENTIALS' }),
    );
    sessions.signOut();
    await expect(
      unwrap(api.POST('/api/auth/login', { body: { username: 'a', password: 'b' } })),
    ).rejects.toThrow('Invalid username or password');
    expect(sessions.getSnapshot().notice).toBeNull();
  });

  it('asks to look at the account again on 403 BANNED, not on other 403s', async () => {
    let code = 'FORBIDDEN';
    const { api, onBanned, sessions } = setUp(() => json(403, { message: 'no', code }));
    await expect(unwrap(api.GET('/api/servers'))).rejects.toThrow('no');
    expect(onBanned).not.toHaveBeenCalled();
    code = 'BANNED';
    await expect(unwrap(api.GET('/api/servers'))).rejects.toThrow('no');
    expect(onBanned).toHaveBeenCalledOnce();
    expect(sessions.getSnapshot().session).toEqual(session);
  });
});
