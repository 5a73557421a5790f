/**
 * What only the docker runtime promises, on a real engine (helpers/docker.ts): how the container
 * is made (labels, read-only root, no capability, never root, the limits, only the server's
 * folder mounted, no published port), what the server can write and see, and that an image
 * that cannot be pulled, an engine that cannot be reached and a container removed behind the
 * panel's back are each told for what they are, never as a 500.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { panelId } from '../src/data-dir.js';
import { startPanel, suiteScope, TEST_JWT_SECRET, type TestPanel } from './helpers/app.js';
import { bridgeDockerForTests, dockerForTests, imageGameServerCommand } from './helpers/docker.js';
import {
  assertError,
  createServer,
  eventually,
  historyOf,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
  consoleHas,
} from './helpers/factories.js';

const MIB = 1024 * 1024;
const docker = await dockerForTests();
const skip = docker.ok ? false : docker.why;
const bridge = await bridgeDockerForTests();

describe('docker runtime guarantees', { skip }, () => {
  let panel: TestPanel;
  let admin: Session;
  const image = docker.ok ? docker.image : '';

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, docker.ok ? { DOCKER_HOST: docker.dockerHost } : {});
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'boxed', {
      startCommand: imageGameServerCommand(),
      runtime: 'docker',
      image,
      stopCommand: 'stop',
      limits: { memoryBytes: 128 * MIB, cpuPercent: 50, pids: 32 },
    });
    assert.equal((await serverAction(panel, admin, 'boxed', 'start')).statusCode, 200);
    await consoleHas(panel, admin, 'boxed', 'Done! pid=');
  });

  it('makes the container locked down, limited, labelled and with only its folder', async () => {
    if (!docker.ok) return;
    const id = panelId(panel.dataDir);
    const info = await docker.docker.getContainer(`game-panel-${id}-boxed`).inspect();
    assert.deepEqual(info.Config.Labels, {
      'game-panel.panel': id,
      'game-panel.server': 'boxed',
    });
    const host = info.HostConfig;
    assert.equal(host.ReadonlyRootfs, true);
    assert.deepEqual(host.CapDrop, ['ALL']);
    assert.deepEqual(host.SecurityOpt, ['no-new-privileges']);
    assert.match(info.Config.User, /^[1-9]\d*:[1-9]\d*$/);
    if (process.getuid?.() === 0) {
      // A root panel gives each server a uid of its own: the range's first plus the server's id.
      const { id: serverId } = await panel.db.kysely
        .selectFrom('servers')
        .select('id')
        .where('name', '=', 'boxed')
        .executeTakeFirstOrThrow();
      const uid = panel.config.serverUidRange.first + serverId;
      assert.equal(info.Config.User, `${uid}:${uid}`);
    }
    // The kernel's out-of-memory killer picks the game before the panel.
    assert.equal(host.OomScoreAdj, 500);
    assert.equal(host.Memory, 128 * MIB);
    assert.equal(host.MemorySwap, 128 * MIB);
    assert.equal(host.NanoCpus, 500_000_000);
    assert.equal(host.PidsLimit, 32);
    assert.deepEqual(host.PortBindings ?? {}, {});
    assert.equal(host.PublishAllPorts, false);
    assert.equal(info.Config.WorkingDir, '/home/container');
    assert.deepEqual(
      info.Mounts.map((mount) => [mount.Type, mount.Source, mount.Destination, mount.RW]),
      [['bind', path.join(panel.config.serversDir, 'boxed'), '/home/container', true]],
    );
    assert.ok(Object.keys(host.Tmpfs ?? {}).includes('/tmp'));
    // The pid the panel shows is the server's, as the host sees it.
    assert.equal((await stats(panel, admin, 'boxed')).pid, info.State.Pid);
  });

  it('lets the server write only its folder and /tmp', async () => {
    await sendCommand(panel, admin, 'boxed', 'write /etc/x');
    await consoleHas(panel, admin, 'boxed', 'write failed: EROFS');
    await sendCommand(panel, admin, 'boxed', 'write /tmp/x');
    await sendCommand(panel, admin, 'boxed', 'write mine.txt');
    await eventually(
      async () =>
        (await historyOf(panel, admin, 'boxed')).filter((line) => line === 'write ok').length >= 2
          ? true
          : undefined,
      'both writes to succeed',
    );
    const file = path.join(panel.config.serversDir, 'boxed', 'mine.txt');
    assert.equal(readFileSync(file, 'utf8'), 'written');
  });

  it('gives the server none of the panel secrets in its environment', async () => {
    await sendCommand(panel, admin, 'boxed', 'env');
    const line = await consoleHas(panel, admin, 'boxed', '"PATH"');
    const env = JSON.parse(line) as Record<string, string>;
    assert.deepEqual(Object.keys(env).sort(), ['HOME', 'HOSTNAME', 'LANG', 'PATH', 'PWD']);
    assert.equal(env.HOME, '/home/container');
    assert.ok(!line.includes(TEST_JWT_SECRET));
  });

  it('pulls a missing image; a registry that cannot be reached is a 409 with its reason', async () => {
    // Nothing listens on port 1: the engine's pull fails at once (test/image-pulls.test.ts pulls
    // from real registries).
    const missing = '127.0.0.1:1/game-panel-test:not-there';
    await createServer(panel, admin, 'imageless', {
      startCommand: imageGameServerCommand(),
      runtime: 'docker',
      image: missing,
    });
    const refused = await serverAction(panel, admin, 'imageless', 'start');
    assertError(refused, 409, 'START_REFUSED');
    assert.match(
      refused.body,
      /Cannot pull 127\.0\.0\.1:1\/game-panel-test:not-there: .*connection refused/,
    );
    assert.equal((await stats(panel, admin, 'imageless')).status, 'stopped');
    await consoleHas(panel, admin, 'imageless', `[panel] could not pull ${missing}: `);
    await consoleHas(panel, admin, 'imageless', '[panel] the server is not started');
  });

  it('shows a command missing from the image as a crash, with the reason', async () => {
    await createServer(panel, admin, 'typo', {
      startCommand: '/usr/bin/nope',
      runtime: 'docker',
      image,
    });
    const started = await serverAction(panel, admin, 'typo', 'start');
    assert.equal(started.statusCode, 200, started.body);
    assert.equal((await stats(panel, admin, 'typo')).status, 'crashed');
    await consoleHas(panel, admin, 'typo', '/usr/bin/nope');
  });

  it('handles a container removed behind its back as a crash', async () => {
    if (!docker.ok) return;
    await createServer(panel, admin, 'victim', {
      startCommand: imageGameServerCommand(),
      runtime: 'docker',
      image,
    });
    assert.equal((await serverAction(panel, admin, 'victim', 'start')).statusCode, 200);
    await docker.docker
      .getContainer(`game-panel-${panelId(panel.dataDir)}-victim`)
      .remove({ force: true });
    await eventually(async () => {
      const now = await stats(panel, admin, 'victim');
      return now.status === 'crashed' ? now : undefined;
    }, 'the server to be crashed');
    await consoleHas(panel, admin, 'victim', 'exited unexpectedly');
    assert.equal((await serverAction(panel, admin, 'victim', 'start')).statusCode, 200);
    await consoleHas(panel, admin, 'victim', 'Done! pid=');
    assert.equal((await serverAction(panel, admin, 'victim', 'stop')).statusCode, 200);
  });

  it('removes the container once the server stopped', async () => {
    if (!docker.ok) return;
    assert.equal((await serverAction(panel, admin, 'boxed', 'stop')).statusCode, 200);
    const left = await docker.docker.listContainers({
      all: true,
      filters: { label: [`game-panel.panel=${panelId(panel.dataDir)}`] },
    });
    assert.deepEqual(left, []);
    assert.ok(existsSync(path.join(panel.config.serversDir, 'boxed', 'mine.txt')));
  });
});

describe('docker runtime with an engine that cannot be reached', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, { DOCKER_HOST: 'unix:///nonexistent.sock' });
    admin = await register(panel, 'admin');
  });

  it('answers 503 RUNTIME_UNAVAILABLE with the reason, never 500', async () => {
    await createServer(panel, admin, 'remote', {
      startCommand: '/usr/bin/node',
      runtime: 'docker',
      image: 'anything:1',
    });
    const refused = await serverAction(panel, admin, 'remote', 'start');
    assertError(refused, 503, 'RUNTIME_UNAVAILABLE');
    assert.match(refused.body, /nonexistent\.sock cannot be reached \(ENOENT\)/);
    assert.equal((await stats(panel, admin, 'remote')).status, 'stopped');
    const deleted = await panel.app.inject({
      method: 'DELETE',
      url: '/api/servers/remote',
      headers: admin.headers,
    });
    assert.equal(deleted.statusCode, 200, deleted.body);
  });
});

describe('templates on the docker runtime', { skip }, () => {
  let panel: TestPanel;
  let admin: Session;
  const image = docker.ok ? docker.image : '';

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, docker.ok ? { DOCKER_HOST: docker.dockerHost } : {});
    admin = await register(panel, 'admin');
  });

  it("installs in the egg's install image with the folder at /mnt/server, then runs with the variables", async () => {
    if (!docker.ok) return;
    const egg = {
      meta: { version: 'PTDL_v2' },
      uuid: 'docker-egg',
      name: 'Docker fixture',
      docker_images: { Test: image },
      startup: `${imageGameServerCommand()} --motd {{MOTD}}`,
      config: { files: '{}', startup: JSON.stringify({ done: 'Done!' }), logs: '{}', stop: 'stop' },
      scripts: {
        installation: {
          container: image,
          entrypoint: 'sh',
          script:
            'echo "installing as $(id -u) in $(pwd)"\necho "$MOTD" > /mnt/server/installed.txt',
        },
      },
      variables: [
        {
          name: 'Message',
          description: '',
          env_variable: 'MOTD',
          default_value: 'hello',
          user_viewable: true,
          user_editable: true,
          rules: 'required|string',
        },
      ],
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
      payload: {
        name: 'templated',
        template: 'docker-fixture',
        runtime: 'docker',
        variables: { MOTD: 'from-the-panel' },
        allocations: [{ ip: '127.0.0.1', port: 30555 }],
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    // The image comes from the template's first Docker image.
    assert.equal((JSON.parse(created.body) as { data: { image: string } }).data.image, image);
    await consoleHas(panel, admin, 'templated', '[panel] installed');
    const installLine = await consoleHas(panel, admin, 'templated', 'installing as');
    assert.match(installLine, /^installing as [1-9]\d* in \/mnt\/server$/, 'never root');
    assert.equal(
      readFileSync(path.join(panel.config.serversDir, 'templated', 'installed.txt'), 'utf8'),
      'from-the-panel\n',
    );
    // The install's container is gone.
    const left = await docker.docker.listContainers({
      all: true,
      filters: { label: [`game-panel.install=templated`] },
    });
    assert.deepEqual(left, []);

    assert.equal((await serverAction(panel, admin, 'templated', 'start')).statusCode, 200);
    await eventually(
      async () =>
        (await stats(panel, admin, 'templated')).status === 'running' ? true : undefined,
      'running after Done!',
    );
    assert.equal((await sendCommand(panel, admin, 'templated', 'env')).statusCode, 200);
    const envLine = await consoleHas(panel, admin, 'templated', '"MOTD"');
    const env = JSON.parse(envLine) as Record<string, string>;
    assert.equal(env.MOTD, 'from-the-panel');
    assert.equal(env.SERVER_PORT, '30555');
    assert.equal(env.SERVER_IP, '127.0.0.1');
    assert.equal(env.HOME, '/home/container');
    assert.equal((await serverAction(panel, admin, 'templated', 'stop')).statusCode, 200);
  });
});

describe('published ports, on an engine with a bridge network', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    if (!bridge.ok) return;
    panel = await startPanel(suite, { DOCKER_HOST: bridge.dockerHost });
    admin = await register(panel, 'admin');
  });

  it(
    "publishes the server's allocation, TCP and UDP, on its address",
    { skip: bridge.ok ? false : bridge.why },
    async () => {
      if (!bridge.ok) return;
      const port = 30_700 + Math.floor(Math.random() * 200);
      const created = await panel.app.inject({
        method: 'POST',
        url: '/api/servers/create',
        headers: admin.headers,
        payload: {
          name: 'published',
          template: 'generic-command',
          runtime: 'docker',
          image: bridge.image,
          variables: { COMMAND: `/bin/busybox nc -l -p ${port} -e /bin/busybox echo published` },
          allocations: [{ ip: '127.0.0.1', port }],
        },
      });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal((await serverAction(panel, admin, 'published', 'start')).statusCode, 200);
      const info = await bridge.docker
        .getContainer(`game-panel-${panelId(panel.dataDir)}-published`)
        .inspect();
      assert.equal(info.HostConfig.NetworkMode, 'bridge');
      assert.deepEqual(info.HostConfig.PortBindings, {
        [`${port}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: String(port) }],
        [`${port}/udp`]: [{ HostIp: '127.0.0.1', HostPort: String(port) }],
      });
      // A player connecting to the host's address reaches the game in the container.
      const answer = await eventually(
        () =>
          new Promise<string | undefined>((resolve) => {
            const socket = connect({ host: '127.0.0.1', port });
            let data = '';
            socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
            socket.on('close', () => {
              resolve(data.includes('published') ? data : undefined);
            });
            socket.on('error', () => {
              resolve(undefined);
            });
          }),
        'the published port to answer',
      );
      assert.match(answer, /published/);
      await serverAction(panel, admin, 'published', 'kill');
    },
  );
});
