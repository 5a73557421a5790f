import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, json, register, type Session } from './helpers/factories.js';

const ENDPOINTS = [
  ['get', '/api/health'],
  ['post', '/api/auth/register'],
  ['post', '/api/auth/login'],
  ['get', '/api/auth/me'],
  ['get', '/api/users'],
  ['put', '/api/users/{username}/role'],
  ['put', '/api/users/{username}/servers'],
  ['delete', '/api/users/{username}'],
  ['get', '/api/profile/stats'],
  ['get', '/api/profile/stats/{username}'],
  ['put', '/api/profile/username'],
  ['put', '/api/profile/password'],
] as const;

const PUBLIC = new Set(['/api/health', '/api/auth/register', '/api/auth/login']);

describe('the HTTP surface', () => {
  let panel: TestPanel;
  let admin: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  it('answers health publicly in the envelope', async () => {
    const response = await panel.app.inject({ url: '/api/health' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(json(response), {
      message: 'OK',
      data: { status: 'ok', version: '0.1.0' },
    });
  });

  it('answers unknown routes with the error envelope, never revealing more to the anonymous', async () => {
    for (const [method, url] of [
      ['GET', '/api/nothing-here'],
      ['POST', '/api/health'],
      ['PATCH', '/api/users/admin/role'],
      ['GET', '/'],
    ] as const) {
      assertError(await panel.app.inject({ method, url }), 404, 'NOT_FOUND');
    }
  });

  it('answers a malformed URL with 400', async () => {
    assertError(
      await panel.app.inject({ url: '/api/users/%E0%A4%A/role', headers: admin.headers }),
      400,
    );
  });

  it('refuses NUL characters in paths, query strings and bodies with 400, never 500', async () => {
    for (const request of [
      { method: 'PUT' as const, url: '/api/users/ad%00min/role', payload: { role: 'user' } },
      { method: 'GET' as const, url: '/api/profile/stats/ad%00min' },
      { method: 'GET' as const, url: '/api/servers/s%001/config' },
      { method: 'GET' as const, url: '/api/tickets?status=pend%00ing' },
      {
        method: 'POST' as const,
        url: '/api/auth/login',
        payload: { username: 'a\u0000b', password: 'x' },
      },
      {
        method: 'POST' as const,
        url: '/api/tickets/create',
        payload: { title: 't', description: '\u0000' },
      },
    ]) {
      const response = await panel.app.inject({ ...request, headers: admin.headers });
      assertError(response, 400);
    }
  });

  it('says once what a union field takes, not once per branch', async () => {
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: { name: 'unions', startCommand: 'true' },
    });
    assert.equal(created.statusCode, 200, created.body);
    for (const [payload, path, message] of [
      [{ limits: { cpuPercent: 0 } }, 'body/limits/cpuPercent', 'must be >= 1, or null'],
      [{ limits: { memoryBytes: 'lots' } }, 'body/limits/memoryBytes', 'must be integer, or null'],
      [{ runtime: 'vm' }, 'body/runtime', 'must be one of process, docker'],
    ] as const) {
      const refused = await panel.app.inject({
        method: 'PUT',
        url: '/api/servers/unions/config',
        headers: admin.headers,
        payload,
      });
      assertError(refused, 400, 'VALIDATION_FAILED');
      const body = json<{ message: string; details: { path: string; message: string }[] }>(refused);
      assert.deepEqual(body.details, [{ path, message }]);
      assert.equal(body.message, `${path}: ${message}`);
    }
  });

  it('bounds how long a slow client may hold a connection', () => {
    const server = panel.app.server;
    assert.equal(server.headersTimeout, 10_000);
    assert.equal(server.requestTimeout, 3_600_000);
    assert.equal(server.keepAliveTimeout, 10_000);
    assert.equal(server.timeout, 60_000);
  });

  it('sets the security headers on successes and errors alike', async () => {
    for (const response of [
      await panel.app.inject({ url: '/api/health' }),
      await panel.app.inject({ url: '/api/auth/me', headers: admin.headers }),
      await panel.app.inject({ url: '/api/users' }),
      await panel.app.inject({ url: '/api/missing' }),
    ]) {
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.headers['x-frame-options'], 'DENY');
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.match(String(response.headers['content-security-policy']), /default-src 'none'/);
      assert.equal(response.headers['x-powered-by'], undefined);
      assert.match(String(response.headers['content-type']), /^application\/json/);
    }
  });

  it('publishes an OpenAPI 3 document with every endpoint and its security', async () => {
    const response = await panel.app.inject({ url: '/api/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = json<{
      openapi: string;
      paths: Record<string, Record<string, { security?: unknown; responses: object }>>;
    }>(response);
    assert.match(document.openapi, /^3\./);
    for (const [method, path] of ENDPOINTS) {
      const operation = document.paths[path]?.[method];
      assert.ok(operation, `${method.toUpperCase()} ${path} is documented`);
      assert.equal(
        operation.security === undefined,
        PUBLIC.has(path),
        `${method.toUpperCase()} ${path} security`,
      );
      assert.ok('200' in operation.responses);
    }
    assert.ok(!JSON.stringify(document).includes('password_hash'));
  });

  it('serves the interactive docs page with a strict Content-Security-Policy', async () => {
    const page = await panel.app.inject({ url: '/api/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /object-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.match(page.body, /swagger-ui/);
    const script = await panel.app.inject({ url: '/api/docs/static/swagger-initializer.js' });
    assert.equal(script.statusCode, 200);
  });

  it('never surfaces concurrent writes as 500', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `writer${i}`);
    const registrations = await Promise.all(
      names.map((username) =>
        panel.app.inject({
          method: 'POST',
          url: '/api/auth/register',
          payload: { username, password: 'parallel writes' },
        }),
      ),
    );
    assert.deepEqual(
      registrations.map((response) => response.statusCode),
      names.map(() => 200),
    );
    const changes = await Promise.all(
      names.flatMap((username, i) => [
        panel.app.inject({
          method: 'PUT',
          url: `/api/users/${username}/role`,
          headers: admin.headers,
          payload: { role: i % 2 === 0 ? 'support' : 'banned' },
        }),
        panel.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username, password: 'parallel writes' },
        }),
      ]),
    );
    for (const response of changes) assert.equal(response.statusCode, 200, response.body);
    const users = json<{ data: { username: string; role: string }[] }>(
      await panel.app.inject({ url: '/api/users', headers: admin.headers }),
    ).data;
    assert.equal(users.filter((user) => user.role === 'support').length, 20);
    assert.equal(users.filter((user) => user.role === 'banned').length, 20);
  });
});

