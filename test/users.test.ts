import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  assertError,
  bearer,
  createServerRow,
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
}

type Headers = Record<string, string>;

const listUsers = (panel: TestPanel, headers: Headers) =>
  panel.app.inject({ url: '/api/users', headers });

const putRole = (panel: TestPanel, headers: Headers, username: string, payload: object) =>
  panel.app.inject({ method: 'PUT', url: `/api/users/${username}/role`, headers, payload });

const putServers = (panel: TestPanel, headers: Headers, username: string, payload: object) =>
  panel.app.inject({ method: 'PUT', url: `/api/users/${username}/servers`, headers, payload });

const deleteUser = (panel: TestPanel, headers: Headers, username: string) =>
  panel.app.inject({ method: 'DELETE', url: `/api/users/${username}`, headers });

const me = (panel: TestPanel, token: string) =>
  panel.app.inject({ url: '/api/auth/me', headers: bearer(token) });

/** The user as `GET /api/users` shows it to an admin, or undefined when it is not listed. */
async function listed(panel: TestPanel, admin: Session, username: string) {
  const response = await listUsers(panel, admin.headers);
  assert.equal(response.statusCode, 200, response.body);
  return json<Envelope<UserView[]>>(response).data.find((user) => user.username === username);
}

/** Asserts a success envelope around one user of the shape `{username, role, servers, …}`. */
function assertUserEnvelope(response: LightMyRequestResponse): UserView {
  assert.equal(response.statusCode, 200, response.body);
  const body = json<Envelope<UserView>>(response);
  assert.deepEqual(Object.keys(body).sort(), ['data', 'message']);
  assert.equal(typeof body.message, 'string');
  assertUserShape(body.data);
  return body.data;
}

function assertUserShape(user: UserView): void {
  assert.deepEqual(Object.keys(user).sort(), [
    'createdAt',
    'lastLoginAt',
    'role',
    'servers',
    'signIn',
    'twoFactor',
    'username',
  ]);
  assert.ok(!Number.isNaN(Date.parse(user.createdAt)), `createdAt: ${user.createdAt}`);
  assert.ok(user.lastLoginAt === null || !Number.isNaN(Date.parse(user.lastLoginAt)));
  assert.ok(Array.isArray(user.servers));
}

describe('listing users', () => {
  let panel: TestPanel;
  let admin: Session;
  let support: Session;
  let player: Session;
  let outlaw: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'root');
    await register(panel, 'Zulu');
    player = await register(panel, 'alpha');
    await register(panel, 'mike');
    support = await register(panel, 'helper');
    outlaw = await register(panel, 'outlaw');
    await setRole(panel, admin, 'helper', 'support');
    await setRole(panel, admin, 'outlaw', 'banned');
  });

  it('lists every user in the envelope, sorted by name regardless of case', async () => {
    assert.equal((await login(panel, 'mike')).statusCode, 200);
    const response = await listUsers(panel, admin.headers);
    assert.equal(response.statusCode, 200, response.body);
    const body = json<Envelope<UserView[]>>(response);
    assert.equal(typeof body.message, 'string');
    body.data.forEach(assertUserShape);
    assert.deepEqual(
      body.data.map((user) => user.username),
      ['alpha', 'helper', 'mike', 'outlaw', 'root', 'Zulu'],
    );
    const byName = new Map(body.data.map((user) => [user.username, user]));
    assert.equal(byName.get('root')?.role, 'admin');
    assert.equal(byName.get('helper')?.role, 'support');
    assert.equal(byName.get('outlaw')?.role, 'banned');
    assert.equal(byName.get('alpha')?.role, 'user');
    assert.equal(byName.get('alpha')?.lastLoginAt, null);
    assert.equal(typeof byName.get('mike')?.lastLoginAt, 'string');
  });

  it('lets support list users, but not a user, a banned user or a caller without token', async () => {
    const asSupport = await listUsers(panel, support.headers);
    assert.equal(asSupport.statusCode, 200, asSupport.body);
    assert.equal(json<Envelope<UserView[]>>(asSupport).data.length, 6);

    assertError(await listUsers(panel, player.headers), 403, 'FORBIDDEN');
    assertError(await listUsers(panel, outlaw.headers), 403, 'BANNED');
    assertError(await listUsers(panel, {}), 401, 'UNAUTHORIZED');
  });
});

