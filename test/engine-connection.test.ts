/**
 * How the panel reaches a node's engine (src/host/remote/engine-connection.ts), against real
 * engines in network namespaces of their own (helpers/docker-nodes.ts): a right connection probed
 * tells what the engine tells; a wrong client certificate, a wrong CA, a port that speaks no TLS,
 * one that never answers and a stopped engine each come back as a code and a reason a person can
 * act on, never with key material; over SSH, the key and the node's host key are checked. What
 * cannot be used is refused before any connection.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  engineClient,
  InvalidEngineConnectionError,
  probeEngine,
  validateConnection,
  type EngineConnection,
  type EngineProbe,
  type EngineTls,
} from '../src/host/remote/engine-connection.js';
import { makeTestCa, type TestCa } from './helpers/certificates.js';
import { dockerNodesForTests, type DockerNode } from './helpers/docker-nodes.js';
import { eventually } from './helpers/factories.js';
import { sshdOnNode, sshKeyPair, type NodeSshd } from './helpers/node-sshd.js';

const DEADLINE_MS = 5000;

const shared = await dockerNodesForTests(2);
const skip = shared.ok ? false : shared.why;
const nodes: readonly DockerNode[] = shared.ok ? shared.nodes : [];

let otherCa: TestCa;
let other: { ca: string; cert: string; key: string; serverCert: string; serverKey: string };
let scratch: string;

before(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'engine-connection-'));
  otherCa = makeTestCa();
  const client = otherCa.issue('client', { usage: 'client' });
  const server = otherCa.issue('server');
  other = {
    ca: otherCa.caPem.toString(),
    cert: readFileSync(client.certFile, 'utf8'),
    key: readFileSync(client.keyFile, 'utf8'),
    serverCert: readFileSync(server.certFile, 'utf8'),
    serverKey: readFileSync(server.keyFile, 'utf8'),
  };
});
after(() => {
  otherCa.remove();
  rmSync(scratch, { recursive: true, force: true });
});

/** The failure of `probe`, with the checks every failure must pass. */
function failure(probe: EngineProbe, secrets: readonly string[] = []) {
  if (probe.ok) assert.fail('the probe must fail');
  assert.doesNotMatch(probe.reason, /BEGIN|PRIVATE/);
  for (const secret of secrets) {
    const body = secret.replace(/-----[^-]+-----/g, '').replace(/\s/g, '');
    assert.ok(!probe.reason.includes(body.slice(10, 40)), 'no key material in the reason');
  }
  return probe;
}

