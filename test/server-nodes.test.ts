/**
 * Servers on nodes through the API (docs/nodes.md, "Placement"), with real Docker engines added
 * as nodes (helpers/docker-nodes.ts): a new server goes on the node with the most memory left
 * that fits its limit, or on the one an admin names; a node in maintenance takes none and
 * starts none; a node that does not answer takes none; creations at once never take more than
 * a node has room for; allocations are unique per node, on an address of their node, and the
 * free port offered is free on the node asked about; a server on a node runs there, in a
 * container (a process template is refused), its console and files through the API as on the
 * panel's own machine. A node that goes away shows its servers `unknown`, answers their
 * operations at once, and is taken back when it returns (docs/nodes.md, "When a node fails").
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { restartedPanel, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { imageGameServerCommand } from './helpers/docker.js';
import { dockerNodesForTests, type DockerNode } from './helpers/docker-nodes.js';
import {
  assertError,
  createServer,
  eventually,
  gameServerCommand,
  json,
  register,
  sendCommand,
  serverAction,
  type Session,
  consoleHas,
  request,
  stats as serverStats,
} from './helpers/factories.js';

const found = await dockerNodesForTests(2);
const stoppable = await dockerNodesForTests(1, { stoppable: true });
const skip = !found.ok ? found.why : !stoppable.ok ? stoppable.why : false;

const GIB = 1024 ** 3;

interface ServerBody {
  name: string;
  node: string;
}

describe('servers on nodes', { skip }, () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;
  let one: DockerNode;
  let two: DockerNode;
  let flaky: DockerNode;

  const suite = suiteScope();
  before(async () => {
    if (!found.ok || !stoppable.ok) return;
    [one, two] = found.nodes as [DockerNode, DockerNode];
    [flaky] = stoppable.nodes as [DockerNode];
    panel = await startPanel(
      suite,
      { SERVER_PORT_RANGE: '30000-30009' },
      { nodeCheckIntervalMs: 300, nodeDeadlineMs: 2_000 },
    );
    admin = await register(panel, 'admin');
    user = await register(panel, 'player');
  });

  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    session: Session = admin,
  ) => request(panel, session, method, url, payload);
  const create = (name: string, fields: object = {}, session: Session = admin) =>
    call(
      'POST',
      '/api/servers/create',
      { name, startCommand: gameServerCommand(), ...fields },
      session,
    );
  const nodeOfServer = async (name: string): Promise<string> => {
    const response = await call('GET', `/api/servers/${name}/config`);
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: ServerBody }>(response).data.node;
  };
  const placed = async (name: string, memoryBytes: number): Promise<string> => {
    const response = await create(name, { limits: { memoryBytes } });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: ServerBody }>(response).data.node;
  };
  const addNode = async (node: DockerNode, memoryBytes: number | null) => {
    const response = await call('POST', '/api/admin/nodes', {
      name: node.name,
      dockerHost: node.dockerHost,
      tls: node.tls,
      publicAddress: node.address,
      memoryBytes,
    });
    assert.equal(response.statusCode, 201, response.body);
  };

  it('puts every server on local while it is the only node, and shows where', async () => {
    await createServer(panel, admin, 'home');
    assert.equal(await nodeOfServer('home'), 'local');
    const list = json<{ data: ServerBody[] }>(await call('GET', '/api/servers')).data;
    assert.deepEqual(
      list.map((server) => [server.name, server.node]),
      [['home', 'local']],
    );
  });

  it('places a new server on the node with the most memory left that fits its limit', async () => {
    // local: 1 GiB; one: 2 GiB; two: 4 GiB.
    assert.equal(
      (await call('PUT', '/api/admin/nodes/local', { memoryBytes: GIB })).statusCode,
      200,
    );
    await addNode(one, 2 * GIB);
    await addNode(two, 4 * GIB);
    assert.equal(await placed('big', GIB), two.name); // two: 3 GiB left
    assert.equal(await placed('bigger', 1.5 * GIB), two.name); // two: 1.5 GiB left
    assert.equal(await placed('third', GIB), one.name); // one: 1 GiB left
    // 1.5 GiB now fits two only (local 1, one 1, two 1.5).
    assert.equal(await placed('fourth', 1.5 * GIB), two.name); // two: 0 left
    // local, one and two have 1, 1 and 0 GiB left: nothing takes 1.5 GiB, each said why.
    const full = await create('none-fits', { limits: { memoryBytes: 1.5 * GIB } });
    assertError(full, 409, 'NODE_FULL');
    const message = json<{ message: string }>(full).message;
    for (const name of ['local', one.name, two.name]) assert.match(message, new RegExp(name));
    // Overallocation counts: one may hold 200% of its memory.
    const more = await call('PUT', `/api/admin/nodes/${one.name}`, {
      memoryOverallocatePercent: 100,
    });
    assert.equal(more.statusCode, 200, more.body);
    assert.equal(await placed('none-fits', 1.5 * GIB), one.name); // one: 4 − 1 GiB left
    const list = json<{ data: ServerBody[] }>(await call('GET', '/api/servers')).data;
    assert.equal(list.find((server) => server.name === 'big')?.node, two.name);
  });

  it('puts a server on the node an admin names, if it fits', async () => {
    const named = await create('named', { node: 'local', limits: { memoryBytes: 64 * 1024 ** 2 } });
    assert.equal(named.statusCode, 200, named.body);
    assert.equal(await nodeOfServer('named'), 'local');
    assertError(
      await create('too-big', { node: two.name, limits: { memoryBytes: GIB } }),
      409,
      'NODE_FULL',
    );
    const unknown = await create('lost', { node: 'nowhere' });
    assertError(unknown, 400, 'VALIDATION_FAILED');
    assert.match(json<{ message: string }>(unknown).message, /node/);
    assertError(await create('lost', { node: 'Not A Node!' }), 400, 'VALIDATION_FAILED');
    // Nothing of them was made.
    for (const name of ['too-big', 'lost']) {
      assertError(await call('GET', `/api/servers/${name}/config`), 404, 'NOT_FOUND');
    }
  });

  it('places concurrent creations one after the other: a node with room for one takes one', async () => {
    // On PostgreSQL the four run at once on a pool of connections (without the placement lock,
    // three were made); on SQLite the one connection already serialises them.
    const before = json<{ data: { allocated: { memoryBytes: number } } }>(
      await call('GET', '/api/admin/nodes/local'),
    ).data.allocated.memoryBytes;
    const room = 256 * 1024 ** 2;
    const set = await call('PUT', '/api/admin/nodes/local', { memoryBytes: before + room });
    assert.equal(set.statusCode, 200, set.body);
    try {
      const names = ['race-a', 'race-b', 'race-c', 'race-d'];
      const answers = await Promise.all(
        names.map((name) => create(name, { node: 'local', limits: { memoryBytes: room } })),
      );
      const made = answers.filter((answer) => answer.statusCode === 200);
      assert.equal(made.length, 1, answers.map((answer) => answer.body).join('\n'));
      for (const refused of answers.filter((answer) => answer.statusCode !== 200)) {
        assertError(refused, 409, 'NODE_FULL');
      }
      const after = json<{
        data: { allocated: { memoryBytes: number; memoryCapacityBytes: number } };
      }>(await call('GET', '/api/admin/nodes/local')).data.allocated;
      assert.equal(after.memoryBytes, before + room);
      assert.ok(after.memoryBytes <= after.memoryCapacityBytes);
      for (const name of names) await call('DELETE', `/api/servers/${name}`);
    } finally {
      await call('PUT', '/api/admin/nodes/local', { memoryBytes: GIB });
    }
  });

  it('lets only admins create a server, on a node or not', async () => {
    assertError(await create('mine', { node: 'local' }, user), 403, 'FORBIDDEN');
    assertError(await create('mine', {}, user), 403, 'FORBIDDEN');
  });

  it('places nothing on a node in maintenance, and starts none of its servers', async () => {
    const on = await call('PUT', '/api/admin/nodes/local', { maintenance: true });
    assert.equal(on.statusCode, 200, on.body);
    try {
      assertError(await create('paused', { node: 'local' }), 409, 'NODE_MAINTENANCE');
      // Automatic placement passes it over (one has room for 1 MiB).
      assert.notEqual(await placed('elsewhere', 8 * 1024 ** 2), 'local');
      const refused = await serverAction(panel, admin, 'home', 'start');
      assertError(refused, 409, 'NODE_MAINTENANCE');
      // Its files are still there to work on.
      assert.equal((await call('GET', '/api/servers/home/files?path=/')).statusCode, 200);
    } finally {
      await call('PUT', '/api/admin/nodes/local', { maintenance: false });
    }
    const started = await serverAction(panel, admin, 'home', 'start');
    assert.equal(started.statusCode, 200, started.body);
    assert.equal((await serverAction(panel, admin, 'home', 'stop')).statusCode, 200);
  });

  it('keeps allocations unique per node, not across nodes', async () => {
    const address = { ip: '0.0.0.0', port: 30_000 };
    const first = await create('port-one', { node: one.name, allocations: [address] });
    assert.equal(first.statusCode, 200, first.body);
    // The same address and port on another node: its own.
    const second = await create('port-two', { node: two.name, allocations: [address] });
    assert.equal(second.statusCode, 200, second.body);
    // On the same node, taken (its own address against 0.0.0.0 too).
    assertError(
      await create('port-clash', {
        node: one.name,
        allocations: [{ ip: one.address, port: 30_000 }],
      }),
      409,
      'ALLOCATION_TAKEN',
    );
    const changed = await call('PUT', '/api/servers/home/allocations', {
      allocations: [address],
    });
    assert.equal(changed.statusCode, 200, changed.body);
    const stored = await panel.db.kysely
      .selectFrom('server_allocations')
      .select(['server_name', 'node'])
      .where('port', '=', 30_000)
      .orderBy('server_name')
      .execute();
    assert.deepEqual(stored, [
      { server_name: 'home', node: 'local' },
      { server_name: 'port-one', node: one.name },
      { server_name: 'port-two', node: two.name },
    ]);
  });

  it("offers a port free on the server's own node: other nodes' ports are free there", async () => {
    // 30000 is taken on every node (home, port-one, port-two); 30001 on two only.
    const more = await create('port-two-b', {
      node: two.name,
      allocations: [{ ip: '0.0.0.0', port: 30_001 }],
    });
    assert.equal(more.statusCode, 200, more.body);
    const free = async (url: string) => {
      const response = await call('GET', url);
      assert.equal(response.statusCode, 200, response.body);
      return json<{ data: { ip: string; port: number; node: string | null } }>(response).data;
    };
    assert.deepEqual(await free('/api/servers/port-one/allocations/free'), {
      ip: '0.0.0.0',
      port: 30_001,
      range: { min: 30_000, max: 30_009 },
      node: one.name,
    });
    assert.equal((await free('/api/servers/port-two/allocations/free')).port, 30_002);
    assert.equal((await free('/api/servers/home/allocations/free')).port, 30_001);
    // For a new server: on the node named, or free on every node.
    assert.equal((await free(`/api/servers/allocations/free?node=${one.name}`)).port, 30_001);
    assert.equal((await free(`/api/servers/allocations/free?node=${two.name}`)).port, 30_002);
    const anywhere = await free('/api/servers/allocations/free');
    assert.deepEqual([anywhere.port, anywhere.node], [30_002, null]);
    assertError(
      await call('GET', '/api/servers/allocations/free?node=nowhere'),
      400,
      'VALIDATION_FAILED',
    );
    assertError(
      await call('GET', '/api/servers/allocations/free?node=Not%20A%20Node'),
      400,
      'VALIDATION_FAILED',
    );
    assertError(await call('GET', '/api/servers/nowhere/allocations/free'), 404, 'NOT_FOUND');
    assertError(
      await call('GET', '/api/servers/port-one/allocations/free', undefined, user),
      403,
      'FORBIDDEN',
    );
    assert.equal((await call('DELETE', '/api/servers/port-two-b')).statusCode, 200);
  });

  it('takes on a remote node only allocations on an address it has: its own or 0.0.0.0', async () => {
    // Another address than the node's: refused at creation, nothing made.
    const elsewhere = await create('wrong-address', {
      node: one.name,
      allocations: [{ ip: '127.0.0.1', port: 30_004 }],
    });
    assertError(elsewhere, 400, 'VALIDATION_FAILED');
    const [detail] = json<{ details: { path: string; message: string }[] }>(elsewhere).details;
    assert.ok(detail);
    assert.equal(detail.path, 'body/allocations/0/ip');
    assert.ok(detail.message.includes(one.address), detail.message);
    assertError(await call('GET', '/api/servers/wrong-address/config'), 404, 'NOT_FOUND');
    // Its public address, 0.0.0.0 and :: are taken.
    const own = await create('own-address', {
      node: one.name,
      allocations: [{ ip: one.address, port: 30_004 }],
    });
    assert.equal(own.statusCode, 200, own.body);
    // And when allocations change.
    const changed = await call('PUT', '/api/servers/own-address/allocations', {
      allocations: [{ ip: '10.9.9.9', port: 30_005 }],
    });
    assertError(changed, 400, 'VALIDATION_FAILED');
    assert.equal(
      json<{ details: { path: string }[] }>(changed).details[0]?.path,
      'body/allocations/0/ip',
    );
    for (const ip of ['0.0.0.0', '::', one.address]) {
      const ok = await call('PUT', '/api/servers/own-address/allocations', {
        allocations: [{ ip, port: 30_005 }],
      });
      assert.equal(ok.statusCode, 200, ok.body);
    }
    // Nothing of the refused change was kept.
    const config = json<{ data: { allocations: { ip: string; port: number }[] } }>(
      await call('GET', '/api/servers/own-address/config'),
    ).data;
    assert.deepEqual(config.allocations, [{ ip: one.address, port: 30_005 }]);
    // `local` takes any of its addresses, as before.
    const local = await call('PUT', '/api/servers/home/allocations', {
      allocations: [{ ip: '127.0.0.1', port: 30_006 }],
    });
    assert.equal(local.statusCode, 200, local.body);
    assert.equal((await call('DELETE', '/api/servers/own-address')).statusCode, 200);
  });

  it('runs a server on a node through the API: start, console, files, stop', async () => {
    // `big` is on two and runs as a process: a node runs containers only.
    assert.equal(await nodeOfServer('big'), two.name);
    const refused = await serverAction(panel, admin, 'big', 'start');
    assertError(refused, 409);
    assert.match(refused.body, /containers only/);

    const made = await create('boxed-two', {
      node: two.name,
      startCommand: imageGameServerCommand(),
      runtime: 'docker',
      image: two.image,
      stopCommand: 'stop',
    });
    assert.equal(made.statusCode, 200, made.body);
    const upload = await call('PUT', '/api/servers/boxed-two/files/content?path=/note.txt', {
      content: 'on the node\n',
    });
    assert.ok([200, 201].includes(upload.statusCode), upload.body);
    assert.equal((await serverAction(panel, admin, 'boxed-two', 'start')).statusCode, 200);
    await consoleHas(panel, admin, 'boxed-two', 'Done! pid=');
    const [container] = await two.docker.listContainers({
      filters: { label: ['game-panel.server=boxed-two'] },
    });
    assert.ok(container, 'its container runs on node two');
    const [elsewhere] = await one.docker.listContainers({
      filters: { label: ['game-panel.server=boxed-two'] },
    });
    assert.equal(elsewhere, undefined);
    const read = await call('GET', '/api/servers/boxed-two/files/content?path=/note.txt');
    assert.equal(read.statusCode, 200, read.body);
    assert.match(read.body, /on the node/);
    assert.equal((await serverAction(panel, admin, 'boxed-two', 'stop')).statusCode, 200);
    const list = json<{ data: { name: string; status: string }[] }>(
      await call('GET', '/api/servers'),
    );
    assert.equal(list.data.find((server) => server.name === 'boxed-two')?.status, 'stopped');
    assert.equal((await call('DELETE', '/api/servers/boxed-two')).statusCode, 200);
  });

  it('never places a server on a node that does not answer', async () => {
    // No memory counted: it has the most left of all.
    await addNode(flaky, null);
    assert.equal(await placed('on-flaky', 8 * 1024 ** 2), flaky.name);
    await flaky.stop();
    try {
      await eventually(async () => {
        const response = await call('GET', `/api/admin/nodes/${flaky.name}`);
        const { health } = json<{ data: { health: { status: string } } }>(response).data;
        return health.status === 'unreachable' ? true : undefined;
      }, 'the node unreachable');
      assert.notEqual(await placed('not-on-flaky', 8 * 1024 ** 2), flaky.name);
    } finally {
      await flaky.start();
    }
  });

  it('removes a node only once no server is on it', async () => {
    assertError(await call('DELETE', `/api/admin/nodes/${one.name}`), 409, 'NODE_HAS_SERVERS');
    for (const name of ['third', 'none-fits', 'port-one', 'elsewhere', 'not-on-flaky']) {
      const response = await call('DELETE', `/api/servers/${name}`);
      assert.ok([200, 404].includes(response.statusCode), response.body);
    }
    const left = json<{ data: { servers: string[] } }>(
      await call('GET', `/api/admin/nodes/${one.name}`),
    ).data.servers;
    assert.deepEqual(left, []);
    assert.equal((await call('DELETE', `/api/admin/nodes/${one.name}`)).statusCode, 200);
  });
});

describe('a node that goes away', { skip }, () => {
  let panel: TestPanel;
  let admin: Session;
  let flaky: DockerNode;
  let atClose: 'keep' | 'stop' = 'stop';
  // Short: the node is asked often, and its engine's absence is given up on after 3 s. (A node
  // whose engine is stopped refuses connections: the deadline is for a busy machine.)
  const overrides = {
    nodeCheckIntervalMs: 300,
    nodeDeadlineMs: 10_000,
    engineReturnAttempts: 3,
    serversAtClose: () => atClose,
  };

  const suite = suiteScope();
  before(async () => {
    if (!found.ok || !stoppable.ok) return;
    [flaky] = stoppable.nodes as [DockerNode];
    panel = await startPanel(suite, {}, overrides);
    admin = await register(panel, 'admin');
    const added = await call('POST', '/api/admin/nodes', {
      name: flaky.name,
      dockerHost: flaky.dockerHost,
      tls: flaky.tls,
      publicAddress: flaky.address,
    });
    assert.equal(added.statusCode, 201, added.body);
    for (const [name, fields] of [
      ['far', { node: flaky.name, runtime: 'docker', image: flaky.image, stopCommand: 'stop' }],
      ['near', { node: 'local' }],
    ] as const) {
      const made = await call('POST', '/api/servers/create', {
        name,
        startCommand: name === 'far' ? imageGameServerCommand() : gameServerCommand(),
        ...fields,
      });
      assert.equal(made.statusCode, 200, made.body);
    }
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    request(panel, admin, method, url, payload);
  const stats = (name: string) => serverStats(panel, admin, name);
  const statusIs = (name: string, status: string, timeoutMs?: number) =>
    eventually(
      async () => ((await stats(name)).status === status ? true : undefined),
      `${name} ${status}`,
      timeoutMs,
    );
  const health = (status: string) =>
    eventually(async () => {
      const response = await call('GET', `/api/admin/nodes/${flaky.name}`);
      const node = json<{ data: { health: { status: string } } }>(response).data;
      return node.health.status === status ? true : undefined;
    }, `${flaky.name} ${status}`);
  /** The container's main process, as this machine sees it (the node's engine runs here). */
  const containerPid = async (): Promise<number> => {
    const [container] = await flaky.docker.listContainers({
      filters: { label: ['game-panel.server=far'] },
    });
    assert.ok(container, 'far runs on its node');
    return (await flaky.docker.getContainer(container.Id).inspect()).State.Pid;
  };

  it('shows its servers unknown, answers at once, and takes them back when it returns', async () => {
    assert.equal((await serverAction(panel, admin, 'far', 'start')).statusCode, 200);
    assert.equal((await serverAction(panel, admin, 'near', 'start')).statusCode, 200);
    await consoleHas(panel, admin, 'far', 'Done! pid=');
    const pid = await containerPid();
    await flaky.stop();
    try {
      await health('unreachable');
      // Not `stopped`: it may well run on (it does).
      assert.equal((await stats('far')).status, 'unknown');
      const listed = json<{ data: { name: string; status: string }[] }>(
        await call('GET', '/api/servers'),
      ).data;
      assert.equal(listed.find((server) => server.name === 'far')?.status, 'unknown');
      assert.equal(listed.find((server) => server.name === 'near')?.status, 'running');
      // Its operations are answered at once, nothing done; the other node's are as ever.
      for (const action of ['stop', 'kill', 'restart'] as const)
        assertError(await serverAction(panel, admin, 'far', action), 503, 'NODE_UNREACHABLE');
      assertError(await call('GET', '/api/servers/far/files?path=/'), 503, 'NODE_UNREACHABLE');
      assert.equal((await call('GET', '/api/servers/near/files?path=/')).statusCode, 200);
      // Once its engine has been given up on, the panel says so, and records no end.
      await consoleHas(panel, admin, 'far', 'whether the server still runs is not known');
      assert.equal((await stats('far')).lastExit, null);
      process.kill(pid, 0);
    } finally {
      await flaky.start();
    }
    await health('online');
    // The very container, taken back as it runs: its console works both ways.
    await statusIs('far', 'running');
    await consoleHas(panel, admin, 'far', 'its engine answers again: the server runs on');
    assert.equal(await containerPid(), pid);
    assert.equal((await sendCommand(panel, admin, 'far', 'say back')).statusCode, 200);
    await consoleHas(panel, admin, 'far', '[Server] back');
    assert.equal((await stats('far')).lastExit, null);
  });

  it('records how a server ended while its node was away', async () => {
    const pid = await containerPid();
    await flaky.stop();
    try {
      await health('unreachable');
      // Ended behind the panel's back while its engine is down (it runs on this machine).
      process.kill(pid, 'SIGKILL');
      await consoleHas(panel, admin, 'far', 'whether the server still runs is not known');
    } finally {
      await flaky.start();
    }
    await statusIs('far', 'crashed');
    const { lastExit } = await stats('far');
    assert.ok(lastExit, 'its end is recorded');
    assert.equal(lastExit.cleanStop, false);
    assert.ok(lastExit.code === 137 || lastExit.signal === 'SIGKILL', JSON.stringify(lastExit));
  });

  it('takes a server back after a panel restart while its node was away', async () => {
    assert.equal((await serverAction(panel, admin, 'far', 'start')).statusCode, 200);
    await statusIs('far', 'running');
    const pid = await containerPid();
    await flaky.stop();
    let again: TestPanel;
    try {
      atClose = 'keep';
      await panel.app.close();
      atClose = 'stop';
      again = await restartedPanel(suite, panel, overrides);
      panel = again;
      // Its engine does not answer: not known, never `stopped`, and not started anew.
      await statusIs('far', 'unknown');
      await consoleHas(panel, admin, 'far', "the server's engine does not answer");
    } finally {
      await flaky.start();
    }
    await statusIs('far', 'running');
    assert.equal(await containerPid(), pid);
    assert.equal((await serverAction(panel, admin, 'far', 'stop')).statusCode, 200);
    assert.equal((await stats('far')).status, 'stopped');
  });
});
