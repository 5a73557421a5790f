/**
 * Sign-in through OpenID Connect against a real provider (the `oidc-provider` package) running on
 * loopback, driven over HTTP the way a browser would: the panel's login redirect, the provider's
 * login and consent forms, the callback, and a token that works on the panel.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  bearer,
  json,
  login,
  register,
  setRole,
  type Session,
} from './helpers/factories.js';

const PUBLIC_URL = 'http://panel.test';
const CLIENT_ID = 'game-panel';
const CLIENT_SECRET = 'client-secret-that-must-never-leak';

interface Account {
  readonly preferred_username?: string;
  readonly email?: string;
}

type Tamper = (claims: Record<string, unknown>) => Record<string, unknown>;

interface TestProvider {
  readonly issuer: string;
  /** Changes the next ID tokens the provider hands out, re-signed with its own key. */
  tamper: Tamper | null;
  close(): Promise<void>;
}

async function startProvider(accounts: Record<string, Account>): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${PUBLIC_URL}/api/auth/oidc/test/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['provider-cookie-key'] },
    claims: { openid: ['sub'], profile: ['preferred_username'], email: ['email'] },
    findAccount: (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...account }) };
    },
  });
  const state: TestProvider = {
    issuer,
    tamper: null,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === '/token' && state.tamper && typeof body?.id_token === 'string') {
      const claims = state.tamper({ ...decodeJwt(body.id_token) });
      const id_token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
        .sign(privateKey);
      ctx.body = { ...body, id_token };
    }
  });
  const handle = provider.callback();
  server.on('request', (request, response) => {
    void handle(request, response);
  });
  return state;
}

/** A browser: a cookie jar, and requests to the panel (by inject) or the provider (by fetch). */
class Browser {
  readonly #cookies = new Map<string, Map<string, string>>();

  constructor(private readonly panel: TestPanel) {}

