/**
 * Nodes through the API (admins; the other callers are in the access matrix), against real
 * Docker engines in network namespaces reached with mutual TLS (helpers/docker-nodes.ts): added
 * only once the engine answered, refused in words when a certificate is wrong, never answering,
 * logging or storing in clear how they are reached; their health followed, a node that stops
 * answering marked while the others and the panel carry on; removed only when empty.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { makeTestCa, type TestCa } from './helpers/certificates.js';
import { dockerNodesForTests, type DockerNode } from './helpers/docker-nodes.js';
import {
  assertError,
  createServerRow,
  eventually,
  json,
  register,
  type Session,
} from './helpers/factories.js';

interface NodeBody {
  name: string;
  dockerHost: string | null;
  connection: string;
  publicAddress: string | null;
  memoryBytes: number | null;
  maintenance: boolean;
  health:
    | { status: 'online'; engine: { version: string | null; cpus: number; memoryBytes: number } }
    | { status: 'unreachable'; reason: string }
    | { status: 'unknown' };
  servers: string[];
  allocated: { memoryBytes: number; memoryCapacityBytes: number | null };
}

const found = await dockerNodesForTests(2);
const stoppable = await dockerNodesForTests(1, { stoppable: true });
const skip = !found.ok ? found.why : !stoppable.ok ? stoppable.why : false;

/** The lines of a PEM text that hold its secret: none may reach the log. */
const secretLines = (pem: string): string[] =>
  pem.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));

