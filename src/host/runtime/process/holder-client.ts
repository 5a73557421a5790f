/**
 * The panel's side of a server's holder (holder/holder.mjs): starting one, connecting to it, and
 * the messages and output frames that come back. The holder keeps the server's pipes while the
 * panel is away; this module never decides what to do with a server, only how to talk to it.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { chown, mkdir, open, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { PANEL_ROOT } from '../../../paths.js';
import {
  KIND_MESSAGE,
  KIND_STDERR,
  PROTOCOL_VERSION,
  frameReader,
  messageFrame,
  type HolderMessage,
  type HolderRequest,
} from './holder/protocol.mjs';
import { withDeadline } from '../deadline.js';
import type { OutputStream } from '../runtime.js';

export { PROTOCOL_VERSION } from './holder/protocol.mjs';
export type { HolderExit, HolderMessage } from './holder/protocol.mjs';

const HOLDER_SCRIPT_NAME = 'holder.mjs';
const HOLDER_SCRIPT = path.join(PANEL_ROOT, 'src/host/runtime/process/holder', HOLDER_SCRIPT_NAME);

/**
 * Node's own settings for a holder: its heap small (it keeps output in buffers outside it), one
 * V8 worker thread and one libuv worker thread, so that it costs the server about 8 MiB and 5 of
 * its processes (the holder runs in the server's cgroup: docs/runtimes.md).
 */
const HOLDER_NODE_OPTIONS = [
  '--v8-pool-size=1',
  '--max-semi-space-size=1',
  '--max-old-space-size=16',
];
const HOLDER_ENV = { UV_THREADPOOL_SIZE: '1' };

/** How long a holder may take to listen, and to answer. */
const HOLDER_READY_MS = 10_000;

/**
 * The folder of a server's holder: `<dataDir>/run/<hash of the name>` (a hash, so that the socket
 * path stays far below the 108 bytes a Unix socket's path may have, whatever the name).
 */
export function holderFolder(dataDir: string, name: string): string {
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 16);
  return path.join(dataDir, 'run', hash);
}

export const holderSocket = (folder: string): string => path.join(folder, 'holder.sock');

/**
 * Makes the holder's folder, the server user's alone (0700): only that user and the panel reach
 * its socket. `run` itself is the panel's, passable by the servers' users.
 */
export async function makeHolderFolder(
  folder: string,
  user: { readonly uid: number; readonly gid: number } | null,
): Promise<void> {
  await mkdir(path.dirname(folder), { recursive: true, mode: user === null ? 0o700 : 0o711 });
  await removeHolderFolder(folder);
  await mkdir(folder, { mode: 0o700 });
  if (user !== null) await chown(folder, user.uid, user.gid);
}

/** What a holder's folder holds: its socket, and the log of its own errors. */
const HOLDER_FILES = ['holder.sock', 'holder.log'];

/**
 * Removes a holder's folder. The folder belongs to the server's user, who may have put anything
 * there (a server without a sandbox runs as that user), so nothing is removed recursively, which
 * a folder swapped for a link meanwhile could lead astray: the holder's own files are unlinked
 * (never followed), and a folder still not empty is moved aside, out of the server's way, into
 * `run/` (the panel's), where it stays.
 */
export async function removeHolderFolder(folder: string): Promise<void> {
  for (const file of HOLDER_FILES) await rm(path.join(folder, file), { force: true });
  try {
    await rmdir(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    await rename(folder, `${folder}.left-${Date.now()}`);
  }
}

/**
 * Starts a holder, detached from the panel (a session of its own), and waits until it listens.
 * A root panel passes the server's user, which the holder drops to at once; it gets nothing of
 * the panel's environment. Its own errors go to `holder.log` in its folder.
 */
export async function spawnHolder(
  folder: string,
  user: { readonly uid: number; readonly gid: number } | null,
  env: Readonly<Record<string, string>>,
): Promise<number> {
  // 'ax': made here, never an existing file or a link the server's user put in its place.
  const log = await open(path.join(folder, 'holder.log'), 'ax', 0o600);
  try {
    const child = spawn(
      process.execPath,
      [
        ...HOLDER_NODE_OPTIONS,
        HOLDER_SCRIPT,
        folder,
        ...(user === null ? [] : [String(user.uid), String(user.gid)]),
      ],
      {
        cwd: folder,
        env: { ...env, ...HOLDER_ENV },
        detached: true,
        stdio: ['ignore', log.fd, log.fd, 'pipe'],
      },
    );
    const ready = child.stdio[3];
    if (!ready) throw new Error('the holder has no ready pipe');
    let said = '';
    const listening = new Promise<void>((resolve, reject) => {
      ready.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (said.includes('ready\n')) resolve();
      });
      ready.on('error', () => undefined);
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        reject(new Error(`the holder ended at once (${code ?? signal ?? 'unknown'})`));
      });
    });
    await withDeadline(
      listening,
      HOLDER_READY_MS,
      late('the holder did not start listening', HOLDER_READY_MS),
    );
    // The panel neither waits for it nor keeps it: it lives on without the panel.
    ready.destroy();
    child.removeAllListeners();
    child.unref();
    if (child.pid === undefined) throw new Error('the holder has no pid');
    return child.pid;
  } finally {
    await log.close();
  }
}

