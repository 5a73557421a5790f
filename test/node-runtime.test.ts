/**
 * The docker runtime on a remote node's engine (docs/nodes.md "Servers on a node"), on real
 * engines standing in for nodes (helpers/docker-nodes.ts), reached over mutual TLS: a server
 * runs in its container on the node with its folder in its volume, its console both ways, its
 * usage, its limits, its stop; an install script delivered through the engine's API writes into
 * the server's folder and cannot change itself; and a node whose engine stops, or stops
 * answering, makes the runtime's calls fail with RuntimeUnavailableError instead of hanging,
 * while the server runs on: once the engine is back its console is attached again, and a panel
 * that let go of it takes it over.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { demultiplex } from '../src/host/runtime/docker/docker-runtime.js';
import {
  RuntimeUnavailableError,
  StartError,
  StartRefusedError,
  type LaunchSpec,
  type Runtime,
  type RunningProcess,
} from '../src/host/runtime/runtime.js';
import { createNodeRuntime } from '../src/host/remote/node-runtime.js';
import { volumeName } from '../src/host/remote/node-volumes.js';
import { dockerNodesForTests, type DockerNode } from './helpers/docker-nodes.js';
import { eventually } from './helpers/factories.js';

const MIB = 1024 * 1024;
const shared = await dockerNodesForTests(1);
const skip = shared.ok ? false : shared.why;

/** The server's uid on the node (a root panel gives each server its own). */
const UID = 240_001;

/**
 * The stand-in game server: a shell script that says it is ready, echoes what it is sent,
 * saves a line into its folder when asked (`save …`), prints `late` once a file `go` appears
 * in its folder when asked (`later`), and ends cleanly on SIGTERM.
 */
const ECHO = [
  "trap 'echo bye; exit 0' TERM",
  'echo ready',
  'while read line; do',
  '  case "$line" in',
  '    save\\ *) echo "${line#save }" > saved.txt;;',
  '    later) (while [ ! -e go ]; do sleep 1; done; busybox rm go; echo late) &;;',
  '  esac',
  '  echo "got $line"',
  'done',
].join('\n');

/** This test file's panel: its containers and volumes on the nodes are its own. */
const panelId = `nr${randomBytes(4).toString('hex')}`;

const spec = (node: DockerNode, name: string, overrides: Partial<LaunchSpec> = {}): LaunchSpec => ({
  name,
  argv: ['/bin/sh', '-c', ECHO],
  // A path the node does not have: the bind source must come from the server's volume.
  cwd: `/nonexistent-panel-folder/${name}`,
  limits: { memoryBytes: 64 * MIB, cpuPercent: 50, pids: 32 },
  image: node.image,
  env: {},
  ports: [],
  install: null,
  user: { uid: UID, gid: UID },
  ...overrides,
});

/**
 * Runs `script` in a throwaway container of the test image on `node` with the server's volume
 * at /servers (as the file agent mounts it), as `user`; its exit code and output.
 */
