/**
 * The file agent in a helper container on a node (src/host/remote/helper-container.ts,
 * helper-image.ts, node-volumes.ts; docs/nodes.md "Files on a node"), on a real engine standing
 * in for a node (helpers/docker-nodes.ts): the helper image is made from the panel's own Node and
 * the agent's bundle and imported once; RemoteFiles works through the helper; the helper has
 * only its volume, no network, no capability, a read-only root and the server's user; a symlink
 * in the volume leads into the helper's own empty root, never into the node (the kernel's jail);
 * an idle helper is let go of and the next call starts another; a node of another architecture
 * is refused.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { build } from 'esbuild';
import { bundleOptions } from '../scripts/bundle-server.mjs';
import { AppError } from '../src/errors.js';
import { engineClient } from '../src/host/remote/engine-connection.js';
import { HelperContainers } from '../src/host/remote/helper-container.js';
import {
  architectureProblem,
  HelperImageError,
  helperImage,
} from '../src/host/remote/helper-image.js';
import { volumeServerFolder } from '../src/host/remote/node-runtime.js';
import { volumeName } from '../src/host/remote/node-volumes.js';
import { RemoteFiles } from '../src/host/remote/remote-files.js';
import { demultiplex } from '../src/host/runtime/docker/docker-runtime.js';
import type { Logger } from '../src/log.js';
import { IMAGE_NODE } from './helpers/docker.js';
import { dockerNodesForTests, type DockerNode } from './helpers/docker-nodes.js';
import { eventually } from './helpers/factories.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MIB = 1024 * 1024;
const OWNER = { uid: 4321, gid: 4321 };

const found = await dockerNodesForTests(1);
const skip = found.ok ? false : found.why;

let node: DockerNode;
let api: Docker;
let streams: Docker;
let buildDir: string;
let agentFile: string;
let ownTag: string;
const panelId = `t${randomBytes(4).toString('hex')}`;
/** Another panel's id: its helpers are an earlier run's to this panel's leftovers test. */
const earlierPanelId = `${panelId}e`;
const made: HelperContainers[] = [];
/** What the helpers logged: level and message. */
const logged: string[] = [];
const log: Logger = {
  debug: (_details, message) => logged.push(`debug ${message}`),
  info: (_details, message) => logged.push(`info ${message}`),
  warn: (_details, message) => logged.push(`warn ${message}`),
  error: (_details, message) => logged.push(`error ${message}`),
};
const opened: RemoteFiles[] = [];

/** Helpers of this test's panel on the node. */
function helpers(options: { panelId?: string; startDeadlineMs?: number } = {}): HelperContainers {
  const each = new HelperContainers({
    api,
    streams,
    panelId: options.panelId ?? panelId,
    userOf: () => OWNER,
    agentFile,
    log,
    ...(options.startDeadlineMs === undefined ? {} : { startDeadlineMs: options.startDeadlineMs }),
  });
  made.push(each);
  return each;
}

function remoteFiles(through: HelperContainers, idleMs?: number): RemoteFiles {
  const files = new RemoteFiles({
    connect: (server) => through.connect(server),
    serversDir: '/servers',
    ...(idleMs === undefined ? {} : { idleMs }),
  });
  opened.push(files);
  return files;
}

