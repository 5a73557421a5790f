/**
 * Container registries through the API (admins; the other callers are in the access matrix):
 * listed with credentials that are stored sealed and never answered or recorded again, changed,
 * forgotten; every bad input a 400 naming its field; and the allow-list refusing a server's image
 * from a registry left off it (400 IMAGE_NOT_ALLOWED). The pulls themselves, against real
 * registries, are test/image-pulls.test.ts.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, json, register, type Session } from './helpers/factories.js';

const PASSWORD = 'registry-token-3b9d-secret';
const SECOND_PASSWORD = 'registry-token-second-8c1e';
rememberSecret(PASSWORD);
rememberSecret(SECOND_PASSWORD);

interface RegistryBody {
  host: string;
  username: string | null;
  passwordSet: boolean;
  createdAt: string;
  updatedAt: string;
}

describe('container registries', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    // No engine: servers are only made and changed here, never started.
    panel = await startPanel(suite, { DOCKER_HOST: 'unix:///nonexistent.sock' });
    admin = await register(panel, 'admin');
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    panel.app.inject({
      method,
      url,
      headers: admin.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  const registry = (response: { body: string }) =>
    json<{ data: RegistryBody }>(response as never).data;

  it('lists a registry with credentials it stores sealed and never shows again', async () => {
    const added = await call('POST', '/api/admin/registries', {
      host: 'GHCR.io',
      username: 'bot',
      password: PASSWORD,
    });
    assert.equal(added.statusCode, 200, added.body);
    assert.ok(!added.body.includes(PASSWORD));
    assert.deepEqual(
      { ...registry(added), createdAt: undefined, updatedAt: undefined },
      {
        host: 'ghcr.io',
        username: 'bot',
        passwordSet: true,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    const listed = await call('GET', '/api/admin/registries');
    assert.equal(listed.statusCode, 200, listed.body);
    assert.ok(!listed.body.includes(PASSWORD));
    const settings = json<{ data: { restricted: boolean; registries: RegistryBody[] } }>(listed);
    assert.equal(settings.data.restricted, false);
    assert.deepEqual(
      settings.data.registries.map((entry) => entry.host),
      ['ghcr.io'],
    );
    // At rest: sealed, not the password.
    const row = await panel.db.kysely
      .selectFrom('registries')
      .select('password')
      .where('host', '=', 'ghcr.io')
      .executeTakeFirstOrThrow();
    const sealed = row.password ?? '';
    assert.ok(sealed.startsWith('v1.'));
    assert.ok(!sealed.includes(PASSWORD));

    assertError(
      await call('POST', '/api/admin/registries', { host: 'ghcr.io' }),
      409,
      'ALREADY_EXISTS',
    );
    // Docker Hub has one name.
    const hub = await call('POST', '/api/admin/registries', { host: 'index.docker.io' });
    assert.equal(registry(hub).host, 'docker.io');
    assert.equal(registry(hub).username, null);
    assert.equal(registry(hub).passwordSet, false);
  });

  it('refuses a host no image can name, and credentials half given, naming the field', async () => {
    const refusals: [object, string][] = [
      [{ host: 'registry' }, 'body/host'],
      [{ host: 'bad host.example' }, 'body/host'],
      [{ host: 'registry.example:70000' }, 'body/host'],
      [{ host: 'registry.example', username: 'bot' }, 'body/password'],
      [{ host: 'registry.example', password: PASSWORD }, 'body/username'],
      [{ host: 'registry.example', username: 'b:ot', password: PASSWORD }, 'body/username'],
    ];
    for (const [payload, path] of refusals) {
      const refused = await call('POST', '/api/admin/registries', payload);
      assertError(refused, 400, 'VALIDATION_FAILED');
      const details = json<{ details?: { path: string }[] }>(refused).details ?? [];
      assert.ok(
        details.some((detail) => detail.path === path),
        `${JSON.stringify(payload)}: ${refused.body}`,
      );
      assert.ok(!refused.body.includes(PASSWORD));
    }
    assertError(await call('POST', '/api/admin/registries', { host: '' }), 400);
    assertError(
      await call('POST', '/api/admin/registries', { host: 'a.example', token: 'x' }),
      400,
    );
    const listed = await call('GET', '/api/admin/registries');
    assert.ok(!listed.body.includes('registry.example'), 'nothing half made');
  });

  it('changes credentials: one alone keeps the other, null removes both', async () => {
    const url = '/api/admin/registries/ghcr.io';
    const { password: sealedBefore } = await panel.db.kysely
      .selectFrom('registries')
      .select('password')
      .where('host', '=', 'ghcr.io')
      .executeTakeFirstOrThrow();
    const newPassword = await call('PUT', url, { password: SECOND_PASSWORD });
    assert.equal(newPassword.statusCode, 200, newPassword.body);
    assert.equal(registry(newPassword).username, 'bot');
    assert.ok(!newPassword.body.includes(SECOND_PASSWORD));
    const { password: sealedAfter } = await panel.db.kysely
      .selectFrom('registries')
      .select('password')
      .where('host', '=', 'ghcr.io')
      .executeTakeFirstOrThrow();
    assert.notEqual(sealedAfter, sealedBefore);

    const renamed = await call('PUT', url, { username: 'robot' });
    assert.deepEqual([registry(renamed).username, registry(renamed).passwordSet], ['robot', true]);

    assertError(await call('PUT', url, { username: null, password: PASSWORD }), 400);
    assertError(await call('PUT', url, {}), 400);
    const removed = await call('PUT', url, { username: null });
    assert.deepEqual([registry(removed).username, registry(removed).passwordSet], [null, false]);
    const refused = await call('PUT', url, { password: PASSWORD });
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.match(refused.body, /a password needs a username/);

    assertError(
      await call('PUT', '/api/admin/registries/nowhere.example', { username: null }),
      404,
      'NOT_FOUND',
    );
    assertError(await call('DELETE', '/api/admin/registries/nowhere.example'), 404, 'NOT_FOUND');
    assert.equal((await call('DELETE', '/api/admin/registries/docker.io')).statusCode, 200);
  });

  it("refuses a server's image from a registry left off the allow-list", async () => {
    const yolk = 'ghcr.io/pterodactyl/yolks:java_21';
    const create = (name: string, image: string) =>
      call('POST', '/api/servers/create', { name, startCommand: 'true', runtime: 'docker', image });
    // Any registry while the rule is off.
    assert.equal((await create('before-rule', 'quay.io/games/thing:1')).statusCode, 200);

    const rule = await call('PUT', '/api/admin/registries', { restricted: true });
    assert.equal(rule.statusCode, 200, rule.body);
    assert.equal(json<{ data: { restricted: boolean } }>(rule).data.restricted, true);
    assertError(await call('PUT', '/api/admin/registries', { restricted: 'yes' }), 400);

    // ghcr.io is listed; Docker Hub (an image named without a registry) and quay.io are not.
    assert.equal((await create('from-ghcr', yolk)).statusCode, 200);
    for (const [name, image, registryName] of [
      ['from-hub', 'debian:12', 'docker.io'],
      ['from-quay', 'quay.io/games/thing:1', 'quay.io'],
    ] as const) {
      const refused = await create(name, image);
      assertError(refused, 400, 'IMAGE_NOT_ALLOWED');
      assert.match(refused.body, new RegExp(`comes from ${registryName.replace('.', '\\.')}`));
      const details = json<{ details?: { path: string }[] }>(refused).details ?? [];
      assert.deepEqual(
        details.map((detail) => detail.path),
        ['body/image'],
      );
    }
    const config = (name: string, payload: object) =>
      call('PUT', `/api/servers/${name}/config`, payload);
    assertError(
      await config('from-ghcr', { image: 'quay.io/games/thing:1' }),
      400,
      'IMAGE_NOT_ALLOWED',
    );
    // Other changes of a server whose image came before the rule are not refused.
    assert.equal((await config('before-rule', { displayName: 'Kept' })).statusCode, 200);
    // A process server has no image to check.
    assert.equal(
      (await call('POST', '/api/servers/create', { name: 'local', startCommand: 'true' }))
        .statusCode,
      200,
    );
    assertError(
      await config('local', { runtime: 'docker', image: 'quay.io/games/thing:1' }),
      400,
      'IMAGE_NOT_ALLOWED',
    );
    assert.equal(
      (await call('PUT', '/api/admin/registries', { restricted: false })).statusCode,
      200,
    );
    assert.equal((await create('from-quay', 'quay.io/games/thing:1')).statusCode, 200);
  });

  it('records each change in the audit log, naming the registry, never the password', async () => {
    const response = await call('GET', '/api/audit?limit=200');
    assert.equal(response.statusCode, 200, response.body);
    assert.ok(!response.body.includes(PASSWORD) && !response.body.includes(SECOND_PASSWORD));
    const entries = json<{
      data: { action: string; target: string | null; details: Record<string, unknown> }[];
    }>(response).data;
    const of = (action: string) => entries.filter((entry) => entry.action === action);
    assert.ok(of('registry.create').some((entry) => entry.target === 'GHCR.io'));
    const created = of('registry.create').find((entry) => entry.target === 'GHCR.io');
    assert.deepEqual(created?.details, { host: 'GHCR.io', username: 'bot' });
    assert.ok(of('registry.update').some((entry) => entry.target === 'ghcr.io'));
    assert.ok(of('registry.delete').some((entry) => entry.target === 'docker.io'));
    assert.deepEqual(
      of('registry.rule').map((entry) => entry.details.restricted),
      [false, true],
    );
  });
});
