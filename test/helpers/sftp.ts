/**
 * An SFTP server for the tests of the protocol (src/modules/sftp/sftp-session.ts): a real ssh2
 * `Server` on a loopback port with a fresh Ed25519 host key, any password accepted, whose
 * sessions are served by `serveSftp` over a `SessionFiles` made of the real local storage
 * (`ServerStorage` on a temporary directory). The username picks a profile: which server's
 * folder, its quota and deny list, whether the caller may write, and the session's options.
 * Clients: ssh2's `Client`, promisified here, and OpenSSH's own `sftp` in batch mode.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ssh2, { type SFTPWrapper } from 'ssh2';
import { forbidden } from '../../src/errors.js';
import { newEd25519Pair } from '../../src/modules/sftp/host-key.js';
import type { ChannelFlags, PathGuard } from '../../src/host/host.js';
import { ServerStorage } from '../../src/host/local/storage/server-storage.js';
import type { SessionFiles } from '../../src/modules/sftp/session-files.js';
import {
  serveSftp,
  SFTP_DEFAULTS,
  type SftpOptions,
  type SftpSession,
} from '../../src/modules/sftp/sftp-session.js';

const { Client, Server } = ssh2;

export const PASSWORD = 'sftp test password';

export interface Profile {
  readonly server: string;
  readonly quota?: number;
  readonly guard?: PathGuard;
  /** False: every change is refused 403 FORBIDDEN, as for a caller with `files.read` only. */
  readonly write?: boolean;
  readonly options?: Partial<Omit<SftpOptions, 'log'>>;
  /** Replaces parts of the files the session works on (failures, gates). */
  readonly files?: (files: SessionFiles) => SessionFiles;
}

export interface Logged {
  readonly level: 'warn' | 'error';
  readonly details: object;
  readonly message: string;
}

export interface SftpHarness {
  readonly port: number;
  readonly storage: ServerStorage;
  /** The host directory of a server's folder. */
  dir(server: string): string;
  /** What the sessions logged. */
  readonly logged: Logged[];
  /** Batch sizes the sessions asked `readFolder` for. */
  readonly batches: number[];
  /** The sessions served so far, newest last. */
  readonly sessions: SftpSession[];
  /** The server's side of each session (ssh2's SFTP object), newest last. */
  readonly streams: SFTPWrapper[];
  /** WRITE requests the server's SFTP objects have parsed (taken from the channel). */
  readonly writesTaken: { count: number };
  /** Requests seen, for `onActivity`. */
  readonly activity: { count: number };
  close(): Promise<void>;
}

/** The storage as a session's files, with rights, quota and deny list as `profile` says. */
function storageFiles(storage: ServerStorage, profile: Profile, batches: number[]): SessionFiles {
  const { server } = profile;
  const quota = profile.quota ?? null;
  const guard = profile.guard ?? null;
  const mayWrite = (): void => {
    if (profile.write === false) throw forbidden('You may only read these files');
  };
  const writes = (flags: ChannelFlags): boolean =>
    flags.write || flags.create || flags.truncate || flags.append;
  return {
    stat: (segments, follow) => storage.stat(server, segments, follow, guard),
    realPath: (segments) => storage.realPath(server, segments),
    open: async (segments, flags) => {
      if (writes(flags)) mayWrite();
      return storage.openChannel(server, segments, flags, quota, guard);
    },
    readFolder: (segments, batch) => {
      batches.push(batch);
      return Promise.resolve(storage.readFolder(server, segments, batch, guard));
    },
    makeFolder: async (segments) => {
      mayWrite();
      await storage.makeFolder(server, segments, guard);
    },
    removeFile: async (segments) => {
      mayWrite();
      await storage.removeFile(server, segments, guard);
    },
    removeFolder: async (segments) => {
      mayWrite();
      await storage.removeFolder(server, segments, guard);
    },
    rename: async (from, to, replace) => {
      mayWrite();
      await storage.renamePath(server, from, to, replace, guard);
    },
    readLink: (segments) => storage.readLink(server, segments, guard),
    makeLink: async (link, target) => {
      mayWrite();
      await storage.makeLink(server, link, target, guard);
    },
    setAttributes: async (segments, changes) => {
      mayWrite();
      await storage.setAttributes(server, segments, changes, quota, guard);
    },
    space: async () => {
      const disk = await statfs(storage.directoryOf(server));
      return {
        limitBytes: quota,
        usedBytes: await storage.diskUsage(server),
        diskFreeBytes: disk.bavail * disk.bsize,
        diskTotalBytes: disk.blocks * disk.bsize,
      };
    },
  };
}