/** A connection to a holder: its greeting, then messages and output as they come. */
export interface HolderConnection {
  readonly hello: Extract<HolderMessage, { type: 'hello' }>;
  send(request: HolderRequest): boolean;
  /** Every message after the greeting, and every chunk of output, until the connection ends. */
  listen(handlers: {
    message(message: HolderMessage): void;
    output(chunk: Buffer, stream: OutputStream): void;
    /** The connection ended (the holder is gone, or `close` was called). */
    closed(): void;
  }): void;
  close(): void;
  readonly closed: boolean;
}

/**
 * Connects to the holder listening at `socketPath`; rejects when none answers (ENOENT,
 * ECONNREFUSED), or it speaks another version of the protocol.
 */
export async function connectHolder(socketPath: string): Promise<HolderConnection> {
  const socket = connect(socketPath);
  socket.on('error', () => undefined);
  await withDeadline(
    Promise.race([
      once(socket, 'connect'),
      once(socket, 'error', {}).then(([error]: unknown[]) => {
        throw error;
      }),
    ]),
    HOLDER_READY_MS,
    late('the holder did not answer', HOLDER_READY_MS),
  ).catch((error: unknown) => {
    socket.destroy();
    throw error;
  });
  return greeted(socket);
}

function greeted(socket: Socket): Promise<HolderConnection> {
  type Handlers = Parameters<HolderConnection['listen']>[0];
  let handlers: Handlers | null = null;
  const early: [number, Buffer][] = [];
  let ended = false;
  return new Promise<HolderConnection>((resolve, reject) => {
    let hello: Extract<HolderMessage, { type: 'hello' }> | null = null;
    const deliver = (kind: number, payload: Buffer): void => {
      if (!handlers) {
        early.push([kind, payload]);
        return;
      }
      if (kind !== KIND_MESSAGE) {
        handlers.output(payload, kind === KIND_STDERR ? 'stderr' : 'stdout');
        return;
      }
      const message = parse(payload);
      if (message !== null) handlers.message(message);
    };
    const reader = frameReader(
      (kind, payload) => {
        if (hello === null) {
          const message = kind === KIND_MESSAGE ? parse(payload) : null;
          if (message?.type !== 'hello' || message.version !== PROTOCOL_VERSION) {
            socket.destroy();
            reject(new Error('the holder speaks another protocol'));
            return;
          }
          hello = message;
          resolve(connection(hello));
          return;
        }
        deliver(kind, payload);
      },
      () => socket.destroy(),
    );
    socket.on('data', (chunk: Buffer) => {
      reader.push(chunk);
    });
    socket.once('close', () => {
      ended = true;
      if (hello === null) reject(new Error('the holder closed the connection'));
      handlers?.closed();
    });
    setTimeout(() => {
      if (hello === null) {
        socket.destroy();
        reject(new Error('the holder did not greet'));
      }
    }, HOLDER_READY_MS).unref();

    const connection = (greeting: Extract<HolderMessage, { type: 'hello' }>): HolderConnection => ({
      hello: greeting,
      send(request) {
        if (socket.destroyed || !socket.writable) return false;
        socket.write(messageFrame(request));
        return true;
      },
      listen(given) {
        handlers = given;
        for (const [kind, payload] of early.splice(0)) deliver(kind, payload);
        if (ended) given.closed();
      },
      close() {
        socket.destroy();
      },
      get closed() {
        return ended || socket.destroyed;
      },
    });
  });
}

/**
 * Whether the holder that answered at `folder`'s socket is the one of that folder: a holder
 * started for that folder (its command line, which /proc shows to anyone), running as the
 * folder's owner. The socket sits in a folder the
 * server's user may write, so a server without a sandbox could put a link to another server's
 * socket in its place: nothing is sent to a holder that fails this.
 */
export async function holderOf(folder: string, connection: HolderConnection): Promise<boolean> {
  const pid = connection.hello.holder;
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    const [owner, cmdline, status] = await Promise.all([
      stat(folder),
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
      readFile(`/proc/${pid}/status`, 'utf8'),
    ]);
    const args = cmdline.split('\0');
    const script = args.findIndex(
      (arg) => arg === HOLDER_SCRIPT_NAME || arg.endsWith(`/${HOLDER_SCRIPT_NAME}`),
    );
    const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    return script >= 0 && args[script + 1] === folder && Number(uid) === owner.uid;
  } catch {
    return false;
  }
}

function parse(payload: Buffer): HolderMessage | null {
  try {
    return JSON.parse(payload.toString('utf8')) as HolderMessage;
  } catch {
    return null;
  }
}

/** The error of a holder that took longer than `ms` to do `what`. */
const late = (what: string, ms: number) => (): Error => new Error(`${what} within ${ms / 1000} s`);
