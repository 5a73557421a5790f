/**
 * The audit log through the HTTP surface: every route that changes something has an action;
 * sign-ins (right and wrong), role changes, file writes, refusals, API-key requests, schedule runs
 * and backups are recorded with who, what, target, when, from where and through what; nothing
 * secret is ever written; admins read it all with filters and pages, holders of `settings` a
 * server's; old entries go after the configured retention.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { buildApp } from '../src/app.js';
import { AUDITED_ROUTES } from '../src/modules/audit/audit-actions.js';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  assertError,
  bearer,
  createServer,
  eventually,
  gameServerCommand,
  json,
  login,
  register,
  type Session,
} from './helpers/factories.js';

interface Entry {
  id: number;
  at: string;
  actor: string | null;
  actorId: number | null;
  via: string;
  viaName: string | null;
  address: string | null;
  action: string;
  server: string | null;
  serverId: number | null;
  target: string | null;
  outcome: string;
  status: number | null;
  details: Record<string, unknown>;
}

/** Routes that answer without changing anything although their method is not GET. */
const NOT_CHANGES: readonly string[] = [
  // Reads whose token is in the body, so that it is never in a URL.
  'POST /api/auth/set-password/check',
];

describe('the audit log', () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;

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

  async function entries(query = '', session = admin): Promise<{ list: Entry[]; total: number }> {
    const response = await call(session.headers, 'GET', `/api/audit${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return {
      list: json<{ data: Entry[] }>(response).data,
      total: Number(response.headers['x-total-count']),
    };
  }
  const latest = async (action: string): Promise<Entry> => {
    const [entry] = (await entries(`?action=${action}&limit=1`)).list;
    assert.ok(entry, `no ${action} entry`);
    return entry;
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, { AUDIT_RETENTION_DAYS: '30' });
    admin = await register(panel, 'admin');
    member = await register(panel, 'member');
    await createServer(panel, admin, 'alpha');
    await createServer(panel, admin, 'beta');
  });

  it('has an action for every route that changes something, and only for routes', () => {
    const routes = panel.app.registeredRoutes.map((route) => `${route.method} ${route.url}`);
    const changing = routes.filter(
      (route) => !/^(GET|HEAD|OPTIONS) /.test(route) && !NOT_CHANGES.includes(route),
    );
    const missing = changing.filter((route) => !(route in AUDITED_ROUTES));
    assert.deepEqual(missing, [], 'routes that change something without an audit action');
    const stale = Object.keys(AUDITED_ROUTES).filter((route) => !routes.includes(route));
    assert.deepEqual(stale, [], 'audit actions of routes that do not exist');
  });

  it('records sign-ins, right and wrong, with the address and never the password', async () => {
    rememberSecret('not the password');
    assert.equal((await login(panel, 'member', 'not the password')).statusCode, 401);
    assert.equal((await login(panel, 'member')).statusCode, 200);
    const { list } = await entries('?action=auth.login&actor=member');
    assert.deepEqual(
      list.map((e) => [e.actor, e.outcome, e.status, e.via, e.address]),
      [
        ['member', 'ok', 200, 'session', '127.0.0.1'],
        ['member', 'failed', 401, 'session', '127.0.0.1'],
      ],
    );
    assert.deepEqual(list[0]?.details, {});
    const registered = await latest('auth.register');
    assert.equal(registered.actor, 'member');
  });

  it('records role, permission and server changes with their target and what was set', async () => {
    await call(admin.headers, 'PUT', '/api/users/member/role', { role: 'support' });
    await call(admin.headers, 'PUT', '/api/users/member/role', { role: 'user' });
    const role = await latest('user.role');
    assert.deepEqual(
      [role.actor, role.actorId !== null, role.target, role.details, role.outcome],
      ['admin', true, 'member', { role: 'user' }, 'ok'],
    );
    const granted = await call(admin.headers, 'PUT', '/api/servers/alpha/users/member', {
      permissions: ['files.read', 'files.write', 'settings', 'power'],
    });
    assert.equal(granted.statusCode, 200, granted.body);
    const permission = await latest('server.user-permissions');
    assert.deepEqual(
      [permission.server, permission.target, permission.details],
      ['alpha', 'member', { permissions: ['files.read', 'files.write', 'settings', 'power'] }],
    );
    const created = await latest('server.create');
    assert.deepEqual([created.server, created.details.name], ['beta', 'beta']);
  });

  it('records file writes by path, never their content', async () => {
    const content = 'motd=a secret nobody may read in the log\n';
    const written = await call(
      member.headers,
      'PUT',
      '/api/servers/alpha/files/content?path=server.properties',
      { content },
    );
    assert.equal(written.statusCode, 200, written.body);
    const entry = await latest('file.write');
    assert.deepEqual(
      [entry.actor, entry.server, entry.target, entry.details],
      ['member', 'alpha', 'server.properties', { path: 'server.properties' }],
    );
    const deleted = await call(member.headers, 'POST', '/api/servers/alpha/files/delete', {
      paths: ['server.properties'],
    });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual((await latest('file.delete')).details, { paths: ['server.properties'] });
  });

  it('records refusals for lack of rights, not mistakes', async () => {
    assertError(await call(member.headers, 'POST', '/api/servers/beta/start'), 403);
    const refused = await latest('server.start');
    assert.deepEqual(
      [refused.actor, refused.server, refused.outcome, refused.status],
      ['member', 'beta', 'failed', 403],
    );
    const before = (await entries()).total;
    assertError(
      await call(member.headers, 'PUT', '/api/servers/alpha/files/rename', { from: 'nope' }),
      400,
    );
    assert.equal((await entries()).total, before, 'a malformed request is not a change');
  });

  it('names the API key a change was made through', async () => {
    const made = await call(member.headers, 'POST', '/api/profile/api-keys', {
      name: 'deploy',
      password: PASSWORD,
    });
    const { token } = json<{ data: { token: string } }>(made).data;
    rememberSecret(token);
    const started = await call(bearer(token), 'POST', '/api/servers/alpha/start');
    assert.equal(started.statusCode, 200, started.body);
    const entry = await latest('server.start');
    assert.deepEqual(
      [entry.actor, entry.via, entry.viaName, entry.outcome],
      ['member', 'api-key', 'deploy', 'ok'],
    );
    assert.equal((await latest('api-key.create')).details.name, 'deploy');
    await call(admin.headers, 'POST', '/api/servers/alpha/stop');
  });

  it('records schedule runs as the schedule, and backups ending as the panel', async () => {
    const made = await call(admin.headers, 'POST', '/api/servers/beta/schedules', {
      name: 'Nightly save',
      cron: '0 4 * * *',
      timezone: 'UTC',
      tasks: [{ action: 'backup' }],
    });
    assert.equal(made.statusCode, 200, made.body);
    const { id } = json<{ data: { id: number } }>(made).data;
    const ran = await call(admin.headers, 'POST', `/api/servers/beta/schedules/${id}/run`);
    assert.equal(ran.statusCode, 200, ran.body);
    const run = await eventually(
      async () => (await entries('?via=schedule')).list[0],
      'the schedule run in the audit log',
    );
    assert.deepEqual(
      [run.action, run.viaName, run.server, run.outcome, run.details.tasks],
      ['schedule.run', 'Nightly save', 'beta', 'ok', ['backup']],
    );
    const backup = await eventually(
      async () => (await entries('?via=system&action=backup.done')).list[0],
      'the backup in the audit log',
    );
    assert.equal(backup.server, 'beta');
    assert.equal((await latest('schedule.run-now')).actor, 'admin');
    // A creation's target is what it made; the tasks are recorded, commands included.
    const created = await latest('schedule.create');
    assert.equal(created.target, String(id));
    assert.deepEqual(created.details.tasks, [{ action: 'backup' }]);
    const changed = await call(admin.headers, 'PUT', `/api/servers/beta/schedules/${id}`, {
      tasks: [{ action: 'command', payload: 'say configured, not typed' }],
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual((await latest('schedule.update')).details.tasks, [
      { action: 'command', payload: 'say configured, not typed' },
    ]);
  });

  it('records a server crashing by itself as the panel', async () => {
    await createServer(panel, admin, 'fragile', {
      startCommand: gameServerCommand('--crash-after', '300'),
    });
    assert.equal((await call(admin.headers, 'POST', '/api/servers/fragile/start')).statusCode, 200);
    const crash = await eventually(
      async () => (await entries('?action=server.crashed')).list[0],
      'the crash in the audit log',
    );
    assert.deepEqual(
      [crash.via, crash.actor, crash.server, crash.outcome, crash.details],
      ['system', null, 'fragile', 'failed', { exitCode: 7, signal: null }],
    );
  });

  it('is read by admins with filters and pages; by a server’s `settings` holders for it', async () => {
    const all = await entries('?limit=3');
    assert.equal(all.list.length, 3);
    assert.ok(all.total > 10);
    const next = await entries('?limit=3&offset=3');
    assert.ok(next.list.every((e) => !all.list.some((seen) => seen.id === e.id)));
    assert.ok(all.list.every((e, i, list) => i === 0 || list[i - 1]!.at >= e.at));

    const files = await entries('?action=file.');
    assert.deepEqual([...new Set(files.list.map((e) => e.action))].sort(), [
      'file.delete',
      'file.write',
    ]);
    assert.equal((await entries('?action=file')).total, 0, 'without a dot, the name is exact');
    assert.ok((await entries('?server=beta')).list.every((e) => e.server === 'beta'));
    assert.ok((await entries('?outcome=failed')).list.every((e) => e.outcome === 'failed'));
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.equal((await entries(`?since=${future}`)).total, 0);
    assert.equal((await entries(`?until=${future}`)).total, all.total);
    assertError(await call(admin.headers, 'GET', '/api/audit?via=carrier-pigeon'), 400);
    assertError(await call(admin.headers, 'GET', '/api/audit?since=yesterday'), 400);
    assertError(await call(admin.headers, 'GET', '/api/audit?limit=0'), 400);

    assertError(await call(member.headers, 'GET', '/api/audit'), 403, 'FORBIDDEN');
    const mine = await call(member.headers, 'GET', '/api/servers/alpha/audit?limit=200');
    assert.equal(mine.statusCode, 200, mine.body);
    const alpha = json<{ data: Entry[] }>(mine).data;
    assert.ok(alpha.length > 0 && alpha.every((e) => e.server === 'alpha'));
    assertError(await call(member.headers, 'GET', '/api/servers/beta/audit'), 403);
    await call(admin.headers, 'PUT', '/api/servers/alpha/users/member', {
      permissions: ['files.read'],
    });
    assertError(await call(member.headers, 'GET', '/api/servers/alpha/audit'), 403);
    assertError(await call(admin.headers, 'GET', '/api/servers/nowhere/audit'), 404);
  });

  it("shows a server's addresses and key names to admins only, and only its own entries", async () => {
    await createServer(panel, admin, 'reborn');
    const granted = await call(admin.headers, 'PUT', '/api/servers/reborn/users/member', {
      permissions: ['files.read', 'files.write', 'settings'],
    });
    assert.equal(granted.statusCode, 200, granted.body);
    const made = await call(admin.headers, 'POST', '/api/profile/api-keys', {
      name: 'ops-robot',
      password: PASSWORD,
    });
    const { token } = json<{ data: { token: string } }>(made).data;
    rememberSecret(token);
    const write = (headers: { authorization: string }, path: string) =>
      call(headers, 'PUT', `/api/servers/reborn/files/content?path=${path}`, { content: 'x' });
    assert.equal((await write(bearer(token), 'by-key.txt')).statusCode, 200);
    assert.equal((await write(member.headers, 'by-member.txt')).statusCode, 200);
    const activity = async (session: { authorization: string }): Promise<Entry[]> => {
      const response = await call(session, 'GET', '/api/servers/reborn/audit?limit=200');
      assert.equal(response.statusCode, 200, response.body);
      return json<{ data: Entry[] }>(response).data;
    };

    // A holder of `settings` sees what was done, by whom and through what, not from where nor
    // through which of someone's API keys.
    const seen = await activity(member.headers);
    const byKey = seen.find((e) => e.target === 'by-key.txt');
    assert.deepEqual([byKey?.actor, byKey?.via, byKey?.viaName], ['admin', 'api-key', null]);
    assert.ok(seen.length >= 3);
    assert.ok(seen.every((e) => e.address === null));
    // An admin sees both.
    const full = await activity(admin.headers);
    assert.equal(full.find((e) => e.target === 'by-key.txt')?.viaName, 'ops-robot');
    assert.ok(full.every((e) => typeof e.address === 'string' && e.address !== ''));

    // Deleted and made again under the same name: another server, with none of the old entries.
    const oldId = full[0]?.serverId;
    assert.ok(typeof oldId === 'number');
    const deleted = await call(admin.headers, 'DELETE', '/api/servers/reborn');
    assert.equal(deleted.statusCode, 200, deleted.body);
    await createServer(panel, admin, 'reborn');
    const fresh = await activity(admin.headers);
    assert.deepEqual(
      fresh.map((e) => e.action),
      ['server.create'],
    );
    assert.notEqual(fresh[0]?.serverId, oldId);
    // The whole log still has the old server's entries under its name and its own id.
    const byName = await entries('?server=reborn&action=file.write');
    assert.deepEqual(byName.list.map((e) => [e.target, e.serverId]).sort(), [
      ['by-key.txt', oldId],
      ['by-member.txt', oldId],
    ]);
  });

  it('never holds a password, token, key or file content', async () => {
    const rows = JSON.stringify(
      await panel.db.kysely.selectFrom('audit_log').selectAll().execute(),
    );
    for (const secret of [PASSWORD, 'not the password', admin.token, 'a secret nobody may read']) {
      assert.ok(!rows.includes(secret), `the audit log holds ${secret}`);
    }
    assert.ok(!rows.includes('gpk_'), 'the audit log holds an API key');
  });

  it('forgets entries older than the retention', async () => {
    const old = new Date(Date.now() - 31 * 24 * 3600 * 1000).toISOString();
    await panel.db.kysely
      .insertInto('audit_log')
      .values({
        at: old,
        actor_id: null,
        actor_name: 'ghost',
        via: 'system',
        via_name: null,
        address: null,
        action: 'server.crashed',
        server: 'alpha',
        target: null,
        outcome: 'failed',
        status: null,
        details: '{}',
      })
      .execute();
    assert.equal((await entries('?actor=ghost')).total, 1);
    await panel.app.close();
    const again = await buildApp(panel.config, { logStream: { write: () => undefined } });
    try {
      await again.ready();
      const response = await again.inject({
        method: 'GET',
        url: '/api/audit?actor=ghost',
        headers: admin.headers,
      });
      assert.equal(response.headers['x-total-count'], '0');
      const kept = await again.inject({ method: 'GET', url: '/api/audit', headers: admin.headers });
      assert.ok(Number(kept.headers['x-total-count']) > 10, 'recent entries are kept');
    } finally {
      await again.close();
    }
  });
});
