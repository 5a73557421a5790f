import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { SignJWT, base64url } from 'jose';
import { TEST_JWT_SECRET, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  assertError,
  bearer,
  json,
  login,
  register,
  setRole,
  type Session,
} from './helpers/factories.js';

const secret = new TextEncoder().encode(TEST_JWT_SECRET);

describe('registration', () => {
  let panel: TestPanel;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
  });

  it('makes the first user admin and later ones user, with a working token', async () => {
    const first = await register(panel, 'founder');
    assert.equal(first.role, 'admin');
    const second = await register(panel, 'player');
    assert.equal(second.role, 'user');

    const me = await panel.app.inject({ url: '/api/auth/me', headers: second.headers });
    assert.equal(me.statusCode, 200);
    assert.deepEqual(json(me), {
      username: 'player',
      role: 'user',
      servers: [],
      signIn: { hasPassword: true, providers: [] },
      twoFactor: { enabled: false, mustEnrol: false },
    });
  });

  it('answers the flat token object of the spec', async () => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { username: 'flat.shape', password: PASSWORD },
    });
    const body = json(response);
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'role', 'token_type', 'username']);
    assert.equal(body.token_type, 'bearer');
  });

  it('refuses a name that is taken in any case with 409', async () => {
    await register(panel, 'Steve');
    for (const username of ['Steve', 'steve', 'STEVE']) {
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        payload: { username, password: PASSWORD },
      });
      assertError(response, 409, 'USERNAME_TAKEN');
    }
  });

  it('lets exactly one of 30 parallel registrations of one name succeed', async () => {
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        panel.app.inject({
          method: 'POST',
          url: '/api/auth/register',
          payload: { username: 'racer', password: PASSWORD },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    assert.equal(statuses.filter((status) => status === 200).length, 1);
    assert.equal(statuses.filter((status) => status === 409).length, 29);
  });

  it('refuses invalid usernames, short passwords, unknown fields and wrong types with 400', async () => {
    const bad: unknown[] = [
      { username: 'ab', password: PASSWORD },
      { username: 'x'.repeat(33), password: PASSWORD },
      { username: 'has space', password: PASSWORD },
      { username: 'slash/name', password: PASSWORD },
      { username: 'valid', password: '12345' },
      { username: 'valid', password: 'x'.repeat(1025) },
      { username: 'valid', password: PASSWORD, role: 'admin' },
      { username: 123456, password: PASSWORD },
      { username: 'valid', password: 123456 },
      { username: 'valid' },
      [],
      'just a string',
      null,
    ];
    for (const payload of bad) {
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
      assertError(response, 400, 'VALIDATION_FAILED');
    }
    const stored = await panel.db.kysely
      .selectFrom('users')
      .select('username')
      .where('username', '=', 'valid')
      .execute();
    assert.equal(stored.length, 0, 'no refused registration left a row');
  });

  it('says whether registration is open, without a token', async () => {
    const response = await panel.app.inject({ url: '/api/auth/registration' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { message: 'Registration', data: { open: true } });
  });

  it('refuses registration when REGISTRATION=closed, and says so', async (t) => {
    const closed = await startPanel(t, { REGISTRATION: 'closed' });
    const response = await closed.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { username: 'someone', password: PASSWORD },
    });
    assertError(response, 403, 'REGISTRATION_CLOSED');
    const said = await closed.app.inject({ url: '/api/auth/registration' });
    assert.deepEqual(said.json(), { message: 'Registration', data: { open: false } });
  });
});