describe('validating a connection', () => {
  const tls = (): EngineTls => ({ ca: other.ca, cert: other.cert, key: other.key });
  const refused = (conn: EngineConnection, pattern: RegExp) => {
    const reason = validateConnection(conn);
    assert.ok(reason !== null, `${conn.dockerHost} must be refused`);
    assert.match(reason, pattern);
    assert.throws(
      () => engineClient(conn, { timeoutMs: 1000 }),
      (error: unknown) => error instanceof InvalidEngineConnectionError,
    );
  };

  it('takes tcp:// with the three PEM parts, and ssh:// with an OpenSSH or PEM key', () => {
    assert.equal(validateConnection({ dockerHost: 'tcp://10.0.0.1:2376', tls: tls() }), null);
    assert.equal(validateConnection({ dockerHost: 'tcp://node.example:2376', tls: tls() }), null);
    const openssh = sshKeyPair(scratch, 'valid').privateKey;
    assert.equal(validateConnection({ dockerHost: 'ssh://root@10.0.0.1', sshKey: openssh }), null);
    const pem = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    }).privateKey;
    assert.equal(
      validateConnection({ dockerHost: 'ssh://deploy@node.example:2222', sshKey: pem }),
      null,
    );
  });

  it('refuses addresses that are not tcp:// or ssh://, or hold more than host and port', () => {
    refused({ dockerHost: '' }, /missing/);
    refused({ dockerHost: 'unix:///var/run/docker.sock' }, /local/);
    refused({ dockerHost: 'http://10.0.0.1:2375', tls: tls() }, /tcp:\/\/.*ssh:\/\/.*not http/);
    refused({ dockerHost: 'tcp://10.0.0.1:2376/v1.41', tls: tls() }, /without a path/);
    refused({ dockerHost: 'ssh://root:hunter2@10.0.0.1', sshKey: 'x' }, /no password/);
    refused({ dockerHost: 'ssh://10.0.0.1', sshKey: 'x' }, /names the user/);
  });

  it('refuses plain tcp:// without TLS: an engine API is root on its machine', () => {
    refused({ dockerHost: 'tcp://10.0.0.1:2375' }, /needs mutual TLS.*root/);
    refused({ dockerHost: 'tcp://10.0.0.1:2375', tls: null }, /needs mutual TLS/);
  });

  it('tells which part of the TLS material is wrong', () => {
    const at = 'tcp://10.0.0.1:2376';
    refused({ dockerHost: at, tls: { ...tls(), key: '' } }, /missing: key/);
    refused({ dockerHost: at, tls: { ...tls(), ca: 'not a certificate' } }, /^ca is not a PEM/);
    refused({ dockerHost: at, tls: { ...tls(), ca: other.cert } }, /not a CA certificate/);
    refused({ dockerHost: at, tls: { ...tls(), cert: other.ca } }, /CA's certificate/);
    refused({ dockerHost: at, tls: { ...tls(), cert: 'junk' } }, /^cert is not a PEM/);
    refused({ dockerHost: at, tls: { ...tls(), key: 'junk' } }, /^key is not a PEM private key/);
    refused(
      { dockerHost: at, tls: { ...tls(), key: other.serverKey } },
      /not the one of the client/,
    );
    refused(
      { dockerHost: at, tls: { ...tls(), cert: other.serverCert, key: other.serverKey } },
      /not for client authentication/,
    );
    const encrypted = generateKeyPairSync('ec', {
      namedCurve: 'prime256v1',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'x' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    }).privateKey;
    refused({ dockerHost: at, tls: { ...tls(), key: encrypted } }, /passphrase/);
    refused({ dockerHost: at, tls: tls(), sshKey: 'key' }, /takes no sshKey/);
  });

  it('tells what is wrong with an SSH key', () => {
    const at = 'ssh://root@10.0.0.1';
    const pair = sshKeyPair(scratch, 'public');
    refused({ dockerHost: at }, /needs sshKey/);
    refused({ dockerHost: at, sshKey: 'junk' }, /not an OpenSSH or PEM private key/);
    refused({ dockerHost: at, sshKey: pair.publicKey }, /is a public key/);
    refused({ dockerHost: at, sshKey: pair.privateKey, tls: tls() }, /takes no TLS/);
    refused({ dockerHost: at, sshKey: pair.privateKey, sshHostKey: 'junk' }, /sshHostKey/);
    const locked = sshKeyPair(scratch, 'protected', 'a passphrase').privateKey;
    refused({ dockerHost: at, sshKey: locked }, /passphrase/);
  });
});

