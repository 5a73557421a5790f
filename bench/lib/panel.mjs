// Starts the built panel (dist/panel.mjs, what `npm start` runs) as a separate process on loopback with its own data
// directory, and talks to its HTTP API.
import { spawn } from 'node:child_process'; // eslint-disable-line no-restricted-imports -- the panel runs as its own process
import { createHash } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { freePort, nowMs, sleep, stopChild } from './util.mjs';

export const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** Every child process the benchmark started, ended at exit whatever happens. */
export const children = new Set();

/** Spawns `command`, tracked for clean-up. */
export function spawnTracked(command, args, options = {}) {
  const child = spawn(command, args, options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Spawns `args` with Node, tracked for clean-up. */
export const spawnNode = (args, options = {}) => spawnTracked(process.execPath, args, options);

/**
 * The panel's environment: only what it needs, so a DATABASE_URL or JWT_SECRET of the person
 * running the benchmark never reaches it (it always runs on a fresh SQLite database).
 */
function panelEnv({ port, dataDir, logLevel, readOnlyPaths, sftpPort = 0 }) {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    // No configuration file: the bench measures the panel as set here, whatever the machine has.
    PANEL_CONFIG: '/dev/null',
    LANG: 'C.UTF-8',
    HOST: '127.0.0.1',
    PORT: String(port),
    // SFTP only for the scenario that measures it (a port of its own).
    SFTP_PORT: String(sftpPort),
    DATA_DIR: dataDir,
    LOG_LEVEL: logLevel,
    // The seed opens 100 tickets per user within seconds (scenarios/seed.mjs); by default a user
    // may open 10 an hour.
    TICKETS_PER_HOUR: '1000',
    ...(readOnlyPaths.length > 0 ? { SANDBOX_READ_ONLY_PATHS: readOnlyPaths.join(':') } : {}),
    ...(process.env.BENCH_SANDBOX ? { SANDBOX: process.env.BENCH_SANDBOX } : {}),
  };
}

/** GET `path` once; resolves with the status, or null when nothing answers yet. */
export function probe(port, urlPath, timeoutMs = 1_000) {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: urlPath, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
        res.on('error', () => resolve(null));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

/**
 * Starts the panel and waits for the first 200 of /api/health, polling every `pollMs`.
 * `startupMs` is the time from just before spawn to that answer. `readOnlyPaths` are shown to
 * sandboxed servers (the line printer's folder). `sftpPort` (0: none) is where its SFTP server
 * listens, on loopback as the panel does.
 */
export async function startPanel({
  dataDir,
  logFile,
  logLevel = 'info',
  nodeArgs = [],
  readOnlyPaths = [],
  sftpPort = 0,
  pollMs = 2,
  timeoutMs = 30_000,
}) {
  const port = await freePort();
  const log = openSync(logFile, 'a');
  const started = nowMs();
  const child = spawnNode([...nodeArgs, path.join(REPO, 'dist', 'panel.mjs')], {
    cwd: REPO,
    env: panelEnv({ port, dataDir, logLevel, readOnlyPaths, sftpPort }),
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let exited = null;
  child.once('exit', (code, signal) => {
    exited = { code, signal };
  });
  for (;;) {
    if (exited) {
      throw new Error(`the panel exited during start (${JSON.stringify(exited)}); see ${logFile}`);
    }
    if ((await probe(port, '/api/health', 500)) === 200) break;
    if (nowMs() - started > timeoutMs) {
      await stopChild(child, 2_000);
      throw new Error(`the panel did not answer /api/health within ${timeoutMs} ms`);
    }
    await sleep(pollMs);
  }
  const startupMs = nowMs() - started;
  return { child, pid: child.pid, port, sftpPort, startupMs, api: new Api(port) };
}

/** A JSON client for the panel's API, with an optional bearer token. */
export class Api {
  constructor(port, token = null) {
    this.port = port;
    this.token = token;
  }

  as(token) {
    return new Api(this.port, token);
  }

  /** Resolves with { status, body, headers, raw }; never throws on an HTTP status. */
  request(method, urlPath, body, { timeoutMs = 60_000 } = {}) {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers = {};
      if (payload) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = payload.length;
      }
      if (this.token) headers.authorization = `Bearer ${this.token}`;
      const req = httpRequest(
        { host: '127.0.0.1', port: this.port, method, path: urlPath, headers, timeout: timeoutMs },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const raw = Buffer.concat(chunks);
            let parsed;
            try {
              parsed = JSON.parse(raw.toString('utf8'));
            } catch {
              parsed = undefined;
            }
            resolve({ status: res.statusCode, body: parsed, headers: res.headers, raw });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no answer in time`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Like request, but throws unless the status is `expected`. */
  async call(method, urlPath, body, expected = 200) {
    const res = await this.request(method, urlPath, body);
    if (res.status !== expected) {
      throw new Error(
        `${method} ${urlPath} answered ${res.status}: ${res.raw.toString('utf8').slice(0, 300)}`,
      );
    }
    return res.body;
  }
}

/** What the panel's log says about the run: the sandbox, warnings and errors by message. */
export function summariseLog(file) {
  const summary = { sandbox: null, stalledConsoleSocketsClosed: 0, warningsAndErrors: {} };
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return summary;
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry.msg === 'string' && entry.msg.startsWith('servers run')) {
      summary.sandbox = entry.msg;
    }
    if (entry.msg === 'closed a console socket that read nothing while data waited') {
      summary.stalledConsoleSocketsClosed += 1;
    }
    if (entry.level >= 40) {
      const key = `${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg}`;
      summary.warningsAndErrors[key] = (summary.warningsAndErrors[key] ?? 0) + 1;
    }
  }
  return summary;
}

/** GETs `urlPath`, hashing the bytes; resolves with the status, the byte count and the sha256. */
export function downloadHashed({ port, token, urlPath }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: urlPath, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const hash = createHash('sha256');
        let bytes = 0;
        res.on('data', (chunk) => {
          bytes += chunk.length;
          hash.update(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode, bytes, sha256: hash.digest('hex') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
