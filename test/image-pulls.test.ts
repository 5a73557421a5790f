/**
 * Images are pulled as Wings pulls them, from real registries (Debian's `docker-registry` on
 * loopback, helpers/registry.ts) into the real engine (helpers/docker.ts): a template's image and
 * install image pulled and run, with the digest recorded; the progress said in steps; one pull
 * for two servers, which never holds other requests and which a stop cancels; a registry's
 * credentials, right and wrong; the allow-list; a registry that cannot be reached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { panelId } from '../src/data-dir.js';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { dockerForTests, imageGameServerCommand } from './helpers/docker.js';
import {
  assertError,
  createServer,
  eventually,
  historyOf,
  json,
  register,
  serverAction,
  stats,
  type Session,
  consoleHas,
} from './helpers/factories.js';
import {
  REGISTRY_PASSWORD,
  REGISTRY_USER,
  RegistryProxy,
  pullTestSetup,
  pushImage,
  pushPayloadImage,
  removeImagesOf,
} from './helpers/registry.js';

const setup = await pullTestSetup(await dockerForTests());
const skip = setup.ok ? false : setup.why;
const WRONG_PASSWORD = 'wrong-registry-password-5e2b';
/**
 * How the engine resolves the payload image's tag, once per pull (the manifest by its digest may
 * come from the engine's own cache): two pulls ask twice.
 */
const TAG_LOOKUP = /^(HEAD|GET) \/v2\/game-panel\/payload\/manifests\/1$/;
rememberSecret(WRONG_PASSWORD);

async function statusBecomes(panel: TestPanel, admin: Session, name: string, status: string) {
  await eventually(
    async () => ((await stats(panel, admin, name)).status === status ? true : undefined),
    `${name} to be ${status}`,
    45_000,
  );
}

const statusOf = (response: { body: string }) =>
  json<{ data: { status: string } }>(response as never).data.status;