describe('who may administer users', () => {
  let panel: TestPanel;
  let admin: Session;
  let support: Session;
  let player: Session;
  let outlaw: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'root');
    support = await register(panel, 'helper');
    player = await register(panel, 'player');
    outlaw = await register(panel, 'outlaw');
    await register(panel, 'target');
    await setRole(panel, admin, 'helper', 'support');
    await setRole(panel, admin, 'outlaw', 'banned');
    await createServerRow(panel, 'alpha');
  });

  /** Every write on `target`: role, servers and delete. */
  const writes = (headers: Headers) => [
    () => putRole(panel, headers, 'target', { role: 'admin' }),
    () => putServers(panel, headers, 'target', { servers: ['alpha'] }),
    () => deleteUser(panel, headers, 'target'),
  ];

  const assertTargetUntouched = async () => {
    const target = await listed(panel, admin, 'target');
    assert.deepEqual(target && { role: target.role, servers: target.servers }, {
      role: 'user',
      servers: [],
    });
  };

  it('refuses support role, servers and delete with 403 (read only)', async () => {
    for (const write of writes(support.headers)) assertError(await write(), 403, 'FORBIDDEN');
    await assertTargetUntouched();
  });

  it('refuses a user role, servers and delete with 403', async () => {
    for (const write of writes(player.headers)) assertError(await write(), 403, 'FORBIDDEN');
    await assertTargetUntouched();
  });

  it('refuses a banned user role, servers and delete with 403 BANNED', async () => {
    for (const write of writes(outlaw.headers)) assertError(await write(), 403, 'BANNED');
    await assertTargetUntouched();
  });

  it('refuses role, servers and delete without a token with 401', async () => {
    for (const write of writes({})) assertError(await write(), 401, 'UNAUTHORIZED');
    await assertTargetUntouched();
  });
});

describe('changing roles', () => {
  let panel: TestPanel;
  let admin: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'root');
  });

  it('changes a role and answers the user in the envelope', async () => {
    await register(panel, 'promoted');
    const user = assertUserEnvelope(
      await putRole(panel, admin.headers, 'promoted', { role: 'support' }),
    );
    assert.equal(user.username, 'promoted');
    assert.equal(user.role, 'support');
    assert.equal((await listed(panel, admin, 'promoted'))?.role, 'support');
  });

  it('refuses an invalid role and unknown fields with 400, changing nothing', async () => {
    await register(panel, 'steady');
    const bad = [
      { role: 'superuser' },
      { role: 'ADMIN' },
      { role: 1 },
      { role: null },
      {},
      { role: 'admin', extra: true },
    ];
    for (const payload of bad) {
      assertError(await putRole(panel, admin.headers, 'steady', payload), 400, 'VALIDATION_FAILED');
    }
    assert.equal((await listed(panel, admin, 'steady'))?.role, 'user');
  });

  it('answers 404 for an unknown username on role, servers and delete', async () => {
    assertError(await putRole(panel, admin.headers, 'nobody', { role: 'user' }), 404, 'NOT_FOUND');
    assertError(
      await putServers(panel, admin.headers, 'nobody', { servers: [] }),
      404,
      'NOT_FOUND',
    );
    assertError(await deleteUser(panel, admin.headers, 'nobody'), 404, 'NOT_FOUND');
  });

  it("applies a role change on the very next request with the user's old token", async () => {
    const climber = await register(panel, 'climber');
    assertError(await listUsers(panel, climber.headers), 403, 'FORBIDDEN');

    await setRole(panel, admin, 'climber', 'support');
    assert.equal((await listUsers(panel, climber.headers)).statusCode, 200);

    await setRole(panel, admin, 'climber', 'banned');
    assertError(await listUsers(panel, climber.headers), 403, 'BANNED');
    assert.equal(json<{ role: string }>(await me(panel, climber.token)).role, 'banned');
  });
});