describe('nodes', { skip }, () => {
  let panel: TestPanel;
  let admin: Session;
  let one: DockerNode;
  let two: DockerNode;
  let flaky: DockerNode;
  let otherCa: TestCa;

  const suite = suiteScope();
  before(async () => {
    if (!found.ok || !stoppable.ok) return;
    [one, two] = found.nodes as [DockerNode, DockerNode];
    [flaky] = stoppable.nodes as [DockerNode];
    for (const node of [one, two, flaky]) {
      for (const line of secretLines(node.tls.key)) rememberSecret(line);
    }
    otherCa = makeTestCa();
    panel = await startPanel(suite, {}, { nodeCheckIntervalMs: 300, nodeDeadlineMs: 2_000 });
    admin = await register(panel, 'admin');
  });
  after(() => {
    otherCa.remove();
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    panel.app.inject({
      method,
      url,
      headers: admin.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  const nodeOf = (response: { body: string }) => json<{ data: NodeBody }>(response as never).data;
  const listed = async () => json<{ data: NodeBody[] }>(await call('GET', '/api/admin/nodes')).data;
  const adding = (node: DockerNode, fields: object = {}) => ({
    name: node.name,
    dockerHost: node.dockerHost,
    tls: node.tls,
    publicAddress: node.address,
    ...fields,
  });

  it('lists the panel’s own machine first, online, with its figures', async () => {
    const local = await eventually(async () => {
      const [first] = await listed();
      return first?.health.status === 'online' ? first : undefined;
    }, 'local answering');
    assert.equal(local.name, 'local');
    assert.equal(local.connection, 'local');
    assert.equal(local.dockerHost, null);
    assert.ok(local.health.status === 'online');
    assert.equal(local.health.engine.cpus, os.availableParallelism());
    assert.equal(local.health.engine.memoryBytes, os.totalmem());
  });

  it('adds a node over mutual TLS once its engine answered, never showing its secrets', async () => {
    const added = await call('POST', '/api/admin/nodes', adding(one, { memoryBytes: 2 ** 30 }));
    assert.equal(added.statusCode, 201, added.body);
    for (const part of [one.tls.key, one.tls.cert, one.tls.ca]) {
      for (const line of secretLines(part)) assert.ok(!added.body.includes(line));
    }
    const node = nodeOf(added);
    assert.equal(node.connection, 'tls');
    assert.equal(node.dockerHost, one.dockerHost);
    assert.equal(node.publicAddress, one.address);
    assert.deepEqual(node.servers, []);
    assert.equal(node.allocated.memoryCapacityBytes, 2 ** 30);
    // What the engine itself says of itself.
    const info = (await one.docker.info()) as { NCPU: number; MemTotal: number };
    const version = (await one.docker.version()) as { Version: string };
    assert.ok(node.health.status === 'online', JSON.stringify(node.health));
    assert.equal(node.health.engine.version, version.Version);
    assert.equal(node.health.engine.cpus, info.NCPU);
    assert.equal(node.health.engine.memoryBytes, info.MemTotal);
    assert.deepEqual(
      (await listed()).map((listedNode) => listedNode.name),
      ['local', one.name],
    );

    // Sealed at rest.
    const row = await panel.db.kysely
      .selectFrom('nodes')
      .select('secrets')
      .where('name', '=', one.name)
      .executeTakeFirstOrThrow();
    assert.match(row.secrets ?? '', /^v1\./);
    for (const line of secretLines(one.tls.key)) assert.ok(!(row.secrets ?? '').includes(line));
    // The audit log names the node and keeps none of how it is reached.
    const audit = json<{ data: { action: string; target: string; details: object }[] }>(
      await call('GET', '/api/audit?action=node.create'),
    ).data;
    assert.equal(audit[0]?.target, one.name);
    assert.ok(!JSON.stringify(audit).includes('BEGIN'));
  });

  it('refuses what cannot be used, naming the field', async () => {
    const cases: [object, string][] = [
      [{ tls: undefined }, 'body/tls'],
      [{ dockerHost: 'http://10.0.0.1:2375' }, 'body/dockerHost'],
      [{ dockerHost: 'ssh://root@10.0.0.1', tls: undefined }, 'body/sshKey'],
      [{ tls: { ...two.tls, key: 'not a key' } }, 'body/tls'],
      [{ tls: { ...two.tls, ca: 'not a certificate' } }, 'body/tls'],
      [{ name: 'Bad Name' }, 'body/name'],
      [{ publicAddress: undefined }, 'body'],
    ];
    for (const [fields, where] of cases) {
      const response = await call('POST', '/api/admin/nodes', adding(two, fields));
      assertError(response, 400, 'VALIDATION_FAILED');
      const details = json<{ details: { path: string }[] }>(response).details;
      assert.ok(
        details.some((detail) => detail.path.startsWith(where)),
        `${JSON.stringify(fields)}: ${response.body}`,
      );
    }
    assertError(
      await call('POST', '/api/admin/nodes', adding(two, { name: 'local' })),
      409,
      'ALREADY_EXISTS',
    );
    assertError(await call('POST', '/api/admin/nodes', adding(one)), 409, 'ALREADY_EXISTS');
  });

  it('refuses, in words, an engine that does not trust the panel or that the panel does not', async () => {
    const intruder = otherCa.issue('intruder', { usage: 'client' });
    const strangerCert = {
      ...two.tls,
      cert: readFileSync(intruder.certFile, 'utf8'),
      key: readFileSync(intruder.keyFile, 'utf8'),
    };
    const refused = await call('POST', '/api/admin/nodes', adding(two, { tls: strangerCert }));
    assertError(refused, 503, 'NODE_UNREACHABLE');
    assert.match(json<{ message: string }>(refused).message, /certificate/i);

    const wrongCa = { ...two.tls, ca: otherCa.caPem.toString() };
    const distrusted = await call('POST', '/api/admin/nodes', adding(two, { tls: wrongCa }));
    assertError(distrusted, 503, 'NODE_UNREACHABLE');
    assert.match(json<{ message: string }>(distrusted).message, /not signed by the CA given/);

    const nowhere = await call(
      'POST',
      '/api/admin/nodes',
      adding(two, { dockerHost: `tcp://${two.address}:2399` }),
    );
    assertError(nowhere, 503, 'NODE_UNREACHABLE');
    // Nothing was saved.
    assertError(await call('GET', `/api/admin/nodes/${two.name}`), 404, 'NOT_FOUND');
  });

  it('changes a node’s settings; the panel’s own only its settings', async () => {
    const saved = await call('PUT', `/api/admin/nodes/${one.name}`, {
      maintenance: true,
      memoryBytes: null,
    });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(nodeOf(saved).maintenance, true);
    assert.equal(nodeOf(saved).memoryBytes, null);
    assertError(
      await call('PUT', `/api/admin/nodes/${one.name}`, { publicAddress: null }),
      400,
      'VALIDATION_FAILED',
    );
    assertError(
      await call('PUT', '/api/admin/nodes/local', { dockerHost: one.dockerHost, tls: one.tls }),
      400,
      'VALIDATION_FAILED',
    );
    const local = await call('PUT', '/api/admin/nodes/local', { publicAddress: 'play.example' });
    assert.equal(local.statusCode, 200, local.body);
    assert.equal(nodeOf(local).publicAddress, 'play.example');
    // How it is reached changes only with its certificates sent again, checked as when added.
    assertError(
      await call('PUT', `/api/admin/nodes/${one.name}`, { dockerHost: two.dockerHost }),
      400,
      'VALIDATION_FAILED',
    );
    const moved = await call('PUT', `/api/admin/nodes/${one.name}`, {
      dockerHost: one.dockerHost,
      tls: { ...one.tls, ca: otherCa.caPem.toString() },
    });
    assertError(moved, 503, 'NODE_UNREACHABLE');
  });

  it('marks a node that stops answering, keeps the others online, and sees it come back', async () => {
    assert.equal(
      (await call('POST', '/api/admin/nodes', adding(flaky))).statusCode,
      201,
      'the stoppable node is added',
    );
    await flaky.stop();
    try {
      const down = await eventually(async () => {
        const node = (await listed()).find((listedNode) => listedNode.name === flaky.name);
        return node?.health.status === 'unreachable' ? node : undefined;
      }, 'the stopped node marked unreachable');
      assert.ok(down.health.status === 'unreachable');
      assert.match(down.health.reason, new RegExp(flaky.address.replaceAll('.', '\\.')));
      // The others are still asked and answer.
      const others = (await listed()).filter((node) => node.name !== flaky.name);
      assert.ok(others.every((node) => node.health.status === 'online'));
    } finally {
      await flaky.start();
    }
    await eventually(async () => {
      const node = (await listed()).find((listedNode) => listedNode.name === flaky.name);
      return node?.health.status === 'online' ? true : undefined;
    }, 'the node online again');
  });

  it('removes a node without servers; never one with servers, nor the panel’s own', async () => {
    assertError(await call('DELETE', '/api/admin/nodes/local'), 409, 'CONFLICT');
    // A server on the node, as the placement will record it.
    await createServerRow(panel, 'placed');
    await panel.db.kysely
      .updateTable('servers')
      .set({ node: flaky.name })
      .where('name', '=', 'placed')
      .execute();
    const busy = await call('GET', `/api/admin/nodes/${flaky.name}`);
    assert.deepEqual(nodeOf(busy).servers, ['placed']);
    assertError(await call('DELETE', `/api/admin/nodes/${flaky.name}`), 409, 'NODE_HAS_SERVERS');
    assert.equal((await call('DELETE', `/api/admin/nodes/${one.name}`)).statusCode, 200);
    assertError(await call('GET', `/api/admin/nodes/${one.name}`), 404, 'NOT_FOUND');
    assertError(await call('DELETE', '/api/admin/nodes/nothing'), 404, 'NOT_FOUND');
  });
});
