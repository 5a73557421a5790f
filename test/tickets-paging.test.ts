/**
 * One ticket cannot take the panel down: descriptions and messages have a byte limit (413 above,
 * nothing stored), and a ticket is read a page at a time, its older messages and status changes
 * through cursors.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, testEnvironment, type TestPanel } from './helpers/app.js';
import { assertError, json, register, setRole, type Session } from './helpers/factories.js';
import { ConfigError, loadConfig } from '../src/config.js';

interface Message {
  id: number;
  author: { username: string };
  text: string;
  createdAt: string;
}
interface Change {
  by: { username: string };
  from: string;
  to: string;
  at: string;
}
interface MessagePage {
  messages: Message[];
  messageCount: number;
  olderMessagesCursor: string | null;
}
interface HistoryPage {
  history: Change[];
  historyCount: number;
  olderHistoryCursor: string | null;
}
interface Ticket extends MessagePage, HistoryPage {
  id: number;
  title: string;
  description: string;
  status: string;
  createdAt: string;
  updatedAt: string;
}

const DEFAULT_LIMIT = 64 * 1024;
const MiB = 1024 * 1024;

describe('ticket size limits and paging', () => {
  let panel: TestPanel;
  let admin: Session;
  let staff: Session;
  let alice: Session;
  let bob: Session;
  let outlaw: Session;

  const open = async (session: Session, description = 'It lags', title = 'Paging') => {
    const response = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: session.headers,
      payload: { title, description },
    });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: Ticket }>(response).data;
  };
  const write = (session: Session, id: number, text: string) =>
    panel.app.inject({
      method: 'POST',
      url: `/api/tickets/${id}/message`,
      headers: session.headers,
      payload: { text },
    });
  const read = async (session: Session, id: number) => {
    const response = await panel.app.inject({
      url: `/api/tickets/${id}`,
      headers: session.headers,
    });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: Ticket }>(response).data;
  };
  const page = (session: Session, id: number | string, list: string, query = '') =>
    panel.app.inject({
      url: `/api/tickets/${id}/${list}${query === '' ? '' : `?${query}`}`,
      headers: session.headers,
    });
  const storedMessages = async (ticketId: number) =>
    Number(
      (
        await panel.db.kysely
          .selectFrom('ticket_messages')
          .select((eb) => eb.fn.countAll().as('count'))
          .where('ticket_id', '=', ticketId)
          .executeTakeFirstOrThrow()
      ).count,
    );
  const storedTickets = async () =>
    Number(
      (
        await panel.db.kysely
          .selectFrom('tickets')
          .select((eb) => eb.fn.countAll().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );
  /** Follows `cursor` back to the first message; answers every page, newest page first. */
  const walkMessages = async (session: Session, id: number, limit: number, cursor?: string) => {
    const pages: MessagePage[] = [];
    let before = cursor;
    for (let guard = 0; guard < 1000; guard++) {
      const query = `limit=${limit}${before === undefined ? '' : `&before=${before}`}`;
      const response = await page(session, id, 'messages', query);
      assert.equal(response.statusCode, 200, response.body);
      const data = json<{ data: MessagePage }>(response).data;
      pages.push(data);
      if (data.olderMessagesCursor === null) return pages;
      before = data.olderMessagesCursor;
    }
    assert.fail('the cursor never ended');
  };
  /** Writes legacy rows directly: messages stored before the length limit existed. */
  const insertLegacyMessages = async (ticketId: number, texts: readonly string[]) => {
    const author = await panel.db.kysely
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow();
    for (const text of texts) {
      await panel.db.kysely
        .insertInto('ticket_messages')
        .values({
          ticket_id: ticketId,
          author_id: author.id,
          text,
          created_at: new Date().toISOString(),
        })
        .execute();
    }
  };

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

  describe('the length limit (default 64 KiB of UTF-8)', () => {
    it('refuses a message one byte over the limit with 413 and stores nothing', async () => {
      const ticket = await open(alice);
      for (const text of [
        'a'.repeat(DEFAULT_LIMIT + 1),
        // Fewer characters than the limit, more bytes: 2 bytes each.
        'é'.repeat(DEFAULT_LIMIT / 2 + 1),
        // 4 bytes each (one character, two UTF-16 units).
        `${'🎮'.repeat(DEFAULT_LIMIT / 4)}a`,
        'x'.repeat(500 * 1024),
      ]) {
        const response = await write(alice, ticket.id, text);
        assertError(response, 413, 'PAYLOAD_TOO_LARGE');
      }
      const refused = json<{ message: string }>(
        await write(staff, ticket.id, 'a'.repeat(DEFAULT_LIMIT + 1)),
      );
      assert.match(refused.message, /65537 bytes.*65536/);
      assert.equal(await storedMessages(ticket.id), 0, 'nothing was stored');
      const detail = await read(alice, ticket.id);
      assert.equal(detail.messageCount, 0);
      assert.equal(detail.updatedAt, detail.createdAt, 'the ticket was not touched');
    });

    it('accepts a message of exactly the limit, counting multi-byte characters as bytes', async () => {
      const ticket = await open(alice);
      const texts = [
        'a'.repeat(DEFAULT_LIMIT),
        'é'.repeat(DEFAULT_LIMIT / 2),
        '🎮'.repeat(DEFAULT_LIMIT / 4),
        `${'€'.repeat((DEFAULT_LIMIT - 1) / 3)}a`,
      ];
      for (const text of texts) {
        assert.equal(Buffer.byteLength(text), DEFAULT_LIMIT);
        const response = await write(alice, ticket.id, text);
        assert.equal(response.statusCode, 200, response.body.slice(0, 300));
      }
      const stored = (await read(staff, ticket.id)).messages.map((message) => message.text);
      assert.deepEqual(stored, texts, 'stored and returned exactly');
    });

    it('limits the description the same way; nothing is created on refusal', async () => {
      const ticketsBefore = await storedTickets();
      for (const description of [
        'a'.repeat(DEFAULT_LIMIT + 1),
        'é'.repeat(DEFAULT_LIMIT / 2 + 1),
      ]) {
        const response = await panel.app.inject({
          method: 'POST',
          url: '/api/tickets/create',
          headers: alice.headers,
          payload: { title: 'Too long', description },
        });
        assertError(response, 413, 'PAYLOAD_TOO_LARGE');
      }
      assert.equal(await storedTickets(), ticketsBefore, 'no ticket was created');
      const exact = 'é'.repeat(DEFAULT_LIMIT / 2);
      assert.equal((await open(alice, exact)).description, exact);
    });

    it('checks the limit before anything else is written, on a closed ticket too', async () => {
      const ticket = await open(alice);
      assert.equal(
        (
          await panel.app.inject({
            method: 'PUT',
            url: `/api/tickets/${ticket.id}/status`,
            headers: staff.headers,
            payload: { status: 'closed' },
          })
        ).statusCode,
        200,
      );
      assertError(await write(alice, ticket.id, 'a'.repeat(DEFAULT_LIMIT + 1)), 413);
      assertError(await write(alice, ticket.id, 'fine'), 409, 'CONFLICT');
      assert.equal(await storedMessages(ticket.id), 0);
    });

    it('follows TICKET_MESSAGE_MAX_BYTES, even when the escaped body is larger than MAX_BODY_BYTES', async (t) => {
      const limit = 256 * 1024;
      const own = await startPanel(t, { TICKET_MESSAGE_MAX_BYTES: String(limit) });
      const owner = await register(own, 'owner');
      const created = await own.app.inject({
        method: 'POST',
        url: '/api/tickets/create',
        headers: owner.headers,
        payload: { title: 'Configured', description: 'd' },
      });
      const id = json<{ data: Ticket }>(created).data.id;
      const say = (text: string) =>
        own.app.inject({
          method: 'POST',
          url: `/api/tickets/${id}/message`,
          headers: owner.headers,
          payload: { text },
        });
      // Each U+0001 is 6 bytes of JSON: the body is 1.5 MiB, over the default MAX_BODY_BYTES.
      const escaped = '\u0001'.repeat(limit);
      const accepted = await say(escaped);
      assert.equal(accepted.statusCode, 200, accepted.body.slice(0, 300));
      assertError(await say('a'.repeat(limit + 1)), 413, 'PAYLOAD_TOO_LARGE');
      assertError(await say(`${escaped}a`), 413, 'PAYLOAD_TOO_LARGE');
      const detail = json<{ data: Ticket }>(
        await own.app.inject({ url: `/api/tickets/${id}`, headers: owner.headers }),
      ).data;
      assert.deepEqual(
        detail.messages.map((message) => message.text),
        [escaped],
      );
    });

    it('reads TICKET_MESSAGE_MAX_BYTES once, with a one-line error naming it', async () => {
      const { env, cleanup } = await testEnvironment();
      try {
        assert.equal(loadConfig(env).ticketMessageMaxBytes, DEFAULT_LIMIT);
        assert.equal(
          loadConfig({ ...env, TICKET_MESSAGE_MAX_BYTES: '1000' }).ticketMessageMaxBytes,
          1000,
        );
        for (const value of ['abc', '0', '-5', '1.5', String(MiB + 1)]) {
          assert.throws(
            () => loadConfig({ ...env, TICKET_MESSAGE_MAX_BYTES: value }),
            (error: unknown) =>
              error instanceof ConfigError &&
              error.variable === 'TICKET_MESSAGE_MAX_BYTES' &&
              !error.message.includes('\n'),
          );
        }
      } finally {
        await cleanup();
      }
    });
  });

  describe('messages, a page at a time', () => {
    const COUNT = 123;
    let ticket: Ticket;
    let texts: string[];

    before(async () => {
      ticket = await open(alice, 'Busy thread');
      texts = Array.from({ length: COUNT }, (_, i) => `message ${i + 1}`);
      for (const [i, text] of texts.entries()) {
        const response = await write(i % 3 === 0 ? staff : alice, ticket.id, text);
        assert.equal(response.statusCode, 200, response.body);
      }
    });

    it('reads a ticket with its newest 50 messages, oldest first, the count and a cursor', async () => {
      const detail = await read(alice, ticket.id);
      assert.equal(detail.messageCount, COUNT);
      assert.deepEqual(
        detail.messages.map((message) => message.text),
        texts.slice(-50),
      );
      assert.equal(typeof detail.olderMessagesCursor, 'string');
      const fresh = await open(alice);
      assert.equal(fresh.messageCount, 0);
      assert.equal(fresh.olderMessagesCursor, null);
      assert.equal(fresh.historyCount, 0);
      assert.equal(fresh.olderHistoryCursor, null);
    });

    it('walks every message exactly once, in order, whatever the page size', async () => {
      const detail = await read(staff, ticket.id);
      const fromDetail = await walkMessages(staff, ticket.id, 50, detail.olderMessagesCursor!);
      const all = [...fromDetail.reverse().flatMap((p) => p.messages), ...detail.messages];
      assert.deepEqual(
        all.map((message) => message.text),
        texts,
      );
      const ids = all.map((message) => message.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
      for (const limit of [1, 7, 100]) {
        const pages = await walkMessages(admin, ticket.id, limit);
        assert.equal(pages.length, Math.ceil(COUNT / limit));
        for (const each of pages) {
          assert.ok(each.messages.length <= limit);
          assert.equal(each.messageCount, COUNT);
        }
        assert.deepEqual(
          pages.reverse().flatMap((p) => p.messages.map((message) => message.text)),
          texts,
          `limit=${limit}`,
        );
      }
    });

    it('answers the newest page without a cursor, like the ticket read', async () => {
      const response = await page(alice, ticket.id, 'messages');
      assert.equal(response.statusCode, 200, response.body);
      const data = json<{ data: MessagePage }>(response).data;
      const detail = await read(alice, ticket.id);
      assert.deepEqual(data.messages, detail.messages);
      assert.equal(data.olderMessagesCursor, detail.olderMessagesCursor);
      assert.equal(data.messageCount, detail.messageCount);
    });

    it('keeps a cursor pointing at the same messages while new ones arrive (a keyset)', async () => {
      const other = await open(bob, 'Moving thread');
      for (let i = 1; i <= 10; i++)
        assert.equal((await write(bob, other.id, `m${i}`)).statusCode, 200);
      const first = json<{ data: MessagePage }>(await page(bob, other.id, 'messages', 'limit=4'));
      assert.deepEqual(
        first.data.messages.map((message) => message.text),
        ['m7', 'm8', 'm9', 'm10'],
      );
      for (let i = 11; i <= 13; i++)
        assert.equal((await write(bob, other.id, `m${i}`)).statusCode, 200);
      const second = json<{ data: MessagePage }>(
        await page(bob, other.id, 'messages', `limit=4&before=${first.data.olderMessagesCursor}`),
      );
      assert.deepEqual(
        second.data.messages.map((message) => message.text),
        ['m3', 'm4', 'm5', 'm6'],
      );
      assert.equal(second.data.messageCount, 13);
    });

    it('refuses a wrong cursor or limit with 400', async () => {
      const detail = await read(alice, ticket.id);
      const cursor = detail.olderMessagesCursor!;
      const other = await open(alice, 'Another');
      await write(alice, other.id, 'one');
      const historyCursor = Buffer.from(
        Buffer.from(cursor, 'base64url').toString().replace(/^m/, 'h'),
      ).toString('base64url');
      for (const query of [
        'before=not-a-cursor',
        'before=%21%21',
        'before=',
        `before=${'A'.repeat(65)}`,
        `before=${Buffer.from('m.1.abc').toString('base64url')}`,
        `before=${Buffer.from(`m.${ticket.id}.0`).toString('base64url')}`,
        `before=${Buffer.from(`m.${ticket.id}.99999999999`).toString('base64url')}`,
        `before=${historyCursor}`,
        'limit=0',
        'limit=101',
        'limit=x',
        'limit=-1',
        'offset=10',
      ]) {
        assertError(await page(alice, ticket.id, 'messages', query), 400, 'VALIDATION_FAILED');
      }
      // A cursor made for another ticket.
      assertError(
        await page(alice, other.id, 'messages', `before=${cursor}`),
        400,
        'VALIDATION_FAILED',
      );
      assertError(await page(alice, ticket.id, 'history', `before=${cursor}`), 400);
      assertError(await page(alice, 'abc', 'messages'), 400);
    });

    it('answers 404 to anyone who may not see the ticket, 401 and 403 as everywhere', async () => {
      const cursor = (await read(alice, ticket.id)).olderMessagesCursor!;
      for (const list of ['messages', 'history']) {
        const hidden = await page(bob, ticket.id, list);
        assertError(hidden, 404, 'NOT_FOUND');
        assertError(await page(bob, ticket.id, list, `before=${cursor}`), 404, 'NOT_FOUND');
        const missing = await page(bob, 999_999, list);
        assertError(missing, 404, 'NOT_FOUND');
        assert.equal(
          json<{ message: string }>(hidden).message,
          json<{ message: string }>(missing).message,
        );
        assertError(await page(outlaw, ticket.id, list), 403, 'BANNED');
        assertError(
          await panel.app.inject({ url: `/api/tickets/${ticket.id}/${list}` }),
          401,
          'UNAUTHORIZED',
        );
        for (const session of [alice, staff, admin]) {
          assert.equal((await page(session, ticket.id, list)).statusCode, 200);
        }
      }
    });

    it('holds at most 1 MiB of message text per page, even of messages from before the limit', async () => {
      const legacy = await open(alice, 'Before the limit');
      // Stored before the limit existed: far over it, as in the ticket that took the panel down.
      const texts = Array.from({ length: 12 }, (_, i) =>
        `${i}`.padEnd(MiB - 1024, String.fromCharCode(97 + i)),
      );
      texts.splice(6, 0, 'small one', 'small two');
      await insertLegacyMessages(legacy.id, texts);

      const response = await panel.app.inject({
        url: `/api/tickets/${legacy.id}`,
        headers: alice.headers,
      });
      assert.equal(response.statusCode, 200);
      assert.ok(response.body.length < 1.5 * MiB, `the read is ${response.body.length} bytes`);
      const detail = json<{ data: Ticket }>(response).data;
      assert.equal(detail.messageCount, texts.length);
      assert.deepEqual(
        detail.messages.map((message) => message.text),
        texts.slice(-1),
      );

      const pages = await walkMessages(alice, legacy.id, 100);
      for (const each of pages) {
        const bytes = each.messages.reduce(
          (sum, message) => sum + Buffer.byteLength(message.text),
          0,
        );
        assert.ok(each.messages.length === 1 || bytes <= MiB, `a page of ${bytes} bytes`);
      }
      const walked = pages.reverse().flatMap((p) => p.messages.map((message) => message.text));
      assert.equal(walked.length, texts.length);
      assert.ok(
        walked.every((text, i) => text === texts[i]),
        'every message once, in order',
      );
      // The two small ones share a page with the large one stored just before them.
      assert.ok(pages.some((p) => p.messages.length === 3));
    });
  });

  describe('status history, a page at a time', () => {
    it('reads the newest 50 changes and pages the older ones', async () => {
      const ticket = await open(alice, 'Flapping');
      const statuses = Array.from({ length: 63 }, (_, i) =>
        i % 2 === 0 ? 'in_progress' : 'pending',
      );
      for (const status of statuses) {
        const response = await panel.app.inject({
          method: 'PUT',
          url: `/api/tickets/${ticket.id}/status`,
          headers: staff.headers,
          payload: { status },
        });
        assert.equal(response.statusCode, 200, response.body);
        const data = json<{ data: Ticket }>(response).data;
        assert.ok(data.history.length <= 50);
      }
      const detail = await read(alice, ticket.id);
      assert.equal(detail.historyCount, 63);
      assert.equal(detail.history.length, 50);
      assert.deepEqual(
        detail.history.map((change) => change.to),
        statuses.slice(-50),
      );
      assert.equal(typeof detail.olderHistoryCursor, 'string');

      const changes: Change[][] = [];
      let cursor: string | null = null;
      do {
        const query = `limit=20${cursor === null ? '' : `&before=${cursor}`}`;
        const response = await page(alice, ticket.id, 'history', query);
        assert.equal(response.statusCode, 200, response.body);
        const data = json<{ data: HistoryPage }>(response).data;
        assert.equal(data.historyCount, 63);
        changes.unshift(data.history);
        cursor = data.olderHistoryCursor;
      } while (cursor !== null);
      assert.deepEqual(
        changes.map((each) => each.length),
        [3, 20, 20, 20],
      );
      const all = changes.flat();
      assert.deepEqual(
        all.map((change) => change.to),
        statuses,
      );
      assert.deepEqual(all[0], { ...all[0], from: 'pending', to: 'in_progress' });
      for (const [i, change] of all.entries()) {
        assert.equal(change.by.username, 'staff');
        if (i > 0) assert.equal(change.from, all[i - 1]!.to);
      }
      assertError(
        await page(alice, ticket.id, 'messages', `before=${detail.olderHistoryCursor}`),
        400,
      );
    });
  });

  it('declares the paging fields and endpoints in the OpenAPI document', async () => {
    const document = json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>(await panel.app.inject({ url: '/api/openapi.json' }));
    const text = JSON.stringify(document.paths);
    for (const field of [
      'olderMessagesCursor',
      'messageCount',
      'olderHistoryCursor',
      'historyCount',
    ]) {
      assert.ok(text.includes(field), field);
    }
    assert.ok(document.paths['/api/tickets/{id}/messages']?.get);
    assert.ok(document.paths['/api/tickets/{id}/history']?.get);
    assert.ok(document.paths['/api/tickets/{id}/message']?.post?.responses['413']);
  });
});