describe('the last admin', () => {
  let panel: TestPanel;
  let root: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    root = await register(panel, 'root');
  });

  it('cannot demote or delete themselves while they are the only admin (409)', async () => {
    for (const role of ['user', 'support', 'banned']) {
      assertError(await putRole(panel, root.headers, 'root', { role }), 409, 'LAST_ADMIN');
    }
    assertError(await deleteUser(panel, root.headers, 'root'), 409, 'LAST_ADMIN');
    assert.equal(json<{ role: string }>(await me(panel, root.token)).role, 'admin');
  });

  it('can be demoted when a second admin exists, who then is the last one', async () => {
    const deputy = await register(panel, 'deputy');
    await setRole(panel, root, 'deputy', 'admin');

    assertUserEnvelope(await putRole(panel, deputy.headers, 'root', { role: 'user' }));
    assert.equal(json<{ role: string }>(await me(panel, root.token)).role, 'user');

    assertError(
      await putRole(panel, deputy.headers, 'deputy', { role: 'user' }),
      409,
      'LAST_ADMIN',
    );
    assertError(await deleteUser(panel, deputy.headers, 'deputy'), 409, 'LAST_ADMIN');
    assert.equal(json<{ role: string }>(await me(panel, deputy.token)).role, 'admin');
  });
});

describe('two admins demoting each other at once', () => {
  let panel: TestPanel;
  let east: Session;
  let west: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    east = await register(panel, 'east');
    west = await register(panel, 'west');
    await setRole(panel, east, 'west', 'admin');
  });

  it('always leaves exactly one admin', async () => {
    for (let round = 0; round < 10; round++) {
      const responses = await Promise.all([
        putRole(panel, east.headers, 'west', { role: 'user' }),
        putRole(panel, west.headers, 'east', { role: 'user' }),
      ]);
      const eastWon = responses[0].statusCode === 200;
      const [winner, loser] = eastWon ? responses : [responses[1], responses[0]];
      assert.equal(winner.statusCode, 200, `round ${round}: ${winner.body}`);
      // The loser is refused either as the last admin, or, when its request is checked only
      // after the winner's change, as no longer being an admin at all.
      const refusal = json<{ code: string }>(loser).code;
      if (refusal === 'LAST_ADMIN') assertError(loser, 409, 'LAST_ADMIN');
      else assertError(loser, 403, 'FORBIDDEN');

      const survivor = eastWon ? east : west;
      const listing = json<Envelope<UserView[]>>(await listUsers(panel, survivor.headers));
      const admins = listing.data.filter((user) => user.role === 'admin');
      assert.deepEqual(
        admins.map((user) => user.username),
        [survivor.username],
        `round ${round}`,
      );

      // The survivor promotes the other again for the next round.
      await setRole(panel, survivor, eastWon ? 'west' : 'east', 'admin');
    }
  });
});

describe("setting a user's servers", () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'root');
    member = await register(panel, 'member');
    for (const name of ['alpha', 'beta', 'gamma']) await createServerRow(panel, name);
  });

  const serversInMe = async (session: Session) =>
    json<{ servers: string[] }>(await me(panel, session.token)).servers;

  it('dedupes and replaces the list, an empty list clears it, and me shows it', async () => {
    const set = assertUserEnvelope(
      await putServers(panel, admin.headers, 'member', { servers: ['beta', 'alpha', 'beta'] }),
    );
    assert.equal(set.username, 'member');
    assert.deepEqual([...set.servers].sort(), ['alpha', 'beta']);
    assert.deepEqual((await serversInMe(member)).sort(), ['alpha', 'beta']);
    assert.deepEqual((await listed(panel, admin, 'member'))?.servers.sort(), ['alpha', 'beta']);

    assertUserEnvelope(await putServers(panel, admin.headers, 'member', { servers: ['gamma'] }));
    assert.deepEqual(await serversInMe(member), ['gamma']);

    const cleared = assertUserEnvelope(
      await putServers(panel, admin.headers, 'member', { servers: [] }),
    );
    assert.deepEqual(cleared.servers, []);
    assert.deepEqual(await serversInMe(member), []);
    assert.deepEqual((await listed(panel, admin, 'member'))?.servers, []);
  });

  it("shows every server in an admin's me, without any assigned", async () => {
    assert.deepEqual((await listed(panel, admin, 'root'))?.servers, []);
    assert.deepEqual((await serversInMe(admin)).sort(), ['alpha', 'beta', 'gamma']);
  });

  it('refuses a body that is not a list of names with 400, keeping the old list', async () => {
    assertUserEnvelope(await putServers(panel, admin.headers, 'member', { servers: ['alpha'] }));
    const bad = [
      { servers: 'alpha' },
      { servers: { alpha: true } },
      { servers: [1] },
      { servers: null },
      {},
      { servers: ['alpha'], extra: true },
    ];
    for (const payload of bad) {
      assertError(
        await putServers(panel, admin.headers, 'member', payload),
        400,
        'VALIDATION_FAILED',
      );
    }
    assert.deepEqual(await serversInMe(member), ['alpha']);
  });

  it('refuses a server that does not exist with 400 UNKNOWN_SERVER, keeping the old list', async () => {
    assertUserEnvelope(await putServers(panel, admin.headers, 'member', { servers: ['alpha'] }));
    const response = await putServers(panel, admin.headers, 'member', {
      servers: ['beta', 'no-such-server'],
    });
    assertError(response, 400, 'UNKNOWN_SERVER');
    assert.deepEqual(await serversInMe(member), ['alpha']);
    assert.deepEqual((await listed(panel, admin, 'member'))?.servers, ['alpha']);
  });
});

