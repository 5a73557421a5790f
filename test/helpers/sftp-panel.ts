/**
 * SFTP for tests: a panel whose SFTP server listens on a free loopback port, OpenSSH's own
 * `sftp` client run in batch mode (with `sshpass` for passwords, or a key), and ssh2's client for
 * what a batch cannot do (a connection cut in the middle, a session held open).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, type SFTPWrapper } from 'ssh2';
import { startPanel, type Scope, type TestPanel } from './app.js';

/** A loopback port nobody listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  return port;
}

/** A panel with SFTP on a port of its own; answers the panel and the port. */
export async function startSftpPanel(
  scope: Scope,
  env: Record<string, string> = {},
): Promise<{ panel: TestPanel; port: number }> {
  // Another panel may take the port between freePort and listen: try a few.
  for (let attempt = 0; ; attempt += 1) {
    const port = await freePort();
    try {
      const panel = await startPanel(scope, {
        SFTP_PORT: String(port),
        SFTP_ADDRESS: '127.0.0.1',
        ...env,
      });
      return { panel, port };
    } catch (error) {
      if (attempt >= 3 || !String(error).includes('EADDRINUSE')) throw error;
    }
  }
}

export interface BatchRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Credential {
  readonly password?: string;
  /** A private key file (mode 0600). */
  readonly identity?: string;
}

/**
 * Runs `commands` with OpenSSH's `sftp -b` as `login` from `cwd`. Batch mode stops at the first
 * failing command (prefix one with `-` to go on), and the exit code says whether all passed.
 */
export async function sftpBatch(
  port: number,
  login: string,
  credential: Credential,
  commands: readonly string[],
  cwd: string,
): Promise<BatchRun> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sftp-batch-'));
  const batch = path.join(dir, 'batch');
  await writeFile(batch, `${commands.join('\n')}\n`);
  const options = [
    // Before -b, so that it wins over the BatchMode=yes that -b sets: sshpass types the password.
    ...(credential.password === undefined ? [] : ['-o', 'BatchMode=no']),
    '-b',
    batch,
    '-P',
    String(port),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    // INFO, not less: OpenSSH shows the server's banner (why a sign-in was refused) only then.
    '-o',
    'LogLevel=INFO',
    '-o',
    'ConnectTimeout=20',
    ...(credential.identity === undefined
      ? ['-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password']
      : [
          '-i',
          credential.identity,
          '-o',
          'IdentitiesOnly=yes',
          '-o',
          'PreferredAuthentications=publickey',
        ]),
    `${login}@127.0.0.1`,
  ];
  const [command, args] =
    credential.password === undefined
      ? ['sftp', options]
      : ['sshpass', ['-p', credential.password, 'sftp', ...options]];
  try {
    return await new Promise<BatchRun>((resolve, reject) => {
      const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('error', reject);
      child.on('close', (code) => {
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An ssh2 client signed in with a password, and its SFTP channel. */
export async function sftpClient(
  port: number,
  username: string,
  password: string,
): Promise<{ client: Client; sftp: SFTPWrapper; closed: Promise<void> }> {
  const client = new Client();
  const closed = new Promise<void>((resolve) => {
    client.once('close', () => {
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => {
      resolve();
    });
    client.once('error', reject);
    client.connect({ host: '127.0.0.1', port, username, password, readyTimeout: 30_000 });
  });
  client.on('error', () => undefined);
  const sftp = await new Promise<SFTPWrapper>((resolve, reject) => {
    client.sftp((error, channel) => {
      if (error) reject(error);
      else resolve(channel);
    });
  });
  return { client, sftp, closed };
}

/** ssh2's callback calls, as promises. */
export const call = <T>(
  run: (done: (error: Error | null | undefined, value?: T) => void) => void,
) =>
  new Promise<T>((resolve, reject) => {
    run((error, value) => {
      if (error) reject(error);
      else resolve(value as T);
    });
  });
