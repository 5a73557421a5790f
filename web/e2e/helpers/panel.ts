/**
 * A real panel for the journeys: `node dist/panel.mjs` as built (what `npm start` runs), in its own process, on a free
 * loopback port and a fresh data directory under /var/tmp (mode 0711: started as root, the panel
 * runs game servers as another user, who must pass through it), removed afterwards. Given
 * TLS_CERT_FILE, it is reached over https, trusting the `ca` it is handed. Its SFTP server is off
 * unless asked for (`sftp`): then it listens on a free loopback port of its own (docs/sftp.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface E2ePanel {
  readonly url: string;
  /** The port its SFTP server listens on at 127.0.0.1; null: SFTP is off. */
  readonly sftpPort: number | null;
  /** The panel's output so far, for a failure's message. */
  output(): string;
  /** A JSON request to the panel's API, as a script would make it. */
  api<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<T>;
  close(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (typeof address === 'object' && address !== null) resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

/**
 * One request: `fetch` over http, node:https trusting `ca` over https (fetch takes no CA of its
 * own). Answers the status and the body's text.
 */
function send(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  ca: Buffer | undefined,
): Promise<{ status: number; text: string }> {
  if (ca === undefined) {
    return fetch(url, init).then(async (response) => ({
      status: response.status,
      text: await response.text(),
    }));
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: init.method, headers: init.headers, ca },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, text });
        });
      },
    );
    req.once('error', reject);
    req.end(init.body);
  });
}

async function waitForHealth(
  url: string,
  child: ChildProcess,
  output: () => string,
  ca: Buffer | undefined,
) {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`the panel exited at start:\n${output()}`);
    try {
      const response = await send(`${url}/api/health`, { method: 'GET', headers: {} }, ca);
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the panel did not answer /api/health:\n${output()}`);
}

export interface PanelOptions {
  readonly ca?: Buffer;
  /** SFTP on, at 127.0.0.1 on a free port (the panel has no port 0 for it: 0 turns it off). */
  readonly sftp?: boolean;
}

export async function startPanel(
  env: Record<string, string> = {},
  options: PanelOptions = {},
): Promise<E2ePanel> {
  if (options.sftp !== true) return launch(env, options.ca, null);
  // Another process may take the port between freePort and the panel's listen: try a few.
  for (let attempt = 0; ; attempt += 1) {
    const sftpPort = await freePort();
    try {
      return await launch(env, options.ca, sftpPort);
    } catch (error) {
      if (attempt >= 3 || !String(error).includes('EADDRINUSE')) throw error;
    }
  }
}

async function launch(
  env: Record<string, string>,
  ca: Buffer | undefined,
  sftpPort: number | null,
): Promise<E2ePanel> {
  if (!existsSync('dist/panel.mjs') || !existsSync('dist/web/index.html')) {
    throw new Error('the panel is not built: run npm run build (npm run test:e2e does)');
  }
  const workDir = mkdtempSync(
    path.join(existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir(), 'panel-e2e-'),
  );
  chmodSync(workDir, 0o711);
  // A journey that must know the address before the panel starts (OpenID Connect) names its port.
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT);
  const url = `${env.TLS_CERT_FILE ? 'https' : 'http'}://127.0.0.1:${port}`;
  let log = '';
  const child = spawn(process.execPath, ['dist/panel.mjs'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      // No configuration file: neither /etc/game-panel/panel.env nor a checkout's .env leaks in.
      PANEL_CONFIG: '/dev/null',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: path.join(workDir, 'data'),
      LOG_LEVEL: 'warn',
      // Journeys make several accounts from one address: registration is open and unlimited
      // unless a journey sets these ('' for the panel's defaults, as web/e2e/settings.e2e.ts).
      REGISTRATION: 'open',
      REGISTRATION_MAX_PER_ADDRESS: '100000',
      // Journeys run side by side: no SFTP server on the one port 2022 unless one asks.
      SFTP_PORT: String(sftpPort ?? 0),
      ...(sftpPort === null ? {} : { SFTP_ADDRESS: '127.0.0.1' }),
      TICKETS_PER_HOUR: '100000',
      TICKET_MESSAGES_PER_HOUR: '100000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
  }
  const output = () => log;
  const close = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // SIGUSR2: the panel stops its game servers before it exits (on SIGTERM they would run
      // on, as they do in production), so that a journey leaves nothing running.
      child.kill('SIGUSR2');
      await exited;
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await waitForHealth(url, child, output, ca);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url,
    sftpPort,
    output,
    close,
    async api<T>(method: string, apiPath: string, body?: unknown, token?: string) {
      const response = await send(
        `${url}${apiPath}`,
        {
          method,
          headers: {
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        },
        ca,
      );
      if (response.status < 200 || response.status > 299) {
        throw new Error(`${method} ${apiPath}: ${response.status} ${response.text}`);
      }
      return JSON.parse(response.text) as T;
    },
  };
}