describe('deleting users', () => {
  let panel: TestPanel;
  let admin: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'root');
    await createServerRow(panel, 'alpha');
  });

  it('answers the stored name and drops the server access, whatever the case in the path', async () => {
    await register(panel, 'Mixed.Case');
    assertUserEnvelope(
      await putServers(panel, admin.headers, 'mixed.case', { servers: ['alpha'] }),
    );
    const response = await deleteUser(panel, admin.headers, 'MIXED.CASE');
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json<Envelope<{ username: string }>>(response).data, {
      username: 'Mixed.Case',
    });
    const links = await panel.db.kysely
      .selectFrom('user_servers')
      .innerJoin('users', 'users.id', 'user_servers.user_id')
      .select('users.username')
      .where('users.username', '=', 'Mixed.Case')
      .execute();
    assert.deepEqual(links, []);
  });

  it('never leaves server access behind when servers are set while the user is deleted', async () => {
    for (let round = 0; round < 10; round++) {
      const name = `racing${round}`;
      await register(panel, name);
      const [set, deleted] = await Promise.all([
        putServers(panel, admin.headers, name, { servers: ['alpha'] }),
        deleteUser(panel, admin.headers, name),
      ]);
      assert.equal(deleted.statusCode, 200, deleted.body);
      assert.ok([200, 404].includes(set.statusCode), set.body);
      const links = await panel.db.kysely
        .selectFrom('user_servers')
        .innerJoin('users', 'users.id', 'user_servers.user_id')
        .select('users.id')
        .where('users.deleted_at', 'is not', null)
        .execute();
      assert.deepEqual(links, [], `round ${round}`);
    }
  });

  it('revokes the token, refuses the login and frees the name', async () => {
    const leaver = await register(panel, 'leaver');
    assertUserEnvelope(await putServers(panel, admin.headers, 'leaver', { servers: ['alpha'] }));

    const response = await deleteUser(panel, admin.headers, 'leaver');
    assert.equal(response.statusCode, 200, response.body);
    const body = json<Envelope<{ username: string }>>(response);
    assert.equal(typeof body.message, 'string');
    assert.deepEqual(body.data, { username: 'leaver' });

    assertError(await me(panel, leaver.token), 401, 'UNAUTHORIZED');
    assertError(await login(panel, 'leaver'), 401, 'INVALID_CREDENTIALS');
    assert.equal(await listed(panel, admin, 'leaver'), undefined);

    const again = await register(panel, 'leaver');
    assert.equal(again.role, 'user');
    assert.deepEqual(json(await me(panel, again.token)), {
      username: 'leaver',
      role: 'user',
      servers: [],
      signIn: { hasPassword: true, providers: [] },
      twoFactor: { enabled: false, mustEnrol: false },
    });
    assertError(await me(panel, leaver.token), 401, 'UNAUTHORIZED');
  });

  it("keeps the deleted user's tickets and messages", async () => {
    await register(panel, 'author');
    const { id: authorId } = await panel.db.kysely
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'author')
      .executeTakeFirstOrThrow();
    const now = new Date().toISOString();
    const ticket = await panel.db.kysely
      .insertInto('tickets')
      .values({
        owner_id: authorId,
        title: 'Server lags',
        description: 'Since the update',
        status: 'pending',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const message = await panel.db.kysely
      .insertInto('ticket_messages')
      .values({ ticket_id: ticket.id, author_id: authorId, text: 'Still lagging', created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();

    assert.equal((await deleteUser(panel, admin.headers, 'author')).statusCode, 200);

    const tickets = await panel.db.kysely
      .selectFrom('tickets')
      .select(['id', 'title'])
      .where('owner_id', '=', authorId)
      .execute();
    assert.deepEqual(tickets, [{ id: ticket.id, title: 'Server lags' }]);
    const messages = await panel.db.kysely
      .selectFrom('ticket_messages')
      .select(['id', 'ticket_id', 'text'])
      .where('author_id', '=', authorId)
      .execute();
    assert.deepEqual(messages, [{ id: message.id, ticket_id: ticket.id, text: 'Still lagging' }]);
    // Their author is still there to name: the row keeps the last name, flagged deleted.
    const author = await panel.db.kysely
      .selectFrom('users')
      .select(['username', 'deleted_at'])
      .where('id', '=', authorId)
      .executeTakeFirstOrThrow();
    assert.equal(author.username, 'author');
    assert.notEqual(author.deleted_at, null);
  });
});

describe('password hashes never leave the panel', () => {
  let panel: TestPanel;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    await createServerRow(panel, 'alpha');
  });

  /** Every hash the database has held during this test, deleted and replaced ones included. */
  const seenHashes = new Set<string>();

  /** Every key of `value`, at any depth, except those holding a plain boolean flag. */
  const keysOf = (value: unknown): string[] => {
    if (Array.isArray(value)) return value.flatMap(keysOf);
    if (value === null || typeof value !== 'object') return [];
    return Object.entries(value).flatMap(([key, inner]) =>
      typeof inner === 'boolean' ? [] : [key, ...keysOf(inner)],
    );
  };

  const rememberHashes = async () => {
    const rows = await panel.db.kysely.selectFrom('users').select('password_hash').execute();
    for (const { password_hash: hash } of rows) if (hash) seenHashes.add(hash);
  };

  /** Asserts a 200 whose body holds no hash, in any form, and no password-like value. */
  const assertNoSecrets = async (response: LightMyRequestResponse) => {
    assert.equal(response.statusCode, 200, response.body);
    await rememberHashes();
    assert.ok(seenHashes.size > 0);
    assert.ok(!response.body.includes('$argon2'), response.body);
    for (const hash of seenHashes) assert.ok(!response.body.includes(hash), response.body);
    const suspicious = keysOf(JSON.parse(response.body)).filter((key) =>
      /password|hash/i.test(key),
    );
    assert.deepEqual(suspicious, []);
  };

  const post = (url: string, payload: object) => panel.app.inject({ method: 'POST', url, payload });
  const put = (url: string, payload: object, headers: Headers) =>
    panel.app.inject({ method: 'PUT', url, headers, payload });

  it('is true of every user and profile endpoint', async () => {
    const credentials = { password: PASSWORD };
    await assertNoSecrets(await post('/api/auth/register', { username: 'root', ...credentials }));
    await assertNoSecrets(await post('/api/auth/register', { username: 'member', ...credentials }));
    await assertNoSecrets(await post('/api/auth/register', { username: 'doomed', ...credentials }));

    const loggedIn = await login(panel, 'root');
    await assertNoSecrets(loggedIn);
    const admin = bearer(json<{ access_token: string }>(loggedIn).access_token);
    const member = bearer(
      json<{ access_token: string }>(await login(panel, 'member')).access_token,
    );

    await assertNoSecrets(await panel.app.inject({ url: '/api/auth/me', headers: admin }));
    await assertNoSecrets(await listUsers(panel, admin));
    await assertNoSecrets(await putRole(panel, admin, 'member', { role: 'support' }));
    await assertNoSecrets(await putServers(panel, admin, 'member', { servers: ['alpha'] }));
    await assertNoSecrets(await panel.app.inject({ url: '/api/profile/stats', headers: member }));
    await assertNoSecrets(
      await panel.app.inject({ url: '/api/profile/stats/member', headers: admin }),
    );
    await assertNoSecrets(
      await put('/api/profile/username', { new_username: 'renamed', ...credentials }, member),
    );
    await assertNoSecrets(
      await put(
        '/api/profile/password',
        { old_password: PASSWORD, new_password: 'another secret' },
        member,
      ),
    );
    await assertNoSecrets(await deleteUser(panel, admin, 'doomed'));
    // The replaced and the deleted hash were both seen, so every check above covered them.
    assert.ok(seenHashes.size >= 4);
  });
});
