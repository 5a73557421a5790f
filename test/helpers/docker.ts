/**
 * A real Docker engine for the tests, and the test image on it; never a mock, never a pull.
 *
 * The engine is the one of DOCKER_HOST, else /var/run/docker.sock. When none answers and the
 * tests run as root where `dockerd` is installed, one is started (vfs storage, no iptables, no
 * bridge), detached, so that it outlives this test file and later files use it too; a lock file
 * keeps test files running at once from starting two. Its log is /var/tmp/game-panel-dockerd.log.
 *
 * A second engine, with a `bridge` network, is started the same way for the few cases that need
 * one (published ports): `bridgeDockerForTests`. Its own sockets, folders and subnet keep it
 * apart from the first; the test image is copied over from the first.
 *
 * The test image is made here, from this machine's files: busybox-static (sh, sleep, cat…), Node
 * with the libraries it loads, and the stand-in game server (copied at build time, so the image
 * follows the fixture), imported through the Engine API. Its tag names a hash of its content,
 * so it is built once per content.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { fileLock } from './file-lock.js';
import { engineOptions } from '../../src/host/runtime/docker/engine.js';

export type DockerForTests =
  | { readonly ok: true; readonly dockerHost: string; readonly image: string; docker: Docker }
  | { readonly ok: false; readonly why: string };

/** Where the game server is inside the test image. */
export const IMAGE_GAME_SERVER = '/srv/game-server.mjs';
export const IMAGE_NODE = '/usr/bin/node';

const LOCAL_SOCKET = 'unix:///var/run/docker.sock';
const LOCK = '/var/tmp/game-panel-docker-test.lock';
const DOCKERD_LOG = '/var/tmp/game-panel-dockerd.log';
const BUSYBOX = '/bin/busybox';
const BUSYBOX_TOOLS = ['sh', 'sleep', 'yes', 'cat', 'ls', 'echo', 'true', 'false', 'id', 'env'];

let found: Promise<DockerForTests> | undefined;
let bridged: Promise<DockerForTests> | undefined;

const BRIDGE_SOCKET = 'unix:///var/run/game-panel-test-bridge.sock';
const BRIDGE_LOG = '/var/tmp/game-panel-dockerd-bridge.log';

/**
 * A second engine, with the engine's default `bridge` network (on 172.31.251.0/24), and the test
 * image on it; or why there cannot be one here (in CI, a failure instead).
 */
export function bridgeDockerForTests(): Promise<DockerForTests> {
  bridged ??= dockerForTests().then(async (main) => {
    if (!main.ok) return main;
    const result = await findBridge(main);
    if (!result.ok && process.env.CI) {
      throw new Error(`CI must run the published-port tests, but: ${result.why}`);
    }
    return result;
  });
  return bridged;
}

async function findBridge(main: DockerForTests & { ok: true }): Promise<DockerForTests> {
  const docker = new Docker(engineOptions(BRIDGE_SOCKET, null));
  const release = await lock();
  try {
    if (!(await answers(docker))) {
      if (process.getuid?.() !== 0)
        return { ok: false, why: 'only root can start a second engine' };
      const dockerd = ['/usr/sbin/dockerd', '/usr/bin/dockerd'].find((file) => existsSync(file));
      if (dockerd === undefined) return { ok: false, why: 'dockerd is not installed' };
      const log = openSync(BRIDGE_LOG, 'a');
      const child = spawn(
        dockerd,
        [
          '--storage-driver=vfs',
          '--iptables=false',
          '--ip6tables=false',
          '--bip',
          '172.31.251.1/24',
          '--data-root',
          '/var/lib/game-panel-test-bridge',
          '--exec-root',
          '/run/game-panel-test-bridge',
          '--pidfile',
          '/run/game-panel-test-bridge.pid',
          '--host',
          BRIDGE_SOCKET,
        ],
        { detached: true, stdio: ['ignore', log, log], cwd: '/' },
      );
      child.unref();
      closeSync(log);
      if (!(await answers(docker, 30_000)))
        return { ok: false, why: `the bridge engine did not answer (see ${BRIDGE_LOG})` };
    }
    try {
      await docker.getImage(main.image).inspect();
    } catch {
      const saved = await main.docker.getImage(main.image).get();
      const loading = await docker.loadImage(saved);
      await new Promise<void>((resolve, reject) => {
        docker.modem.followProgress(loading, (error) => {
          if (error) reject(error);
          else resolve();
        });
      });
    }
    return { ok: true, dockerHost: BRIDGE_SOCKET, image: main.image, docker };
  } catch (error) {
    return { ok: false, why: `the bridge engine could not be set up: ${String(error)}` };
  } finally {
    release();
  }
}

/**
 * The engine and the test image, or why the Docker tests cannot run here. In CI (`CI` set) there
 * is no such reason: CI installs Docker, so an engine that cannot be had fails the run instead
 * of skipping the docker runtime's cases.
 */
export function dockerForTests(): Promise<DockerForTests> {
  found ??= find().then((result) => {
    if (!result.ok && process.env.CI) {
      throw new Error(`CI must run the docker runtime's tests, but: ${result.why}`);
    }
    return result;
  });
  return found;
}

/** The start command of the game server in the test image. */
export function imageGameServerCommand(...flags: string[]): string {
  return [IMAGE_NODE, IMAGE_GAME_SERVER, ...flags].map((part) => JSON.stringify(part)).join(' ');
}

