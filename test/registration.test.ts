/**
 * Issue 25, point 8: an anonymous neighbour cannot fill the disk (docs/security.md,
 * "Registration" and "Rate limits"). Registration is open until the first account exists, then
 * as the admin sets it (REGISTRATION, when set, decides alone); each address may make 5 accounts
 * an hour; a user may open 10 tickets and write 60 messages an hour; 429 with Retry-After past it.
 * The test panels unset the variables the helpers set, to meet the panel's own defaults.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, json, PASSWORD, register, type Session } from './helpers/factories.js';

const DEFAULTS = {
  REGISTRATION: '',
  REGISTRATION_MAX_PER_ADDRESS: '',
  TICKETS_PER_HOUR: '',
  TICKET_MESSAGES_PER_HOUR: '',
};

const attempt = (panel: TestPanel, username: string, remoteAddress = '127.0.0.1') =>
  panel.app.inject({
    method: 'POST',
    url: '/api/auth/register',
    payload: { username, password: PASSWORD },
    remoteAddress,
  });

async function registrationOpen(panel: TestPanel): Promise<boolean> {
  const response = await panel.app.inject({ url: '/api/auth/registration' });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: { open: boolean } }>(response).data.open;
}

function assertRetryAfter(response: LightMyRequestResponse, atMost: number): void {
  assertError(response, 429, 'RATE_LIMITED');
  const seconds = Number(response.headers['retry-after']);
  assert.ok(
    seconds >= 1 && seconds <= atMost,
    `Retry-After ${String(response.headers['retry-after'])}`,
  );
}

describe('registration, REGISTRATION unset', () => {
  let panel: TestPanel;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, DEFAULTS);
  });

  it('is open for the first account (the admin), then closed until the admin opens it', async () => {
    assert.equal(await registrationOpen(panel), true);
    const admin = await register(panel, 'admin');
    assert.equal(admin.role, 'admin');
    assert.equal(await registrationOpen(panel), false);
    assertError(await attempt(panel, 'second'), 403, 'REGISTRATION_CLOSED');

    const opened = await panel.app.inject({
      method: 'PUT',
      url: '/api/admin/settings',
      headers: admin.headers,
      payload: { registrationOpen: true },
    });
    assert.equal(opened.statusCode, 200, opened.body);
    assert.equal(json<{ data: { registrationEnv: unknown } }>(opened).data.registrationEnv, null);
    assert.equal(await registrationOpen(panel), true);
    const second = await attempt(panel, 'second');
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(json<{ role: string }>(second).role, 'user');

    await panel.app.inject({
      method: 'PUT',
      url: '/api/admin/settings',
      headers: admin.headers,
      payload: { registrationOpen: false },
    });
    assertError(await attempt(panel, 'third'), 403, 'REGISTRATION_CLOSED');
  });
});

describe('registration, REGISTRATION set', () => {
  it('decides alone: closed stays closed and open stays open, whatever the setting', async (t) => {
    const closed = await startPanel(t, { ...DEFAULTS, REGISTRATION: 'closed' });
    assert.equal(await registrationOpen(closed), false);
    assertError(await attempt(closed, 'first'), 403, 'REGISTRATION_CLOSED');
    const open = await startPanel(t, { ...DEFAULTS, REGISTRATION: 'open' });
    const admin = await register(open, 'admin');
    const settings = await open.app.inject({
      url: '/api/admin/settings',
      headers: admin.headers,
    });
    assert.deepEqual(
      json<{ data: { registrationOpen: boolean; registrationEnv: string } }>(settings).data,
      {
        ...json<{ data: object }>(settings).data,
        registrationOpen: false,
        registrationEnv: 'open',
      },
    );
    assert.equal(await registrationOpen(open), true);
    assert.equal((await attempt(open, 'second')).statusCode, 200);
  });
});

describe('registrations per address', () => {
  let panel: TestPanel;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, { ...DEFAULTS, REGISTRATION: 'open' });
  });

  it('gives 81 registrations in a burst 5 accounts, then 429 with Retry-After', async () => {
    const answers = await Promise.all(
      Array.from({ length: 81 }, (_, index) => attempt(panel, `flood${index}`)),
    );
    const made = answers.filter((response) => response.statusCode === 200);
    const refused = answers.filter((response) => response.statusCode !== 200);
    assert.equal(made.length, 5, answers.map((response) => response.statusCode).join(' '));
    assert.equal(refused.length, 76);
    for (const response of refused) assertRetryAfter(response, 3600);
    // Another address is not affected; a name taken does not count against one.
    assertError(await attempt(panel, 'flood0', '192.0.2.7'), 409, 'USERNAME_TAKEN');
    for (let index = 0; index < 5; index++) {
      const response = await attempt(panel, `other${index}`, '192.0.2.7');
      assert.equal(response.statusCode, 200, response.body);
    }
    assertRetryAfter(await attempt(panel, 'other5', '192.0.2.7'), 3600);
  });
});

describe('tickets and messages per user', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;
  let userTicket: number | undefined;

  const openTicket = (session: Session, title: string) =>
    panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: session.headers,
      payload: { title, description: 'help' },
    });
  const write = (session: Session, id: number, text: string) =>
    panel.app.inject({
      method: 'POST',
      url: `/api/tickets/${id}/message`,
      headers: session.headers,
      payload: { text },
    });

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, { ...DEFAULTS, REGISTRATION: 'open' });
    admin = await register(panel, 'admin');
    user = await register(panel, 'writer');
  });

  it('lets a user open 10 tickets an hour; the 11th gets 429 with Retry-After', async () => {
    for (let index = 0; index < 10; index++) {
      const response = await openTicket(user, `ticket ${index}`);
      assert.equal(response.statusCode, 200, response.body);
      userTicket ??= json<{ data: { id: number } }>(response).data.id;
    }
    const refused = await openTicket(user, 'one too many');
    assertRetryAfter(refused, 3600);
    assert.match(json<{ message: string }>(refused).message, /too many tickets/);
    // Staff are not counted.
    for (let index = 0; index < 11; index++) {
      assert.equal((await openTicket(admin, `staff ${index}`)).statusCode, 200);
    }
  });

  it('lets a user write 60 messages an hour; the 61st gets 429, staff answers are not counted', async () => {
    const id = userTicket;
    assert.ok(id !== undefined);
    for (let index = 0; index < 60; index++) {
      const response = await write(user, id, `message ${index}`);
      assert.equal(response.statusCode, 200, response.body);
    }
    assertRetryAfter(await write(user, id, 'one too many'), 3600);
    for (let index = 0; index < 61; index++) {
      assert.equal((await write(admin, id, `answer ${index}`)).statusCode, 200);
    }
  });
});
