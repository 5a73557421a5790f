import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TicketStatus } from '../src/domain/ticket.js';
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

interface Stats {
  username: string;
  role: string;
  createdAt: string;
  lastLoginAt: string | null;
  serverCount: number;
  tickets: { total: number; pending: number; in_progress: number; closed: number };
  messagesWritten: number;
}

interface TokenResponse {
  access_token: string;
  token_type: string;
  username: string;
  role: string;
}

type Headers = Record<string, string>;

const ownStats = (panel: TestPanel, headers: Headers) =>
  panel.app.inject({ url: '/api/profile/stats', headers });

const statsOf = (panel: TestPanel, headers: Headers, username: string) =>
  panel.app.inject({ url: `/api/profile/stats/${username}`, headers });

const rename = (panel: TestPanel, headers: Headers, payload: object) =>
  panel.app.inject({ method: 'PUT', url: '/api/profile/username', headers, payload });

const changePassword = (panel: TestPanel, headers: Headers, payload: object) =>
  panel.app.inject({ method: 'PUT', url: '/api/profile/password', headers, payload });

const me = (panel: TestPanel, token: string) =>
  panel.app.inject({ url: '/api/auth/me', headers: bearer(token) });

const nameInMe = async (panel: TestPanel, token: string) =>
  json<{ username: string }>(await me(panel, token)).username;

/** The `data` of a successful stats response, after checking the envelope and its keys. */
function statsData(response: LightMyRequestResponse): Stats {
  assert.equal(response.statusCode, 200, response.body);
  const body = json<Envelope<Stats>>(response);
  assert.equal(typeof body.message, 'string');
  assert.deepEqual(Object.keys(body.data).sort(), [
    'createdAt',
    'lastLoginAt',
    'messagesWritten',
    'role',
    'serverCount',
    'tickets',
    'username',
  ]);
  return body.data;
}

/** Ticket rows are inserted directly: the ticket endpoints do not exist yet. */
async function userId(panel: TestPanel, username: string): Promise<number> {
  const row = await panel.db.kysely
    .selectFrom('users')
    .select('id')
    .where('username', '=', username)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return row.id;
}

async function insertTicket(panel: TestPanel, ownerId: number, status: TicketStatus) {
  const now = new Date().toISOString();
  const row = await panel.db.kysely
    .insertInto('tickets')
    .values({
      owner_id: ownerId,
      title: `A ${status} ticket`,
      description: 'Something is wrong',
      status,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function insertMessage(panel: TestPanel, ticketId: number, authorId: number) {
  await panel.db.kysely
    .insertInto('ticket_messages')
    .values({
      ticket_id: ticketId,
      author_id: authorId,
      text: 'Any news?',
      created_at: new Date().toISOString(),
    })
    .execute();
}

describe('own statistics', () => {
  let panel: TestPanel;
  let admin: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'root');
    for (const name of ['alpha', 'beta', 'gamma']) await createServerRow(panel, name);
  });

  it('answers the stats shape with zeros for a new user', async () => {
    const newcomer = await register(panel, 'newcomer');
    const stats = statsData(await ownStats(panel, newcomer.headers));
    assert.ok(Math.abs(Date.parse(stats.createdAt) - Date.now()) < 60_000, stats.createdAt);
    assert.deepEqual(stats, {
      username: 'newcomer',
      role: 'user',
      createdAt: stats.createdAt,
      lastLoginAt: null,
      serverCount: 0,
      tickets: { total: 0, pending: 0, in_progress: 0, closed: 0 },
      messagesWritten: 0,
    });
  });

  it('leaves lastLoginAt null after registering and sets it on login', async () => {
    const visitor = await register(panel, 'visitor');
    assert.equal(statsData(await ownStats(panel, visitor.headers)).lastLoginAt, null);

    const loginStarted = Date.now();
    assert.equal((await login(panel, 'visitor')).statusCode, 200);
    const { lastLoginAt, createdAt } = statsData(await ownStats(panel, visitor.headers));
    assert.equal(typeof lastLoginAt, 'string');
    const loggedInAt = Date.parse(lastLoginAt!);
    assert.ok(loggedInAt >= loginStarted && loggedInAt <= Date.now(), lastLoginAt!);
    assert.ok(loggedInAt >= Date.parse(createdAt));
  });

  it('counts the assigned servers, and every server for an admin', async () => {
    const member = await register(panel, 'member');
    const assigned = await panel.app.inject({
      method: 'PUT',
      url: '/api/users/member/servers',
      headers: admin.headers,
      payload: { servers: ['alpha', 'gamma'] },
    });
    assert.equal(assigned.statusCode, 200, assigned.body);
    assert.equal(statsData(await ownStats(panel, member.headers)).serverCount, 2);
    assert.equal(statsData(await ownStats(panel, admin.headers)).serverCount, 3);
  });

  it("counts only the user's own tickets, by status, and the messages they wrote", async () => {
    const writer = await register(panel, 'writer');
    const other = await register(panel, 'other');
    const writerId = await userId(panel, 'writer');
    const otherId = await userId(panel, 'other');

    const statuses: TicketStatus[] = ['pending', 'in_progress', 'in_progress', 'closed'];
    const writerTickets = await Promise.all(statuses.map((s) => insertTicket(panel, writerId, s)));
    const otherTicket = await insertTicket(panel, otherId, 'pending');
    // writer: two messages on an own ticket and one on the other's ticket.
    await insertMessage(panel, writerTickets[0]!, writerId);
    await insertMessage(panel, writerTickets[0]!, writerId);
    await insertMessage(panel, otherTicket, writerId);
    // other: one message on a ticket of writer's, which counts for other only.
    await insertMessage(panel, writerTickets[1]!, otherId);

    const mine = statsData(await ownStats(panel, writer.headers));
    assert.deepEqual(mine.tickets, { total: 4, pending: 1, in_progress: 2, closed: 1 });
    assert.equal(mine.messagesWritten, 3);

    const theirs = statsData(await ownStats(panel, other.headers));
    assert.deepEqual(theirs.tickets, { total: 1, pending: 1, in_progress: 0, closed: 0 });
    assert.equal(theirs.messagesWritten, 1);
  });
});

