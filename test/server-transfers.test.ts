/**
 * Transfers of a server between nodes (docs/nodes.md, "Transfers"), through the API, with real
 * Docker engines as nodes (helpers/docker-nodes.ts) and the shared test engine as `local`'s: a
 * server goes local → node-1 → node-2 → local with its files intact, byte for byte, starting on
 * each new node; its old copy stays until it started there, then goes. Refusals leave
 * everything as it was; a cancel mid-copy and a panel closed mid-transfer (rolled back at its
 * next start) leave the server whole on its old node and nothing on the new one.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { buildApp } from '../src/app.js';
import { panelId } from '../src/data-dir.js';
import type { TransferPhase } from '../src/domain/transfer.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { dockerForTests, imageGameServerCommand } from './helpers/docker.js';
import { dockerNodesForTests, type DockerNode } from './helpers/docker-nodes.js';
import {
  assertError,
  consoleHas,
  eventually,
  json,
  register,
  request,
  serverAction,
  type Session,
} from './helpers/factories.js';

const docker = await dockerForTests();
const found = await dockerNodesForTests(2);
const skip = !docker.ok ? docker.why : !found.ok ? found.why : false;

interface TransferBody {
  id: string;
  from: string;
  to: string;
  status: 'running' | 'done' | 'failed' | 'cancelled';
  phase: TransferPhase;
  message: string | null;
  files: number | null;
  bytes: number | null;
  checksum: string | null;
  progress: { phase: TransferPhase; bytes: number; totalBytes: number | null } | null;
}

/** Files of a server: text, nested, and a larger one of random bytes as base64. */
const FILES: Readonly<Record<string, string>> = {
  '/server.properties': 'motd=moved\nmax-players=7\n',
  '/world/level.dat': `level ${randomBytes(8).toString('hex')}\n`,
  '/world/region/r.0.0.mca': randomBytes(384 * 1024).toString('base64'),
  '/logs/é ünïcode.txt': 'naïve café\n',
};

