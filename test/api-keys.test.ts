/**
 * API keys through the HTTP surface: made once and shown once, stored only as a hash, listed with
 * their last use, accepted as a bearer token beside session tokens, narrowed to their servers and
 * permissions, expired and revoked at once, and never able to manage keys, change the second
 * factor or the password.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import WebSocket from 'ws';
import { startPanel, suiteScope, rememberSecret, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  assertError,
  bearer,
  createServer,
  json,
  register,
  serverAction,
  type Session,
} from './helpers/factories.js';

interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  lastUsedAddress: string | null;
  servers: string[] | null;
  permissions: string[] | null;
  expired: boolean;
}

describe('API keys', () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;
  let clock = Date.now();

  const call = (
    headers: { authorization: string },
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ) =>
    panel.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  /** Makes a key as `session`; answers the key as listed and its token. */
  async function makeKey(
    session: Session,
    body: Record<string, unknown>,
  ): Promise<{ key: ApiKey; token: string; headers: { authorization: string } }> {
    const response = await call(session.headers, 'POST', '/api/profile/api-keys', {
      password: PASSWORD,
      ...body,
    });
    assert.equal(response.statusCode, 200, response.body);
    const { data } = json<{ data: { key: ApiKey; token: string } }>(response);
    rememberSecret(data.token);
    return { ...data, headers: bearer(data.token) };
  }

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, {}, { now: () => new Date(clock) });
    admin = await register(panel, 'admin');
    member = await register(panel, 'member');
    await createServer(panel, admin, 'alpha');
    await createServer(panel, admin, 'beta');
    await createServer(panel, admin, 'gamma');
    for (const server of ['alpha', 'beta']) {
      const response = await call(admin.headers, 'PUT', `/api/servers/${server}/users/member`, {
        permissions: ['console.read', 'power', 'files.read', 'files.write', 'users'],
      });
      assert.equal(response.statusCode, 200, response.body);
    }
  });

  it('is shown once, stored only as its hash, and listed with its last use', async () => {
    const { key, token, headers } = await makeKey(member, { name: '  deploy script ' });
    assert.match(token, /^gpk_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.name, 'deploy script');
    assert.ok(token.startsWith(key.prefix) && key.prefix.length === 12);
    assert.deepEqual(
      [key.servers, key.permissions, key.expiresAt, key.lastUsedAt, key.expired],
      [null, null, null, null, false],
    );

    const rows = await panel.db.kysely.selectFrom('api_keys').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(token.slice(key.prefix.length)), 'the key is stored');
    assert.match(rows[0]?.token_hash ?? '', /^[0-9a-f]{64}$/);

    const me = await call(headers, 'GET', '/api/auth/me');
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(json<{ username: string }>(me).username, 'member');

    const listed = await call(member.headers, 'GET', '/api/profile/api-keys');
    const [shown] = json<{ data: ApiKey[] }>(listed).data;
    assert.ok(shown);
    assert.equal(shown.id, key.id);
    assert.equal(shown.lastUsedAddress, '127.0.0.1');
    assert.ok(shown.lastUsedAt !== null);
    assert.ok(!listed.body.includes(token), 'a listing shows the key again');
    // Nobody else sees it.
    const theirs = await call(admin.headers, 'GET', '/api/profile/api-keys');
    assert.ok(!json<{ data: ApiKey[] }>(theirs).data.some((k) => k.id === key.id));
  });

  it('acts as its owner, with their current rights', async () => {
    const { headers } = await makeKey(member, { name: 'everything' });
    const servers = await call(headers, 'GET', '/api/servers');
    assert.deepEqual(
      json<{ data: { name: string }[] }>(servers).data.map((s) => s.name),
      ['alpha', 'beta'],
    );
    assertError(await call(headers, 'GET', '/api/servers/gamma/config'), 403, 'FORBIDDEN');
    assertError(await call(headers, 'GET', '/api/users'), 403, 'FORBIDDEN');
    // Taking a permission from the owner takes it from the key.
    await call(admin.headers, 'PUT', '/api/servers/beta/users/member', {
      permissions: ['console.read'],
    });
    assertError(await serverAction(panel, { ...member, headers }, 'beta', 'start'), 403);
    await call(admin.headers, 'PUT', '/api/servers/beta/users/member', {
      permissions: ['console.read', 'power', 'files.read', 'files.write', 'users'],
    });
    // A banned owner's keys stop.
    await call(admin.headers, 'PUT', '/api/users/member/role', { role: 'banned' });
    assertError(await call(headers, 'GET', '/api/servers'), 403, 'BANNED');
    await call(admin.headers, 'PUT', '/api/users/member/role', { role: 'user' });
    assert.equal((await call(headers, 'GET', '/api/servers')).statusCode, 200);
  });

  it('reaches only its servers, with only its permissions', async () => {
    const { key, headers } = await makeKey(member, {
      name: 'alpha files',
      servers: ['alpha'],
      permissions: ['files.read', 'users'],
    });
    assert.deepEqual([key.servers, key.permissions], [['alpha'], ['files.read', 'users']]);
    const servers = json<{ data: { name: string; permissions: string[] }[] }>(
      await call(headers, 'GET', '/api/servers'),
    ).data;
    assert.deepEqual(servers, [
      { ...servers[0], name: 'alpha', permissions: ['files.read', 'users'] },
    ]);
    const me = json<{ servers: string[] }>(await call(headers, 'GET', '/api/auth/me'));
    assert.deepEqual(me.servers, ['alpha']);
    assert.equal((await call(headers, 'GET', '/api/servers/alpha/files')).statusCode, 200);
    assertError(
      await call(headers, 'PUT', '/api/servers/alpha/files/content?path=a.txt', { content: 'x' }),
      403,
      'FORBIDDEN',
    );
    assertError(await call(headers, 'GET', '/api/servers/beta/files'), 403, 'FORBIDDEN');
    assertError(await call(headers, 'GET', '/api/servers/beta/config'), 403, 'FORBIDDEN');
    // Its `users` permission grants only what the key carries, not all its owner holds.
    const friend = await register(panel, 'friend');
    assertError(
      await call(headers, 'PUT', '/api/servers/alpha/users/friend', { permissions: ['power'] }),
      403,
      'FORBIDDEN',
    );
    const granted = await call(headers, 'PUT', '/api/servers/alpha/users/friend', {
      permissions: ['files.read'],
    });
    assert.equal(granted.statusCode, 200, granted.body);
    assert.equal((await call(friend.headers, 'GET', '/api/servers/alpha/files')).statusCode, 200);

    // The console socket follows the key too: it holds no console.read, and beta is not its.
    const base = (await panel.listen()).replace(/^http/, 'ws');
    for (const server of ['alpha', 'beta']) {
      const socket = new WebSocket(`${base}/ws/servers/${server}/console`, { headers });
      const [, response] = (await once(socket, 'unexpected-response')) as [
        unknown,
        { statusCode: number; destroy(): void },
      ];
      assert.equal(response.statusCode, 403, server);
      response.destroy();
    }
  });

  it('with a permission list, does nothing outside servers but read its own account', async () => {
    const { headers } = await makeKey(admin, { name: 'admin power', permissions: ['power'] });
    assert.equal((await call(headers, 'GET', '/api/auth/me')).statusCode, 200);
    assert.equal((await call(headers, 'GET', '/api/tickets')).statusCode, 200);
    assertError(await call(headers, 'GET', '/api/users'), 403, 'FORBIDDEN');
    assertError(
      await call(headers, 'PUT', '/api/users/member/role', { role: 'support' }),
      403,
      'FORBIDDEN',
    );
    assertError(
      await call(headers, 'POST', '/api/servers/create', { name: 'nope', startCommand: 'true' }),
      403,
      'FORBIDDEN',
    );
    assertError(
      await call(headers, 'PUT', '/api/servers/gamma/config', { startCommand: 'true' }),
      403,
      'FORBIDDEN',
    );
    assertError(await call(headers, 'GET', '/api/servers/gamma/files'), 403, 'FORBIDDEN');
    // Every server, power only.
    const servers = json<{ data: { name: string; permissions: string[] }[] }>(
      await call(headers, 'GET', '/api/servers'),
    ).data;
    assert.deepEqual(
      servers.map((s) => [s.name, s.permissions]),
      [
        ['alpha', ['power']],
        ['beta', ['power']],
        ['gamma', ['power']],
      ],
    );
    const started = await serverAction(panel, { ...admin, headers }, 'gamma', 'start');
    assert.equal(started.statusCode, 200, started.body);
    const stopped = await serverAction(panel, { ...admin, headers }, 'gamma', 'stop');
    assert.equal(stopped.statusCode, 200, stopped.body);
  });

  for (const [label, servers] of [
    ['narrowed to one server', ['alpha']],
    ['with an empty server list', []],
  ] as const) {
    it(`of an admin, ${label}, does nothing outside its servers`, async () => {
      const { headers } = await makeKey(admin, { name: `admin ${label}`, servers });
      const ticket = await call(member.headers, 'POST', '/api/tickets/create', {
        title: `Ticket for the key ${label}`,
        description: 'Only staff may move it',
      });
      assert.equal(ticket.statusCode, 200, ticket.body);
      const ticketId = json<{ data: { id: number } }>(ticket).data.id;
      const refused: [method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown][] = [
        ['PUT', '/api/servers/beta/allocations', { allocations: [] }],
        ['PUT', '/api/servers/beta/install', { state: 'not-installed' }],
        ['PUT', '/api/servers/beta/config', { startCommand: 'true' }],
        ['PUT', '/api/servers/beta/config', { displayName: 'Not yours' }],
        ['GET', '/api/servers/beta/files'],
        ['POST', '/api/servers/create', { name: 'nope', startCommand: 'true' }],
        ['DELETE', '/api/servers/gamma'],
        ['DELETE', '/api/servers/alpha'],
        ['PUT', '/api/users/member/role', { role: 'admin' }],
        ['PUT', '/api/users/member/servers', { servers: ['gamma'] }],
        ['DELETE', '/api/users/member'],
        ['GET', '/api/users'],
        ['GET', '/api/profile/stats/member'],
        ['GET', '/api/admin/webhooks'],
        ['POST', '/api/admin/webhooks', { url: 'https://example.com/hook', events: [] }],
        ['GET', '/api/audit'],
        ['DELETE', '/api/templates/generic-command'],
        ['PUT', `/api/tickets/${ticketId}/status`, { status: 'closed' }],
      ];
      for (const [method, url, body] of refused) {
        const response = await call(headers, method, url, body);
        assert.equal(response.statusCode, 403, `${method} ${url}: ${response.body}`);
        assert.equal(json<{ code: string }>(response).code, 'FORBIDDEN', `${method} ${url}`);
      }
      // An admin route says the key, not the role, is what refuses.
      assert.equal(
        json<{ message: string }>(await call(headers, 'GET', '/api/audit')).message,
        'This API key does not allow this',
      );
      // Nothing above was done.
      const me = json<{ data: { username: string; role: string }[] }>(
        await call(admin.headers, 'GET', '/api/users'),
      ).data.find((user) => user.username === 'member');
      assert.equal(me?.role, 'user');
      const all = json<{ data: { name: string; allocations: unknown[] } }>(
        await call(admin.headers, 'GET', '/api/servers/beta/config'),
      ).data;
      assert.equal(all.name, 'beta');
      const names = json<{ data: { name: string }[] }>(
        await call(admin.headers, 'GET', '/api/servers'),
      ).data.map((s) => s.name);
      assert.ok(names.includes('alpha') && names.includes('gamma'), names.join());
      // What it may still do: its owner's own account, and only its servers.
      assert.equal((await call(headers, 'GET', '/api/auth/me')).statusCode, 200);
      assert.equal((await call(headers, 'GET', '/api/tickets')).statusCode, 200);
      const listed = json<{ data: { name: string }[] }>(
        await call(headers, 'GET', '/api/servers'),
      ).data.map((s) => s.name);
      assert.deepEqual(listed, servers);
      const own = await call(headers, 'PUT', '/api/servers/alpha/allocations', { allocations: [] });
      assert.equal(own.statusCode, servers.length === 0 ? 403 : 200, own.body);
      const host = await call(headers, 'PUT', '/api/servers/alpha/install', { state: 'installed' });
      assert.equal(host.statusCode, servers.length === 0 ? 403 : 200, host.body);
    });
  }

  it('never manages keys, the second factor or the password', async () => {
    const { key, headers } = await makeKey(admin, { name: 'sneaky' });
    const refused: [method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown][] = [
      ['GET', '/api/profile/api-keys'],
      ['POST', '/api/profile/api-keys', { name: 'another' }],
      ['DELETE', `/api/profile/api-keys/${key.id}`],
      ['GET', '/api/profile/ssh-keys'],
      ['POST', '/api/profile/ssh-keys', { name: 'another', publicKey: 'ssh-ed25519 AAAA' }],
      ['DELETE', `/api/profile/ssh-keys/${key.id}`],
      ['GET', '/api/profile/2fa'],
      ['POST', '/api/profile/2fa/setup', { password: PASSWORD }],
      ['POST', '/api/profile/2fa/enable', { code: '000000' }],
      ['POST', '/api/profile/2fa/disable', { password: PASSWORD, code: '000000' }],
      ['POST', '/api/profile/2fa/recovery-codes', { password: PASSWORD, code: '000000' }],
      ['GET', '/api/admin/two-factor'],
      ['PUT', '/api/admin/two-factor', { requiredFor: [] }],
      ['PUT', '/api/profile/password', { old_password: PASSWORD, new_password: 'another one' }],
    ];
    for (const [method, url, body] of refused) {
      assertError(await call(headers, method, url, body), 403, 'SESSION_REQUIRED');
    }
    // Every route that refuses keys is in that list: a new one must be added to it.
    const sessionOnly = panel.app.registeredRoutes
      .filter((route) => route.sessionOnly && route.method !== 'HEAD')
      .map((route) => `${route.method} ${route.url.replace(':id', String(key.id))}`)
      .sort();
    assert.deepEqual(sessionOnly, refused.map(([method, url]) => `${method} ${url}`).sort());
    // The key still works: nothing above was done.
    assert.equal((await call(headers, 'GET', '/api/users')).statusCode, 200);
  });

  it('expires, and is revoked at once', async () => {
    const soon = new Date(clock + 60_000).toISOString();
    const { key, headers } = await makeKey(member, { name: 'short', expiresAt: soon });
    assert.equal(key.expiresAt, soon);
    assert.equal((await call(headers, 'GET', '/api/servers')).statusCode, 200);
    clock += 61_000;
    assertError(await call(headers, 'GET', '/api/servers'), 401, 'UNAUTHORIZED');
    const listed = json<{ data: ApiKey[] }>(
      await call(member.headers, 'GET', '/api/profile/api-keys'),
    ).data;
    assert.equal(listed.find((k) => k.id === key.id)?.expired, true);

    const other = await makeKey(member, { name: 'to revoke' });
    assert.equal((await call(other.headers, 'GET', '/api/servers')).statusCode, 200);
    // Someone else cannot revoke it.
    assertError(
      await call(admin.headers, 'DELETE', `/api/profile/api-keys/${other.key.id}`),
      404,
      'NOT_FOUND',
    );
    const revoked = await call(member.headers, 'DELETE', `/api/profile/api-keys/${other.key.id}`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    assertError(await call(other.headers, 'GET', '/api/servers'), 401, 'UNAUTHORIZED');
    assertError(
      await call(member.headers, 'DELETE', `/api/profile/api-keys/${other.key.id}`),
      404,
      'NOT_FOUND',
    );
  });

  it('refuses bad keys and bad requests without a trace', async () => {
    const count = async () =>
      (await panel.db.kysely.selectFrom('api_keys').select('id').execute()).length;
    const before = await count();
    for (const [body, field] of [
      [{ name: '   ' }, 'name'],
      [{ name: 'past', expiresAt: new Date(clock - 1000).toISOString() }, 'expiresAt'],
      [{ name: 'unknown', servers: ['gamma'] }, 'servers'],
      [{ name: 'bad', permissions: ['root'] }, 'permissions'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 'date', expiresAt: 'tomorrow' }, 'expiresAt'],
    ] as const) {
      const response = await call(member.headers, 'POST', '/api/profile/api-keys', {
        password: PASSWORD,
        ...body,
      });
      assertError(response, 400, 'VALIDATION_FAILED');
      assert.match(response.body, new RegExp(field));
    }
    assert.equal(await count(), before);
    for (const token of ['gpk_', 'gpk_nonsense', `gpk_${'A'.repeat(43)}`]) {
      assertError(await call(bearer(token), 'GET', '/api/servers'), 401, 'UNAUTHORIZED');
    }
  });

  it('is made only with the password, and a code when two-factor sign-in is on', async () => {
    const count = async () =>
      (await panel.db.kysely.selectFrom('api_keys').select('id').execute()).length;
    const before = await count();
    const carol = await register(panel, 'carol');
    const create = (body: Record<string, unknown>) =>
      call(carol.headers, 'POST', '/api/profile/api-keys', { name: 'script', ...body });
    const missing = await create({});
    assertError(missing, 400, 'VALIDATION_FAILED');
    assert.match(missing.body, /body\/password/);
    assertError(await create({ password: 'not the password' }), 403, 'WRONG_PASSWORD');
    assert.equal(await count(), before);

    // With two-factor sign-in: the code too, counted like the sign-in's.
    const setup = await call(carol.headers, 'POST', '/api/profile/2fa/setup', {
      password: PASSWORD,
    });
    assert.equal(setup.statusCode, 200, setup.body);
    const totp = new TOTP({
      issuer: 'Game panel',
      label: 'carol',
      secret: Secret.fromBase32(json<{ data: { secret: string } }>(setup).data.secret),
    });
    const code = () => totp.generate({ timestamp: clock });
    const enabled = await call(carol.headers, 'POST', '/api/profile/2fa/enable', { code: code() });
    assert.equal(enabled.statusCode, 200, enabled.body);
    clock += 30_000;
    const noCode = await create({ password: PASSWORD });
    assertError(noCode, 400, 'VALIDATION_FAILED');
    assert.match(noCode.body, /body\/code/);
    const wrong = String((Number(code()) + 1) % 1_000_000).padStart(6, '0');
    assertError(await create({ password: PASSWORD, code: wrong }), 401, 'INVALID_CREDENTIALS');
    assertError(await create({ password: 'wrong', code: code() }), 403, 'WRONG_PASSWORD');
    assert.equal(await count(), before);
    const made = await create({ password: PASSWORD, code: code() });
    assert.equal(made.statusCode, 200, made.body);
    rememberSecret(json<{ data: { token: string } }>(made).data.token);
    // A code is good once.
    assertError(await create({ password: PASSWORD, code: code() }), 401, 'INVALID_CREDENTIALS');
    assert.equal(await count(), before + 1);
  });

  it('is made by an account without a password only just after it signed in', async () => {
    const dave = await register(panel, 'dave');
    // As an OpenID Connect sign-in leaves it: no password.
    await panel.db.kysely
      .updateTable('users')
      .set({ password_hash: null })
      .where('username', '=', 'dave')
      .execute();
    const made = await call(dave.headers, 'POST', '/api/profile/api-keys', { name: 'fresh' });
    assert.equal(made.statusCode, 200, made.body);
    rememberSecret(json<{ data: { token: string } }>(made).data.token);
    clock += 11 * 60_000;
    assertError(
      await call(dave.headers, 'POST', '/api/profile/api-keys', { name: 'stale' }),
      403,
      'SIGN_IN_AGAIN',
    );
  });

  it('is revoked by a password change, unless its owner keeps it', async () => {
    const erin = await register(panel, 'erin');
    let headers = erin.headers;
    const first = await makeKey(erin, { name: 'one' });
    const second = await makeKey(erin, { name: 'two' });
    const change = async (body: Record<string, unknown>) => {
      const response = await call(headers, 'PUT', '/api/profile/password', {
        old_password: PASSWORD,
        new_password: PASSWORD,
        ...body,
      });
      assert.equal(response.statusCode, 200, response.body);
      const data = json<{ data: { access_token: string; revokedApiKeys: number } }>(response).data;
      headers = bearer(data.access_token);
      return data.revokedApiKeys;
    };
    assert.equal(await change({ revokeApiKeys: false }), 0);
    assert.equal((await call(first.headers, 'GET', '/api/servers')).statusCode, 200);
    assert.equal((await call(second.headers, 'GET', '/api/servers')).statusCode, 200);
    assert.equal(await change({}), 2);
    assertError(await call(first.headers, 'GET', '/api/servers'), 401, 'UNAUTHORIZED');
    assertError(await call(second.headers, 'GET', '/api/servers'), 401, 'UNAUTHORIZED');
    const listed = json<{ data: unknown[] }>(await call(headers, 'GET', '/api/profile/api-keys'));
    assert.deepEqual(listed.data, []);
    assert.equal(await change({ revokeApiKeys: true }), 0);
  });

  it('dies with its owner', async () => {
    const doomed = await register(panel, 'doomed');
    const { headers } = await makeKey(doomed, { name: 'orphan' });
    assert.equal((await call(headers, 'GET', '/api/servers')).statusCode, 200);
    const deleted = await call(admin.headers, 'DELETE', '/api/users/doomed');
    assert.equal(deleted.statusCode, 200, deleted.body);
    assertError(await call(headers, 'GET', '/api/servers'), 401, 'UNAUTHORIZED');
  });
});
