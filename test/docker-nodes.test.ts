/**
 * The engines that stand in for remote nodes (helpers/docker-nodes.ts) are what the nodes tests
 * rely on: each answers over mutual TLS on its own address and on no other terms, a container
 * publishes its port on the node's address for this machine to reach, and a stoppable node's
 * engine stops and starts while the other goes on.
 */
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { IMAGE_NODE } from './helpers/docker.js';
import { makeTestCa, type TestCa } from './helpers/certificates.js';
import { dockerNodesForTests, type DockerNode } from './helpers/docker-nodes.js';

const shared = await dockerNodesForTests(2);
const skip = shared.ok ? false : shared.why;
const nodes: readonly DockerNode[] = shared.ok ? shared.nodes : [];

interface Tls {
  readonly ca: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

/** GET /_ping of `node`'s engine over HTTPS with `tls`: its body, or the error's code. */
function ping(node: DockerNode, tls: Tls): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      { host: node.address, port: 2376, path: '/_ping', ...tls, timeout: 5000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve(`${res.statusCode} ${body}`);
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? error.message);
    });
    req.end();
  });
}

/** What a TCP server at `host:port` says first. */
function firstWords(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => {
      resolve(text);
    });
    socket.on('error', reject);
  });
}

describe('engines as remote nodes', { skip }, () => {
  let otherCa: TestCa;
  let other: { cert: Buffer; key: Buffer };

  before(() => {
    otherCa = makeTestCa();
    const issued = otherCa.issue('intruder', { usage: 'client' });
    other = { cert: readFileSync(issued.certFile), key: readFileSync(issued.keyFile) };
  });
  after(() => {
    otherCa.remove();
  });

  it('answers over TLS with the client certificate, each engine its own, with the image', async () => {
    for (const node of nodes) {
      assert.equal(await ping(node, node.tls), '200 OK');
      const info = (await node.docker.info()) as { Name: string; DockerRootDir: string };
      assert.equal(info.Name, node.name);
      assert.equal(info.DockerRootDir, `/var/lib/game-panel-test-${node.name}`);
      await node.docker.getImage(node.image).inspect();
    }
    assert.notEqual(nodes[0]?.address, nodes[1]?.address);
  });

  it('refuses a client certificate from another CA, and a client without one', async () => {
    const node = nodes[0]!;
    assert.match(await ping(node, { ca: node.tls.ca, ...other }), /^ERR_SSL_.*ALERT/);
    assert.match(await ping(node, { ca: node.tls.ca }), /^ERR_SSL_.*ALERT|ECONNRESET/);
  });

  it('is refused by a client that trusts another CA', async () => {
    const node = nodes[0]!;
    const answer = await ping(node, { ...node.tls, ca: otherCa.caPem });
    assert.equal(answer, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it("publishes a container's port on the node's address, reached from this machine", async () => {
    const node = nodes[0]!;
    const container = await node.docker.createContainer({
      name: `gpn-self-test-${process.pid}`,
      Image: node.image,
      Cmd: [
        IMAGE_NODE,
        '-e',
        "require('net').createServer((s) => s.end('hello from ' + require('os').hostname())).listen(8080)",
      ],
      ExposedPorts: { '8080/tcp': {} },
      HostConfig: { PortBindings: { '8080/tcp': [{ HostIp: node.address, HostPort: '' }] } },
    });
    try {
      await container.start();
      const info = await container.inspect();
      const published = info.NetworkSettings.Ports['8080/tcp']?.[0];
      assert.equal(published?.HostIp, node.address);
      const port = Number(published.HostPort);
      let said = '';
      for (let tries = 0; tries < 50 && !said.startsWith('hello'); tries += 1) {
        said = await firstWords(node.address, port).catch(() => '');
        if (!said) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(said, `hello from ${info.Config.Hostname}`);
    } finally {
      await container.remove({ force: true });
    }
  });

  it('keeps shared nodes running: stopping one is refused', async () => {
    await assert.rejects(nodes[0]!.stop(), /stoppable/);
  });
});

describe('stoppable nodes', { skip }, () => {
  it('stopped, a node answers no more while the other does; started, it answers again', async () => {
    const stoppable = await dockerNodesForTests(2, { stoppable: true });
    assert.ok(stoppable.ok, stoppable.ok ? '' : stoppable.why);
    const [first, second] = stoppable.nodes;
    assert.ok(first && second);
    assert.ok(!nodes.some((node) => node.address === first.address));
    const container = await first.docker.createContainer({
      name: `gpn-self-test-${process.pid}`,
      Image: first.image,
      Cmd: ['/bin/sleep', '600'],
    });
    try {
      await container.start();
      try {
        await first.stop();
        assert.equal(await ping(first, first.tls), 'ECONNREFUSED');
        assert.equal(await ping(second, second.tls), '200 OK');
      } finally {
        await first.start();
      }
      assert.equal(await ping(first, first.tls), '200 OK');
      // --live-restore: what ran on the node runs still, for the panel to find again.
      assert.equal((await container.inspect()).State.Running, true);
    } finally {
      await container.remove({ force: true });
    }
  });
});
