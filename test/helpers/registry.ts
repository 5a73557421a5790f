/**
 * Real container registries for the pull tests: Debian's `docker-registry` (the Distribution
 * registry), two of them on loopback, one open and one that wants a password (htpasswd, basic
 * authentication over plain HTTP: the engine takes 127.0.0.0/8 as an insecure registry). Like
 * the Docker engine of ./docker.ts they are started detached, once, so that later test files and
 * runs use them too; a lock file keeps test files running at once from starting two. Their logs
 * are /var/tmp/game-panel-registry-*.log, their storage /var/tmp/game-panel-registry/.
 *
 * Images are pushed to them through the engine's API, then their local names removed, so that
 * the engine must pull them back. A proxy in front of a registry (`RegistryProxy`) lets a test
 * hold a pull in the middle, or slow its download so that the engine reports its progress.
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
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { rememberSecret } from './app.js';
import type { DockerForTests } from './docker.js';
import { fileLock } from './file-lock.js';

/** Who may pull from the registry that wants a password, and the password. */
export const REGISTRY_USER = 'panel-puller';
export const REGISTRY_PASSWORD = 'registry-test-password-7f3a';
rememberSecret(REGISTRY_PASSWORD);

export type RegistriesForTests =
  | {
      readonly ok: true;
      /** `127.0.0.1:port` of the open registry. */
      readonly open: string;
      /** `127.0.0.1:port` of the registry that wants REGISTRY_USER and REGISTRY_PASSWORD. */
      readonly locked: string;
    }
  | { readonly ok: false; readonly why: string };

const REGISTRY = '/usr/bin/docker-registry';
const HTPASSWD = '/usr/bin/htpasswd';
const ROOT = '/var/tmp/game-panel-registry';
const LOCK = '/var/tmp/game-panel-registry.lock';
const PORTS = { open: 35_791, locked: 35_792 } as const;
const REALM = 'game-panel-test';

let found: Promise<RegistriesForTests> | undefined;

/**
 * The two registries, started if they do not answer yet; or why there cannot be any here (in
 * CI, a failure instead: CI installs docker-registry and apache2-utils).
 */
export function registriesForTests(): Promise<RegistriesForTests> {
  found ??= find().then((result) => {
    if (!result.ok && process.env.CI) {
      throw new Error(`CI must run the registry tests, but: ${result.why}`);
    }
    return result;
  });
  return found;
}

async function find(): Promise<RegistriesForTests> {
  if (!existsSync(REGISTRY)) return { ok: false, why: 'docker-registry is not installed' };
  if (!existsSync(HTPASSWD)) return { ok: false, why: 'htpasswd (apache2-utils) is not installed' };
  const open = `127.0.0.1:${PORTS.open}`;
  const locked = `127.0.0.1:${PORTS.locked}`;
  const release = await lock();
  try {
    for (const [name, address] of [
      ['open', open],
      ['locked', locked],
    ] as const) {
      const state = await registryAt(address);
      if (state === 'other') return { ok: false, why: `something else listens on ${address}` };
      if (state === 'none') {
        start(name, address);
        if ((await registryAt(address, 30_000)) === 'none') {
          return {
            ok: false,
            why: `the registry on ${address} did not answer (see /var/tmp/game-panel-registry-${name}.log)`,
          };
        }
      }
    }
    return { ok: true, open, locked };
  } finally {
    release();
  }
}

/** Whether a registry of these tests answers at `address` (`/v2/`), something else, or nothing. */
async function registryAt(address: string, withinMs = 0): Promise<'registry' | 'other' | 'none'> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      const response = await fetch(`http://${address}/v2/`);
      const api = response.headers.get('docker-distribution-api-version');
      return api === 'registry/2.0' ? 'registry' : 'other';
    } catch {
      if (Date.now() >= deadline) return 'none';
      await sleep(200);
    }
  }
}