/** Runs `argv` in the running container `id`; what it printed on stdout. */
async function execIn(id: string, argv: string[]): Promise<string> {
  const exec = await api.getContainer(id).exec({
    Cmd: argv,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return demultiplex(Buffer.concat(chunks))
    .filter(([, kind]) => kind === 'stdout')
    .map(([payload]) => payload.toString('utf8'))
    .join('');
}

/** Runs `argv` as root in a throwaway container of the fixture's test image, the volume mounted. */
async function asRootOnVolume(server: string, argv: string[]): Promise<void> {
  const container = await api.createContainer({
    Image: node.image,
    Entrypoint: [argv[0] ?? ''],
    Cmd: argv.slice(1),
    User: '0:0',
    NetworkDisabled: true,
    HostConfig: {
      Binds: [`${volumeName(panelId, server)}:/servers:rw`],
      NetworkMode: 'none',
    },
  });
  try {
    const waited = container.wait({ condition: 'next-exit' }) as Promise<{ StatusCode: number }>;
    await container.start();
    assert.equal((await waited).StatusCode, 0);
  } finally {
    await container.remove({ force: true });
  }
}

const rejectsWith = async (promise: Promise<unknown>, code: string): Promise<AppError> => {
  const error = await promise.then(
    () => null,
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof AppError, `expected ${code}, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  return error;
};

describe('the file agent in a helper container on a node', { skip, timeout: 300_000 }, () => {
  before(async () => {
    if (!found.ok) return;
    node = found.nodes[0]!;
    api = node.docker;
    streams = engineClient(node, { timeoutMs: null });
    // The agent's bundle, built from its source as `npm run build` builds it.
    buildDir = await mkdtemp(path.join(tmpdir(), 'node-helper-'));
    agentFile = path.join(buildDir, 'file-agent.mjs');
    await build({
      ...bundleOptions(path.join(ROOT, 'src/host/remote/file-agent.ts'), agentFile, []),
      sourcemap: false,
      logLevel: 'error',
    });
    // An image of this file's own (its tag is the hash of its content): the test removes it to
    // see it imported again, which must not pull the image from under the other files running
    // at once on the same node with the panel's.
    await appendFile(agentFile, `// node-helper test ${randomUUID()}\n`);
    ownTag = (await helperImage({ agentFile })).tag;
  });

  after(async () => {
    if (!found.ok) return;
    for (const files of opened) await files.close();
    for (const each of made) await each.settled();
    for (const id of [panelId, earlierPanelId]) {
      await helpers({ panelId: id }).removeLeftovers();
      const volumes = await api.listVolumes({ filters: { label: [`game-panel.panel=${id}`] } });
      for (const volume of volumes.Volumes) await api.getVolume(volume.Name).remove();
    }
    await rm(buildDir, { recursive: true, force: true });
    await api
      .getImage(ownTag)
      .remove({ force: true })
      .catch(() => undefined);
  });

  it('makes the image from the panel’s files and imports it once', async () => {
    const { tag } = await helperImage({ agentFile });
    assert.match(tag, /^game-panel-file-agent:[0-9a-f]{24}$/);
    // A node that has it from an earlier run is sent it again after it is gone.
    await api
      .getImage(tag)
      .remove({ force: true })
      .catch(() => undefined);
    const first = await helpers().image();
    assert.equal(first.tag, tag);
    assert.equal(first.imported, true);
    const info = await api.getImage(tag).inspect();
    assert.equal(info.Architecture, process.arch === 'x64' ? 'amd64' : process.arch);
    const again = await helpers().image();
    assert.equal(again.tag, tag);
    assert.equal(again.imported, false, 'the node had the image: it is not sent again');
    assert.equal((await api.getImage(tag).inspect()).Id, info.Id);
  });

  it('answers RemoteFiles through the helper: lists, writes, reads ranges, uploads', async () => {
    const through = helpers();
    const files = remoteFiles(through);
    await files.create('world');
    assert.deepEqual(await files.list('world', []), []);
    await files.writeText('world', ['server.properties'], 'motd=on a node\n');
    assert.equal(await files.readText('world', ['server.properties'], 1024), 'motd=on a node\n');
    const listed = await files.list('world', []);
    assert.deepEqual(
      listed.map((entry) => [entry.name, entry.type]),
      [['server.properties', 'file']],
    );
    const file = await files.openFile('world', ['server.properties']);
    const ranged: Buffer[] = [];
    for await (const chunk of file.read({ start: 5, end: 6 })) ranged.push(chunk as Buffer);
    assert.equal(Buffer.concat(ranged).toString(), 'on');

    const data = randomBytes(5 * MIB + 123);
    const entry = await files.upload('world', [], 'world.bin', Readable.from([data]), null);
    assert.equal(entry.size, data.length);
    const back = await files.openFile('world', ['world.bin']);
    const chunks: Buffer[] = [];
    for await (const chunk of back.read()) chunks.push(chunk as Buffer);
    assert.ok(Buffer.concat(chunks).equals(data), 'read back byte for byte');

    // The fixed layout: the volume's root is the server's user's, the server's folder inside it.
    const folder = await volumeServerFolder(api, 'node test', panelId)('world');
    assert.equal(path.basename(folder), 'world');
    const root = await stat(path.dirname(folder));
    assert.deepEqual([root.uid, root.gid, root.mode & 0o777], [OWNER.uid, OWNER.gid, 0o700]);
    assert.equal((await stat(path.join(folder, 'world.bin'))).size, data.length);
    assert.equal((await stat(path.join(folder, 'world.bin'))).uid, OWNER.uid);

    // Only its own volume, no network, no capability, a read-only root, the server's user.
    assert.equal(through.running.length, 1);
    const helper = await api.getContainer(through.running[0] ?? '').inspect();
    assert.deepEqual(
      helper.Mounts.map((mount) => [mount.Type, mount.Name, mount.Destination, mount.RW]),
      [['volume', volumeName(panelId, 'world'), '/servers', true]],
    );
    assert.equal(helper.HostConfig.NetworkMode, 'none');
    assert.deepEqual(helper.HostConfig.CapDrop, ['ALL']);
    const added = helper.HostConfig.CapAdd as string[] | null | undefined;
    assert.ok(added === null || added === undefined || added.length === 0, 'no capability added');
    assert.equal(helper.HostConfig.Privileged, false);
    assert.equal(helper.HostConfig.ReadonlyRootfs, true);
    assert.deepEqual(helper.HostConfig.SecurityOpt, ['no-new-privileges']);
    assert.equal(helper.Config.User, `${OWNER.uid}:${OWNER.gid}`);
    const networks = Object.keys(helper.NetworkSettings.Networks);
    assert.ok(
      networks.every((name) => name === 'none'),
      networks.join(' '),
    );
  });

  it('serves a volume made ready before a restart, and mends one whose root is not as it should be', async () => {
    // A panel's restart: new helpers, which give the volume to its user once more.
    const restarted = remoteFiles(helpers());
    assert.equal(
      await restarted.readText('world', ['server.properties'], 1024),
      'motd=on a node\n',
    );
    await restarted.close();
    // Its root taken away (root's, 0755), as a volume an earlier run left half made.
    await asRootOnVolume('world', [
      IMAGE_NODE,
      '-e',
      "require('node:fs').chownSync('/servers', 0, 0); require('node:fs').chmodSync('/servers', 0o755)",
    ]);
    const mended = remoteFiles(helpers());
    assert.equal(await mended.readText('world', ['server.properties'], 1024), 'motd=on a node\n');
    await mended.close();
    const folder = await volumeServerFolder(api, 'node test', panelId)('world');
    const root = await stat(path.dirname(folder));
    assert.deepEqual([root.uid, root.gid, root.mode & 0o777], [OWNER.uid, OWNER.gid, 0o700]);
  });

  it('keeps a symlink in the volume inside the helper’s own root: the kernel’s jail', async () => {
    const through = helpers();
    const files = remoteFiles(through);
    await files.create('jail');
    await files.writeText('jail', ['inside.txt'], 'inside');
    await asRootOnVolume('jail', [
      IMAGE_NODE,
      '-e',
      "require('node:fs').symlinkSync('/etc', '/servers/jail/etc-link')",
    ]);
    // The agent refuses it, as the local storage does.
    await rejectsWith(files.list('jail', ['etc-link']), 'PATH_OUTSIDE');
    await rejectsWith(files.readText('jail', ['etc-link', 'hostname'], 1024), 'PATH_OUTSIDE');
    await rejectsWith(files.openFile('jail', ['etc-link', 'passwd']), 'PATH_OUTSIDE');

    // And a process in the helper that follows it finds the helper's own root, not the node's
    // /etc: only what the engine puts in every container (its own hostname, hosts, resolv.conf).
    const [helper] = through.running;
    assert.ok(helper !== undefined);
    const seen = await execIn(helper, [
      '/usr/bin/node',
      '-e',
      `const fs = require('node:fs');
       const tryIt = (f) => { try { return f(); } catch (e) { return e.code; } };
       console.log(JSON.stringify({
         link: fs.readlinkSync('/servers/jail/etc-link'),
         through: tryIt(() => fs.readdirSync('/servers/jail/etc-link').sort()),
         hostname: tryIt(() => fs.readFileSync('/servers/jail/etc-link/hostname', 'utf8')),
         root: fs.readdirSync('/').sort(),
       }));`,
    ]);
    const answer = JSON.parse(seen) as {
      link: string;
      through: string[];
      hostname: string;
      root: string[];
    };
    assert.equal(answer.link, '/etc');
    const engines = ['hostname', 'hosts', 'mtab', 'resolv.conf'];
    assert.ok(
      answer.through.every((name) => engines.includes(name)),
      `the helper's /etc: ${answer.through.join(' ')}`,
    );
    assert.ok(!answer.through.includes('passwd') && !answer.through.includes('os-release'));
    const { Config } = await api.getContainer(helper).inspect();
    assert.equal(answer.hostname.trim(), Config.Hostname, 'the helper’s own host name');
    // Its root: the image's folders, and what the engine mounts in every container.
    const image = ['lib', 'lib64', 'opt', 'servers', 'tmp', 'usr'];
    const engine = ['.dockerenv', 'dev', 'etc', 'proc', 'sys'];
    assert.ok(
      answer.root.every((name) => image.includes(name) || engine.includes(name)),
      `the helper's root: ${answer.root.join(' ')}`,
    );
  });

  it('lets an idle helper go, keeps one whose handle is held, and starts another', async () => {
    const through = helpers();
    const files = remoteFiles(through, 400);
    await files.create('idle');
    await files.writeText('idle', ['a.txt'], 'abc');
    const [first] = through.running;
    assert.ok(first !== undefined);

    // An opened file holds the stream: the helper stays past the idle time.
    const file = await files.openFile('idle', ['a.txt']);
    await sleep(1200);
    assert.deepEqual(through.running, [first]);
    const chunks: Buffer[] = [];
    for await (const chunk of file.read()) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), 'abc');

    // Idle: its stdin is ended, it exits and is removed.
    await eventually(
      () => (through.running.length === 0 ? true : undefined),
      'the idle helper to be let go of',
    );
    await through.settled();
    await assert.rejects(api.getContainer(first).inspect(), { statusCode: 404 });
    // It exited at the end of its stdin: nothing was removed by force.
    assert.deepEqual(
      logged.filter((line) => line.includes('by force')),
      [],
    );
    assert.ok(logged.includes('debug file agent helper let go of'));

    // The next call starts a new one.
    assert.equal(await files.readText('idle', ['a.txt'], 10), 'abc');
    const [second] = through.running;
    assert.ok(second !== undefined && second !== first);
  });

  it('removes the helpers an earlier run left', async () => {
    // One panel, one HelperContainers per node: the helpers of another of its runs are leftovers.
    const earlier = helpers({ panelId: earlierPanelId });
    const stream = await earlier.connect('left');
    const [left] = earlier.running;
    assert.ok(left !== undefined);
    const ended = new Promise((resolve) => stream.once('end', resolve));
    stream.resume();
    const next = helpers({ panelId: earlierPanelId });
    assert.equal(await next.removeLeftovers(), 1);
    await assert.rejects(api.getContainer(left).inspect(), { statusCode: 404 });
    await ended;
    await earlier.settled();
  });

  it('fails a connect whose helper does not start in time, leaving nothing', async () => {
    const slow = helpers({ startDeadlineMs: 1 });
    await slow.image();
    const files = remoteFiles(slow);
    const refused = await rejectsWith(files.list('slow', []), 'NODE_UNREACHABLE');
    assert.match(refused.message, /did not start in time/);
    // What was made meanwhile is removed, by the step still under way when it ends.
    await slow.settled();
    const left = await api.listContainers({
      all: true,
      filters: { label: [`game-panel.panel=${panelId}`, 'game-panel.helper=slow'] },
    });
    assert.deepEqual(left, []);
    assert.deepEqual(slow.running, []);
  });

  it('refuses a node of another architecture, and a panel without its agent’s bundle', async () => {
    assert.equal(architectureProblem({ Os: 'linux', Arch: 'amd64' }, 'x64'), null);
    assert.equal(architectureProblem({ Os: 'linux', Arch: 'arm64' }, 'arm64'), null);
    assert.match(architectureProblem({ Os: 'linux', Arch: 'arm64' }, 'x64') ?? '', /arm64.*amd64/);
    assert.match(architectureProblem({ Os: 'linux', Arch: 'amd64' }, 'arm64') ?? '', /amd64/);
    assert.match(architectureProblem({ Os: 'windows', Arch: 'amd64' }, 'x64') ?? '', /Linux/);
    assert.match(architectureProblem({}, 'x64') ?? '', /architecture/);
    assert.match(architectureProblem(null, 'x64') ?? '', /architecture/);

    const missing = path.join(buildDir, 'nothing-here.mjs');
    await assert.rejects(helperImage({ agentFile: missing }), (error: unknown) => {
      assert.ok(error instanceof HelperImageError);
      assert.match(error.message, /npm run build/);
      return true;
    });
    const files = remoteFiles(
      new HelperContainers({ api, streams, panelId, userOf: () => OWNER, agentFile: missing }),
    );
    const refused = await rejectsWith(files.list('world', []), 'NODE_UNREACHABLE');
    assert.match(refused.message, /npm run build/);
  });
});
