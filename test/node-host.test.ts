/**
 * A remote node's ServerHost (src/host/remote/node-host.ts) on a real engine standing in for a
 * node (helpers/docker-nodes.ts): a server made there gets a volume of its own; it starts in its
 * container on the node, its console both ways; its files, written and read through a helper
 * container, are the very files the server's container sees; a template that runs a process on
 * the host is refused; a deleted server's volume is removed from the node.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { AppError } from '../src/errors.js';
import type { ServerHost } from '../src/host/host.js';
import { createNodeHost } from '../src/host/remote/node-host.js';
import { volumeName } from '../src/host/remote/node-volumes.js';
import { SILENT_LOGGER } from '../src/log.js';
import { bundleOptions } from '../scripts/bundle-server.mjs';
import { dockerNodesForTests } from './helpers/docker-nodes.js';
import { eventually } from './helpers/factories.js';
import { MemoryRecords, MemoryTemplates } from './host-port/records.js';

const shared = await dockerNodesForTests(1);
const skip = shared.ok ? false : shared.why;
const node = shared.ok ? shared.nodes[0] : undefined;

/** This file's panel: its containers and volumes on the node are its own. */
const panelId = `nh${randomBytes(4).toString('hex')}`;
const UID = 241_000;

const ECHO = `sh -c 'echo ready; while read line; do echo "got $line"; cat hello.txt; done'`;

describe('a node host', { skip }, () => {
  let scratch: string;
  let host: ServerHost;
  const records = new MemoryRecords();

  before(async () => {
    assert.ok(node);
    scratch = await mkdtemp(path.join(tmpdir(), 'node-host-'));
    const agentFile = path.join(scratch, 'file-agent.mjs');
    await build({
      ...bundleOptions(path.resolve('src/host/remote/file-agent.ts'), agentFile, []),
      sourcemap: false,
      logLevel: 'error',
    });
    host = await createNodeHost({
      node: node.name,
      connection: { dockerHost: node.dockerHost, tls: node.tls },
      panelId,
      records,
      templates: new MemoryTemplates(),
      userOf: (record) => ({ uid: UID + record.id, gid: UID + record.id }),
      log: SILENT_LOGGER,
      now: () => new Date(),
      diskGraceSeconds: 60,
      network: 'none',
      agentFile,
      helperIdleMs: 1_000,
    });
  });

  after(async () => {
    await host.close();
    if (node) {
      const { Volumes } = await node.docker.listVolumes({
        filters: { label: [`game-panel.panel=${panelId}`] },
      });
      for (const volume of Volumes) await node.docker.getVolume(volume.Name).remove();
    }
    await rm(scratch, { recursive: true, force: true });
  });

  it('runs a server in its volume on the node, its console and files both ways', async () => {
    assert.ok(node);
    const record = records.add('world', {
      startCommand: ECHO,
      runtime: 'docker',
      image: node.image,
      node: node.name,
    });
    await host.create('world');
    const volume = await node.docker.getVolume(volumeName(panelId, 'world')).inspect();
    assert.equal(volume.Labels['game-panel.server'], 'world');

    await host.files.writeText('world', ['hello.txt'], 'written through a helper\n');
    await host.start('world');
    const lines = () =>
      host
        .console('world')
        .history()
        .map((line) => line.line);
    await eventually(() => (lines().includes('ready') ? true : undefined), 'the server ready');
    host.command('world', 'say hi', 'test');
    await eventually(
      () => (lines().includes('written through a helper') ? true : undefined),
      'the file the helper wrote, read by the server',
    );
    assert.ok(lines().includes('got say hi'));
    const [container] = await node.docker.listContainers({
      filters: { label: [`game-panel.panel=${panelId}`, 'game-panel.server=world'] },
    });
    assert.ok(container, 'the container on the node');
    const inspect = await node.docker.getContainer(container.Id).inspect();
    assert.equal(inspect.Config.User, `${UID + record.id}:${UID + record.id}`);
    assert.deepEqual(
      inspect.Mounts.map((mount) => [mount.Source, mount.Destination]),
      [[`${volume.Mountpoint}/world`, '/home/container']],
    );
    await host.stop('world');
    assert.equal(host.state('world').status, 'stopped');
    assert.equal(
      await host.files.readText('world', ['hello.txt'], 1024),
      'written through a helper\n',
    );
  });

  it('refuses a server that runs as a process on the host', async () => {
    records.add('bare', { startCommand: 'true', runtime: 'process', node: 'test' });
    await host.create('bare');
    await assert.rejects(
      host.start('bare'),
      (error: unknown) =>
        error instanceof AppError &&
        error.statusCode === 409 &&
        error.message.includes('containers only'),
    );
  });

  it("removes a deleted server's volume from the node", async () => {
    assert.ok(node);
    records.add('gone', { startCommand: ECHO, runtime: 'docker', image: node.image });
    await host.create('gone');
    await host.files.writeText('gone', ['a.txt'], 'a');
    const discarded = await host.discard('gone');
    records.remove('gone');
    discarded.purge();
    await eventually(async () => {
      const { Volumes } = await node.docker.listVolumes({
        filters: { name: [volumeName(panelId, 'gone')] },
      });
      return Volumes.length === 0 ? true : undefined;
    }, 'the volume removed');
  });
});