describe('login', () => {
  let panel: TestPanel;
  let admin: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, {
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      LOGIN_MAX_FAILURES_PER_ADDRESS: '8',
    });
    admin = await register(panel, 'admin');
  });

  it('returns a token for the right password, case-insensitively on the name', async () => {
    await register(panel, 'Alex');
    const response = await login(panel, 'alex');
    assert.equal(response.statusCode, 200);
    const body = json(response);
    assert.equal(body.username, 'Alex');
    assert.equal(body.role, 'user');
    assert.equal(body.token_type, 'bearer');
  });

  it('answers 401 with the same message for a wrong password and an unknown user', async () => {
    await register(panel, 'known');
    const wrong = await login(panel, 'known', 'not the password');
    const unknown = await login(panel, 'nobody-here', 'not the password');
    assertError(wrong, 401, 'INVALID_CREDENTIALS');
    assertError(unknown, 401, 'INVALID_CREDENTIALS');
    assert.equal(json(wrong).message, json(unknown).message);
  });

  it('throttles failed logins per account and address with 429 and Retry-After, even for the right password', async () => {
    await register(panel, 'target');
    const from = (remoteAddress: string, username: string, password: string) =>
      panel.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress,
        payload: { username, password },
      });
    const guesser = '198.51.100.1';
    for (let i = 0; i < 3; i++) assertError(await from(guesser, 'target', 'guess'), 401);
    const blocked = await from(guesser, 'target', 'guess');
    assertError(blocked, 429, 'RATE_LIMITED');
    const retryAfter = Number(blocked.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 900, `Retry-After: ${retryAfter}`);
    assertError(await from(guesser, 'TARGET', PASSWORD), 429, 'RATE_LIMITED');
    // The account is not locked: its owner, elsewhere, still gets in.
    assert.equal((await from('198.51.100.2', 'target', PASSWORD)).statusCode, 200);
  });

  it('throttles failed logins per client address across accounts', async () => {
    const address = '203.0.113.7';
    const attempt = (username: string) =>
      panel.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: address,
        payload: { username, password: 'guess' },
      });
    for (let i = 0; i < 8; i++) assertError(await attempt(`victim${i}`), 401);
    assertError(await attempt('victim-next'), 429, 'RATE_LIMITED');
    // Another address is unaffected.
    assertError(await login(panel, 'victim-next', 'guess'), 401, 'INVALID_CREDENTIALS');
  });

  it('never limits successful logins or authenticated use', async () => {
    await register(panel, 'busy');
    for (let i = 0; i < 20; i++) assert.equal((await login(panel, 'busy')).statusCode, 200);
    const session = json<{ access_token: string }>(await login(panel, 'busy'));
    for (let i = 0; i < 50; i++) {
      const me = await panel.app.inject({
        url: '/api/auth/me',
        headers: bearer(session.access_token),
      });
      assert.equal(me.statusCode, 200);
    }
  });

  it('refuses bodies that are not the expected JSON with 400, 413 and 415', async () => {
    const post = (payload: string, contentType = 'application/json') =>
      panel.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        headers: { 'content-type': contentType },
        payload,
      });
    assertError(await post('{"username": "a",'), 400, 'INVALID_JSON');
    assertError(await post(''), 400);
    assertError(
      await post('{"__proto__": {"admin": true}, "username": "a", "password": "b"}'),
      400,
    );
    assertError(
      await post('{"username": "a", "password": "b", "extra": true}'),
      400,
      'VALIDATION_FAILED',
    );
    assertError(await post('username=a&password=b', 'text/plain'), 415);
    assertError(
      await post(JSON.stringify({ username: 'a', password: 'b'.repeat(2 * 1024 * 1024) })),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('lets a banned user log in and call me, with role banned', async () => {
    await register(panel, 'outlaw');
    await setRole(panel, admin, 'outlaw', 'banned');
    const response = await login(panel, 'outlaw');
    assert.equal(response.statusCode, 200);
    assert.equal(json(response).role, 'banned');
    const me = await panel.app.inject({
      url: '/api/auth/me',
      headers: bearer(json<{ access_token: string }>(response).access_token),
    });
    assert.equal(me.statusCode, 200);
    assert.equal(json(me).role, 'banned');
  });
});