describe('the web UI', () => {
  let panel: TestPanel;
  let webRoot: string;
  const INDEX =
    '<!doctype html><title>Game panel</title><script type="module" src="/assets/app-1a2b.js"></script>';
  const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;
  const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

  const suite = suiteScope();
  before(async () => {
    webRoot = await mkdtemp(path.join(tmpdir(), 'panel-web-'));
    await mkdir(path.join(webRoot, 'assets'));
    await writeFile(path.join(webRoot, 'index.html'), INDEX);
    await writeFile(path.join(webRoot, 'favicon.svg'), '<svg/>');
    await writeFile(path.join(webRoot, 'assets', 'app-1a2b.js'), SCRIPT);
    await writeFile(path.join(webRoot, 'assets', 'app-1a2b.js.gz'), gzipSync(SCRIPT));
    await writeFile(path.join(webRoot, '.secret'), 'not served');
    panel = await startPanel(suite, {}, { webRoot });
  });
  after(async () => {
    await rm(webRoot, { recursive: true, force: true });
  });

  const assertUiPolicy = (headers: Record<string, unknown>) => {
    const csp = String(headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self';/);
    assert.match(csp, /style-src 'self';/);
    assert.match(csp, /connect-src 'self' ws:\/\/panel\.example:8000 wss:\/\/panel\.example:8000;/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
  };

  it('serves the app at / and at every page path a browser opens, never cached', async () => {
    for (const url of ['/', '/servers', '/servers/survival/files?path=world', '/sign-in']) {
      const response = await panel.app.inject({
        url,
        headers: { ...html, host: 'panel.example:8000' },
      });
      assert.equal(response.statusCode, 200, url);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.equal(response.body, INDEX);
      assert.equal(response.headers['cache-control'], 'no-cache');
      assertUiPolicy(response.headers);
    }
  });

  it('serves hashed assets as immutable, precompressed when the client accepts it', async () => {
    const plain = await panel.app.inject({
      url: '/assets/app-1a2b.js',
      headers: { host: 'panel.example:8000' },
    });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.body, SCRIPT);
    assert.match(String(plain.headers['content-type']), /javascript/);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(plain.headers.vary), /Accept-Encoding/i);
    assertUiPolicy(plain.headers);
    const gzipped = await panel.app.inject({
      url: '/assets/app-1a2b.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    const favicon = await panel.app.inject({ url: '/favicon.svg' });
    assert.equal(favicon.statusCode, 200);
    assert.equal(favicon.headers['cache-control'], 'no-cache');
  });

  it('keeps the JSON 404 for API and socket paths, and for clients not asking for HTML', async () => {
    for (const [url, headers] of [
      ['/api/nothing-here', html],
      ['/api', html],
      ['/ws/nothing-here', html],
      ['/metrics', html], // metrics not served here (docs/metrics.md)
      ['/missing.js', {}],
      ['/assets/gone-0000.js', { accept: '*/*' }],
      ['/servers', { accept: 'application/json' }],
      ['/servers', { accept: 'text/html;q=0' }],
      ['/.secret', html],
      ['/assets/../.secret', html],
      ['/%2e%2e/package.json', {}],
    ] as const) {
      const response = await panel.app.inject({ url, headers });
      if (url === '/.secret' || url === '/assets/../.secret') {
        // A dotfile is never one of the build's files: a browser gets the app, nothing else.
        assert.notEqual(response.body, 'not served', url);
        continue;
      }
      assertError(response, 404, 'NOT_FOUND');
      assert.equal(response.headers['cache-control'], 'no-store', url);
      assert.match(String(response.headers['content-security-policy']), /default-src 'none'/);
    }
  });

  it('never answers a UI path with a file outside the build', async () => {
    for (const url of [
      '/..%2fpackage.json',
      '/%2e%2e%2fpackage.json',
      '/assets/..%2f..%2fpackage.json',
    ]) {
      const response = await panel.app.inject({ url, headers: html });
      assert.ok(!response.body.includes('"name": "game-panel"'), url);
    }
  });

  it('still answers API routes, unknown methods and the docs as before', async () => {
    assert.equal((await panel.app.inject({ url: '/api/health', headers: html })).statusCode, 200);
    assertError(await panel.app.inject({ method: 'POST', url: '/servers', headers: html }), 404);
    assert.equal((await panel.app.inject({ url: '/api/docs', headers: html })).statusCode, 200);
  });
});

describe('the web UI, not built', () => {
  it('answers the JSON 404 instead of a page it does not have', async (t) => {
    const panel = await startPanel(
      t,
      {},
      { webRoot: path.join(tmpdir(), 'panel-web-never-built') },
    );
    assertError(
      await panel.app.inject({ url: '/servers', headers: { accept: 'text/html' } }),
      404,
      'NOT_FOUND',
    );
  });
});
