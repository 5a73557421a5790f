/**
 * The routed host (src/host/routed-host.ts) over two real local hosts, each on a servers folder
 * of its own and given the records of its node only, as two nodes: each server's calls reach
 * the host of the node its record names and no other; a server on a node without a host is
 * refused with 503 NODE_UNREACHABLE and touches neither; the whole-host calls reach both.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../src/errors.js';
import type { ServerHost } from '../src/host/host.js';
import { createLocalHost } from '../src/host/local/local-host.js';
import { recordsOn, RoutedHost } from '../src/host/routed-host.js';
import { createDockerRuntime } from '../src/host/runtime/docker/docker-runtime.js';
import { createProcessRuntime } from '../src/host/runtime/process/process-runtime.js';
import { SILENT_LOGGER } from '../src/log.js';
import { eventually } from './helpers/factories.js';
import { fixtureFolder, gameServerScript } from './helpers/fixture.js';
import { MemoryRecords, MemoryTemplates } from './host-port/records.js';

/** One node's host: a local host on a servers folder of its own. */
async function nodeHost(
  root: string,
  node: string,
  records: MemoryRecords,
  refuseStart?: () => Promise<void>,
): Promise<{ host: ServerHost; serversDir: string }> {
  const dataDir = path.join(root, node);
  const serversDir = path.join(dataDir, 'servers');
  await mkdir(serversDir, { recursive: true, mode: 0o711 });
  await chmod(dataDir, 0o711);
  const runtime = await createProcessRuntime({
    sandbox: 'auto',
    searchPath: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    dataDir,
    serversDir,
    serverUser: null,
    serverUidRange: { first: 200_000, last: 299_999 },
    readOnlyPaths: [fixtureFolder()],
    network: 'host',
  });
  const docker = await createDockerRuntime({
    dockerHost: 'unix:///nonexistent/docker.sock',
    panelId: node,
    network: 'none',
  });
  const host = createLocalHost({
    serversDir,
    ownUsers: false,
    userOf: () => null,
    runtimes: { process: runtime, docker },
    records: recordsOn(records, node),
    templates: new MemoryTemplates(),
    log: SILENT_LOGGER,
    now: () => new Date(),
    diskGraceSeconds: 60,
    diskUsageTtlMs: 0,
    refuseStart,
  });
  return { host, serversDir };
}

const command = (): string =>
  [process.execPath, gameServerScript()].map((part) => JSON.stringify(part)).join(' ');

/** Rejects (or throws) with the AppError `code`. */
async function refused(call: () => unknown, code: string): Promise<void> {
  await assert.rejects(
    async () => {
      await call();
    },
    (error: unknown) => error instanceof AppError && error.code === code,
  );
}