describe("another user's statistics", () => {
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
    await register(panel, 'subject');
    await setRole(panel, admin, 'helper', 'support');
    await setRole(panel, admin, 'outlaw', 'banned');
    const subjectId = await userId(panel, 'subject');
    await insertMessage(panel, await insertTicket(panel, subjectId, 'closed'), subjectId);
  });

  it("lets admin and support read another user's stats", async () => {
    for (const reader of [admin, support]) {
      const stats = statsData(await statsOf(panel, reader.headers, 'subject'));
      assert.equal(stats.username, 'subject');
      assert.equal(stats.role, 'user');
      assert.deepEqual(stats.tickets, { total: 1, pending: 0, in_progress: 0, closed: 1 });
      assert.equal(stats.messagesWritten, 1);
    }
  });

  it('refuses a user with 403 and a banned user with 403 BANNED', async () => {
    assertError(await statsOf(panel, player.headers, 'subject'), 403, 'FORBIDDEN');
    assertError(await statsOf(panel, outlaw.headers, 'subject'), 403, 'BANNED');
    assertError(await ownStats(panel, outlaw.headers), 403, 'BANNED');
  });

  it('answers 404 for an unknown name, and 401 without a token', async () => {
    assertError(await statsOf(panel, admin.headers, 'nobody'), 404, 'NOT_FOUND');
    assertError(await statsOf(panel, {}, 'subject'), 401, 'UNAUTHORIZED');
    assertError(await ownStats(panel, {}), 401, 'UNAUTHORIZED');
  });
});

describe('renaming', () => {
  let panel: TestPanel;
  let admin: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'root');
  });

  it('renames the caller: the new name logs in, the old one does not, the token stays', async () => {
    const user = await register(panel, 'oldname');
    const response = await rename(panel, user.headers, {
      new_username: 'newname',
      password: PASSWORD,
    });
    assert.equal(response.statusCode, 200, response.body);
    const body = json<Envelope<{ username: string; role: string }>>(response);
    assert.equal(typeof body.message, 'string');
    assert.deepEqual(body.data, { username: 'newname', role: 'user' });

    assert.equal(json<{ username: string }>(await login(panel, 'newname')).username, 'newname');
    assertError(await login(panel, 'oldname'), 401, 'INVALID_CREDENTIALS');
    assert.equal(await nameInMe(panel, user.token), 'newname');
  });

  it('lets a user change only the case of their own name', async () => {
    const user = await register(panel, 'casey');
    const response = await rename(panel, user.headers, {
      new_username: 'Casey',
      password: PASSWORD,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(await nameInMe(panel, user.token), 'Casey');
    assert.equal(json<{ username: string }>(await login(panel, 'casey')).username, 'Casey');
  });

  it('refuses a name taken in any case with 409 USERNAME_TAKEN', async () => {
    await register(panel, 'Taken');
    const mover = await register(panel, 'mover');
    for (const new_username of ['Taken', 'taken', 'TAKEN', 'ROOT']) {
      const response = await rename(panel, mover.headers, { new_username, password: PASSWORD });
      assertError(response, 409, 'USERNAME_TAKEN');
    }
    assert.equal(await nameInMe(panel, mover.token), 'mover');
    assert.equal(await nameInMe(panel, admin.token), 'root');
  });

  it('refuses a wrong password with 403 WRONG_PASSWORD and keeps the name', async () => {
    const user = await register(panel, 'careful');
    const response = await rename(panel, user.headers, {
      new_username: 'careless',
      password: 'not the password',
    });
    assertError(response, 403, 'WRONG_PASSWORD');
    assert.equal(await nameInMe(panel, user.token), 'careful');
    assertError(await login(panel, 'careless'), 401);
  });

  it('refuses invalid new names and missing fields with 400', async () => {
    const user = await register(panel, 'plain');
    const bad = [
      { new_username: 'ab', password: PASSWORD },
      { new_username: 'x'.repeat(33), password: PASSWORD },
      { new_username: 'has space', password: PASSWORD },
      { new_username: 'slash/name', password: PASSWORD },
      { new_username: 'fine.name', password: '' },
      { new_username: 'fine.name' },
      { password: PASSWORD },
      {},
      { new_username: 'fine.name', password: PASSWORD, role: 'admin' },
    ];
    for (const payload of bad) {
      assertError(await rename(panel, user.headers, payload), 400, 'VALIDATION_FAILED');
    }
    assert.equal(await nameInMe(panel, user.token), 'plain');
  });

  it('refuses a banned user with 403 and a caller without token with 401', async () => {
    const outlaw = await register(panel, 'outlaw');
    await setRole(panel, admin, 'outlaw', 'banned');
    const payload = { new_username: 'reformed', password: PASSWORD };
    assertError(await rename(panel, outlaw.headers, payload), 403, 'BANNED');
    assertError(await rename(panel, {}, payload), 401, 'UNAUTHORIZED');
    assert.equal(await nameInMe(panel, outlaw.token), 'outlaw');
  });
});

