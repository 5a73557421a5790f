/**
 * A real panel for the journeys: `node dist/panel.mjs` as built (what `npm start` runs), in its own process, on a free
 * loopback port and a fresh data directory under /var/tmp (mode 0711: started as root, the panel
 * runs game servers as another user, who must pass through it), removed afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface E2ePanel {
  readonly url: string;
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

async function waitForHealth(url: string, child: ChildProcess, output: () => string) {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`the panel exited at start:\n${output()}`);
    try {
      const response = await fetch(`${url}/api/health`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the panel did not answer /api/health:\n${output()}`);
}

export async function startPanel(env: Record<string, string> = {}): Promise<E2ePanel> {
  if (!existsSync('dist/panel.mjs') || !existsSync('dist/web/index.html')) {
    throw new Error('the panel is not built: run npm run build (npm run test:e2e does)');
  }
  const workDir = mkdtempSync(
    path.join(existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir(), 'panel-e2e-'),
  );
  chmodSync(workDir, 0o711);
  // A journey that must know the address before the panel starts (OpenID Connect) names its port.
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT);
  const url = `http://127.0.0.1:${port}`;
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
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await waitForHealth(url, child, output);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url,
    output,
    close,
    async api<T>(method: string, apiPath: string, body?: unknown, token?: string) {
      const response = await fetch(`${url}${apiPath}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${text}`);
      return JSON.parse(text) as T;
    },
  };
}
