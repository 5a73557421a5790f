/**
 * Admins manage accounts (issue 26, point 4) through the HTTP surface: making an account with a
 * password or a one-time set-password link, setting a password or issuing a reset link (tokens and
 * API keys revoked), turning someone's two-factor sign-in off, and the public pages of a link:
 * single use, 24 hours by the panel's clock (in the test's hands), throttled per address. Nothing
 * secret is answered but the link's own URL, and nothing secret reaches the log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  assertError,
  bearer,
  json,
  login,
  register,
  setRole,
  type Session,
  type Envelope,
} from './helpers/factories.js';

interface UserView {
  username: string;
  role: string;
  servers: string[];
  createdAt: string;
  lastLoginAt: string | null;
  signIn: { hasPassword: boolean; providers: string[] };
  twoFactor: boolean;
}
interface Link {
  url: string;
  expiresAt: string;
}
const DAY_MS = 24 * 60 * 60 * 1000;
const NEW_PASSWORD = 'a brand new password';

describe('admins manage accounts', () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;
  let support: Session;
  let banned: Session;
  let clock = Date.parse('2031-06-01T12:00:00Z');
  const logLines: string[] = [];
  /** Every token and password this file used: none may be in the log. */
  const secrets: string[] = [];

  const call = (
    headers: Record<string, string> | undefined,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    remoteAddress?: string,
  ): Promise<LightMyRequestResponse> =>
    panel.app.inject({
      method,
      url,
      ...(headers ? { headers } : {}),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
    });
  const createUser = (session: Session, body: object) =>
    call(session.headers, 'POST', '/api/users', body);
  const putPassword = (session: Session, username: string, body: object) =>
    call(session.headers, 'PUT', `/api/users/${username}/password`, body);
  const tokenOf = (link: Link): string => {
    const match = /#token=([A-Za-z0-9_-]+)$/.exec(link.url);
    assert.ok(match?.[1], link.url);
    rememberSecret(match[1]);
    secrets.push(match[1]);
    return match[1];
  };
  const checkLink = (token: string, remoteAddress?: string) =>
    call(undefined, 'POST', '/api/auth/set-password/check', { token }, remoteAddress);
  const setPassword = (token: string, password: string, remoteAddress?: string) => {
    rememberSecret(password);
    secrets.push(password);
    return call(undefined, 'POST', '/api/auth/set-password', { token, password }, remoteAddress);
  };
  const listed = async (username: string): Promise<UserView | undefined> => {
    const response = await call(admin.headers, 'GET', '/api/users');
    assert.equal(response.statusCode, 200, response.body);
    return json<Envelope<UserView[]>>(response).data.find((user) => user.username === username);
  };
  /** The audit entries of an action, newest first. */
  const audited = async (action: string) => {
    const response = await call(admin.headers, 'GET', `/api/audit?action=${action}`);
    assert.equal(response.statusCode, 200, response.body);
    return json<Envelope<Record<string, unknown>[]>>(response).data;
  };

  after(() => {
    const log = logLines.join('');
    for (const secret of secrets) {
      assert.ok(!log.includes(secret), 'a token or password reached the log');
    }
  });
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      { LOG_LEVEL: 'debug', PUBLIC_URL: 'https://panel.example.org/' },
      {
        now: () => new Date(clock),
        logStream: { write: (line) => void logLines.push(line) },
      },
    );
    admin = await register(panel, 'admin');
    member = await register(panel, 'member');
    support = await register(panel, 'helper');
    banned = await register(panel, 'outcast');
    await setRole(panel, admin, 'helper', 'support');
    await setRole(panel, admin, 'outcast', 'banned');
  });

  it('makes an account with a password, which signs in at once', async () => {
    secrets.push('carols password');
    const response = await createUser(admin, {
      username: 'Carol',
      role: 'support',
      password: 'carols password',
    });
    assert.equal(response.statusCode, 201, response.body);
    const { data } = json<Envelope<{ user: UserView; setPasswordLink: Link | null }>>(response);
    assert.equal(data.setPasswordLink, null);
    assert.deepEqual(data.user, {
      username: 'Carol',
      role: 'support',
      servers: [],
      createdAt: new Date(clock).toISOString(),
      lastLoginAt: null,
      signIn: { hasPassword: true, providers: [] },
      twoFactor: false,
    });
    assert.deepEqual(await listed('Carol'), data.user);
    assert.equal((await login(panel, 'carol', 'carols password')).statusCode, 200);
    assert.ok(!response.body.includes('carols password'));
    assert.ok(!response.body.includes('$argon2'));

    const [entry] = await audited('user.create');
    assert.equal(entry?.target, 'Carol');
    assert.equal(entry.actor, 'admin');
    assert.deepEqual(entry.details, { username: 'Carol', role: 'support' });
  });

  it('refuses a taken name, bad input, strangers and everyone but admins', async () => {
    assertError(
      await createUser(admin, { username: 'CAROL', role: 'user', password: PASSWORD }),
      409,
      'USERNAME_TAKEN',
    );
    for (const body of [
      { username: 'a b', role: 'user' },
      { username: 'xy', role: 'user' },
      { username: 'dave', role: 'owner' },
      { username: 'dave', role: 'user', password: 'short' },
      { username: 'dave', role: 'user', extra: true },
      { role: 'user' },
    ]) {
      assertError(await createUser(admin, body), 400, 'VALIDATION_FAILED');
    }
    assert.equal(await listed('dave'), undefined);
    const body = { username: 'dave', role: 'admin', password: PASSWORD };
    assertError(await call(undefined, 'POST', '/api/users', body), 401);
    assertError(await call(bearer('not-a-token'), 'POST', '/api/users', body), 401);
    for (const caller of [member, support, banned]) {
      assertError(await createUser(caller, body), 403);
      assertError(await putPassword(caller, 'member', { link: true }), 403);
      assertError(
        await call(caller.headers, 'DELETE', '/api/users/member/2fa'),
        403,
        caller === banned ? 'BANNED' : 'FORBIDDEN',
      );
    }
    assert.equal(await listed('dave'), undefined);
    // Each refusal of rights is in the audit log.
    assert.ok((await audited('user.create')).some((entry) => entry.status === 403));
  });

  it('makes an account without a password: a one-time link, good for 24 hours', async () => {
    const response = await createUser(admin, { username: 'erin', role: 'user' });
    assert.equal(response.statusCode, 201, response.body);
    const { data } = json<Envelope<{ user: UserView; setPasswordLink: Link }>>(response);
    assert.equal(data.user.signIn.hasPassword, false);
    assert.match(
      data.setPasswordLink.url,
      /^https:\/\/panel\.example\.org\/set-password#token=[A-Za-z0-9_-]{43}$/,
    );
    assert.equal(data.setPasswordLink.expiresAt, new Date(clock + DAY_MS).toISOString());
    const token = tokenOf(data.setPasswordLink);
    // Stored as its SHA-256 only.
    const rows = await panel.db.kysely.selectFrom('password_links').selectAll().execute();
    assert.ok(!JSON.stringify(rows).includes(token));
    assert.ok(rows.some((row) => /^[0-9a-f]{64}$/.test(row.token_hash)));
    // Listing users shows no token.
    const list = await call(admin.headers, 'GET', '/api/users');
    assert.ok(!list.body.includes(token));

    const checked = await checkLink(token);
    assert.equal(checked.statusCode, 200, checked.body);
    assert.deepEqual(json<Envelope<unknown>>(checked).data, {
      username: 'erin',
      expiresAt: data.setPasswordLink.expiresAt,
    });
    // A password against the rules leaves the link good.
    assertError(await setPassword(token, 'short'), 400, 'VALIDATION_FAILED');

    const set = await setPassword(token, NEW_PASSWORD);
    assert.equal(set.statusCode, 200, set.body);
    const signedIn = json<{ access_token: string; username: string; role: string }>(set);
    rememberSecret(signedIn.access_token);
    secrets.push(signedIn.access_token);
    assert.equal(signedIn.username, 'erin');
    const me = await call(bearer(signedIn.access_token), 'GET', '/api/auth/me');
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(json<{ signIn: { hasPassword: boolean } }>(me).signIn.hasPassword, true);
    assert.equal((await login(panel, 'erin', NEW_PASSWORD)).statusCode, 200);

    // Once only.
    for (const again of [await setPassword(token, 'another password'), await checkLink(token)]) {
      assertError(again, 400, 'INVALID_LINK');
      assert.equal(
        json<{ message: string }>(again).message,
        'This link has expired or was already used: ask an admin for a new one',
      );
    }
    assert.equal((await login(panel, 'erin', NEW_PASSWORD)).statusCode, 200);
    // The sign-in names its account; the refused reuses are recorded too, naming nobody.
    const entries = await audited('auth.set-password');
    assert.deepEqual(
      entries.map((entry) => [entry.actor, entry.outcome, entry.status]),
      [
        [null, 'failed', 400],
        ['erin', 'ok', 200],
        [null, 'failed', 400],
      ],
    );
  });

  it('refuses an expired link, and any token that is no link', async () => {
    const response = await createUser(admin, { username: 'frank', role: 'user' });
    const token = tokenOf(json<Envelope<{ setPasswordLink: Link }>>(response).data.setPasswordLink);
    clock += DAY_MS - 1000;
    assert.equal((await checkLink(token)).statusCode, 200);
    clock += 1000;
    assertError(await checkLink(token), 400, 'INVALID_LINK');
    assertError(await setPassword(token, NEW_PASSWORD), 400, 'INVALID_LINK');
    assert.equal((await login(panel, 'frank', NEW_PASSWORD)).statusCode, 401);
    for (const other of ['x', 'a'.repeat(43), `${token}x`]) {
      assertError(await checkLink(other), 400, 'INVALID_LINK');
    }
    assertError(await checkLink('a'.repeat(129)), 400, 'VALIDATION_FAILED');
    assertError(await call(undefined, 'POST', '/api/auth/set-password', {}), 400);
  });

  it('sets a password: earlier tokens and API keys stop working at once', async () => {
    const grace = await register(panel, 'grace');
    const made = await call(grace.headers, 'POST', '/api/profile/api-keys', {
      name: 'script',
      password: PASSWORD,
    });
    assert.equal(made.statusCode, 200, made.body);
    const key = json<Envelope<{ token: string }>>(made).data.token;
    rememberSecret(key);
    assert.equal((await call(bearer(key), 'GET', '/api/auth/me')).statusCode, 200);

    const response = await putPassword(admin, 'grace', { password: NEW_PASSWORD });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json<Envelope<unknown>>(response).data, {
      setPasswordLink: null,
      revokedApiKeys: 1,
    });
    assertError(await call(grace.headers, 'GET', '/api/auth/me'), 401);
    assertError(await call(bearer(key), 'GET', '/api/auth/me'), 401);
    assert.equal((await login(panel, 'grace', PASSWORD)).statusCode, 401);
    assert.equal((await login(panel, 'grace', NEW_PASSWORD)).statusCode, 200);
    const [entry] = await audited('user.password');
    assert.deepEqual([entry?.target, entry?.outcome], ['grace', 'ok']);
    assert.ok(!JSON.stringify(entry).includes(NEW_PASSWORD));

    assertError(await putPassword(admin, 'nobody', { password: NEW_PASSWORD }), 404, 'NOT_FOUND');
    for (const body of [
      {},
      { password: 'short' },
      { link: false },
      { password: NEW_PASSWORD, link: true },
    ]) {
      assertError(await putPassword(admin, 'grace', body), 400, 'VALIDATION_FAILED');
    }
    assertError(await call(undefined, 'PUT', '/api/users/grace/password', { link: true }), 401);
  });

  it('issues a reset link: the old password, tokens and earlier links stop working', async () => {
    const heidi = await register(panel, 'heidi');
    const first = await putPassword(admin, 'heidi', { link: true });
    assert.equal(first.statusCode, 200, first.body);
    const firstToken = tokenOf(
      json<Envelope<{ setPasswordLink: Link }>>(first).data.setPasswordLink,
    );
    assertError(await call(heidi.headers, 'GET', '/api/auth/me'), 401);
    assert.equal((await login(panel, 'heidi', PASSWORD)).statusCode, 401);
    assert.equal((await listed('heidi'))?.signIn.hasPassword, false);

    const second = await putPassword(admin, 'heidi', { link: true });
    const secondLink = json<Envelope<{ setPasswordLink: Link }>>(second).data.setPasswordLink;
    const secondToken = tokenOf(secondLink);
    assert.notEqual(secondToken, firstToken);
    assertError(await checkLink(firstToken), 400, 'INVALID_LINK');
    assert.equal((await checkLink(secondToken)).statusCode, 200);

    // Setting the password directly ends the outstanding link too.
    await putPassword(admin, 'heidi', { password: NEW_PASSWORD });
    assertError(await checkLink(secondToken), 400, 'INVALID_LINK');
    assert.equal((await login(panel, 'heidi', NEW_PASSWORD)).statusCode, 200);
  });

  it("turns someone's two-factor sign-in off, so they sign in with the password alone", async () => {
    const ivan = await register(panel, 'ivan');
    const setup = await call(ivan.headers, 'POST', '/api/profile/2fa/setup', {
      password: PASSWORD,
    });
    assert.equal(setup.statusCode, 200, setup.body);
    const totp = new TOTP({
      issuer: 'Game panel',
      label: 'ivan',
      secret: Secret.fromBase32(json<Envelope<{ secret: string }>>(setup).data.secret),
    });
    const enabled = await call(ivan.headers, 'POST', '/api/profile/2fa/enable', {
      code: totp.generate({ timestamp: clock }),
    });
    assert.equal(enabled.statusCode, 200, enabled.body);
    assert.equal((await listed('ivan'))?.twoFactor, true);

    // A link's sign-in asks for the second factor, as a login does.
    const reset = await putPassword(admin, 'ivan', { link: true });
    const token = tokenOf(json<Envelope<{ setPasswordLink: Link }>>(reset).data.setPasswordLink);
    const set = await setPassword(token, NEW_PASSWORD);
    assert.equal(set.statusCode, 200, set.body);
    const answer = json<{ two_factor_required?: boolean; access_token?: string }>(set);
    assert.equal(answer.two_factor_required, true);
    assert.equal(answer.access_token, undefined);
    const challenged = await call(undefined, 'POST', '/api/auth/login', {
      username: 'ivan',
      password: NEW_PASSWORD,
    });
    assert.equal(json<{ two_factor_required?: boolean }>(challenged).two_factor_required, true);

    const off = await call(admin.headers, 'DELETE', '/api/users/ivan/2fa');
    assert.equal(off.statusCode, 204, off.body);
    assert.equal(off.body, '');
    assert.equal((await listed('ivan'))?.twoFactor, false);
    const row = await panel.db.kysely
      .selectFrom('users')
      .select(['totp_secret', 'id'])
      .where('username', '=', 'ivan')
      .executeTakeFirstOrThrow();
    assert.equal(row.totp_secret, null);
    const codes = await panel.db.kysely
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('user_id', '=', row.id)
      .execute();
    assert.deepEqual(codes, []);
    const signedIn = await login(panel, 'ivan', NEW_PASSWORD);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    assert.equal(typeof json<{ access_token?: string }>(signedIn).access_token, 'string');

    assertError(await call(admin.headers, 'DELETE', '/api/users/ivan/2fa'), 409, 'TWO_FACTOR_OFF');
    assertError(await call(admin.headers, 'DELETE', '/api/users/nobody/2fa'), 404, 'NOT_FOUND');
    assertError(await call(undefined, 'DELETE', '/api/users/ivan/2fa'), 401);
    const [entry] = await audited('user.two-factor-off');
    assert.ok(entry);
    assert.equal(entry.target, 'ivan');
  });

  it('counts links that are no links against the address, like failed logins', async () => {
    const address = '192.0.2.40';
    let answer: LightMyRequestResponse | undefined;
    for (let attempt = 0; attempt < 60; attempt += 1) {
      answer = await checkLink(`${'b'.repeat(40)}${String(attempt).padStart(3, '0')}`, address);
      if (answer.statusCode === 429) break;
      assertError(answer, 400, 'INVALID_LINK');
    }
    assert.ok(answer);
    assertError(answer, 429, 'RATE_LIMITED');
    assert.ok(answer.headers['retry-after']);
    // Refused from that address even with a good link; others are not held back.
    const response = await createUser(admin, { username: 'judy', role: 'user' });
    const token = tokenOf(json<Envelope<{ setPasswordLink: Link }>>(response).data.setPasswordLink);
    assertError(await setPassword(token, NEW_PASSWORD, address), 429, 'RATE_LIMITED');
    assert.equal((await setPassword(token, NEW_PASSWORD)).statusCode, 200);
  });
});