describe('tokens', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;
  let userId: string;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    user = await register(panel, 'member');
    const payload = JSON.parse(
      new TextDecoder().decode(base64url.decode(user.token.split('.')[1]!)),
    ) as { sub: string };
    userId = payload.sub;
  });

  const me = (token: string) => panel.app.inject({ url: '/api/auth/me', headers: bearer(token) });

  const forge = (
    header: Record<string, unknown>,
    claims: Record<string, unknown>,
    key: Uint8Array = secret,
  ) => {
    const base = { ver: 0, sub: userId, iss: 'game-panel', aud: 'game-panel:api' };
    const jwt = new SignJWT({ ...base, ...claims }).setProtectedHeader({
      alg: 'HS256',
      ...header,
    });
    return jwt.sign(key);
  };

  it('accepts a well-formed token', async () => {
    const now = Math.floor(Date.now() / 1000);
    assert.equal((await me(await forge({}, { iat: now, exp: now + 60 }))).statusCode, 200);
  });

  it('refuses missing and malformed Authorization headers with 401', async () => {
    assertError(await panel.app.inject({ url: '/api/auth/me' }), 401, 'UNAUTHORIZED');
    for (const authorization of ['Basic abc', 'Bearer', 'Bearer not.a.jwt', user.token]) {
      const response = await panel.app.inject({ url: '/api/auth/me', headers: { authorization } });
      assertError(response, 401, 'UNAUTHORIZED');
    }
  });

  it('refuses alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(
      JSON.stringify({
        sub: userId,
        ver: 0,
        iss: 'game-panel',
        aud: 'game-panel:api',
        iat: now,
        exp: now + 60,
      }),
    );
    assertError(await me(`${header}.${payload}.`), 401);
    assertError(await me(`${header}.${payload}`), 401);
  });

  it('refuses HS512 even when signed with the right secret', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({
      sub: userId,
      ver: 0,
      iss: 'game-panel',
      aud: 'game-panel:api',
    })
      .setProtectedHeader({ alg: 'HS512' })
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET.repeat(2)));
    assertError(await me(token), 401);
    const sameKey = await new SignJWT({
      sub: userId,
      ver: 0,
      iss: 'game-panel',
      aud: 'game-panel:api',
    })
      .setProtectedHeader({ alg: 'HS512' })
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(secret);
    assertError(await me(sameKey), 401);
  });

  it('refuses a tampered payload', async () => {
    const [header, payload, signature] = user.token.split('.');
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload!))) as Record<
      string,
      unknown
    >;
    assert.equal((await me(`${header}.${payload}.${signature}`)).statusCode, 200);
    for (const change of [{ sub: '1' }, { ver: 1 }, { exp: Number(claims.exp) + 3600 }]) {
      const tampered = base64url.encode(JSON.stringify({ ...claims, ...change }));
      assertError(await me(`${header}.${tampered}.${signature}`), 401);
    }
  });

  it('refuses a token signed with another secret', async () => {
    const now = Math.floor(Date.now() / 1000);
    const other = new TextEncoder().encode('another-secret-that-is-also-long-enough!!');
    assertError(await me(await forge({}, { iat: now, exp: now + 60 }, other)), 401);
  });

  it('refuses a token past exp and one without exp', async () => {
    const now = Math.floor(Date.now() / 1000);
    assertError(await me(await forge({}, { iat: now - 100, exp: now - 10 })), 401);
    assertError(await me(await forge({}, { iat: now })), 401);
  });

  it('refuses a token of a deleted user', async () => {
    const doomed = await register(panel, 'doomed');
    assert.equal((await me(doomed.token)).statusCode, 200);
    const deleted = await panel.app.inject({
      method: 'DELETE',
      url: '/api/users/doomed',
      headers: admin.headers,
    });
    assert.equal(deleted.statusCode, 200);
    assertError(await me(doomed.token), 401);
    // The name is free again, and the old token does not work for the new account.
    const reborn = await register(panel, 'doomed');
    assert.equal((await me(reborn.token)).statusCode, 200);
    assertError(await me(doomed.token), 401);
  });

  it('refuses a token issued before a password change, at once', async () => {
    const changer = await register(panel, 'changer');
    const second = json<{ access_token: string }>(await login(panel, 'changer')).access_token;
    const response = await panel.app.inject({
      method: 'PUT',
      url: '/api/profile/password',
      headers: changer.headers,
      payload: { old_password: PASSWORD, new_password: 'a brand new password' },
    });
    assert.equal(response.statusCode, 200);
    const fresh = json<{ data: { access_token: string } }>(response).data.access_token;
    assertError(await me(changer.token), 401);
    assertError(await me(second), 401);
    assert.equal((await me(fresh)).statusCode, 200);
  });

  it('applies a demotion to an old admin token at once', async () => {
    const deputy = await register(panel, 'deputy');
    await setRole(panel, admin, 'deputy', 'admin');
    const list = () => panel.app.inject({ url: '/api/users', headers: deputy.headers });
    assert.equal((await list()).statusCode, 200);
    await setRole(panel, admin, 'deputy', 'user');
    assertError(await list(), 403, 'FORBIDDEN');
    const promote = await panel.app.inject({
      method: 'PUT',
      url: '/api/users/member/role',
      headers: deputy.headers,
      payload: { role: 'admin' },
    });
    assertError(promote, 403);
  });
});