describe('changing the password', () => {
  let panel: TestPanel;
  const NEW_PASSWORD = 'a brand new password';
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    await register(panel, 'root');
  });

  it('answers a fresh token in data and revokes every earlier token', async () => {
    const user = await register(panel, 'changer');
    const second = json<{ access_token: string }>(await login(panel, 'changer')).access_token;

    const response = await changePassword(panel, user.headers, {
      old_password: PASSWORD,
      new_password: NEW_PASSWORD,
    });
    assert.equal(response.statusCode, 200, response.body);
    const body = json<Envelope<TokenResponse & { revokedApiKeys: number }>>(response);
    assert.equal(typeof body.message, 'string');
    assert.deepEqual(Object.keys(body.data).sort(), [
      'access_token',
      'revokedApiKeys',
      'role',
      'token_type',
      'username',
    ]);
    // The account had no API key to revoke.
    assert.equal(body.data.revokedApiKeys, 0);
    assert.equal(body.data.token_type, 'bearer');
    assert.equal(body.data.username, 'changer');
    assert.equal(body.data.role, 'user');
    const fresh = body.data.access_token;

    assertError(await me(panel, user.token), 401, 'UNAUTHORIZED');
    assertError(await me(panel, second), 401, 'UNAUTHORIZED');
    assert.equal(await nameInMe(panel, fresh), 'changer');

    assertError(await login(panel, 'changer'), 401, 'INVALID_CREDENTIALS');
    assert.equal((await login(panel, 'changer', NEW_PASSWORD)).statusCode, 200);
  });

  it('refuses a wrong old password with 403 WRONG_PASSWORD and changes nothing', async () => {
    const user = await register(panel, 'forgetful');
    const response = await changePassword(panel, user.headers, {
      old_password: 'not the password',
      new_password: NEW_PASSWORD,
    });
    assertError(response, 403, 'WRONG_PASSWORD');
    assert.equal((await me(panel, user.token)).statusCode, 200);
    assert.equal((await login(panel, 'forgetful')).statusCode, 200);
    assertError(await login(panel, 'forgetful', NEW_PASSWORD), 401);
  });

  it('refuses a new password shorter than 6 characters with 400', async () => {
    const user = await register(panel, 'shorty');
    const response = await changePassword(panel, user.headers, {
      old_password: PASSWORD,
      new_password: '12345',
    });
    assertError(response, 400, 'VALIDATION_FAILED');
    assert.equal((await me(panel, user.token)).statusCode, 200);
    assert.equal((await login(panel, 'shorty')).statusCode, 200);
  });

  it('throttles wrong current passwords like failed logins, so a stolen token cannot guess', async (t) => {
    const limited = await startPanel(t, { LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' });
    await register(limited, 'root');
    const victim = await register(limited, 'victim');
    for (let i = 0; i < 3; i++) {
      const guess = await changePassword(limited, victim.headers, {
        old_password: `guess ${i}`,
        new_password: NEW_PASSWORD,
      });
      assertError(guess, 403, 'WRONG_PASSWORD');
    }
    const blocked = await changePassword(limited, victim.headers, {
      old_password: PASSWORD,
      new_password: NEW_PASSWORD,
    });
    assertError(blocked, 429, 'RATE_LIMITED');
    assert.ok(Number(blocked.headers['retry-after']) >= 1);
    const rename = await limited.app.inject({
      method: 'PUT',
      url: '/api/profile/username',
      headers: victim.headers,
      payload: { new_username: 'renamed', password: PASSWORD },
    });
    assertError(rename, 429, 'RATE_LIMITED');
    // The password did not change, and the account still works with its token.
    assert.equal((await me(limited, victim.token)).statusCode, 200);
  });
});
