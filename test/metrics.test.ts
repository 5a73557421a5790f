/**
 * `/metrics` (docs/metrics.md): the Prometheus text behind METRICS_TOKEN on the panel's port, on
 * METRICS_ADDRESS's own listener without a token, or nowhere; HTTP requests counted by route
 * pattern, never by URL; servers by status and their use; open console sockets.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createTcpServer } from 'node:net';
import { before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { buildApp } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import {
  rememberSecret,
  startPanel,
  suiteScope,
  testEnvironment,
  type Scope,
  type TestPanel,
} from './helpers/app.js';
import {
  assertError,
  bearer,
  createServer,
  eventually,
  json,
  register,
  serverAction,
  type Session,
} from './helpers/factories.js';

const TOKEN = 'metrics-token-for-the-tests-0123456789';
rememberSecret(TOKEN);

/**
 * The value of the sample `name` whose labels include `labels`, from Prometheus text; undefined
 * when there is none.
 */
function sample(
  text: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const [, key = '', value = ''] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      found[key] = value;
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

/** Starts a panel whose log lines are kept, parsed. */
async function startLogged(
  t: Scope,
  env: Record<string, string>,
): Promise<{ panel: TestPanel; log: { msg: string; url?: string }[] }> {
  const log: { msg: string; url?: string }[] = [];
  const panel = await startPanel(
    t,
    { LOG_LEVEL: 'info', ...env },
    { logStream: { write: (line: string) => log.push(JSON.parse(line) as { msg: string }) } },
  );
  return { panel, log };
}

describe('metrics behind METRICS_TOKEN on the panel port', () => {
  let panel: TestPanel;
  let admin: Session;
  const scrape = async (): Promise<string> => {
    const response = await panel.app.inject({ url: '/metrics', headers: bearer(TOKEN) });
    assert.equal(response.statusCode, 200, response.body);
    return response.body;
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, { METRICS_TOKEN: TOKEN });
    admin = await register(panel, 'admin');
  });

  it('answers 401 without the token, with a wrong one and with a user token', async () => {
    assertError(await panel.app.inject({ url: '/metrics' }), 401, 'UNAUTHORIZED');
    for (const headers of [
      bearer(`${TOKEN}x`),
      bearer(TOKEN.slice(0, -1)),
      bearer('short'),
      admin.headers,
      { authorization: TOKEN },
      { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
    ]) {
      assertError(await panel.app.inject({ url: '/metrics', headers }), 401, 'UNAUTHORIZED');
    }
  });

  it('answers the Prometheus text format with the token', async () => {
    const response = await panel.app.inject({ url: '/metrics', headers: bearer(TOKEN) });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.match(response.body, /^# HELP game_panel_http_requests_total /m);
    assert.match(response.body, /^# TYPE game_panel_http_request_duration_seconds histogram$/m);
    assert.match(response.body, /^game_panel_process_resident_memory_bytes \d+/m);
  });

  it('counts requests by route pattern, method and status', async () => {
    const labels = { method: 'GET', route: '/api/health', status_code: '200' };
    const before = sample(await scrape(), 'game_panel_http_requests_total', labels) ?? 0;
    for (let i = 0; i < 3; i += 1) await panel.app.inject({ url: '/api/health' });
    const text = await scrape();
    assert.equal(sample(text, 'game_panel_http_requests_total', labels), before + 3);
    assert.equal(
      sample(text, 'game_panel_http_request_duration_seconds_count', labels),
      before + 3,
    );
    assert.ok(
      (sample(text, 'game_panel_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }) ??
        0) >= 3,
    );
    // The 401s above, under the route's own pattern.
    assert.ok(
      (sample(text, 'game_panel_http_requests_total', {
        route: '/metrics',
        status_code: '401',
      }) ?? 0) >= 1,
    );
  });

  it('labels a URL by its pattern only: no server name, no download link id, no unknown path', async () => {
    await createServer(panel, admin, 'vault');
    const write = await panel.app.inject({
      method: 'PUT',
      url: '/api/servers/vault/files/content?path=notes.txt',
      headers: admin.headers,
      payload: { content: 'hello\n' },
    });
    assert.equal(write.statusCode, 200, write.body);
    const link = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/vault/files/download-link',
      headers: admin.headers,
      payload: { path: 'notes.txt' },
    });
    assert.equal(link.statusCode, 200, link.body);
    const { url } = json<{ data: { url: string } }>(link).data;
    const id = url.slice(url.lastIndexOf('/') + 1);
    rememberSecret(id);
    assert.equal((await panel.app.inject({ url })).statusCode, 200);
    assertError(await panel.app.inject({ url: '/api/no-such-route-xyzzy' }), 404);

    const text = await scrape();
    assert.ok(!text.includes(id), 'the download link id is in the metrics');
    assert.ok(!text.includes('xyzzy'), 'an unknown URL is in the metrics');
    const route = (pattern: string, status = '200') =>
      sample(text, 'game_panel_http_requests_total', { route: pattern, status_code: status });
    assert.equal(route('/api/downloads/:id'), 1);
    assert.equal(route('/api/servers/:server/files/content'), 1);
    assert.equal(route('/api/servers/:server/files/download-link'), 1);
    assert.ok((route('unmatched', '404') ?? 0) >= 1);
    for (const line of text.split('\n')) {
      const label = /route="([^"]*)"/.exec(line)?.[1];
      if (label !== undefined && label !== 'unmatched') {
        assert.ok(label.startsWith('/'), line);
        assert.ok(!label.includes('vault'), line);
      }
    }
  });

  it('counts servers by status, with each server’s CPU, memory and disk', async () => {
    await createServer(panel, admin, 'alpha');
    let text = await scrape();
    const servers = (status: string) => sample(text, 'game_panel_servers', { status });
    // vault (from the test above) and alpha, both stopped.
    assert.equal(servers('stopped'), 2);
    assert.equal(servers('running'), 0);
    assert.equal(sample(text, 'game_panel_server_memory_bytes', { server: 'alpha' }), 0);
    assert.equal(sample(text, 'game_panel_server_cpu_percent', { server: 'alpha' }), 0);
    assert.ok((sample(text, 'game_panel_server_disk_bytes', { server: 'vault' }) ?? 0) >= 6);

    assert.equal((await serverAction(panel, admin, 'alpha', 'start')).statusCode, 200);
    try {
      text = await eventually(async () => {
        const now = await scrape();
        const memory = sample(now, 'game_panel_server_memory_bytes', { server: 'alpha' }) ?? 0;
        return sample(now, 'game_panel_servers', { status: 'running' }) === 1 && memory > 0
          ? now
          : undefined;
      }, 'alpha running in the metrics');
      assert.equal(servers('stopped'), 1);
      assert.ok((sample(text, 'game_panel_server_cpu_percent', { server: 'alpha' }) ?? -1) >= 0);
    } finally {
      assert.equal((await serverAction(panel, admin, 'alpha', 'stop')).statusCode, 200);
    }
    text = await scrape();
    assert.equal(servers('stopped'), 2);

    // A deleted server's series go away.
    const deleted = await panel.app.inject({
      method: 'DELETE',
      url: '/api/servers/alpha',
      headers: admin.headers,
    });
    assert.equal(deleted.statusCode, 200, deleted.body);
    text = await scrape();
    assert.equal(servers('stopped'), 1);
    assert.equal(sample(text, 'game_panel_server_disk_bytes', { server: 'alpha' }), undefined);
  });

  it('counts open console sockets', async () => {
    const sockets = async () => sample(await scrape(), 'game_panel_console_sockets');
    assert.equal(await sockets(), 0);
    const base = await panel.listen();
    const socket = new WebSocket(`${base.replace('http', 'ws')}/ws/servers/vault/console`, {
      headers: admin.headers,
    });
    await once(socket, 'message');
    assert.equal(await sockets(), 1);
    socket.close();
    await eventually(async () => ((await sockets()) === 0 ? true : undefined), 'socket closed');
  });
});