describe('routed host', () => {
  let root: string;
  const records = new MemoryRecords();
  let east: { host: ServerHost; serversDir: string };
  let west: { host: ServerHost; serversDir: string };
  let routed: RoutedHost;
  const refusedNodes: string[] = [];
  const silentNodes: string[] = [];

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'routed-host-'));
    await chmod(root, 0o711);
    // Each node's host asks about its maintenance before every start, automatic ones too.
    const maintenance = (node: string) => () =>
      refusedNodes.includes(node)
        ? Promise.reject(new AppError('NODE_MAINTENANCE', `${node} is in maintenance`))
        : Promise.resolve();
    east = await nodeHost(root, 'east', records, maintenance('east'));
    west = await nodeHost(root, 'west', records, maintenance('west'));
    routed = new RoutedHost({
      records,
      hosts: new Map([
        ['east', east.host],
        ['west', west.host],
      ]),
      refuseStart: (node) => {
        if (!refusedNodes.includes(node)) return Promise.resolve();
        return Promise.reject(new AppError('NODE_MAINTENANCE', `${node} is in maintenance`));
      },
      unreachable: (node) => silentNodes.includes(node),
    });
    records.add('e1', { startCommand: command(), node: 'east' });
    records.add('w1', { startCommand: command(), node: 'west' });
    records.add('n1', { startCommand: command(), node: 'north' });
    for (const name of ['e1', 'w1', 'n1']) await routed.create(name);
    await routed.recover();
  });
  after(async () => {
    await routed.shutdown({ stopServers: true });
    await routed.close();
    await rm(root, { recursive: true, force: true });
  });

  it('makes each server’s folder on its own node only', () => {
    assert.ok(existsSync(path.join(east.serversDir, 'e1')));
    assert.ok(!existsSync(path.join(west.serversDir, 'e1')));
    assert.ok(existsSync(path.join(west.serversDir, 'w1')));
    assert.ok(!existsSync(path.join(east.serversDir, 'w1')));
    // A node without a host here: nothing made anywhere.
    for (const dir of [east.serversDir, west.serversDir]) {
      assert.ok(!existsSync(path.join(dir, 'n1')));
    }
  });

  it('sends each server’s files to its node’s host', async () => {
    await routed.files.writeText('e1', ['where.txt'], 'east');
    await routed.files.writeText('w1', ['where.txt'], 'west');
    assert.equal(await readFile(path.join(east.serversDir, 'e1', 'where.txt'), 'utf8'), 'east');
    assert.equal(await readFile(path.join(west.serversDir, 'w1', 'where.txt'), 'utf8'), 'west');
    assert.deepEqual(
      (await routed.files.list('w1', [])).map((entry) => entry.name),
      ['where.txt'],
    );
    // A folder read in batches, through its own iterator.
    const batches: string[] = [];
    for await (const batch of routed.files.readFolder('e1', [], 10)) {
      batches.push(...batch.map((entry) => entry.name));
    }
    assert.deepEqual(batches, ['where.txt']);
    assert.equal(await routed.backupFiles.readText('e1', ['where.txt'], 100), 'east');
  });

  it('runs each server on its node’s host, and answers its state and console from there', async () => {
    await routed.start('e1');
    await eventually(() => (routed.state('e1').status === 'running' ? true : undefined), 'e1 up');
    assert.equal(east.host.state('e1').status, 'running');
    // The other host never heard of it.
    assert.equal(west.host.state('e1').status, 'stopped');
    assert.equal(routed.state('w1').status, 'stopped');
    routed.command('e1', 'say hello', 'tester');
    await eventually(
      () =>
        east.host
          .console('e1')
          .history()
          .some((line) => line.line.includes('say hello'))
          ? true
          : undefined,
      'the command in e1’s console',
    );
    assert.ok(routed.console('e1').history().length > 0);
    await routed.stop('e1');
    assert.equal(east.host.state('e1').status, 'stopped');
  });

  it('refuses every operation of a server on a node without a host, touching no other', async () => {
    await refused(() => routed.start('n1'), 'NODE_UNREACHABLE');
    await refused(() => routed.stop('n1'), 'NODE_UNREACHABLE');
    await refused(() => routed.files.list('n1', []), 'NODE_UNREACHABLE');
    await refused(() => routed.files.writeText('n1', ['x.txt'], 'x'), 'NODE_UNREACHABLE');
    await refused(() => routed.files.diskUsage('n1'), 'NODE_UNREACHABLE');
    await refused(() => routed.usage('n1'), 'NODE_UNREACHABLE');
    await refused(() => routed.console('n1'), 'NODE_UNREACHABLE');
    await refused(() => {
      routed.command('n1', 'say hi', 'tester');
    }, 'NODE_UNREACHABLE');
    const folder = routed.files.readFolder('n1', [], 10);
    await refused(() => folder.next(), 'NODE_UNREACHABLE');
    // Whether it runs there is not known.
    assert.equal(routed.state('n1').status, 'unknown');
    for (const dir of [east.serversDir, west.serversDir]) {
      assert.ok(!existsSync(path.join(dir, 'n1')));
    }
    // Its record can still go: discarding needs nothing of this machine.
    (await routed.discard('n1')).purge();
  });

  it('answers at once for a node that does not answer: its running servers unknown', async () => {
    await routed.start('w1');
    await routed.start('e1');
    silentNodes.push('west');
    try {
      assert.equal(routed.state('w1').status, 'unknown');
      assert.equal(routed.state('e1').status, 'running');
      for (const call of [
        () => routed.stop('w1'),
        () => routed.kill('w1'),
        () => routed.restart('w1'),
        () => routed.start('w1'),
        () => routed.files.list('w1', []),
        () => routed.hold('w1', 'a backup'),
      ])
        await refused(call, 'NODE_UNREACHABLE');
      // Nothing of it is known: no figures, and no waiting for them.
      assert.deepEqual(await routed.usage('w1'), { cpuPercent: 0, memoryBytes: 0, pids: 0 });
      // Its host was never asked: the server runs on there.
      assert.equal(west.host.state('w1').status, 'running');
      assert.ok((await routed.usage('e1')).pids >= 1);
    } finally {
      silentNodes.length = 0;
    }
    assert.equal(routed.state('w1').status, 'running');
    await routed.stop('w1');
    await routed.stop('e1');
  });

  it('asks the node before a start, a restart or an install reaches its host', async () => {
    refusedNodes.push('west');
    try {
      await refused(() => routed.start('w1'), 'NODE_MAINTENANCE');
      await refused(() => routed.restart('w1'), 'NODE_MAINTENANCE');
      await refused(() => routed.install('w1'), 'NODE_MAINTENANCE');
      assert.equal(west.host.state('w1').status, 'stopped');
      // Another node's servers start.
      await routed.start('e1');
      await routed.stop('e1');
    } finally {
      refusedNodes.length = 0;
    }
  });

  it('makes no automatic start on a node in maintenance, and says why', async () => {
    records.add('w2', { startCommand: command(), node: 'west', autoRestart: true });
    await routed.create('w2');
    await routed.start('w2');
    await eventually(() => (routed.state('w2').status === 'running' ? true : undefined), 'w2 up');
    refusedNodes.push('west');
    try {
      routed.command('w2', 'crash', 'tester');
      const lines = () =>
        routed
          .console('w2')
          .history()
          .map((entry) => entry.line);
      await eventually(
        () =>
          lines().some((line) => line.includes('not started: west is in maintenance'))
            ? true
            : undefined,
        'the refused restart in the console',
      );
      assert.equal(routed.state('w2').status, 'crashed');
      assert.ok(lines().includes('[panel] restarting in 1 s'));
    } finally {
      refusedNodes.length = 0;
    }
    // A person starts it once the maintenance is over.
    await routed.start('w2');
    await routed.stop('w2');
  });

  it('sends the whole-host calls to every host', async () => {
    assert.deepEqual(routed.report(), [...east.host.report(), ...west.host.report()]);
    await routed.start('e1');
    await routed.start('w1');
    await eventually(
      () =>
        east.host.state('e1').status === 'running' && west.host.state('w1').status === 'running'
          ? true
          : undefined,
      'both running',
    );
    await routed.shutdown({ stopServers: true });
    assert.equal(east.host.state('e1').status, 'stopped');
    assert.equal(west.host.state('w1').status, 'stopped');
  });
});