describe('probing a node over mutual TLS', { skip }, () => {
  let servers: Server[] = [];
  const sockets: Socket[] = [];
  /** A TCP server on 127.0.0.1 that does `onConnection`; its port. */
  const listen = async (onConnection: (socket: Socket) => void) => {
    const server = createServer((socket) => {
      sockets.push(socket);
      onConnection(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  };
  after(() => {
    for (const socket of sockets) socket.destroy();
    for (const server of servers) server.close();
    servers = [];
  });

  it("tells the engine's version, CPUs, memory and name, as the engine itself does", async () => {
    for (const node of nodes) {
      const probe = await probeEngine(
        { dockerHost: node.dockerHost, tls: node.tls },
        { deadlineMs: DEADLINE_MS },
      );
      assert.ok(probe.ok, probe.ok ? '' : probe.reason);
      const info = (await node.docker.info()) as { NCPU: number; MemTotal: number; Name: string };
      const version = await node.docker.version();
      assert.equal(probe.cpus, info.NCPU);
      assert.equal(probe.memoryBytes, info.MemTotal);
      assert.equal(probe.name, node.name);
      assert.equal(probe.version, version.Version);
      assert.equal(probe.apiVersion, version.ApiVersion);
      assert.equal(probe.os, 'linux');
      assert.equal(probe.arch, version.Arch);
      assert.equal(probe.sshHostKey, null);
    }
  });

  it('gives a client that takes nothing from the environment', async () => {
    const node = nodes[1]!;
    const saved = { ...process.env };
    // dockerode would take these as its defaults: a refusing engine, a one-millisecond timeout.
    Object.assign(process.env, { DOCKER_HOST: 'tcp://127.0.0.1:9', DOCKER_CLIENT_TIMEOUT: '1' });
    try {
      const docker = engineClient(
        { dockerHost: node.dockerHost, tls: node.tls },
        { timeoutMs: 10_000 },
      );
      assert.equal(((await docker.info()) as { Name: string }).Name, node.name);
    } finally {
      process.env = saved;
    }
  });

  it('refuses with a clear reason when the engine refuses the client certificate', async () => {
    const node = nodes[0]!;
    const tls = { ca: node.tls.ca, cert: other.cert, key: other.key };
    const probe = failure(
      await probeEngine({ dockerHost: node.dockerHost, tls }, { deadlineMs: DEADLINE_MS }),
      [other.key, node.tls.key],
    );
    assert.equal(probe.code, 'NODE_TLS_REFUSED');
    assert.match(probe.reason, /refused the client certificate/);
    assert.match(probe.reason, new RegExp(node.address));
  });

  it("refuses when the engine's certificate is not signed by the CA given", async () => {
    const node = nodes[0]!;
    const probe = failure(
      await probeEngine(
        { dockerHost: node.dockerHost, tls: { ...node.tls, ca: other.ca } },
        { deadlineMs: DEADLINE_MS },
      ),
      [node.tls.key],
    );
    assert.equal(probe.code, 'NODE_TLS_REFUSED');
    assert.match(probe.reason, /not signed by the CA given/);
  });

  it('tells a port that speaks no TLS, and one that never answers', async () => {
    const node = nodes[0]!;
    const plain = await listen((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    const notTls = failure(
      await probeEngine(
        { dockerHost: `tcp://127.0.0.1:${plain}`, tls: node.tls },
        { deadlineMs: DEADLINE_MS },
      ),
    );
    assert.equal(notTls.code, 'NODE_TLS_REFUSED');
    assert.match(notTls.reason, /does not speak TLS/);

    const silent = await listen(() => undefined);
    const timedOut = failure(
      await probeEngine(
        { dockerHost: `tcp://127.0.0.1:${silent}`, tls: node.tls },
        { deadlineMs: 500 },
      ),
    );
    assert.equal(timedOut.code, 'NODE_TIMEOUT');
    assert.match(timedOut.reason, /no answer from 127\.0\.0\.1:\d+ within 0\.5 s/);
  });

  it('says an invalid connection is invalid, without connecting', async () => {
    const probe = failure(
      await probeEngine({ dockerHost: 'tcp://10.0.0.1:2375' }, { deadlineMs: DEADLINE_MS }),
    );
    assert.equal(probe.code, 'NODE_INVALID');
  });
});

describe('probing a node over SSH', { skip }, () => {
  let sshd: NodeSshd;
  let panelKey: { privateKey: string; publicKey: string };

  before(async () => {
    panelKey = sshKeyPair(scratch, 'panel');
    sshd = await sshdOnNode(nodes[0]!, panelKey.publicKey);
  });
  after(() => {
    if (sshd.ok) sshd.stop();
  });

  it("reaches the engine through the node's docker CLI, and tells the host key it saw", async (t) => {
    if (!sshd.ok) {
      t.skip(sshd.why);
      return;
    }
    const probe = await probeEngine(
      { dockerHost: sshd.dockerHost, sshKey: panelKey.privateKey },
      { deadlineMs: DEADLINE_MS },
    );
    assert.ok(probe.ok, probe.ok ? '' : probe.reason);
    assert.equal(probe.name, nodes[0]!.name);
    assert.equal(probe.sshHostKey, sshd.hostKey);
    const pinned = await probeEngine(
      { dockerHost: sshd.dockerHost, sshKey: panelKey.privateKey, sshHostKey: sshd.hostKey },
      { deadlineMs: DEADLINE_MS },
    );
    assert.ok(pinned.ok, pinned.ok ? '' : pinned.reason);
  });

  it("signs in with the key given only, never with an agent's (SSH_AUTH_SOCK)", async (t) => {
    if (!sshd.ok) {
      t.skip(sshd.why);
      return;
    }
    // An agent that holds the key the node lets in, as dockerode's defaults would use it when
    // DOCKER_HOST is ssh://: the panel must still sign in with the key of the connection.
    const agentSocket = path.join(scratch, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', agentSocket], { stdio: 'ignore' });
    const saved = { ...process.env };
    try {
      await eventually(() => existsSync(agentSocket) || undefined, 'the agent');
      const keyFile = path.join(scratch, 'panel');
      execFileSync('ssh-add', ['-q', keyFile], { env: { SSH_AUTH_SOCK: agentSocket } });
      Object.assign(process.env, {
        DOCKER_HOST: sshd.dockerHost,
        SSH_AUTH_SOCK: agentSocket,
      });
      const stranger = sshKeyPair(scratch, 'not-let-in').privateKey;
      const probe = failure(
        await probeEngine(
          { dockerHost: sshd.dockerHost, sshKey: stranger },
          { deadlineMs: DEADLINE_MS },
        ),
      );
      assert.equal(probe.code, 'NODE_SSH_REFUSED');
      const docker = engineClient(
        { dockerHost: sshd.dockerHost, sshKey: panelKey.privateKey },
        { timeoutMs: 10_000 },
      );
      assert.equal(((await docker.info()) as { Name: string }).Name, nodes[0]!.name);
    } finally {
      process.env = saved;
      agent.kill();
    }
  });

  it('refuses a key the node does not know, and a host key other than the one pinned', async (t) => {
    if (!sshd.ok) {
      t.skip(sshd.why);
      return;
    }
    const stranger = sshKeyPair(scratch, 'stranger');
    const unknown = failure(
      await probeEngine(
        { dockerHost: sshd.dockerHost, sshKey: stranger.privateKey },
        { deadlineMs: DEADLINE_MS },
      ),
      [stranger.privateKey],
    );
    assert.equal(unknown.code, 'NODE_SSH_REFUSED');
    assert.match(unknown.reason, /refused the key/);

    const impostor = sshKeyPair(scratch, 'impostor').publicKey;
    const mismatch = failure(
      await probeEngine(
        { dockerHost: sshd.dockerHost, sshKey: panelKey.privateKey, sshHostKey: impostor },
        { deadlineMs: DEADLINE_MS },
      ),
      [panelKey.privateKey],
    );
    assert.equal(mismatch.code, 'NODE_SSH_REFUSED');
    assert.match(mismatch.reason, /host key other than the one given/);
  });

  it("carries many calls, and a container's attached stream, over a few SSH connections", async (t) => {
    if (!sshd.ok) {
      t.skip(sshd.why);
      return;
    }
    const conn = {
      dockerHost: sshd.dockerHost,
      sshKey: panelKey.privateKey,
      sshHostKey: sshd.hostKey,
    };
    const before = sshd.accepted();
    // Each new stream starts the docker CLI on the node: slow on a busy machine, so a long limit.
    const docker = engineClient(conn, { timeoutMs: 60_000 });
    for (let i = 0; i < 5; i += 1) await docker.ping();
    // More at once than one connection carries (8): a second connection, and no more.
    const answers = await Promise.all(Array.from({ length: 12 }, () => docker.version()));
    assert.equal(answers.length, 12);
    // Another client of the same node shares the same connections.
    const streams = engineClient(conn, { timeoutMs: null });
    const container = await streams.createContainer({
      Image: nodes[0]!.image,
      Cmd: ['/bin/cat'],
      OpenStdin: true,
      StdinOnce: true,
      AttachStdin: true,
      AttachStdout: true,
      HostConfig: { NetworkMode: 'none', AutoRemove: true },
    });
    const stream = await container.attach({
      stream: true,
      stdin: true,
      stdout: true,
      hijack: true,
    });
    let output = Buffer.alloc(0);
    stream.on('data', (chunk: Buffer) => (output = Buffer.concat([output, chunk])));
    await container.start();
    stream.end('through ssh\n');
    await eventually(
      () => (output.includes('through ssh') ? true : undefined),
      'the line back from cat',
    );
    await container.wait().catch(() => undefined);
    const opened = sshd.accepted() - before;
    assert.ok(opened >= 1 && opened <= 2, `${opened} SSH connections for 19 calls`);
  });
});

describe('probing a stopped node', { skip }, () => {
  it('says it is unreachable, within the deadline, while the other node answers', async () => {
    // Last in this file: the stoppable nodes are leased to it until it ends.
    const stoppable = await dockerNodesForTests(2, { stoppable: true });
    assert.ok(stoppable.ok, stoppable.ok ? '' : stoppable.why);
    const [node, neighbour] = stoppable.nodes;
    assert.ok(node && neighbour);
    await node.stop();
    try {
      const probe = failure(
        await probeEngine(
          { dockerHost: node.dockerHost, tls: node.tls },
          { deadlineMs: DEADLINE_MS },
        ),
        [node.tls.key],
      );
      assert.equal(probe.code, 'NODE_UNREACHABLE');
      assert.match(probe.reason, new RegExp(`connection refused at ${node.address}:2376`));
      const answer = await probeEngine(
        { dockerHost: neighbour.dockerHost, tls: neighbour.tls },
        { deadlineMs: DEADLINE_MS },
      );
      assert.ok(answer.ok);
    } finally {
      await node.start();
    }
    const again = await probeEngine(
      { dockerHost: node.dockerHost, tls: node.tls },
      { deadlineMs: DEADLINE_MS },
    );
    assert.ok(again.ok, again.ok ? '' : again.reason);
  });
});