describe('image pulls from a registry', { skip }, () => {
  let panel: TestPanel;
  let admin: Session;
  let proxy: RegistryProxy;
  /** The payload image's name through the proxy. */
  let viaProxy = '';
  const engine = () => {
    if (!setup.ok) throw new Error('no engine');
    return setup.docker;
  };
  const tag = setup.ok ? (setup.image.split(':')[1] ?? 'latest') : '';

  const suite = suiteScope();
  before(async () => {
    if (!setup.ok) return;
    panel = await startPanel(suite, { DOCKER_HOST: setup.dockerHost });
    admin = await register(panel, 'admin');
    await removeImagesOf(setup.docker, 'game-panel/payload');
    const payload = await pushPayloadImage(setup.docker, setup.open);
    proxy = new RegistryProxy(setup.open);
    viaProxy = payload.replace(setup.open, await proxy.listen());
  });
  after(async () => {
    if (!setup.ok) return;
    await proxy.close();
    await removeImagesOf(setup.docker, 'game-panel/payload');
    await removeImagesOf(setup.docker, 'game-panel/test');
  });

  it("installs and runs a template's image pulled from a registry, and records its digest", async () => {
    if (!setup.ok) return;
    const { reference, digest } = await pushImage(
      engine(),
      setup.image,
      setup.open,
      'game-panel/test',
      tag,
    );
    const egg = {
      meta: { version: 'PTDL_v2' },
      uuid: 'pulled-egg',
      name: 'Pulled',
      docker_images: { Test: reference },
      startup: imageGameServerCommand(),
      config: { files: '{}', startup: JSON.stringify({ done: 'Done!' }), logs: '{}', stop: 'stop' },
      scripts: {
        installation: {
          container: reference,
          entrypoint: 'sh',
          script: 'echo pulled > /mnt/server/installed.txt',
        },
      },
      variables: [],
    };
    const imported = await panel.app.inject({
      method: 'POST',
      url: '/api/templates/import',
      headers: admin.headers,
      payload: egg,
    });
    assert.equal(imported.statusCode, 200, imported.body);
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: { name: 'pulled', template: 'pulled', runtime: 'docker' },
    });
    assert.equal(created.statusCode, 200, created.body);
    // The install's image is pulled first, then the install runs in it.
    await consoleHas(panel, admin, 'pulled', '[panel] installed', 45_000);
    const history = await historyOf(panel, admin, 'pulled');
    const pulling = history.indexOf(
      `[panel] pulling ${reference}: the Docker host does not have it`,
    );
    const pulled = history.indexOf(`[panel] pulled ${reference} (${digest})`);
    assert.ok(pulling !== -1 && pulled > pulling, history.join('\n'));
    assert.ok(history.indexOf('[panel] installed') > pulled);
    const inspected = await engine().getImage(reference).inspect();
    assert.ok(inspected.RepoDigests.some((entry) => entry.endsWith(`@${digest}`)));

    // Now on the host: the start runs it at once, and the digest is the operator's to see.
    const started = await serverAction(panel, admin, 'pulled', 'start');
    assert.equal(started.statusCode, 200, started.body);
    await statusBecomes(panel, admin, 'pulled', 'running');
    assert.equal((await stats(panel, admin, 'pulled')).imageDigest, digest);
    assert.equal((await serverAction(panel, admin, 'pulled', 'stop')).statusCode, 200);
  });

  it('says how far a download is in steps, never per layer event, and runs what it pulled', async () => {
    if (!setup.ok) return;
    proxy.slow = true;
    const before = proxy.count(TAG_LOOKUP);
    await createServer(panel, admin, 'progress', {
      runtime: 'docker',
      image: viaProxy,
      startCommand: '/bin/sleep 600',
    });
    const started = await serverAction(panel, admin, 'progress', 'start');
    assert.equal(started.statusCode, 200, started.body);
    // The registry gave the image; its download goes on after the answer.
    assert.equal(statusOf(started), 'starting');
    await consoleHas(panel, admin, 'progress', `[panel] pulled ${viaProxy} (sha256:`, 45_000);
    await statusBecomes(panel, admin, 'progress', 'running');
    assert.equal(proxy.count(TAG_LOOKUP) - before, 1, 'a pull looks its tag up once');

    const shares = (await historyOf(panel, admin, 'progress'))
      .map((line) => new RegExp(`^\\[panel\\] pulling ${viaProxy}: (\\d+) %$`).exec(line)?.[1])
      .filter((share) => share !== undefined)
      .map(Number);
    // Twenty pieces, each a progress event of the engine: a line per tenth passed, rising.
    assert.ok(shares.length >= 2, `progress shown: ${shares.join(', ')}`);
    assert.ok(shares.some((share) => share < 100));
    assert.equal(shares.at(-1), 100);
    const tenths = shares.map((share) => Math.floor(share / 10));
    assert.equal(new Set(tenths).size, shares.length, `one line per tenth: ${shares.join(', ')}`);
    assert.deepEqual(
      [...shares].sort((a, b) => a - b),
      shares,
    );
    proxy.slow = false;
    assert.equal((await serverAction(panel, admin, 'progress', 'kill')).statusCode, 200);
    await removeImagesOf(engine(), 'game-panel/payload');
  });

  it('pulls once for two servers, answers other requests meanwhile, and a stop cancels one start', async () => {
    if (!setup.ok) return;
    for (const name of ['first', 'second']) {
      await createServer(panel, admin, name, {
        runtime: 'docker',
        image: viaProxy,
        startCommand: '/bin/sleep 600',
      });
    }
    await createServer(panel, admin, 'bystander', {
      runtime: 'docker',
      image: setup.image,
      startCommand: imageGameServerCommand(),
    });
    proxy.hold();
    const before = proxy.count(TAG_LOOKUP);
    const first = await serverAction(panel, admin, 'first', 'start');
    assert.equal(statusOf(first), 'starting', first.body);
    const second = await serverAction(panel, admin, 'second', 'start');
    assert.equal(statusOf(second), 'starting', second.body);
    await eventually(() => (proxy.waiting > 0 ? true : undefined), 'the download to be held');
    await consoleHas(panel, admin, 'second', 'already being pulled for another server', 45_000);

    // While the pull is held: another server starts and runs, requests are answered, and a
    // second start of a waiting server is refused.
    assert.equal((await serverAction(panel, admin, 'bystander', 'start')).statusCode, 200);
    await consoleHas(panel, admin, 'bystander', 'Done!', 45_000);
    assert.equal((await stats(panel, admin, 'first')).status, 'starting');
    assertError(await serverAction(panel, admin, 'first', 'start'), 409, 'CONFLICT');

    // A stop of a start waiting for its image answers at once and cancels it.
    const stopped = await serverAction(panel, admin, 'second', 'stop');
    assert.equal(stopped.statusCode, 200, stopped.body);
    assert.equal(statusOf(stopped), 'stopped');
    await consoleHas(
      panel,
      admin,
      'second',
      `the start is cancelled (it was waiting for ${viaProxy})`,
      45_000,
    );
    assert.ok(proxy.waiting > 0, 'still held: the stop did not wait for the pull');

    proxy.release();
    await statusBecomes(panel, admin, 'first', 'running');
    // One pull for both: the registry was asked for the tag once.
    assert.equal(proxy.count(TAG_LOOKUP) - before, 1);
    assert.equal((await stats(panel, admin, 'second')).status, 'stopped');
    const left = await engine().listContainers({
      all: true,
      filters: {
        label: [`game-panel.panel=${panelId(panel.dataDir)}`, 'game-panel.server=second'],
      },
    });
    assert.deepEqual(left, []);
    for (const name of ['first', 'bystander'])
      assert.equal((await serverAction(panel, admin, name, 'kill')).statusCode, 200);
    await removeImagesOf(engine(), 'game-panel/payload');
  });

  it('ends the pull itself when the only start waiting for it is killed', async () => {
    if (!setup.ok) return;
    proxy.hold();
    const abandoned = proxy.abandoned;
    assert.equal(statusOf(await serverAction(panel, admin, 'first', 'start')), 'starting');
    await eventually(() => (proxy.waiting > 0 ? true : undefined), 'the download to be held');
    const killed = await serverAction(panel, admin, 'first', 'kill');
    assert.equal(statusOf(killed), 'stopped', killed.body);
    // Once the layer comes, the engine drops it: its pull was ended, and it never has the image.
    proxy.release();
    await eventually(
      () => (proxy.abandoned > abandoned ? true : undefined),
      'the engine to drop the download',
    );
    await assert.rejects(engine().getImage(viaProxy).inspect(), { statusCode: 404 });
    assert.equal((await stats(panel, admin, 'first')).status, 'stopped');
  });

  it('pulls with the credentials an admin set, and says why a wrong password fails', async () => {
    if (!setup.ok) return;
    const { reference, digest } = await pushImage(
      engine(),
      setup.image,
      setup.locked,
      'game-panel/test',
      tag,
      true,
    );
    await createServer(panel, admin, 'private', {
      runtime: 'docker',
      image: reference,
      startCommand: imageGameServerCommand(),
    });
    const anonymous = await serverAction(panel, admin, 'private', 'start');
    assertError(anonymous, 409, 'START_REFUSED');
    assert.match(anonymous.body, /Cannot pull .*no basic auth credentials/);

    // An install whose image cannot be pulled fails, saying why.
    const egg = {
      meta: { version: 'PTDL_v2' },
      uuid: 'private-egg',
      name: 'Private',
      docker_images: { Test: reference },
      startup: imageGameServerCommand(),
      config: { files: '{}', startup: '{}', logs: '{}', stop: 'stop' },
      scripts: { installation: { container: reference, entrypoint: 'sh', script: 'true' } },
      variables: [],
    };
    const imported = await panel.app.inject({
      method: 'POST',
      url: '/api/templates/import',
      headers: admin.headers,
      payload: egg,
    });
    assert.equal(imported.statusCode, 200, imported.body);
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: { name: 'private-install', template: 'private', runtime: 'docker' },
    });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal(
      json<{ data: { install: { state: string } } }>(created).data.install.state,
      'failed',
    );
    await consoleHas(
      panel,
      admin,
      'private-install',
      '[panel] the install could not start',
      45_000,
    );
    const install = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/private-install/install',
      headers: admin.headers,
    });
    assertError(install, 409, 'START_REFUSED');
    assert.match(install.body, /no basic auth credentials/);

    const listed = await panel.app.inject({
      method: 'POST',
      url: '/api/admin/registries',
      headers: admin.headers,
      payload: { host: setup.locked, username: REGISTRY_USER, password: WRONG_PASSWORD },
    });
    assert.equal(listed.statusCode, 200, listed.body);
    const wrong = await serverAction(panel, admin, 'private', 'start');
    assertError(wrong, 409, 'START_REFUSED');
    assert.match(wrong.body, /unauthorized: authentication required/);
    await consoleHas(
      panel,
      admin,
      'private',
      `[panel] could not pull ${reference}: unauthorized: authentication required`,
      45_000,
    );
    await consoleHas(panel, admin, 'private', '[panel] the server is not started', 45_000);
    assert.equal((await stats(panel, admin, 'private')).status, 'stopped');

    const fixed = await panel.app.inject({
      method: 'PUT',
      url: `/api/admin/registries/${setup.locked}`,
      headers: admin.headers,
      payload: { password: REGISTRY_PASSWORD },
    });
    assert.equal(fixed.statusCode, 200, fixed.body);
    assert.equal((await serverAction(panel, admin, 'private', 'start')).statusCode, 200);
    await consoleHas(panel, admin, 'private', 'Done!', 45_000);
    assert.equal((await stats(panel, admin, 'private')).imageDigest, digest);

    // The password is never answered, in the registry list or the audit log.
    for (const url of ['/api/admin/registries', '/api/audit']) {
      const answer = await panel.app.inject({ url, headers: admin.headers });
      assert.equal(answer.statusCode, 200, answer.body);
      assert.ok(!answer.body.includes(REGISTRY_PASSWORD) && !answer.body.includes(WRONG_PASSWORD));
    }
    assert.equal((await serverAction(panel, admin, 'private', 'stop')).statusCode, 200);
  });

  it("never pulls the shipped templates' images, which are built on the host", async () => {
    if (!setup.ok) return;
    await createServer(panel, admin, 'shipped', {
      runtime: 'docker',
      image: 'game-panel/minetest:never-here',
      startCommand: '/bin/sleep 600',
    });
    const refused = await serverAction(panel, admin, 'shipped', 'start');
    assertError(refused, 409, 'START_REFUSED');
    assert.match(refused.body, /image of the panel's own templates, built on the Docker host/);
    assert.equal((await stats(panel, admin, 'shipped')).status, 'stopped');
  });

  it('refuses images from registries left off the allow-list, at creation and at pull', async () => {
    if (!setup.ok) return;
    const notPulled = `${setup.open}/game-panel/test:never-pulled`;
    await createServer(panel, admin, 'unlisted', {
      runtime: 'docker',
      image: notPulled,
      startCommand: imageGameServerCommand(),
    });
    const rule = await panel.app.inject({
      method: 'PUT',
      url: '/api/admin/registries',
      headers: admin.headers,
      payload: { restricted: true },
    });
    assert.equal(rule.statusCode, 200, rule.body);
    // Only the locked registry is listed now.
    const created = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/create',
      headers: admin.headers,
      payload: {
        name: 'refused',
        runtime: 'docker',
        image: notPulled,
        startCommand: imageGameServerCommand(),
      },
    });
    assertError(created, 400, 'IMAGE_NOT_ALLOWED');
    assert.match(created.body, new RegExp(`comes from ${setup.open}, which is not among`));
    const changed = await panel.app.inject({
      method: 'PUT',
      url: '/api/servers/private/config',
      headers: admin.headers,
      payload: { image: notPulled },
    });
    assertError(changed, 400, 'IMAGE_NOT_ALLOWED');

    const start = await serverAction(panel, admin, 'unlisted', 'start');
    assertError(start, 409, 'START_REFUSED');
    assert.match(start.body, /not among the registries images may be pulled from/);
    assert.equal((await stats(panel, admin, 'unlisted')).status, 'stopped');
    // An image the host has already is not pulled: it runs.
    assert.equal((await serverAction(panel, admin, 'pulled', 'start')).statusCode, 200);
    await statusBecomes(panel, admin, 'pulled', 'running');
    assert.equal((await serverAction(panel, admin, 'pulled', 'stop')).statusCode, 200);

    const open = await panel.app.inject({
      method: 'PUT',
      url: '/api/admin/registries',
      headers: admin.headers,
      payload: { restricted: false },
    });
    assert.equal(open.statusCode, 200, open.body);
  });
});