describe('server transfers between nodes', { skip }, () => {
  let panel: TestPanel;
  let admin: Session;
  let player: Session;
  let one: DockerNode;
  let two: DockerNode;
  let image: string;
  /** Transfers held at a phase, by `server:phase`. */
  const pauses = new Map<string, () => Promise<void>>();

  const suite = suiteScope();
  before(async () => {
    if (!docker.ok || !found.ok) return;
    [one, two] = found.nodes as [DockerNode, DockerNode];
    image = docker.image;
    panel = await startPanel(
      suite,
      { DOCKER_HOST: docker.dockerHost },
      {
        nodeCheckIntervalMs: 300,
        nodeDeadlineMs: 5_000,
        transferPause: (server, phase) => pauses.get(`${server}:${phase}`)?.() ?? Promise.resolve(),
      },
    );
    admin = await register(panel, 'admin');
    player = await register(panel, 'player');
    for (const node of [one, two]) {
      const added = await call('POST', '/api/admin/nodes', {
        name: node.name,
        dockerHost: node.dockerHost,
        tls: node.tls,
        publicAddress: node.address,
      });
      assert.equal(added.statusCode, 201, added.body);
    }
  });

  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    session: Session = admin,
  ) => request(panel, session, method, url, payload);

  /** Holds `server`'s next transfer at the start of `phase` until `release` is called. */
  const holdAt = (server: string, phase: TransferPhase) => {
    let reached = (): void => undefined;
    let release = (): void => undefined;
    const atPhase = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    pauses.set(`${server}:${phase}`, () => {
      pauses.delete(`${server}:${phase}`);
      reached();
      return released;
    });
    return { reached: atPhase, release };
  };

  const create = async (name: string, node: string, fields: object = {}) => {
    const made = await call('POST', '/api/servers/create', {
      name,
      node,
      startCommand: imageGameServerCommand(),
      runtime: 'docker',
      image,
      stopCommand: 'stop',
      ...fields,
    });
    assert.equal(made.statusCode, 200, made.body);
  };
  const writeFiles = async (name: string) => {
    for (const [file, content] of Object.entries(FILES)) {
      const folder = path.posix.dirname(file);
      if (folder !== '/') {
        // Folders made one level at a time; one that exists already answers 409.
        let parent = '/';
        for (const part of folder.split('/').filter(Boolean)) {
          await call('POST', `/api/servers/${name}/files/create`, {
            path: parent,
            name: part,
            type: 'folder',
          });
          parent = path.posix.join(parent, part);
        }
      }
      const written = await call(
        'PUT',
        `/api/servers/${name}/files/content?path=${encodeURIComponent(file)}`,
        { content },
      );
      assert.ok([200, 201].includes(written.statusCode), written.body);
    }
  };
  const assertFiles = async (name: string) => {
    for (const [file, content] of Object.entries(FILES)) {
      const read = await call(
        'GET',
        `/api/servers/${name}/files/content?path=${encodeURIComponent(file)}`,
      );
      assert.equal(read.statusCode, 200, `${file}: ${read.body.slice(0, 200)}`);
      assert.equal(json<{ data: { content: string } }>(read).data.content, content, file);
    }
  };
  const nodeOf = async (name: string): Promise<string> => {
    const response = await call('GET', `/api/servers/${name}/config`);
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: { node: string } }>(response).data.node;
  };
  const transferOf = async (name: string): Promise<TransferBody | null> => {
    const response = await call('GET', `/api/servers/${name}/transfer`);
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: TransferBody | null }>(response).data;
  };
  const transfer = async (name: string, node: string): Promise<TransferBody> => {
    const response = await call('POST', `/api/servers/${name}/transfer`, { node });
    assert.equal(response.statusCode, 200, response.body);
    const body = json<{ data: TransferBody }>(response).data;
    assert.equal(body.status, 'running');
    return body;
  };
  const ended = (name: string): Promise<TransferBody> =>
    eventually(
      async () => {
        const current = await transferOf(name);
        return current !== null && current.status !== 'running' ? current : undefined;
      },
      `the transfer of ${name} to end`,
      60_000,
    );
  /** Waits for a held transfer to reach its phase; fails at once if it ended before. */
  const reachedOr = async (reached: Promise<void>, name: string): Promise<void> => {
    const over = ended(name).then((transfer) => {
      throw new Error(`the transfer ended before its phase: ${JSON.stringify(transfer)}`);
    });
    over.catch(() => undefined);
    await Promise.race([reached, over]);
  };
  const volumesOn = async (node: DockerNode, name: string): Promise<string[]> => {
    const { Volumes } = await node.docker.listVolumes({
      filters: { label: [`game-panel.server=${name}`] },
    });
    const mine = `game-panel-${panelId(panel.dataDir)}-${name}`;
    return Volumes.map((volume) => volume.Name).filter((volume) => volume === mine);
  };
  const localFolder = (name: string) => path.join(panel.config.serversDir, name);
  const containersOn = async (engine: Docker, name: string) =>
    engine.listContainers({ all: true, filters: { label: [`game-panel.server=${name}`] } });
  const startAndWait = async (name: string) => {
    const started = await serverAction(panel, admin, name, 'start');
    assert.equal(started.statusCode, 200, started.body);
    await consoleHas(panel, admin, name, 'Done! pid=', 30_000);
  };

  it('moves a server local → node-1 → node-2 → local, files intact, running on each', async () => {
    await create('trip', 'local');
    await writeFiles('trip');
    await startAndWait('trip');

    // Running: it is stopped, moved, and started on node-1.
    const first = await transfer('trip', one.name);
    assert.equal(first.phase, 'stopping');
    assert.equal(first.from, 'local');
    const done = await ended('trip');
    assert.equal(done.status, 'done', done.message ?? '');
    assert.equal(done.files, Object.keys(FILES).length);
    assert.match(done.checksum ?? '', /^[0-9a-f]{64}$/);
    assert.equal(await nodeOf('trip'), one.name);
    await consoleHas(panel, admin, 'trip', 'Done! pid=', 30_000);
    assert.equal((await containersOn(one.docker, 'trip')).length, 1, 'its container on node-1');
    await assertFiles('trip');
    // It started on node-1: its folder on local goes.
    await eventually(
      () => (existsSync(localFolder('trip')) ? undefined : true),
      'the old copy on local removed',
    );
    assert.equal((await serverAction(panel, admin, 'trip', 'stop')).statusCode, 200);

    // Stopped: moved, and not started; the old copy waits for its first start on node-2.
    await transfer('trip', two.name);
    assert.equal((await ended('trip')).status, 'done');
    assert.equal(await nodeOf('trip'), two.name);
    await assertFiles('trip');
    assert.equal((await volumesOn(one, 'trip')).length, 1, 'the old copy kept until a start');
    await startAndWait('trip');
    assert.equal((await containersOn(two.docker, 'trip')).length, 1, 'its container on node-2');
    await eventually(
      async () => ((await volumesOn(one, 'trip')).length === 0 ? true : undefined),
      'the old volume on node-1 removed',
    );
    assert.equal((await containersOn(one.docker, 'trip')).length, 0);
    assert.equal((await serverAction(panel, admin, 'trip', 'stop')).statusCode, 200);

    await transfer('trip', 'local');
    assert.equal((await ended('trip')).status, 'done');
    assert.equal(await nodeOf('trip'), 'local');
    await assertFiles('trip');
    await startAndWait('trip');
    await eventually(
      async () => ((await volumesOn(two, 'trip')).length === 0 ? true : undefined),
      'the old volume on node-2 removed',
    );
    assert.equal((await serverAction(panel, admin, 'trip', 'stop')).statusCode, 200);

    // The audit log has each one.
    const audit = await call('GET', '/api/servers/trip/audit?limit=50');
    assert.equal(audit.statusCode, 200, audit.body);
    const actions = json<{ data: { action: string }[] }>(audit).data.map((e) => e.action);
    assert.equal(actions.filter((action) => action === 'server.transfer').length, 3);
    assert.equal(actions.filter((action) => action === 'transfer.done').length, 3);
  });

  it('refuses what it cannot do, touching nothing', async () => {
    await create('stay', 'local', { allocations: [{ ip: '0.0.0.0', port: 30_100 }] });
    await create('blocker', one.name, { allocations: [{ ip: '0.0.0.0', port: 30_100 }] });
    // Only admins, even for the server's owner.
    assert.equal(
      (await call('PUT', '/api/servers/stay/owner', { owner: 'player' })).statusCode,
      200,
    );
    assertError(
      await call('POST', '/api/servers/stay/transfer', { node: two.name }, player),
      403,
      'FORBIDDEN',
    );
    assertError(await call('DELETE', '/api/servers/stay/transfer', undefined, player), 403);
    // The owner may read it.
    assert.equal(
      (await call('GET', '/api/servers/stay/transfer', undefined, player)).statusCode,
      200,
    );
    assertError(await call('POST', '/api/servers/nowhere/transfer', { node: two.name }), 404);
    const unknown = await call('POST', '/api/servers/stay/transfer', { node: 'mars' });
    assertError(unknown, 400, 'VALIDATION_FAILED');
    assert.match(json<{ message: string }>(unknown).message, /mars/);
    assertError(await call('POST', '/api/servers/stay/transfer', { node: 'Not!' }), 400);
    assertError(await call('POST', '/api/servers/stay/transfer', {}), 400);
    const same = await call('POST', '/api/servers/stay/transfer', { node: 'local' });
    assertError(same, 409, 'CONFLICT');
    assert.match(json<{ message: string }>(same).message, /already/);
    // An address of the panel's own machine is no address of a node's.
    await create('pinned', 'local', { allocations: [{ ip: '127.0.0.1', port: 30_101 }] });
    const pinned = await call('POST', '/api/servers/pinned/transfer', { node: one.name });
    assertError(pinned, 409, 'CONFLICT');
    assert.match(
      json<{ message: string }>(pinned).message,
      /127\.0\.0\.1 is not an address of node/,
    );
    const taken = await call('POST', '/api/servers/stay/transfer', { node: one.name });
    assertError(taken, 409, 'ALLOCATION_TAKEN');
    assert.match(json<{ message: string }>(taken).message, /30100/);
    assert.equal(
      (await call('PUT', `/api/admin/nodes/${two.name}`, { maintenance: true })).statusCode,
      200,
    );
    try {
      assertError(
        await call('POST', '/api/servers/stay/transfer', { node: two.name }),
        409,
        'NODE_MAINTENANCE',
      );
    } finally {
      await call('PUT', `/api/admin/nodes/${two.name}`, { maintenance: false });
    }
    assertError(await call('DELETE', '/api/servers/stay/transfer'), 409, 'CONFLICT');
    // Nothing was recorded nor made anywhere.
    assert.equal(await transferOf('stay'), null);
    assert.equal(await nodeOf('stay'), 'local');
    assert.deepEqual(await volumesOn(two, 'stay'), []);

    // While one runs: a second is refused, and nobody starts the server.
    const held = holdAt('stay', 'packing');
    await transfer('stay', two.name);
    await reachedOr(held.reached, 'stay');
    assertError(
      await call('POST', '/api/servers/stay/transfer', { node: two.name }),
      409,
      'TRANSFER_IN_PROGRESS',
    );
    const start = await serverAction(panel, admin, 'stay', 'start');
    assertError(start, 409);
    assert.match(json<{ message: string }>(start).message, /transferred/);
    held.release();
    assert.equal((await ended('stay')).status, 'done');
    assert.equal(await nodeOf('stay'), two.name);
  });

  it('cancels mid-copy: the server whole on its old node, nothing on the new', async () => {
    await create('keep', one.name);
    await writeFiles('keep');
    const held = holdAt('keep', 'checking');
    await transfer('keep', two.name);
    await reachedOr(held.reached, 'keep');
    // The copy is on node-2 now, not switched.
    assert.equal((await volumesOn(two, 'keep')).length, 1);
    const running = await transferOf('keep');
    assert.equal(running?.status, 'running');
    assert.equal(running.phase, 'checking');
    const cancelled = await call('DELETE', '/api/servers/keep/transfer');
    held.release();
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(json<{ data: TransferBody }>(cancelled).data.status, 'cancelled');
    assert.equal(await nodeOf('keep'), one.name);
    await assertFiles('keep');
    await eventually(
      async () => ((await volumesOn(two, 'keep')).length === 0 ? true : undefined),
      'the copy on node-2 removed',
    );
    assert.equal((await volumesOn(one, 'keep')).length, 1);
    // Released: it starts, on node-1.
    await startAndWait('keep');
    assert.equal((await containersOn(one.docker, 'keep')).length, 1);
    assert.equal((await serverAction(panel, admin, 'keep', 'stop')).statusCode, 200);
  });

  it('rolls back at the next start a transfer the panel stopped during', async () => {
    await create('cut', 'local');
    await writeFiles('cut');
    const held = holdAt('cut', 'switched');
    await transfer('cut', one.name);
    await reachedOr(held.reached, 'cut');
    assert.equal((await volumesOn(one, 'cut')).length, 1, 'copied to node-1, not switched');
    // The panel stops mid-way; the transfer stays recorded under way.
    await panel.app.close();
    held.release();
    const row = await panel.db.kysely
      .selectFrom('server_transfers')
      .select(['status', 'to_node'])
      .where('server', '=', 'cut')
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'running', to_node: one.name });

    const again = await buildApp(panel.config, { logStream: { write: () => undefined } });
    try {
      await again.ready();
      const ask = (method: 'GET' | 'POST', url: string) =>
        again.inject({ method, url, headers: admin.headers });
      const after = json<{ data: TransferBody }>(
        await ask('GET', '/api/servers/cut/transfer'),
      ).data;
      assert.equal(after.status, 'failed');
      assert.match(after.message ?? '', /rolled back/);
      const config = json<{ data: { node: string } }>(await ask('GET', '/api/servers/cut/config'));
      assert.equal(config.data.node, 'local');
      for (const [file, content] of Object.entries(FILES)) {
        const read = await ask(
          'GET',
          `/api/servers/cut/files/content?path=${encodeURIComponent(file)}`,
        );
        assert.equal(json<{ data: { content: string } }>(read).data.content, content, file);
      }
      await eventually(
        async () => ((await volumesOn(one, 'cut')).length === 0 ? true : undefined),
        'the copy on node-1 removed',
      );
      // Not held: it starts on local.
      const started = await ask('POST', '/api/servers/cut/start');
      assert.equal(started.statusCode, 200, started.body);
      assert.equal((await ask('POST', '/api/servers/cut/stop')).statusCode, 200);
    } finally {
      await again.close();
    }
  });
});
