/**
 * SFTP for tests: a panel whose SFTP server listens on a free loopback port, OpenSSH's own
 * `sftp` client run in batch mode (./sftp-batch.ts), and ssh2's client for what a batch cannot do
 * (a connection cut in the middle, a session held open).
 */
import { createServer } from 'node:net';
import { Client, type SFTPWrapper } from 'ssh2';
import { startPanel, type Scope, type TestPanel } from './app.js';

export { sftpBatch, type BatchRun, type Credential } from './sftp-batch.js';

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