async function onVolume(
  node: DockerNode,
  name: string,
  script: string,
  { user = `${UID}:${UID}`, capAdd = [] as string[] } = {},
): Promise<{ code: number; output: string }> {
  const container = await node.docker.createContainer({
    Image: node.image,
    Entrypoint: ['/bin/busybox', 'sh', '-c', script],
    User: user,
    Labels: { 'game-panel.panel': panelId, 'game-panel.test': 'volume' },
    NetworkDisabled: true,
    HostConfig: {
      Binds: [`${volumeName(panelId, name)}:/servers`],
      CapDrop: ['ALL'],
      CapAdd: capAdd,
      SecurityOpt: ['no-new-privileges'],
      NetworkMode: 'none',
    },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const logs = await container.logs({ stdout: true, stderr: true, follow: false });
    return {
      code: StatusCode,
      output: demultiplex(logs)
        .map(([chunk]) => chunk.toString())
        .join(''),
    };
  } finally {
    await container.remove({ force: true });
  }
}

/**
 * Server `name`'s volume on `node` with its folder `/servers/<name>` owned by the server's
 * user, as the files side of a node makes it; the folder as the engine's machine names it.
 */
async function serverVolume(node: DockerNode, name: string): Promise<string> {
  const volume = volumeName(panelId, name);
  await node.docker.createVolume({ Name: volume, Labels: { 'game-panel.panel': panelId } });
  const made = await onVolume(
    node,
    name,
    `busybox mkdir /servers/${name} && busybox chown ${UID}:${UID} /servers/${name}`,
    { user: '0:0', capAdd: ['CHOWN'] },
  );
  assert.equal(made.code, 0, made.output);
  const { Mountpoint } = await node.docker.getVolume(volume).inspect();
  return `${Mountpoint}/${name}`;
}

/** Everything this file left on `node`: its containers, then its volumes. */
async function cleanUp(node: DockerNode): Promise<void> {
  const label = `game-panel.panel=${panelId}`;
  for (const container of await node.docker.listContainers({
    all: true,
    filters: { label: [label] },
  }))
    await node.docker.getContainer(container.Id).remove({ force: true });
  const { Volumes } = await node.docker.listVolumes({ filters: { label: [label] } });
  for (const volume of Volumes) await node.docker.getVolume(volume.Name).remove({ force: true });
}

const runtimeOn = (node: DockerNode): Promise<Runtime> =>
  createNodeRuntime({
    node: node.name,
    connection: { dockerHost: node.dockerHost, tls: node.tls },
    panelId,
    network: 'host',
  });

/** What `process` printed, as one text, kept up to date. */
function outputOf(process: RunningProcess): { text: () => string } {
  let text = '';
  process.onOutput((chunk) => {
    text += chunk.toString();
  });
  return { text: () => text };
}

const printed = (output: { text: () => string }, line: string) =>
  eventually(
    () => (output.text().split('\n').includes(line) ? true : undefined),
    `"${line}" printed; so far: ${JSON.stringify(output.text())}`,
  );

describe('the docker runtime on a node', { skip }, () => {
  const node = shared.ok ? shared.nodes[0]! : (undefined as unknown as DockerNode);
  let runtime: Runtime;

  before(async () => {
    runtime = await runtimeOn(node);
  });
  after(async () => {
    if (shared.ok) await cleanUp(node);
  });

  it('tells which node it runs servers on', () => {
    assert.match(runtime.description, new RegExp(`engine at node ${node.name} answers`));
    assert.match(runtime.description, /run on network bridge/);
  });

  it("runs a server in its volume's folder: console both ways, usage, limits, stop", async () => {
    const folder = await serverVolume(node, 'echo');
    const running = await runtime.start(spec(node, 'echo'));
    const output = outputOf(running);
    await printed(output, 'ready');
    assert.equal(running.writeLine('hello node'), true);
    await printed(output, 'got hello node');

    const info = await node.docker.getContainer(`game-panel-${panelId}-echo`).inspect();
    assert.equal(info.Id, running.identity);
    assert.deepEqual(info.Config.Labels, {
      'game-panel.panel': panelId,
      'game-panel.server': 'echo',
    });
    assert.equal(info.Config.User, `${UID}:${UID}`);
    const host = info.HostConfig;
    assert.equal(host.Memory, 64 * MIB);
    assert.equal(host.MemorySwap, 64 * MIB);
    assert.equal(host.PidsLimit, 32);
    assert.equal(host.NanoCpus, 500_000_000);
    assert.deepEqual(host.CapDrop, ['ALL']);
    assert.deepEqual(host.SecurityOpt, ['no-new-privileges']);
    assert.equal(host.ReadonlyRootfs, true);
    assert.equal(host.Privileged, false);
    // The only mount: the server's folder in its volume, as the node's engine names it.
    assert.deepEqual(
      info.Mounts.map((mount) => [mount.Type, mount.Source, mount.Destination, mount.RW]),
      [['bind', folder, '/home/container', true]],
    );

    // What the server writes lands in its folder in the volume.
    running.writeLine('save kept on the node');
    await printed(output, 'got save kept on the node');
    const saved = await onVolume(node, 'echo', 'busybox cat /servers/echo/saved.txt');
    assert.deepEqual(saved, { code: 0, output: 'kept on the node\n' });

    const usage = await running.usage();
    assert.ok(usage.memoryBytes > 0, JSON.stringify(usage));
    assert.ok(usage.pids >= 1, JSON.stringify(usage));

    await running.terminate();
    assert.deepEqual(await running.exited, { code: 0, signal: null, outOfMemory: false });
    await printed(output, 'bye');
    const left = await node.docker.listContainers({
      all: true,
      filters: { label: ['game-panel.server=echo', `game-panel.panel=${panelId}`] },
    });
    assert.deepEqual(left, [], 'the container is removed once its exit is read');
  });

  it('refuses to start a server that has no volume on the node', async () => {
    await assert.rejects(runtime.start(spec(node, 'homeless')), (error: unknown) => {
      assert.ok(error instanceof StartRefusedError, String(error));
      assert.match(
        error.message,
        new RegExp(
          `homeless has no volume on node ${node.name} \\(game-panel-${panelId}-homeless\\)`,
        ),
      );
      return true;
    });
  });

  it('never makes a missing folder in the volume: the start fails and nothing is made', async () => {
    const volume = volumeName(panelId, 'unmade');
    await node.docker.createVolume({ Name: volume, Labels: { 'game-panel.panel': panelId } });
    await assert.rejects(runtime.start(spec(node, 'unmade')), (error: unknown) => {
      assert.ok(error instanceof StartError, String(error));
      assert.match(error.message, /bind source path does not exist/);
      return true;
    });
    const listed = await onVolume(node, 'unmade', 'busybox ls -A /servers');
    assert.deepEqual(listed, { code: 0, output: '' });
  });

  it("runs an install script on the node, into the server's folder; the script stays read-only", async () => {
    await serverVolume(node, 'fresh');
    const script = [
      'echo "installing as $(id -u) in $(pwd)"',
      'echo "$GREETING" > /mnt/server/installed.txt',
      'if echo tampered >> /mnt/install/install.sh; then echo "script writable"; else echo "script read-only"; fi',
      'if echo x > /mnt/install/added.sh; then echo "folder writable"; else echo "folder read-only"; fi',
      'busybox stat -c "%n %u:%g %a" /mnt/install /mnt/install/install.sh',
    ].join('\r\n');
    const install = await runtime.start(
      spec(node, 'fresh', {
        argv: ['/bin/sh', '/mnt/install/install.sh'],
        env: { GREETING: 'hello from the install' },
        limits: { memoryBytes: null, cpuPercent: null, pids: null },
        install: { script },
      }),
    );
    const output = outputOf(install);
    const info = await node.docker.getContainer(install.identity).inspect();
    assert.equal(info.Config.Labels['game-panel.install'], 'fresh');
    assert.equal(info.Config.User, `${UID}:${UID}`);
    // No mount of the panel's disk: the script came through the engine's archive endpoint.
    assert.deepEqual(
      info.Mounts.map((mount) => mount.Destination),
      ['/mnt/server'],
    );
    assert.deepEqual(await install.exited, { code: 0, signal: null, outOfMemory: false });
    const lines = output.text().split('\n');
    assert.ok(lines.includes(`installing as ${UID} in /mnt/server`), output.text());
    assert.ok(lines.includes('script read-only'), output.text());
    assert.ok(lines.includes('folder read-only'), output.text());
    assert.ok(lines.includes('/mnt/install 0:0 755'), output.text());
    assert.ok(lines.includes('/mnt/install/install.sh 0:0 555'), output.text());
    const installed = await onVolume(node, 'fresh', 'busybox cat /servers/fresh/installed.txt');
    assert.deepEqual(installed, { code: 0, output: 'hello from the install\n' });
    const left = await node.docker.listContainers({
      all: true,
      filters: { label: ['game-panel.install=fresh', `game-panel.panel=${panelId}`] },
    });
    assert.deepEqual(left, [], "the install's container is removed");
  });
});

describe('a node whose engine goes away', { skip }, () => {
  let node: DockerNode;
  let runtime: Runtime;
  let nodes: Awaited<ReturnType<typeof dockerNodesForTests>>;

  before(async () => {
    nodes = await dockerNodesForTests(1, { stoppable: true });
    if (!nodes.ok) return;
    node = nodes.nodes[0]!;
    runtime = await runtimeOn(node);
  });
  after(async () => {
    if (nodes.ok) {
      await node.start();
      await cleanUp(node);
    }
  });

  const unavailable = (error: unknown) => {
    assert.ok(error instanceof RuntimeUnavailableError, String(error));
    assert.match(error.message, new RegExp(`The Docker engine at node ${node.name} `));
    return true;
  };

  it('fails calls while the engine is stopped; once back, the console is attached again and adopt takes the server over', async (t) => {
    if (!nodes.ok) {
      t.skip(nodes.why);
      return;
    }
    const folder = await serverVolume(node, 'survivor');
    const running = await runtime.start(spec(node, 'survivor'));
    const output = outputOf(running);
    await printed(output, 'ready');
    running.writeLine('before');
    await printed(output, 'got before');
    running.writeLine('later');
    await printed(output, 'got later');

    await node.stop();
    // The server prints while its engine is down (the node's disk is this machine's): it has
    // taken the file away once it is about to print.
    writeFileSync(path.join(folder, 'go'), '');
    await eventually(() => (existsSync(path.join(folder, 'go')) ? undefined : true), 'go taken');
    await assert.rejects(running.usage(), unavailable);
    await assert.rejects(running.terminate(), unavailable);
    await assert.rejects(running.kill(), unavailable);
    await assert.rejects(runtime.start(spec(node, 'survivor')), unavailable);
    await assert.rejects(
      runtime.adopt?.({ name: 'survivor', pid: running.pid, identity: running.identity }) ??
        Promise.resolve(),
      unavailable,
    );

    await node.start();
    // The process the panel holds attaches again by itself once the engine is back: its console
    // works on, with nothing it printed lost.
    await eventually(
      () => (running.writeLine('after the restart') ? true : undefined),
      'standard input attached again',
      60_000,
    );
    await printed(output, 'got after the restart');
    assert.deepEqual(
      output
        .text()
        .split('\n')
        .filter((line) => line === 'late'),
      ['late'],
      'what it printed while its engine was down, shown once',
    );
    assert.ok((await running.usage()).pids >= 1);

    // A panel that let go of it (its own restart) takes it over from the engine.
    running.detach();
    const adopted = await runtime.adopt?.({
      name: 'survivor',
      pid: running.pid,
      identity: running.identity,
    });
    assert.ok(adopted, 'the server is taken over');
    // The very container, never restarted: it ran on while its engine was down.
    assert.equal(adopted.identity, running.identity);
    assert.equal(adopted.startedAt.getTime(), running.startedAt.getTime());
    const again = outputOf(adopted);
    // Its history first (from the engine's log), then what it prints from now on.
    await printed(again, 'got before');
    await printed(again, 'got after the restart');
    assert.equal(adopted.writeLine('after'), true);
    await printed(again, 'got after');
    assert.ok((await adopted.usage()).pids >= 1);
    await adopted.terminate();
    assert.deepEqual(await adopted.exited, { code: 0, signal: null, outOfMemory: false });
  });

  it('gives up on an engine that stops answering without closing anything', async (t) => {
    if (!nodes.ok) {
      t.skip(nodes.why);
      return;
    }
    await serverVolume(node, 'frozen');
    const running = await runtime.start(spec(node, 'frozen'));
    await printed(outputOf(running), 'ready');
    // The engine's process frozen: its port still takes connections, nothing is answered (a
    // node cut off mid-way). The fixture's own stop kills a frozen engine if this file dies.
    const pid = Number(readFileSync(`/run/game-panel-test-${node.name}.pid`, 'utf8').trim());
    process.kill(pid, 'SIGSTOP');
    try {
      await assert.rejects(running.usage(), unavailable);
      await assert.rejects(running.terminate(), unavailable);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // The stop given up on may still reach the engine once it answers again: it is told to end,
    // by the one or the other, and nothing of it is left.
    await running.kill();
    await running.exited;
    const left = await node.docker.listContainers({
      all: true,
      filters: { label: ['game-panel.server=frozen', `game-panel.panel=${panelId}`] },
    });
    assert.deepEqual(left, []);
  });
});
