import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, json, register, setRole, type Session } from './helpers/factories.js';

interface Person {
  username: string;
  role: string;
  deleted: boolean;
}
interface Ticket {
  id: number;
  title: string;
  description: string;
  status: string;
  owner: Person;
  createdAt: string;
  updatedAt: string;
  messages: { id: number; author: Person; text: string; createdAt: string }[];
  history: { by: Person; from: string; to: string; at: string }[];
}
interface Summary extends Omit<Ticket, 'messages' | 'history'> {
  messageCount: number;
}

describe('tickets', () => {
  let panel: TestPanel;
  let admin: Session;
  let staff: Session;
  let alice: Session;
  let bob: Session;
  let outlaw: Session;

  const open = async (session: Session, title = 'Server lag', description = 'It lags') => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: session.headers,
      payload: { title, description },
    });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: Ticket }>(response).data;
  };
  const get = (session: Session, id: number | string) =>
    panel.app.inject({ url: `/api/tickets/${id}`, headers: session.headers });
  const write = (session: Session, id: number | string, text: unknown) =>
    panel.app.inject({
      method: 'POST',
      url: `/api/tickets/${id}/message`,
      headers: session.headers,
      payload: { text } as Record<string, unknown>,
    });
  const setStatus = (session: Session, id: number | string, status: unknown) =>
    panel.app.inject({
      method: 'PUT',
      url: `/api/tickets/${id}/status`,
      headers: session.headers,
      payload: { status } as Record<string, unknown>,
    });
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    staff = await register(panel, 'staff');
    alice = await register(panel, 'alice');
    bob = await register(panel, 'bob');
    outlaw = await register(panel, 'outlaw');
    await setRole(panel, admin, 'staff', 'support');
    await setRole(panel, admin, 'outlaw', 'banned');
  });

  it('opens a pending ticket that keeps its text exactly as sent', async () => {
    const description = 'Line one\nLine two ünïcødé 🎮\r\n<script>alert("x")</script> & \t\u0001?';
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: alice.headers,
      payload: { title: '<b>Crash</b> on join', description },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    const ticket = json<{ data: Ticket }>(response).data;
    assert.equal(ticket.status, 'pending');
    assert.equal(ticket.title, '<b>Crash</b> on join');
    assert.equal(ticket.description, description);
    assert.deepEqual(ticket.owner, { username: 'alice', role: 'user', deleted: false });
    assert.deepEqual(ticket.messages, []);
    assert.deepEqual(ticket.history, []);
    assert.equal(ticket.createdAt, ticket.updatedAt);
    const read = json<{ data: Ticket }>(await get(alice, ticket.id)).data;
    assert.equal(read.description, description);
  });

  it('refuses invalid tickets with 400 and the anonymous and banned with 401 and 403', async () => {
    for (const payload of [
      { title: '', description: 'x' },
      { title: 'x'.repeat(201), description: 'x' },
      { title: 'x', description: '' },
      { title: 'x' },
      { title: 'x', description: 'x', status: 'closed' },
      { title: 5, description: 'x' },
      { title: 'x', description: 'NUL \u0000 inside' },
    ]) {
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/tickets/create',
        headers: alice.headers,
        payload,
      });
      assertError(response, 400, 'VALIDATION_FAILED');
    }
    const anonymous = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      payload: { title: 'x', description: 'y' },
    });
    assertError(anonymous, 401);
    const banned = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: outlaw.headers,
      payload: { title: 'x', description: 'y' },
    });
    assertError(banned, 403, 'BANNED');
    assertError(await panel.app.inject({ url: '/api/tickets', headers: outlaw.headers }), 403);
  });

  it('shows a ticket to its owner, support and admin, and answers 404 to anyone else', async () => {
    const ticket = await open(alice, 'Private matter');
    for (const session of [alice, staff, admin]) {
      assert.equal((await get(session, ticket.id)).statusCode, 200);
    }
    assertError(await get(bob, ticket.id), 404, 'NOT_FOUND');
    assertError(await write(bob, ticket.id, 'let me in'), 404, 'NOT_FOUND');
    assertError(await get(bob, 999_999), 404, 'NOT_FOUND');
    assert.equal(
      json<{ message: string }>(await get(bob, ticket.id)).message,
      json<{ message: string }>(await get(bob, 999_999)).message,
      'the same answer whether the ticket exists or not',
    );
    assertError(await get(outlaw, ticket.id), 403, 'BANNED');
    assertError(await get(alice, 'abc'), 400);
    assertError(await get(alice, 0), 400);
  });

  it('lets the owner, support and admin write; shows authors as they are now', async () => {
    const ticket = await open(bob, 'Lost items');
    for (const [session, text] of [
      [bob, 'I lost my diamonds'],
      [staff, 'Looking into it'],
      [admin, 'Restored from backup'],
    ] as const) {
      const response = await write(session, ticket.id, text);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(json<{ data: { text: string } }>(response).data.text, text);
    }
    assertError(await write(bob, ticket.id, ''), 400, 'VALIDATION_FAILED');
    assertError(await write(bob, ticket.id, 42), 400, 'VALIDATION_FAILED');

    const renamed = await panel.app.inject({
      method: 'PUT',
      url: '/api/profile/username',
      headers: bob.headers,
      payload: { new_username: 'robert', password: 'correct horse' },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const detail = json<{ data: Ticket }>(await get(admin, ticket.id)).data;
    assert.deepEqual(
      detail.messages.map((message) => [
        message.author.username,
        message.author.role,
        message.text,
      ]),
      [
        ['robert', 'user', 'I lost my diamonds'],
        ['staff', 'support', 'Looking into it'],
        ['admin', 'admin', 'Restored from backup'],
      ],
    );
    assert.equal(detail.owner.username, 'robert');
    assert.ok(detail.updatedAt >= detail.messages.at(-1)!.createdAt);
  });

  it("keeps a deleted author's tickets and messages, marked as deleted", async () => {
    const leaver = await register(panel, 'leaver');
    const ticket = await open(leaver, 'Goodbye');
    assert.equal((await write(leaver, ticket.id, 'Last words')).statusCode, 200);
    const deleted = await panel.app.inject({
      method: 'DELETE',
      url: '/api/users/leaver',
      headers: admin.headers,
    });
    assert.equal(deleted.statusCode, 200);
    const detail = json<{ data: Ticket }>(await get(staff, ticket.id)).data;
    assert.deepEqual(detail.owner, { username: 'leaver', role: 'user', deleted: true });
    assert.deepEqual(detail.messages[0]?.author, {
      username: 'leaver',
      role: 'user',
      deleted: true,
    });
    assert.equal(detail.messages[0].text, 'Last words');
  });

  it('lets only admin and support set the status, keeping every change in the history', async () => {
    const ticket = await open(alice, 'Whitelist me');
    assertError(await setStatus(alice, ticket.id, 'closed'), 403, 'FORBIDDEN');
    assertError(await setStatus(outlaw, ticket.id, 'closed'), 403);
    assertError(await setStatus(staff, ticket.id, 'done'), 400, 'VALIDATION_FAILED');
    assertError(await setStatus(staff, 999_999, 'closed'), 404);

    for (const [session, status] of [
      [staff, 'in_progress'],
      [admin, 'closed'],
      [admin, 'closed'],
      [staff, 'pending'],
    ] as const) {
      const response = await setStatus(session, ticket.id, status);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(json<{ data: Ticket }>(response).data.status, status);
    }
    const history = json<{ data: Ticket }>(await get(alice, ticket.id)).data.history;
    assert.deepEqual(
      history.map((change) => [change.by.username, change.from, change.to]),
      [
        ['staff', 'pending', 'in_progress'],
        ['admin', 'in_progress', 'closed'],
        ['staff', 'closed', 'pending'],
      ],
      'setting the same status again records nothing',
    );
    for (const change of history) assert.ok(!Number.isNaN(Date.parse(change.at)));
  });

  it('refuses messages on a closed ticket with 409, and accepts them once reopened', async () => {
    const ticket = await open(alice, 'Closed soon');
    assert.equal((await setStatus(admin, ticket.id, 'closed')).statusCode, 200);
    for (const session of [alice, staff, admin]) {
      assertError(await write(session, ticket.id, 'hello?'), 409, 'CONFLICT');
    }
    assert.equal(json<{ data: Ticket }>(await get(alice, ticket.id)).data.messages.length, 0);
    assert.equal((await setStatus(staff, ticket.id, 'in_progress')).statusCode, 200);
    assert.equal((await write(alice, ticket.id, 'thanks for reopening')).statusCode, 200);
  });

  it('lists own tickets for users and all for staff, newest activity first, by status and page', async (t) => {
    const own = await startPanel(t);
    const boss = await register(own, 'boss');
    const helper = await register(own, 'helper');
    const user1 = await register(own, 'user1');
    const user2 = await register(own, 'user2');
    await own.app.inject({
      method: 'PUT',
      url: '/api/users/helper/role',
      headers: boss.headers,
      payload: { role: 'support' },
    });
    const make = async (session: Session, title: string) => {
      const response = await own.app.inject({
        method: 'POST',
        url: '/api/tickets/create',
        headers: session.headers,
        payload: { title, description: 'd' },
      });
      return json<{ data: Ticket }>(response).data.id;
    };
    const first = await make(user1, 'first');
    const second = await make(user2, 'second');
    const third = await make(user1, 'third');
    // A message makes the first ticket the most recently active one.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await own.app.inject({
      method: 'POST',
      url: `/api/tickets/${first}/message`,
      headers: user1.headers,
      payload: { text: 'bump' },
    });
    await own.app.inject({
      method: 'PUT',
      url: `/api/tickets/${second}/status`,
      headers: helper.headers,
      payload: { status: 'closed' },
    });

    const listOf = async (session: Session, query = '') => {
      const response = await own.app.inject({
        url: `/api/tickets${query}`,
        headers: session.headers,
      });
      assert.equal(response.statusCode, 200, response.body);
      const data = json<{ data: Summary[] }>(response).data;
      return {
        titles: data.map((t) => t.title),
        data,
        total: Number(response.headers['x-total-count']),
      };
    };
    assert.deepEqual((await listOf(user1)).titles, ['first', 'third']);
    assert.deepEqual((await listOf(user2)).titles, ['second']);
    assert.deepEqual((await listOf(boss)).titles, ['second', 'first', 'third']);
    assert.deepEqual((await listOf(helper)).titles, ['second', 'first', 'third']);
    assert.deepEqual((await listOf(boss, '?status=closed')).titles, ['second']);
    assert.deepEqual((await listOf(user1, '?status=closed')).titles, []);
    assert.deepEqual((await listOf(boss, '?status=pending')).titles, ['first', 'third']);
    const page = await listOf(boss, '?limit=1&offset=1');
    assert.deepEqual(page.titles, ['first']);
    assert.equal(page.total, 3);
    assert.equal(page.data[0]?.messageCount, 1);
    assert.ok(!('messages' in page.data[0]), 'lists carry a count, not the messages');
    assert.deepEqual((await listOf(boss, '?offset=10')).titles, []);
    for (const query of ['?limit=0', '?limit=201', '?offset=-1', '?status=open', '?limit=x']) {
      assertError(
        await own.app.inject({ url: `/api/tickets${query}`, headers: boss.headers }),
        400,
      );
    }
    assert.equal(third > second, true);
  });

  it('stores 50 messages posted in parallel to one ticket, none lost, in order of arrival', async () => {
    const ticket = await open(alice, 'Busy thread');
    const texts = Array.from({ length: 50 }, (_, i) => `message ${i}`);
    const responses = await Promise.all(
      texts.map((text, i) => write(i % 2 === 0 ? alice : staff, ticket.id, text)),
    );
    for (const response of responses) assert.equal(response.statusCode, 200, response.body);
    const stored = json<{ data: Ticket }>(await get(admin, ticket.id)).data.messages;
    assert.equal(stored.length, 50);
    assert.deepEqual([...stored.map((m) => m.text)].sort(), [...texts].sort());
    const ids = stored.map((message) => message.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'listed in the order they were stored',
    );
    const answered = responses.map((response) => json<{ data: { id: number } }>(response).data.id);
    assert.deepEqual(
      [...answered].sort((a, b) => a - b),
      ids,
      'every acknowledged message is there',
    );
    const times = stored.map((message) => message.createdAt);
    assert.deepEqual(times, [...times].sort(), 'times follow the order of arrival');
  });

  it('counts tickets by status and messages written in profile statistics', async (t) => {
    const own = await startPanel(t);
    const boss = await register(own, 'boss');
    const user = await register(own, 'counted');
    const ids: number[] = [];
    for (const title of ['a', 'b', 'c']) {
      const response = await own.app.inject({
        method: 'POST',
        url: '/api/tickets/create',
        headers: user.headers,
        payload: { title, description: 'd' },
      });
      ids.push(json<{ data: Ticket }>(response).data.id);
    }
    const say = (session: Session, id: number) =>
      own.app.inject({
        method: 'POST',
        url: `/api/tickets/${id}/message`,
        headers: session.headers,
        payload: { text: 'x' },
      });
    await say(user, ids[0]!);
    await say(user, ids[1]!);
    await say(boss, ids[1]!);
    const status = (id: number, value: string) =>
      own.app.inject({
        method: 'PUT',
        url: `/api/tickets/${id}/status`,
        headers: boss.headers,
        payload: { status: value },
      });
    await status(ids[0]!, 'in_progress');
    await status(ids[1]!, 'closed');
    const stats = json<{ data: { tickets: unknown; messagesWritten: number } }>(
      await own.app.inject({ url: '/api/profile/stats', headers: user.headers }),
    ).data;
    assert.deepEqual(stats.tickets, { total: 3, pending: 1, in_progress: 1, closed: 1 });
    assert.equal(stats.messagesWritten, 2);
    const bossStats = json<{ data: { tickets: unknown; messagesWritten: number } }>(
      await own.app.inject({ url: '/api/profile/stats/counted', headers: boss.headers }),
    ).data;
    assert.deepEqual(bossStats, stats);
  });
});