describe('metrics on METRICS_ADDRESS', () => {
  it('serves them there without a token, and not on the panel port', async (t) => {
    const { panel, log } = await startLogged(t, { METRICS_ADDRESS: '127.0.0.1:0' });
    let url: string | undefined;
    try {
      url = log.find((line) => line.url !== undefined)?.url;
      assert.ok(url !== undefined, 'the start-up log names the metrics URL');
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      await register(panel, 'admin');
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.match(String(response.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      assert.ok(
        (sample(text, 'game_panel_http_requests_total', { route: '/api/auth/register' }) ?? 0) >= 1,
      );
      assert.equal(sample(text, 'game_panel_servers', { status: 'stopped' }), 0);

      const other = await fetch(new URL('/api/health', url));
      assert.equal(other.status, 404);
      assert.equal(((await other.json()) as { code: string }).code, 'NOT_FOUND');
      assert.equal((await fetch(url, { method: 'POST' })).status, 404);

      // Not on the panel's own port, not even with a token.
      assertError(await panel.app.inject({ url: '/metrics' }), 404, 'NOT_FOUND');
      assertError(
        await panel.app.inject({
          url: '/metrics',
          headers: { ...bearer(TOKEN), accept: 'text/html' },
        }),
        404,
        'NOT_FOUND',
      );
    } finally {
      await panel.close();
    }
    // Closed with the panel.
    await assert.rejects(fetch(url));
  });

  it('serves them on both with METRICS_TOKEN too', async (t) => {
    const { panel, log } = await startLogged(t, {
      METRICS_ADDRESS: '127.0.0.1:0',
      METRICS_TOKEN: TOKEN,
    });
    const url = log.find((line) => line.url !== undefined)?.url;
    assert.ok(url !== undefined);
    assert.equal((await fetch(url)).status, 200);
    assertError(await panel.app.inject({ url: '/metrics' }), 401, 'UNAUTHORIZED');
    const response = await panel.app.inject({ url: '/metrics', headers: bearer(TOKEN) });
    assert.equal(response.statusCode, 200);
    assert.ok(log.every((line) => !JSON.stringify(line).includes(TOKEN)));
  });

  it('stops the start with a ConfigError naming METRICS_ADDRESS when the address is taken', async () => {
    const taken = createTcpServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as { port: number };
    const { env, cleanup } = await testEnvironment({ METRICS_ADDRESS: `127.0.0.1:${port}` });
    const app = await buildApp(loadConfig(env));
    try {
      await assert.rejects(
        async () => {
          await app.ready();
        },
        (error: unknown) =>
          error instanceof ConfigError &&
          error.variable === 'METRICS_ADDRESS' &&
          error.message.includes('EADDRINUSE'),
      );
    } finally {
      await app.close();
      taken.close();
      await cleanup();
    }
  });
});

describe('metrics with neither METRICS_TOKEN nor METRICS_ADDRESS', () => {
  it('are not served at all, and the start-up log says how to serve them', async (t) => {
    const { panel, log } = await startLogged(t, {});
    for (const headers of [{}, bearer(TOKEN), { accept: 'text/html' }]) {
      assertError(await panel.app.inject({ url: '/metrics', headers }), 404, 'NOT_FOUND');
    }
    assert.ok(
      log.some(
        (line) =>
          line.msg.includes('metrics are not served') &&
          line.msg.includes('METRICS_TOKEN') &&
          line.msg.includes('METRICS_ADDRESS'),
      ),
    );
  });
});
