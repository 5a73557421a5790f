/**
 * Webhooks through the HTTP surface: registering, changing and deleting them (admins only), the
 * secret shown once and never listed, real events of real servers, tickets and backups delivered
 * to a real HTTP receiver on loopback (allowed by WEBHOOK_ALLOWED_HOSTS) and checked by their
 * signature and timestamp, retries with back-off, failure after the last attempt, no redirect
 * followed, the SSRF refusals at registration and at delivery, and deliveries that outlive a
 * restart of the panel.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../src/app.js';
import type { ExitInfo, RunningProcess, Runtime } from '../src/host/runtime/runtime.js';
import type { ResolvedAddress } from '../src/modules/webhooks/url-guard.js';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  json,
  register,
  sendCommand,
  serverAction,
  setRole,
  type Session,
} from './helpers/factories.js';

interface Received {
  readonly path: string;
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

/** What the receiver answers a request on a path: a status, or no answer at all. */
type Plan = number | 'hang';

/** A webhook receiver on loopback: records every request; answers as planned per path, else 200. */
class Receiver {
  readonly received: Received[] = [];
  readonly #plans = new Map<string, Plan[]>();
  readonly #hanging: ServerResponse[] = [];
  readonly #server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      this.received.push({
        path,
        method: request.method ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const plan = this.#plans.get(path)?.shift() ?? 200;
      if (plan === 'hang') {
        this.#hanging.push(response);
        return;
      }
      if (plan >= 300 && plan < 400) {
        response.writeHead(plan, { location: `${this.url}/redirected` });
        response.end();
        return;
      }
      response.writeHead(plan, { 'content-type': 'text/plain' });
      response.end(plan >= 300 ? `boom\n${'x'.repeat(5000)}` : 'ok');
    });
  });
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  /** The next answers on `path`, in order; 200 once they are used up. */
  plan(path: string, answers: Plan[]): void {
    this.#plans.set(path, answers);
  }

  on(path: string): Received[] {
    return this.received.filter((request) => request.path === path);
  }

  async close(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

interface WebhookBody {
  id: number;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  createdAt: string;
  lastDelivery: { status: string; at: string; responseStatus: number | null } | null;
}

interface DeliveryBody {
  id: number;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  responseStatus: number | null;
  error: string | null;
}

interface Payload {
  id: number;
  event: string;
  at: string;
  data: Record<string, unknown>;
}

const ALL_EVENTS = [
  'server.started',
  'server.stopped',
  'server.crashed',
  'server.out-of-memory',
  'backup.done',
  'backup.failed',
  'ticket.created',
  'ticket.answered',
  'ticket.status-changed',
];

/** Retries come quickly in these tests. */
const RETRY_MS = 300;
const RETRIES = [RETRY_MS, RETRY_MS, RETRY_MS, RETRY_MS, RETRY_MS];

/**
 * Checks a received delivery's headers, signature and timestamp (now, on a panel whose clock is
 * `skewMs` ahead); answers its payload.
 */
function verified(request: Received, secret: string, skewMs = 0): Payload {
  assert.equal(request.method, 'POST');
  assert.equal(request.headers['content-type'], 'application/json');
  const timestamp = String(request.headers['x-panel-timestamp']);
  assert.match(timestamp, /^\d+$/);
  const now = (Date.now() + skewMs) / 1000;
  assert.ok(Math.abs(Number(timestamp) - now) < 60, 'the timestamp is now');
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${request.body}`).digest('hex')}`;
  assert.equal(request.headers['x-panel-signature'], expected, 'the signature verifies');
  const payload = JSON.parse(request.body) as Payload;
  assert.equal(request.headers['x-panel-event'], payload.event);
  assert.equal(request.headers['x-panel-delivery'], String(payload.id));
  assert.ok(!Number.isNaN(Date.parse(payload.at)));
  return payload;
}

/**
 * A runtime whose servers the kernel ends at their memory limit 200 ms after they start: what an
 * out-of-memory exit looks like to the panel, without a cgroup.
 */
function outOfMemoryRuntime(): Runtime {
  return {
    kind: 'process',
    enforces: new Set(['memoryBytes', 'cpuPercent', 'pids']),
    description: 'a runtime whose servers run out of memory (tests)',
    isolated: false,
    start: () => {
      let end: (exit: ExitInfo) => void = () => undefined;
      const exited = new Promise<ExitInfo>((resolve) => {
        end = resolve;
      });
      setTimeout(() => {
        end({ code: null, signal: 'SIGKILL', outOfMemory: true });
      }, 200);
      const stop = () => {
        end({ code: 0, signal: null, outOfMemory: false });
        return Promise.resolve();
      };
      const process: RunningProcess = {
        pid: 2 ** 22 + 1,
        identity: 'out-of-memory',
        detach: () => undefined,
        startedAt: new Date(),
        exited,
        onOutput: () => undefined,
        writeLine: () => true,
        readsInput: () => Promise.resolve(true),
        terminate: stop,
        kill: stop,
        usage: () => Promise.resolve({ cpuPercent: 0, memoryBytes: 0, pids: 1 }),
      };
      return Promise.resolve(process);
    },
    reap: () => Promise.resolve(false),
  };
}

describe('webhooks', () => {
  const receiver = new Receiver();
  /** Host names the test resolves itself; others go to DNS. */
  const names = new Map<string, ResolvedAddress[]>();
  const resolver = async (host: string): Promise<readonly ResolvedAddress[]> => {
    const known = names.get(host);
    if (known) return known;
    const found = await lookup(host, { all: true });
    return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  };
  let allowed = '';
  let panel: TestPanel;
  let admin: Session;
  let user: Session;
  let support: Session;

  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
    session: Session | null = admin,
  ) =>
    panel.app.inject({
      method,
      url: `/api/admin/webhooks${url}`,
      headers: session?.headers ?? {},
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  /** Registers a webhook as the admin; answers it and its secret. */
  const create = async (
    body: Record<string, unknown>,
  ): Promise<{ webhook: WebhookBody; secret: string }> => {
    const response = await call('POST', '', body);
    assert.equal(response.statusCode, 200, response.body);
    const data = json<{ data: { webhook: WebhookBody; secret: string } }>(response).data;
    rememberSecret(data.secret);
    return data;
  };

  const deliveries = async (id: number, query = ''): Promise<DeliveryBody[]> => {
    const response = await call('GET', `/${id}/deliveries${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: DeliveryBody[] }>(response).data;
  };

  /** Waits until the webhook's deliveries are all done (delivered or failed); answers them. */
  const settled = (id: number, count: number) =>
    eventually(async () => {
      const list = await deliveries(id);
      return list.length >= count && list.every((d) => d.status !== 'pending') ? list : undefined;
    }, `${count} deliveries of webhook ${id} to end`);

  const suite = suiteScope();
  before(async () => {
    await receiver.start();
    allowed = `127.0.0.1:${receiver.port}`;
    panel = await startPanel(
      suite,
      { WEBHOOK_ALLOWED_HOSTS: allowed, PUBLIC_URL: 'https://panel.example.test' },
      { webhookRetryDelaysMs: RETRIES, webhookResolver: resolver },
    );
    admin = await register(panel, 'hook-admin');
    user = await register(panel, 'hook-user');
    support = await register(panel, 'hook-support');
    await setRole(panel, admin, support.username, 'support');
  });
  after(async () => {
    await receiver.close();
  });

  it('registers a webhook, answers its secret once and never lists it', async () => {
    const { webhook, secret } = await create({
      url: `${receiver.url}/crud`,
      events: ['server.started', 'ticket.created'],
      description: 'Chat notifications',
    });
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(
      { ...webhook, id: 0, createdAt: '' },
      {
        id: 0,
        url: `${receiver.url}/crud`,
        events: ['server.started', 'ticket.created'],
        description: 'Chat notifications',
        enabled: true,
        createdAt: '',
        lastDelivery: null,
      },
    );
    for (const response of [await call('GET', ''), await call('GET', `/${webhook.id}`)]) {
      assert.equal(response.statusCode, 200, response.body);
      assert.ok(!response.body.includes(secret), 'the secret is never answered again');
      assert.ok(!response.body.includes('"secret"'));
    }
    const listed = json<{ data: WebhookBody[] }>(await call('GET', '')).data;
    assert.ok(listed.some((w) => w.id === webhook.id));

    const patched = await call('PUT', `/${webhook.id}`, {
      events: ['backup.done'],
      enabled: false,
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const changed = json<{ data: WebhookBody }>(patched).data;
    assert.deepEqual(changed.events, ['backup.done']);
    assert.equal(changed.enabled, false);
    assert.equal(changed.description, 'Chat notifications', 'fields not sent are kept');

    const empty = await call('GET', `/${webhook.id}/deliveries`);
    assert.equal(empty.statusCode, 200);
    assert.equal(empty.headers['x-total-count'], '0');

    const deleted = await call('DELETE', `/${webhook.id}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal(json<{ data: unknown }>(deleted).data, null);
    assertError(await call('GET', `/${webhook.id}`), 404, 'NOT_FOUND');
    assertError(await call('GET', `/${webhook.id}/deliveries`), 404, 'NOT_FOUND');
  });

  it('refuses invalid input with 400 and unknown webhooks with 404', async () => {
    const url = `${receiver.url}/invalid`;
    for (const body of [
      { url, events: [] },
      { url, events: ['server.exploded'] },
      { url, events: ['server.started', 'server.started'] },
      { url },
      { events: ['server.started'] },
      { url, events: ['server.started'], description: 'x'.repeat(201) },
      { url, events: ['server.started'], secret: 'mine' },
      { url, events: ['server.started'], enabled: 'yes' },
      { url: 'not a url', events: ['server.started'] },
      { url: 'x'.repeat(2049), events: ['server.started'] },
    ]) {
      assertError(await call('POST', '', body), 400, 'VALIDATION_FAILED');
    }
    const { webhook } = await create({ url, events: ['server.started'] });
    assertError(await call('PUT', `/${webhook.id}`, { events: [] }), 400, 'VALIDATION_FAILED');
    assertError(await call('PUT', `/${webhook.id}`, { id: 5 }), 400, 'VALIDATION_FAILED');
    assertError(await call('GET', `/${webhook.id}/deliveries?limit=0`), 400, 'VALIDATION_FAILED');
    assertError(await call('GET', `/${webhook.id}/deliveries?limit=201`), 400);
    assertError(await call('GET', '/abc'), 400, 'VALIDATION_FAILED');

    const missing = webhook.id + 1000;
    assertError(await call('GET', `/${missing}`), 404, 'NOT_FOUND');
    assertError(await call('PUT', `/${missing}`, { enabled: false }), 404, 'NOT_FOUND');
    assertError(await call('DELETE', `/${missing}`), 404, 'NOT_FOUND');
    assertError(await call('POST', `/${missing}/secret`), 404, 'NOT_FOUND');
    assertError(await call('POST', `/${missing}/test`), 404, 'NOT_FOUND');
    assertError(await call('GET', `/${missing}/deliveries`), 404, 'NOT_FOUND');
    await call('DELETE', `/${webhook.id}`);
  });

  it('is for admins only', async () => {
    const body = { url: `${receiver.url}/people`, events: ['server.started'] };
    for (const session of [user, support]) {
      assertError(await call('GET', '', undefined, session), 403, 'FORBIDDEN');
      assertError(await call('POST', '', body, session), 403, 'FORBIDDEN');
    }
    assertError(await call('GET', '', undefined, null), 401, 'UNAUTHORIZED');
    assertError(await call('POST', '', body, null), 401, 'UNAUTHORIZED');
  });

  it('refuses URLs that reach the panel, loopback or private networks (SSRF)', async () => {
    names.set('panel.example.test', [{ address: '93.184.216.34', family: 4 }]);
    names.set('inside.example.test', [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ]);
    names.set('v6.example.test', [{ address: 'fd00::1', family: 6 }]);
    // A NAT64 gateway or 6to4 relay forwards to the IPv4 address the IPv6 one embeds.
    names.set('nat64.example.test', [{ address: '64:ff9b::a9fe:a9fe', family: 6 }]);
    for (const url of [
      `http://127.0.0.1:${receiver.port + 1 === 65536 ? 1 : receiver.port + 1}/`, // allowed only on the receiver's port
      'http://127.0.0.1/',
      'http://127.1/',
      'http://0x7f000001/',
      'http://2130706433/',
      'http://0.0.0.0/',
      'http://10.0.0.1/',
      'http://172.16.5.4/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://224.0.0.1/',
      'http://[::1]/',
      'http://[::]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:a00:1]/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[ff02::1]/',
      'http://[::ffff:0:7f00:1]/', // IPv4-translated 127.0.0.1
      'http://[::127.0.0.1]/', // IPv4-compatible (deprecated)
      'http://[64:ff9b::7f00:1]/', // NAT64 well-known prefix: 127.0.0.1
      'http://[64:ff9b::10.0.0.1]/',
      'http://[64:ff9b::a9fe:a9fe]/', // 169.254.169.254
      'http://[64:ff9b::c0a8:101]/', // 192.168.1.1
      'http://[64:ff9b:1::a00:1]/', // local-use NAT64
      'http://[2002:7f00:1::]/', // 6to4: 127.0.0.1
      'http://[2002:a00:1::1]/', // 10.0.0.1
      'http://[2002:a9fe:a9fe:1::1]/', // 169.254.169.254
      'http://[2002:c0a8:101::]/', // 192.168.1.1
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', // Teredo
      'http://nat64.example.test/',
      `http://localhost:${receiver.port}/`, // resolves to loopback, and only 127.0.0.1 is allowed
      'http://panel.example.test/', // the panel's own PUBLIC_URL host, though public
      'http://inside.example.test/', // one of its addresses is private
      'http://v6.example.test/',
      'ftp://example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'gopher://example.com/',
      'http://user:password@example.com/',
    ]) {
      const response = await call('POST', '', { url, events: ['server.started'] });
      assertError(response, 400, 'URL_NOT_ALLOWED');
      assert.equal(json<{ details: { path: string }[] }>(response).details[0]?.path, 'body/url');
    }
    // The embedded address is judged, not the prefix: a public IPv4 address behind NAT64 or
    // 6to4 is a public destination.
    for (const url of ['http://[64:ff9b::5db8:d822]/', 'http://[2002:5db8:d822::1]/']) {
      const { webhook } = await create({ url, events: ['server.started'] });
      await call('DELETE', `/${webhook.id}`);
    }
    // A change of URL is checked too.
    const { webhook } = await create({ url: `${receiver.url}/ssrf`, events: ['server.started'] });
    assertError(
      await call('PUT', `/${webhook.id}`, { url: 'http://169.254.169.254/' }),
      400,
      'URL_NOT_ALLOWED',
    );
    const kept = json<{ data: WebhookBody }>(await call('GET', `/${webhook.id}`)).data;
    assert.equal(kept.url, `${receiver.url}/ssrf`);
    await call('DELETE', `/${webhook.id}`);
  });

  it('checks the address again at delivery: a host that now resolves inside is not reached', async () => {
    names.set('rebind.example.test', [{ address: '93.184.216.34', family: 4 }]);
    const { webhook } = await create({
      url: 'http://rebind.example.test/hook',
      events: ['server.started'],
    });
    // DNS now answers loopback (DNS rebinding): every attempt is refused before connecting.
    names.set('rebind.example.test', [{ address: '127.0.0.1', family: 4 }]);
    const before = receiver.received.length;
    const test = await call('POST', `/${webhook.id}/test`);
    assert.equal(test.statusCode, 200, test.body);
    const [delivery] = await settled(webhook.id, 1);
    assert.ok(delivery);
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.attempts, 6);
    assert.equal(delivery.responseStatus, null);
    assert.match(delivery.error ?? '', /127\.0\.0\.1.*not a public address/);
    assert.equal(receiver.received.length, before, 'nothing reached the receiver');
    await call('DELETE', `/${webhook.id}`);
  });

  it('delivers real server, ticket and backup events, signed', async () => {
    const everything = await create({ url: `${receiver.url}/all`, events: ALL_EVENTS });
    const ticketsOnly = await create({
      url: `${receiver.url}/tickets`,
      events: ['ticket.created'],
    });
    const disabled = await create({
      url: `${receiver.url}/disabled`,
      events: ALL_EVENTS,
      enabled: false,
    });
    const events = () => receiver.on('/all').map((request) => verified(request, everything.secret));
    const waitFor = (event: string, count = 1) =>
      eventually(() => {
        const found = events().filter((payload) => payload.event === event);
        return found.length >= count ? found[count - 1] : undefined;
      }, `${event} #${count}`);

    await createServer(panel, admin, 'hooked', { autoRestart: false });
    const started = await serverAction(panel, admin, 'hooked', 'start');
    assert.equal(started.statusCode, 200, started.body);
    assert.deepEqual((await waitFor('server.started')).data, { server: 'hooked' });
    assert.equal((await serverAction(panel, admin, 'hooked', 'stop')).statusCode, 200);
    assert.deepEqual((await waitFor('server.stopped')).data, { server: 'hooked' });
    assert.equal((await serverAction(panel, admin, 'hooked', 'start')).statusCode, 200);
    await waitFor('server.started', 2);
    assert.equal((await sendCommand(panel, admin, 'hooked', 'crash')).statusCode, 200);
    assert.deepEqual((await waitFor('server.crashed')).data, {
      server: 'hooked',
      exitCode: 3,
      signal: null,
    });

    const opened = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: user.headers,
      payload: { title: 'Lag on the server', description: 'A private description' },
    });
    assert.equal(opened.statusCode, 200, opened.body);
    const ticket = json<{ data: { id: number } }>(opened).data.id;
    const created = await waitFor('ticket.created');
    assert.deepEqual(created.data, {
      ticket,
      title: 'Lag on the server',
      owner: user.username,
      by: user.username,
      status: 'pending',
    });
    const write = (session: Session, text: string) =>
      panel.app.inject({
        method: 'POST',
        url: `/api/tickets/${ticket}/message`,
        headers: session.headers,
        payload: { text },
      });
    assert.equal((await write(user, 'Still lagging')).statusCode, 200);
    assert.equal((await write(support, 'Looking into it')).statusCode, 200);
    assert.deepEqual((await waitFor('ticket.answered')).data, {
      ticket,
      title: 'Lag on the server',
      owner: user.username,
      by: support.username,
      status: 'pending',
    });
    const setStatus = (status: string) =>
      panel.app.inject({
        method: 'PUT',
        url: `/api/tickets/${ticket}/status`,
        headers: support.headers,
        payload: { status },
      });
    assert.equal((await setStatus('in_progress')).statusCode, 200);
    assert.equal((await setStatus('in_progress')).statusCode, 200, 'no change: no event');
    assert.deepEqual((await waitFor('ticket.status-changed')).data, {
      ticket,
      title: 'Lag on the server',
      owner: user.username,
      by: support.username,
      status: 'in_progress',
      from: 'pending',
    });

    const backup = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/hooked/backups',
      headers: admin.headers,
      payload: {},
    });
    assert.equal(backup.statusCode, 200, backup.body);
    const backupId = json<{ data: { id: string } }>(backup).data.id;
    const done = await waitFor('backup.done');
    assert.equal(done.data.server, 'hooked');
    assert.equal(done.data.backup, backupId);

    // Every delivery of the webhook is in its history, delivered at the first attempt.
    const payloads = events();
    const history = await settled(everything.webhook.id, payloads.length);
    const response = await call('GET', `/${everything.webhook.id}/deliveries?limit=2&offset=1`);
    assert.equal(response.headers['x-total-count'], String(history.length));
    assert.deepEqual(
      json<{ data: DeliveryBody[] }>(response).data.map((d) => d.id),
      history.slice(1, 3).map((d) => d.id),
    );
    assert.deepEqual(
      history.map((d) => d.id),
      [...history.map((d) => d.id)].sort((a, b) => b - a),
      'newest first',
    );
    for (const delivery of history) {
      assert.equal(delivery.status, 'delivered');
      assert.equal(delivery.attempts, 1);
      assert.equal(delivery.responseStatus, 200);
      assert.equal(delivery.error, null);
      assert.equal(delivery.nextAttemptAt, null);
    }
    assert.deepEqual(history.map((d) => d.event).sort(), payloads.map((p) => p.event).sort());
    // Exactly these events, each once: the repeated status and the owner's message made none.
    assert.deepEqual(payloads.map((p) => p.event).sort(), [
      'backup.done',
      'server.crashed',
      'server.started',
      'server.started',
      'server.stopped',
      'ticket.answered',
      'ticket.created',
      'ticket.status-changed',
    ]);
    assert.ok(
      payloads.every((p) => !JSON.stringify(p).includes('A private description')),
      'no ticket text is sent',
    );
    const listed = json<{ data: WebhookBody }>(await call('GET', `/${everything.webhook.id}`));
    assert.equal(listed.data.lastDelivery?.status, 'delivered');
    assert.equal(listed.data.lastDelivery.responseStatus, 200);

    // The other webhooks: only what they asked for, and nothing while disabled.
    const onlyTickets = receiver.on('/tickets').map((r) => verified(r, ticketsOnly.secret));
    assert.deepEqual(
      onlyTickets.map((p) => p.event),
      ['ticket.created'],
    );
    assert.deepEqual(receiver.on('/disabled'), []);
    assert.deepEqual(await deliveries(disabled.webhook.id), []);
    for (const { webhook } of [everything, ticketsOnly, disabled]) {
      await call('DELETE', `/${webhook.id}`);
    }
  });

  it('tells of a server that ran out of memory', async (t) => {
    const other = await startPanel(
      t,
      { WEBHOOK_ALLOWED_HOSTS: allowed },
      { runtime: outOfMemoryRuntime(), logStream: { write: () => undefined } },
    );
    const owner = await register(other, 'oom-admin');
    const response = await other.app.inject({
      method: 'POST',
      url: '/api/admin/webhooks',
      headers: owner.headers,
      payload: { url: `${receiver.url}/oom`, events: ['server.crashed', 'server.out-of-memory'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    const { secret } = json<{ data: { secret: string } }>(response).data;
    rememberSecret(secret);
    await createServer(other, owner, 'hungry', { autoRestart: false });
    assert.equal((await serverAction(other, owner, 'hungry', 'start')).statusCode, 200);
    const payload = await eventually(
      () => receiver.on('/oom').map((request) => verified(request, secret))[0],
      'the out-of-memory event',
    );
    assert.equal(payload.event, 'server.out-of-memory');
    assert.deepEqual(payload.data, { server: 'hungry', exitCode: null, signal: 'SIGKILL' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(receiver.on('/oom').length, 1, 'not also sent as server.crashed');
  });

  it('sends a test ping; a new secret signs from then on', async () => {
    const { webhook, secret } = await create({
      url: `${receiver.url}/ping`,
      events: ['server.started'],
    });
    const test = await call('POST', `/${webhook.id}/test`);
    assert.equal(test.statusCode, 200, test.body);
    const queued = json<{ data: DeliveryBody }>(test).data;
    assert.equal(queued.event, 'ping');
    assert.equal(queued.attempts, 0);
    await settled(webhook.id, 1);
    const first = verified(receiver.on('/ping')[0]!, secret);
    assert.equal(first.event, 'ping');
    assert.equal(first.id, queued.id);
    assert.equal(first.data.webhook, webhook.id);

    const rotated = await call('POST', `/${webhook.id}/secret`);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const fresh = json<{ data: { secret: string } }>(rotated).data.secret;
    rememberSecret(fresh);
    assert.notEqual(fresh, secret);
    await call('POST', `/${webhook.id}/test`);
    await settled(webhook.id, 2);
    const second = receiver.on('/ping')[1]!;
    verified(second, fresh);
    assert.throws(() => verified(second, secret), 'the old secret no longer verifies');
    await call('DELETE', `/${webhook.id}`);
  });

  it('retries with back-off until a 2xx', async () => {
    receiver.plan('/flaky', [500, 503]);
    const { webhook, secret } = await create({
      url: `${receiver.url}/flaky`,
      events: ['server.started'],
    });
    await call('POST', `/${webhook.id}/test`);
    const waiting = await eventually(async () => {
      const [delivery] = await deliveries(webhook.id);
      return delivery?.attempts === 1 ? delivery : undefined;
    }, 'the first attempt');
    assert.equal(waiting.status, 'pending');
    assert.equal(waiting.responseStatus, 500);
    assert.ok(waiting.nextAttemptAt !== null && waiting.lastAttemptAt !== null);
    assert.ok(Date.parse(waiting.nextAttemptAt) - Date.parse(waiting.lastAttemptAt) >= RETRY_MS);
    assert.match(waiting.error ?? '', /^Answered 500: boom x+…$/);
    assert.ok((waiting.error ?? '').length < 250, 'only an excerpt of the answer is kept');

    const [delivery] = await settled(webhook.id, 1);
    assert.ok(delivery);
    assert.equal(delivery.status, 'delivered');
    assert.equal(delivery.attempts, 3);
    assert.equal(delivery.responseStatus, 200);
    assert.equal(delivery.error, null);
    const attempts = receiver.on('/flaky');
    assert.equal(attempts.length, 3);
    const ids = attempts.map((request) => verified(request, secret).id);
    assert.deepEqual(ids, [delivery.id, delivery.id, delivery.id], 'the same delivery id');
    for (let i = 1; i < attempts.length; i += 1) {
      assert.ok(attempts[i]!.at - attempts[i - 1]!.at >= RETRY_MS - 50, 'waited between attempts');
    }
    await call('DELETE', `/${webhook.id}`);
  });

  it('fails a delivery after its sixth attempt', async () => {
    receiver.plan('/down', [500, 500, 500, 500, 500, 500, 500]);
    const { webhook } = await create({ url: `${receiver.url}/down`, events: ['server.started'] });
    await call('POST', `/${webhook.id}/test`);
    const [delivery] = await settled(webhook.id, 1);
    assert.ok(delivery);
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.attempts, 6);
    assert.equal(delivery.responseStatus, 500);
    assert.equal(delivery.nextAttemptAt, null);
    assert.equal(receiver.on('/down').length, 6);
    const listed = json<{ data: WebhookBody }>(await call('GET', `/${webhook.id}`)).data;
    assert.equal(listed.lastDelivery?.status, 'failed');
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS * 2));
    assert.equal(receiver.on('/down').length, 6, 'no seventh attempt');
    await call('DELETE', `/${webhook.id}`);
  });

  it('does not follow redirects', async () => {
    receiver.plan('/moved', [302, 302, 302, 302, 302, 302]);
    const { webhook } = await create({ url: `${receiver.url}/moved`, events: ['server.started'] });
    await call('POST', `/${webhook.id}/test`);
    const [delivery] = await settled(webhook.id, 1);
    assert.ok(delivery);
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.responseStatus, 302);
    assert.match(delivery.error ?? '', /redirects are not followed/);
    assert.deepEqual(receiver.on('/redirected'), []);
    await call('DELETE', `/${webhook.id}`);
  });

  it('keeps pending deliveries across a restart of the panel', async (t) => {
    const hour = 3_600_000;
    const first = await startPanel(
      t,
      { WEBHOOK_ALLOWED_HOSTS: allowed },
      { webhookRetryDelaysMs: [hour], logStream: { write: () => undefined } },
    );
    const owner = await register(first, 'restart-admin');
    const inject = (app: TestPanel['app'], method: 'GET' | 'POST', url: string, payload?: object) =>
      app.inject({ method, url, headers: owner.headers, ...(payload ? { payload } : {}) });
    const make = async (path: string) => {
      const response = await inject(first.app, 'POST', '/api/admin/webhooks', {
        url: `${receiver.url}${path}`,
        events: ['server.started'],
      });
      assert.equal(response.statusCode, 200, response.body);
      const data = json<{ data: { webhook: WebhookBody; secret: string } }>(response).data;
      rememberSecret(data.secret);
      return data;
    };
    const history = async (app: TestPanel['app'], id: number) =>
      json<{ data: DeliveryBody[] }>(
        await inject(app, 'GET', `/api/admin/webhooks/${id}/deliveries`),
      ).data;
    try {
      // One answered 500 (its retry is due in an hour), one still waiting for its answer.
      receiver.plan('/later', [500]);
      receiver.plan('/cut', ['hang']);
      const later = await make('/later');
      const cut = await make('/cut');
      await inject(first.app, 'POST', `/api/admin/webhooks/${later.webhook.id}/test`);
      await inject(first.app, 'POST', `/api/admin/webhooks/${cut.webhook.id}/test`);
      await eventually(async () => {
        const [delivery] = await history(first.app, later.webhook.id);
        return delivery?.attempts === 1 ? true : undefined;
      }, 'the first attempt to fail');
      await eventually(() => (receiver.on('/cut').length > 0 ? true : undefined), 'the cut one');
      await first.app.close();

      // Two hours later, the retry is due: the restarted panel makes it, and the cut attempt.
      const again = await buildApp(first.config, {
        now: () => new Date(Date.now() + 2 * hour),
        webhookRetryDelaysMs: [hour],
        logStream: { write: () => undefined },
      });
      try {
        await again.ready();
        for (const { webhook, secret } of [later, cut]) {
          const delivered = await eventually(async () => {
            const [delivery] = await history(again, webhook.id);
            return delivery?.status === 'delivered' ? delivery : undefined;
          }, `webhook ${webhook.id} delivered after the restart`);
          assert.equal(delivered.attempts, webhook.id === later.webhook.id ? 2 : 1);
          const path = webhook.id === later.webhook.id ? '/later' : '/cut';
          const requests = receiver.on(path);
          assert.equal(requests.length, 2);
          assert.equal(verified(requests[1]!, secret, 2 * hour).id, delivered.id);
        }
      } finally {
        await again.close();
      }
    } finally {
      await first.close();
    }
  });
});