  /** Requests `url` and returns status, Location and body, keeping cookies like a browser. */
  async request(
    url: string,
    init: { method?: 'GET' | 'POST'; form?: Record<string, string> } = {},
  ): Promise<{ status: number; location: string | undefined; body: string; setCookie: string[] }> {
    const target = new URL(url);
    const cookie = [...(this.#cookies.get(target.host) ?? [])]
      .map(([name, value]) => `${name}=${value}`)
      .join('; ');
    let result: { status: number; location: string | undefined; body: string; setCookie: string[] };
    if (target.origin === PUBLIC_URL) {
      const response = await this.panel.app.inject({
        method: init.method ?? 'GET',
        url: target.pathname + target.search,
        headers: cookie ? { cookie } : {},
      });
      const raw = response.headers['set-cookie'];
      result = {
        status: response.statusCode,
        location: response.headers.location,
        body: response.body,
        setCookie: raw === undefined ? [] : Array.isArray(raw) ? raw : [raw],
      };
    } else {
      const response = await fetch(target, {
        method: init.method ?? 'GET',
        redirect: 'manual',
        headers: {
          ...(cookie ? { cookie } : {}),
          ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
      });
      result = {
        status: response.status,
        location: response.headers.get('location') ?? undefined,
        body: await response.text(),
        setCookie: response.headers.getSetCookie(),
      };
    }
    for (const header of result.setCookie) {
      const [pair] = header.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      if (!name) continue;
      const jar = this.#cookies.get(target.host) ?? new Map<string, string>();
      this.#cookies.set(target.host, jar);
      if (value.join('=') === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(header)) {
        jar.delete(name.trim());
      } else jar.set(name.trim(), value.join('='));
    }
    if (result.location) result.location = new URL(result.location, target).href;
    return result;
  }

  /** Follows redirects until a page or a redirect to the panel's callback or target. */
  async follow(url: string, stopAt: (url: string) => boolean) {
    let current = url;
    for (let hops = 0; hops < 20; hops++) {
      const response = await this.request(current);
      if (!response.location || stopAt(response.location)) return { url: current, response };
      current = response.location;
    }
    throw new Error('too many redirects');
  }

  /**
   * Signs in at the provider as `account` up to the provider's redirect back to the panel;
   * returns that callback URL without visiting it.
   */
  async signInAtProvider(authorizationUrl: string, account: string): Promise<string> {
    const isCallback = (url: string) => url.startsWith(`${PUBLIC_URL}/api/auth/oidc/`);
    let { url, response } = await this.follow(authorizationUrl, isCallback);
    for (const prompt of ['login', 'consent']) {
      if (response.location && isCallback(response.location)) break;
      assert.equal(response.status, 200, `the ${prompt} page`);
      const form: Record<string, string> =
        prompt === 'login' ? { prompt, login: account, password: 'any' } : { prompt };
      const submitted = await this.request(url, { method: 'POST', form });
      assert.ok(submitted.location, `the ${prompt} form redirects`);
      ({ url, response } = await this.follow(submitted.location, isCallback));
    }
    assert.ok(response.location && isCallback(response.location), 'back to the panel');
    return response.location;
  }

  cookie(host: string, name: string): string | undefined {
    return this.#cookies.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    const jar = this.#cookies.get(host) ?? new Map<string, string>();
    jar.set(name, value);
    this.#cookies.set(host, jar);
  }
}

/** The parameters in the fragment of a URL the panel redirected to. */
const fragment = (url: string): URLSearchParams => new URLSearchParams(new URL(url).hash.slice(1));

describe('OpenID Connect sign-in', () => {
  let provider: TestProvider;
  let panel: TestPanel;
  let admin: Session;
  const accounts: Record<string, Account> = {
    alex: { preferred_username: 'alex', email: 'alex@example.org' },
    'steve-sub': { preferred_username: 'Steve', email: 'steve@example.org' },
    outlaw: { preferred_username: 'outlaw' },
    'weird-sub': { preferred_username: 'ü', email: 'émile.zola@example.org' },
    anon: {},
  };

  const suite = suiteScope();
  before(async () => {
    provider = await startProvider(accounts);
    panel = await startPanel(suite, {
      PUBLIC_URL,
      OIDC_PROVIDERS: JSON.stringify([
        {
          id: 'test',
          name: 'Test IdP',
          issuer: provider.issuer,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
        },
      ]),
      OIDC_REDIRECT_ALLOWLIST: `${PUBLIC_URL},https://app.example.org`,
    });
    admin = await register(panel, 'admin');
  });
  after(async () => {
    await provider.close();
  });

  /** Runs the whole flow and returns where the panel finally sends the browser. */
  async function signIn(account: string, redirect?: string, browser = new Browser(panel)) {
    const query = redirect === undefined ? '' : `?redirect=${encodeURIComponent(redirect)}`;
    const start = await browser.request(`${PUBLIC_URL}/api/auth/oidc/test/login${query}`);
    assert.equal(start.status, 302, start.body);
    assert.ok(start.location?.startsWith(provider.issuer));
    const callback = await browser.signInAtProvider(start.location!, account);
    const finish = await browser.request(callback);
    assert.equal(finish.status, 302, finish.body);
    assert.ok(finish.location);
    return { browser, start: start.location, callback, target: finish.location };
  }

  it('lists the providers with their login address and no secret', async () => {
    const response = await panel.app.inject({ url: '/api/auth/oidc/providers' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(json(response).data, [
      { id: 'test', name: 'Test IdP', loginUrl: `${PUBLIC_URL}/api/auth/oidc/test/login` },
    ]);
    assert.ok(!response.body.includes(CLIENT_SECRET));
  });

  it('redirects to the provider with state, nonce and PKCE S256 in a short-lived HttpOnly cookie', async () => {
    const response = await panel.app.inject({ url: '/api/auth/oidc/test/login' });
    assert.equal(response.statusCode, 302);
    const location = new URL(String(response.headers.location));
    assert.equal(location.origin, provider.issuer);
    const params = location.searchParams;
    assert.equal(params.get('client_id'), CLIENT_ID);
    assert.equal(params.get('response_type'), 'code');
    assert.equal(params.get('redirect_uri'), `${PUBLIC_URL}/api/auth/oidc/test/callback`);
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.match(params.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.ok((params.get('state') ?? '').length >= 20);
    assert.ok((params.get('nonce') ?? '').length >= 20);
    assert.match(params.get('scope') ?? '', /\bopenid\b/);
    const cookie = String(response.headers['set-cookie']);
    assert.match(cookie, /^panel_oidc=[^;]+/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Max-Age=600/);
    assert.match(cookie, /Path=\/api\/auth\/oidc/);
    assert.ok(!cookie.includes(params.get('state') ?? '-'), 'the state is sealed in the cookie');
    assert.ok(!response.body.includes(CLIENT_SECRET));
  });

  it('signs a new person in as a user, with a token that works on the panel', async () => {
    const { target } = await signIn('alex', '/servers');
    assert.ok(target.startsWith(`${PUBLIC_URL}/servers#`), target);
    const params = fragment(target);
    assert.equal(params.get('token_type'), 'bearer');
    assert.equal(params.get('username'), 'alex');
    assert.equal(params.get('role'), 'user');
    const token = params.get('access_token') ?? '';
    const me = await panel.app.inject({ url: '/api/auth/me', headers: bearer(token) });
    assert.equal(me.statusCode, 200, me.body);
    assert.deepEqual(json(me), {
      username: 'alex',
      role: 'user',
      servers: [],
      signIn: { hasPassword: false, providers: ['test'] },
      twoFactor: { enabled: false, mustEnrol: false },
    });

    // The same person signing in again gets the same account.
    const again = fragment((await signIn('alex')).target);
    assert.equal(again.get('username'), 'alex');
    const users = await panel.db.kysely.selectFrom('users').select('username').execute();
    assert.equal(users.filter((user) => user.username.startsWith('alex')).length, 1);
  });

  it('lands on an allowlisted origin and by default on the panel itself', async () => {
    assert.ok((await signIn('alex')).target.startsWith(`${PUBLIC_URL}/#access_token=`));
    const elsewhere = await signIn('alex', 'https://app.example.org/welcome?x=1');
    assert.ok(elsewhere.target.startsWith('https://app.example.org/welcome?x=1#access_token='));
  });

  it('refuses every open-redirect spelling with 400 before leaving for the provider', async () => {
    for (const redirect of [
      'https://evil.example',
      'https://evil.example/path',
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      '/\\/evil.example',
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'java\tscript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'https://app.example.org.evil.example/',
      'http://panel.test@evil.example/',
      'http://panel.test:8080/',
      'https://panel.test/',
      '%2F%2Fevil.example',
      'ftp://panel.test/',
    ]) {
      const response = await panel.app.inject({
        url: `/api/auth/oidc/test/login?redirect=${encodeURIComponent(redirect)}`,
      });
      assertError(response, 400, 'INVALID_REDIRECT');
      assert.equal(response.headers['set-cookie'], undefined, redirect);
    }
    // Encoded once more, the same spellings arrive decoded exactly once and are still refused.
    const encoded = await panel.app.inject({
      url: '/api/auth/oidc/test/login?redirect=%2F%2Fevil.example',
    });
    assertError(encoded, 400, 'INVALID_REDIRECT');
  });

  it('answers 404 for an unknown provider', async () => {
    assertError(await panel.app.inject({ url: '/api/auth/oidc/nope/login' }), 404, 'NOT_FOUND');
  });

  it('refuses a callback with a missing, wrong or reused state', async () => {
    const browser = new Browser(panel);
    const start = await browser.request(`${PUBLIC_URL}/api/auth/oidc/test/login`);
    const callback = new URL(await browser.signInAtProvider(start.location!, 'alex'));
    const cookie = browser.cookie('panel.test', 'panel_oidc')!;

    const tryCallback = async (url: URL, withCookie = true) => {
      const other = new Browser(panel);
      if (withCookie) other.setCookie('panel.test', 'panel_oidc', cookie);
      const response = await other.request(url.href);
      assert.equal(response.status, 302);
      return fragment(response.location!);
    };
    const missing = new URL(callback);
    missing.searchParams.delete('state');
    assert.equal((await tryCallback(missing)).get('error'), 'invalid_state');
    const wrong = new URL(callback);
    wrong.searchParams.set('state', 'not-the-state');
    assert.equal((await tryCallback(wrong)).get('error'), 'invalid_state');
    assert.equal((await tryCallback(callback, false)).get('error'), 'invalid_state');

    const first = await tryCallback(callback);
    assert.equal(first.get('username'), 'alex', 'the real callback still works once');
    const reused = await tryCallback(callback);
    assert.equal(reused.get('error'), 'invalid_state');
    assert.equal(reused.get('access_token'), null);
  });

  it('refuses a replayed authorization code', async () => {
    const { callback } = await signIn('alex');
    const code = new URL(callback).searchParams.get('code')!;
    const browser = new Browser(panel);
    const start = await browser.request(`${PUBLIC_URL}/api/auth/oidc/test/login`);
    const state = new URL(start.location!).searchParams.get('state')!;
    const replay = new URL(`${PUBLIC_URL}/api/auth/oidc/test/callback`);
    replay.searchParams.set('code', code);
    replay.searchParams.set('state', state);
    replay.searchParams.set('iss', provider.issuer);
    const response = await browser.request(replay.href);
    assert.equal(fragment(response.location!).get('error'), 'login_failed');
  });

  it('refuses an ID token for another audience, from another issuer, or with another nonce', async () => {
    const cases: [string, Tamper][] = [
      ['audience', (claims) => ({ ...claims, aud: 'someone-else' })],
      ['issuer', (claims) => ({ ...claims, iss: 'https://evil.example' })],
      ['nonce', (claims) => ({ ...claims, nonce: 'not-the-nonce' })],
      ['expiry', (claims) => ({ ...claims, exp: Math.floor(Date.now() / 1000) - 3600 })],
    ];
    for (const [what, tamper] of cases) {
      provider.tamper = tamper;
      try {
        const { target } = await signIn('alex');
        const params = fragment(target);
        assert.equal(params.get('error'), 'login_failed', what);
        assert.equal(params.get('access_token'), null, what);
      } finally {
        provider.tamper = null;
      }
    }
    // Untampered, the same flow works: the refusals above came from the checks.
    assert.equal(fragment((await signIn('alex')).target).get('username'), 'alex');
  });

  it('refuses an authorization response whose iss parameter names another issuer (RFC 9207)', async () => {
    const browser = new Browser(panel);
    const start = await browser.request(`${PUBLIC_URL}/api/auth/oidc/test/login`);
    const callback = new URL(await browser.signInAtProvider(start.location!, 'alex'));
    assert.equal(callback.searchParams.get('iss'), provider.issuer, 'the provider sends iss');
    callback.searchParams.set('iss', 'https://evil.example');
    const response = await browser.request(callback.href);
    assert.equal(fragment(response.location!).get('error'), 'login_failed');
  });

  it('never takes over a local account with the same name or e-mail', async () => {
    const steve = await register(panel, 'Steve');
    const { target } = await signIn('steve-sub');
    const params = fragment(target);
    assert.notEqual(params.get('username')?.toLowerCase(), 'steve');
    assert.match(params.get('username') ?? '', /^Steve\d+$/);
    const me = await panel.app.inject({ url: '/api/auth/me', headers: steve.headers });
    assert.deepEqual(json(me).signIn, { hasPassword: true, providers: [] });
    assert.equal((await login(panel, 'Steve')).statusCode, 200);
  });

  it('derives a valid username from whatever the provider sends', async () => {
    const weird = fragment((await signIn('weird-sub')).target);
    assert.match(weird.get('username') ?? '', /^[A-Za-z0-9_.-]{3,32}$/);
    const anon = fragment((await signIn('anon')).target);
    assert.match(anon.get('username') ?? '', /^[A-Za-z0-9_.-]{3,32}$/);
  });

  it('gives a banned linked account its token with role banned, and 403 elsewhere', async () => {
    assert.equal(fragment((await signIn('outlaw')).target).get('role'), 'user');
    await setRole(panel, admin, 'outlaw', 'banned');
    const params = fragment((await signIn('outlaw')).target);
    assert.equal(params.get('role'), 'banned');
    const token = params.get('access_token') ?? '';
    const me = await panel.app.inject({ url: '/api/auth/me', headers: bearer(token) });
    assert.equal(me.statusCode, 200);
    assert.equal(json(me).role, 'banned');
    assertError(
      await panel.app.inject({ url: '/api/servers', headers: bearer(token) }),
      403,
      'BANNED',
    );
  });

  it('lets an account made by sign-in set a password, then log in with it', async () => {
    const token = fragment((await signIn('alex')).target).get('access_token') ?? '';
    assertError(await login(panel, 'alex', 'any password at all'), 401);
    const set = await panel.app.inject({
      method: 'PUT',
      url: '/api/profile/password',
      headers: bearer(token),
      payload: { new_password: 'now I have one' },
    });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal((await login(panel, 'alex', 'now I have one')).statusCode, 200);
    const fresh = json<{ data: { access_token: string } }>(set).data.access_token;
    const me = await panel.app.inject({ url: '/api/auth/me', headers: bearer(fresh) });
    assert.deepEqual(json(me).signIn, { hasPassword: true, providers: ['test'] });
    // From now on the current password is asked for, like any account.
    const again = await panel.app.inject({
      method: 'PUT',
      url: '/api/profile/password',
      headers: bearer(fresh),
      payload: { new_password: 'another one' },
    });
    assertError(again, 400, 'VALIDATION_FAILED');
  });

  it('shows how each account signs in on the users list', async () => {
    const list = json<{ data: { username: string; signIn: unknown }[] }>(
      await panel.app.inject({ url: '/api/users', headers: admin.headers }),
    ).data;
    assert.deepEqual(list.find((user) => user.username === 'Steve')?.signIn, {
      hasPassword: true,
      providers: [],
    });
    assert.deepEqual(list.find((user) => user.username === 'outlaw')?.signIn, {
      hasPassword: false,
      providers: ['test'],
    });
  });
});

describe('OpenID Connect when things go wrong', () => {
  it('starts without a reachable provider and answers its login with 503', async (t) => {
    const unused = http.createServer();
    await new Promise<void>((resolve) => unused.listen(0, '127.0.0.1', resolve));
    const port = (unused.address() as AddressInfo).port;
    await new Promise<void>((resolve) =>
      unused.close(() => {
        resolve();
      }),
    );
    const panel = await startPanel(t, {
      PUBLIC_URL,
      OIDC_PROVIDERS: JSON.stringify([
        {
          id: 'down',
          name: 'Down IdP',
          issuer: `http://127.0.0.1:${port}`,
          clientId: 'x',
          clientSecret: CLIENT_SECRET,
        },
      ]),
    });
    assert.equal((await panel.app.inject({ url: '/api/health' })).statusCode, 200);
    const providers = await panel.app.inject({ url: '/api/auth/oidc/providers' });
    assert.equal(json<{ data: unknown[] }>(providers).data.length, 1);
    const response = await panel.app.inject({ url: '/api/auth/oidc/down/login' });
    assertError(response, 503, 'PROVIDER_UNAVAILABLE');
    assert.ok(!response.body.includes(CLIENT_SECRET));
    assert.ok(!response.body.includes(String(port)));
  });

  it('creates no account when registration is closed', async (t) => {
    const provider = await startProvider({ newcomer: { preferred_username: 'newcomer' } });
    const panel = await startPanel(t, {
      PUBLIC_URL,
      REGISTRATION: 'closed',
      OIDC_PROVIDERS: JSON.stringify([
        {
          id: 'test',
          name: 'Test IdP',
          issuer: provider.issuer,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
        },
      ]),
    });
    try {
      const browser = new Browser(panel);
      const start = await browser.request(`${PUBLIC_URL}/api/auth/oidc/test/login`);
      const callback = await browser.signInAtProvider(start.location!, 'newcomer');
      const finish = await browser.request(callback);
      assert.equal(fragment(finish.location!).get('error'), 'registration_closed');
      const users = await panel.db.kysely.selectFrom('users').select('id').execute();
      assert.equal(users.length, 0);
    } finally {
      await panel.close();
      await provider.close();
    }
  });
});