/** Starts one registry, detached: it outlives this test file. */
function start(name: 'open' | 'locked', address: string): void {
  const folder = path.join(ROOT, name);
  mkdirSync(folder, { recursive: true });
  const auth =
    name === 'locked'
      ? `auth:\n  htpasswd:\n    realm: ${REALM}\n    path: ${path.join(folder, 'htpasswd')}\n`
      : '';
  if (name === 'locked') {
    const line = execFileSync(HTPASSWD, ['-Bbn', REGISTRY_USER, REGISTRY_PASSWORD], {
      encoding: 'utf8',
    });
    writeFileSync(path.join(folder, 'htpasswd'), line);
  }
  const config = path.join(folder, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${path.join(folder, 'data')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${address}`,
      auth,
    ].join('\n'),
  );
  const log = openSync(`/var/tmp/game-panel-registry-${name}.log`, 'a');
  const child = spawn(REGISTRY, ['serve', config], {
    detached: true,
    stdio: ['ignore', log, log],
    cwd: '/',
  });
  child.unref();
  closeSync(log);
}

/** One test file at a time finds or starts the registries. */
const lock = (): Promise<() => void> => fileLock(LOCK, { waitMs: 120_000, staleMs: 60_000 });

/** Reads a progress stream of the engine to its end; an error line fails it. */
async function finished(docker: Docker, stream: NodeJS.ReadableStream): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(stream, (error: Error | null, output: unknown[]) => {
      const failed = output.find(
        (event): event is { error: string } =>
          typeof event === 'object' && event !== null && 'error' in event,
      );
      if (error) reject(error);
      else if (failed) reject(new Error(failed.error));
      else resolve(output);
    });
  });
}

/** The engine's credentials header for a push: anonymous, or the locked registry's user. */
const pushAuth = (registry: string, withPassword: boolean) =>
  withPassword
    ? { username: REGISTRY_USER, password: REGISTRY_PASSWORD, serveraddress: registry }
    : {};

/**
 * Pushes `source` (an image on the engine) to `registry` as `repository:tag`, then removes that
 * name from the engine, which keeps `source`: a pull of it finds the layers already there.
 * Answers the reference and the digest the registry gave it.
 */
export async function pushImage(
  docker: Docker,
  source: string,
  registry: string,
  repository: string,
  tag: string,
  withPassword = false,
): Promise<{ reference: string; digest: string }> {
  const repo = `${registry}/${repository}`;
  const reference = `${repo}:${tag}`;
  await docker.getImage(source).tag({ repo, tag });
  try {
    const output = await finished(
      docker,
      await docker.getImage(reference).push({ authconfig: pushAuth(registry, withPassword) }),
    );
    const digest = output
      .map((event) => (event as { aux?: { Digest?: string } }).aux?.Digest)
      .find((value) => value !== undefined);
    if (digest === undefined) throw new Error(`the push of ${reference} gave no digest`);
    return { reference, digest };
  } finally {
    await docker.getImage(reference).remove();
  }
}

/** Where the payload image keeps its one file: 8 MiB the engine must download. */
const PAYLOAD_BYTES = 8 * 1024 * 1024;

/**
 * A small image of its own (busybox-static and 8 MiB of fixed pseudo-random bytes, one layer the
 * engine has for no other image), pushed to `registry` as `game-panel/payload:1` and then
 * removed from the engine, layer and all: pulling it downloads every byte. Its content never
 * changes, so the registry stores it once.
 */
export async function pushPayloadImage(docker: Docker, registry: string): Promise<string> {
  const repository = 'game-panel/payload';
  const local = `game-panel-payload:1`;
  const root = mkdtempSync('/var/tmp/game-panel-payload-');
  chmodSync(root, 0o755);
  try {
    mkdirSync(path.join(root, 'bin'));
    copyFileSync('/bin/busybox', path.join(root, 'bin/busybox'));
    chmodSync(path.join(root, 'bin/busybox'), 0o755);
    for (const tool of ['sh', 'sleep', 'echo', 'cat'])
      symlinkSync('busybox', path.join(root, 'bin', tool));
    mkdirSync(path.join(root, 'tmp'), { mode: 0o1777 });
    mkdirSync(path.join(root, 'home/container'), { recursive: true });
    const blocks: Buffer[] = [];
    let block = createHash('sha256').update('game-panel payload').digest();
    for (let size = 0; size < PAYLOAD_BYTES; size += block.length) {
      block = createHash('sha256').update(block).digest();
      blocks.push(block);
    }
    writeFileSync(path.join(root, 'payload'), Buffer.concat(blocks));
    const tar = spawn(
      'tar',
      [
        '-C',
        root,
        '--sort=name',
        '--mtime=@0',
        '--numeric-owner',
        '--owner=0',
        '--group=0',
        '-c',
        '.',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [repo, tag] = local.split(':');
    await finished(docker, await docker.importImage(tar.stdout, { repo, tag }));
    const { reference } = await pushImage(docker, local, registry, repository, '1');
    await docker.getImage(local).remove();
    return reference;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Removes every name the engine has for `repository` (any registry): its next pull downloads it. */
export async function removeImagesOf(docker: Docker, repository: string): Promise<void> {
  for (const image of await docker.listImages()) {
    const names = (image.RepoTags ?? []).filter((name) => name.includes(`/${repository}:`));
    for (const name of names) await docker.getImage(name).remove({ force: true });
  }
}

const BLOB = /^\/v2\/.+\/blobs\/sha256:[a-f0-9]{64}$/;

/**
 * A forwarder in front of a registry, on a loopback port of its own: the engine takes it for
 * another registry. It records every request (`GET /v2/…/manifests/1`); while held, a layer's
 * download waits before its first byte; slowed, a layer is sent in twenty pieces a tenth of a
 * second apart, so that the engine reports its progress as it goes.
 */
export class RegistryProxy {
  readonly requests: string[] = [];
  /** Layer downloads waiting while held. */
  waiting = 0;
  /** Layer downloads the client dropped before their end (its pull had ended). */
  abandoned = 0;
  slow = false;
  #held: Promise<void> | null = null;
  #release: () => void = () => undefined;
  readonly #server: Server;

  constructor(private readonly target: string) {
    this.#server = createServer((incoming, outgoing) => {
      const line = `${incoming.method ?? ''} ${incoming.url ?? ''}`;
      this.requests.push(line);
      const blob = incoming.method === 'GET' && BLOB.test(incoming.url ?? '');
      if (blob) {
        outgoing.on('close', () => {
          if (!outgoing.writableFinished) this.abandoned += 1;
        });
      }
      const forward = () => {
        if (outgoing.destroyed) return;
        const [hostname, port] = this.target.split(':');
        const upstream = request(
          {
            hostname,
            port: Number(port),
            path: incoming.url,
            method: incoming.method,
            headers: incoming.headers,
          },
          (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            if (blob && this.slow) void this.#trickle(answer, outgoing);
            else answer.pipe(outgoing);
          },
        );
        upstream.on('error', () => outgoing.destroy());
        incoming.pipe(upstream);
      };
      const held = this.#held;
      if (blob && held !== null) {
        this.waiting += 1;
        void held.then(() => {
          this.waiting -= 1;
          forward();
        });
      } else forward();
    });
  }

  /** Listens on a free loopback port; answers `127.0.0.1:port`, the registry's name for images. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Layer downloads wait from now on, until `release`. */
  hold(): void {
    this.#held ??= new Promise<void>((resolve) => {
      this.#release = resolve;
    });
  }

  release(): void {
    this.#release();
    this.#held = null;
  }

  /** How many requests so far match `pattern`. */
  count(pattern: RegExp): number {
    return this.requests.filter((line) => pattern.test(line)).length;
  }

  async close(): Promise<void> {
    this.release();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => {
      this.#server.close(() => {
        resolve();
      });
    });
  }

  async #trickle(
    answer: IncomingMessage,
    outgoing: NodeJS.WritableStream & { destroyed: boolean },
  ) {
    const chunks: Buffer[] = [];
    for await (const chunk of answer) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const piece = Math.ceil(body.length / 20);
    for (let offset = 0; offset < body.length && !outgoing.destroyed; offset += piece) {
      outgoing.write(body.subarray(offset, offset + piece));
      await sleep(100);
    }
    outgoing.end();
  }
}

/** The engine of ./docker.ts with the registries, or why the pull tests cannot run. */
export async function pullTestSetup(docker: DockerForTests): Promise<
  | {
      readonly ok: true;
      readonly docker: Docker;
      readonly image: string;
      readonly dockerHost: string;
      readonly open: string;
      readonly locked: string;
    }
  | { readonly ok: false; readonly why: string }
> {
  if (!docker.ok) return docker;
  const registries = await registriesForTests();
  if (!registries.ok) return registries;
  return {
    ok: true,
    docker: docker.docker,
    image: docker.image,
    dockerHost: docker.dockerHost,
    open: registries.open,
    locked: registries.locked,
  };
}