export async function startSftp(profiles: Record<string, Profile>): Promise<SftpHarness> {
  const root = mkdtempSync(path.join(tmpdir(), 'panel-sftp-'));
  const storage = new ServerStorage(root);
  for (const server of new Set(Object.values(profiles).map((p) => p.server))) {
    await storage.create(server);
  }
  const logged: Logged[] = [];
  const batches: number[] = [];
  const sessions: SftpSession[] = [];
  const streams: SFTPWrapper[] = [];
  const writesTaken = { count: 0 };
  const activity = { count: 0 };
  const log = {
    warn: (details: object, message: string) => logged.push({ level: 'warn', details, message }),
    error: (details: object, message: string) => logged.push({ level: 'error', details, message }),
  };
  const hostKey = newEd25519Pair();

  const connections = new Set<{ end(): unknown }>();
  const server = new Server({ hostKeys: [hostKey.private] }, (client) => {
    connections.add(client);
    client.on('close', () => connections.delete(client));
    let profile: Profile | undefined;
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      profile = profiles[ctx.username];
      if (ctx.method === 'password' && ctx.password === PASSWORD && profile !== undefined) {
        ctx.accept();
      } else {
        ctx.reject(['password']);
      }
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('sftp', (acceptSftp) => {
          const stream: SFTPWrapper = acceptSftp();
          const chosen = profile;
          if (chosen === undefined) return;
          streams.push(stream);
          stream.on('WRITE', () => {
            writesTaken.count++;
          });
          let files = storageFiles(storage, chosen, batches);
          if (chosen.files !== undefined) files = chosen.files(files);
          sessions.push(
            serveSftp(stream, files, {
              ...SFTP_DEFAULTS,
              onActivity: () => {
                activity.count++;
              },
              ...chosen.options,
              log,
            }),
          );
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    storage,
    dir: (name) => storage.directoryOf(name),
    logged,
    batches,
    sessions,
    streams,
    writesTaken,
    activity,
    close: async () => {
      await Promise.all(sessions.map((session) => session.close()));
      // A test that failed half-way may have left its client connected.
      for (const connection of connections) connection.end();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** An ssh2 client signed in as `username`, with its SFTP session. */
export async function connect(
  port: number,
  username: string,
): Promise<{ client: InstanceType<typeof Client>; sftp: SFTPWrapper }> {
  const client = new Client();
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve).once('error', reject);
    client.connect({ host: '127.0.0.1', port, username, password: PASSWORD });
  });
  const sftp = await new Promise<SFTPWrapper>((resolve, reject) => {
    client.sftp((error, opened) => {
      if (error) reject(error);
      else resolve(opened);
    });
  });
  return { client, sftp };
}

/** An SFTP failure as the client received it: status code and the server's message. */
export interface SftpFailure {
  readonly code: number;
  readonly message: string;
}

/** Calls an ssh2 callback method; resolves its value, rejects with the status it failed with. */
export function call<T = unknown>(
  method: (callback: (error?: Error | null, value?: T) => void) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    method((error, value) => {
      if (error) reject(error);
      else resolve(value as T);
    });
  });
}

/** The status code and message a call failed with (fails the test when it succeeded). */
export async function failureOf(promise: Promise<unknown>): Promise<SftpFailure> {
  try {
    await promise;
  } catch (error) {
    const { code, message } = error as { code?: unknown; message: string };
    return { code: typeof code === 'number' ? code : -1, message };
  }
  throw new Error('the request succeeded where it should have failed');
}

/** Polls `check` until it answers something other than undefined (at most 15 s). */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs OpenSSH's `sftp` with `commands` as its batch file, in the local folder `cwd`. */
export async function openssh(
  port: number,
  username: string,
  commands: readonly string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'panel-sftp-batch-'));
  const batch = path.join(scratch, 'batch');
  writeFileSync(batch, `${commands.join('\n')}\n`);
  try {
    const child = spawn(
      'sshpass',
      [
        '-p',
        PASSWORD,
        'sftp',
        // sftp's -b turns BatchMode on, which forbids passwords; the first value given wins.
        '-o',
        'BatchMode=no',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'PubkeyAuthentication=no',
        '-o',
        'PreferredAuthentications=password',
        '-o',
        'LogLevel=ERROR',
        '-b',
        batch,
        '-P',
        String(port),
        `${username}@127.0.0.1`,
      ],
      { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stdout, stderr };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