async function find(): Promise<DockerForTests> {
  const given = process.env.DOCKER_HOST?.trim() ?? '';
  const dockerHost = given === '' ? LOCAL_SOCKET : given;
  const docker = new Docker(engineOptions(dockerHost, process.env.DOCKER_CERT_PATH ?? null));
  const release = await lock();
  try {
    if (!(await answers(docker))) {
      const why = await startDaemon(dockerHost);
      if (why !== null) return { ok: false, why };
      if (!(await answers(docker, 30_000)))
        return { ok: false, why: `dockerd did not answer within 30 s (see ${DOCKERD_LOG})` };
    }
    const image = await testImage(docker);
    return { ok: true, dockerHost, image, docker };
  } catch (error) {
    return { ok: false, why: `the test image could not be made: ${String(error)}` };
  } finally {
    release();
  }
}

/** Whether the engine answers a ping, asked again until `withinMs` have passed. */
export async function answers(docker: Docker, withinMs = 0): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await docker.ping();
      return true;
    } catch {
      if (Date.now() >= deadline) return false;
      await sleep(250);
    }
  }
}

/** Starts dockerd detached; null when started, else why it cannot be. */
async function startDaemon(dockerHost: string): Promise<string | null> {
  if (dockerHost !== LOCAL_SOCKET) return `the Docker engine at ${dockerHost} does not answer`;
  if (process.getuid?.() !== 0) return 'no Docker engine answers, and only root can start one';
  const dockerd = ['/usr/sbin/dockerd', '/usr/bin/dockerd'].find((file) => existsSync(file));
  if (dockerd === undefined) return 'no Docker engine answers, and dockerd is not installed';
  const log = openSync(DOCKERD_LOG, 'a');
  const child = spawn(
    dockerd,
    [
      '--storage-driver=vfs',
      '--iptables=false',
      '--ip6tables=false',
      '--bridge=none',
      '--host',
      LOCAL_SOCKET,
    ],
    { detached: true, stdio: ['ignore', log, log], cwd: '/' },
  );
  child.unref();
  closeSync(log);
  await sleep(500);
  return child.exitCode === null ? null : `dockerd exited at once (see ${DOCKERD_LOG})`;
}

/** One test file at a time finds or starts the engine and builds the image. */
const lock = (): Promise<() => void> => fileLock(LOCK, { waitMs: 180_000, staleMs: 120_000 });

/** The libraries `file` loads, as ldd lists them (the dynamic loader included). */
function librariesOf(file: string): string[] {
  const out = execFileSync('ldd', [file], { encoding: 'utf8' });
  return [...out.matchAll(/(\/\S+) \(0x/g)].map((match) => match[1] ?? '').filter(Boolean);
}

async function testImage(docker: Docker): Promise<string> {
  const fixture = fileURLToPath(new URL('../fixtures/game-server.mjs', import.meta.url));
  const node = realpathSync(process.execPath);
  const libraries = librariesOf(node);
  const hash = createHash('sha256');
  for (const file of [fixture, BUSYBOX, ...libraries]) hash.update(file).update(readFileSync(file));
  const nodeStat = statSync(node);
  hash.update(`${node}:${nodeStat.size}:${nodeStat.mtimeMs}`);
  const image = `game-panel-test:${hash.digest('hex').slice(0, 16)}`;
  return importImage(docker, image, (put, root) => {
    put(BUSYBOX, '/bin/busybox');
    for (const tool of BUSYBOX_TOOLS) symlinkSync('busybox', path.join(root, 'bin', tool));
    put(node, IMAGE_NODE);
    for (const library of libraries) put(realpathSync(library), library);
    put(fixture, IMAGE_GAME_SERVER);
  });
}

/**
 * An image with this machine's bash, beside busybox's tools: the yolks' images have bash, the
 * test image has none. Made once per content, like the test image.
 */
export async function bashImageForTests(docker: Docker): Promise<string> {
  const bash = realpathSync('/bin/bash');
  const libraries = librariesOf(bash);
  const hash = createHash('sha256');
  for (const file of [BUSYBOX, bash, ...libraries]) hash.update(file).update(readFileSync(file));
  const image = `game-panel-test-bash:${hash.digest('hex').slice(0, 16)}`;
  const release = await lock();
  try {
    return await importImage(docker, image, (put, root) => {
      put(BUSYBOX, '/bin/busybox');
      for (const tool of BUSYBOX_TOOLS) symlinkSync('busybox', path.join(root, 'bin', tool));
      put(bash, '/bin/bash');
      for (const library of libraries) put(realpathSync(library), library);
    });
  } finally {
    release();
  }
}

/**
 * Imports `image` (unless the engine has it) from a root file system that `fill` makes with
 * `put(source, target)`; `/`, `/etc`, `/home/container` and `/tmp` are made for it.
 */
async function importImage(
  docker: Docker,
  image: string,
  fill: (put: (source: string, target: string) => void, root: string) => void,
): Promise<string> {
  try {
    await docker.getImage(image).inspect();
    return image;
  } catch {
    // Not there yet: made below.
  }
  const root = mkdtempSync('/var/tmp/game-panel-image-');
  chmodSync(root, 0o755);
  try {
    const put = (source: string, target: string) => {
      mkdirSync(path.join(root, path.dirname(target)), { recursive: true });
      copyFileSync(source, path.join(root, target));
      chmodSync(path.join(root, target), statSync(source).mode & 0o755);
    };
    mkdirSync(path.join(root, 'bin'), { recursive: true });
    fill(put, root);
    for (const dir of ['tmp', 'home/container', 'etc'])
      mkdirSync(path.join(root, dir), { recursive: true });
    chmodSync(path.join(root, 'tmp'), 0o1777);
    const tar = spawn('tar', ['-C', root, '--numeric-owner', '--owner=0', '--group=0', '-c', '.'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [repo, version] = image.split(':');
    const progress = await docker.importImage(tar.stdout, { repo, tag: version });
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(progress, (error: Error | null) => {
        if (error) reject(error);
        else resolve();
      });
    });
    await docker.getImage(image).inspect();
    return image;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
