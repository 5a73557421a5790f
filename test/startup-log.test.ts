/**
 * What the panel says at start about how servers run: the truth for each SANDBOX mode (not
 * "install bubblewrap" when it is installed and turned off on purpose), who servers run as, a
 * data directory that was open to others, and, last, the line for the person who started it.
 * Then what it logs of each request.
 */
import assert from 'node:assert/strict';
import { chmodSync, statSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { describe, it } from 'node:test';
import { loadConfig as loadConfigPure } from '../src/config.js';
import { findBubblewrap } from '../src/host/runtime/process/sandbox.js';
import { logFormatOf } from '../src/http/logging.js';
import { openLine } from '../src/start-message.js';
import {
  rememberSecret,
  startPanel,
  testEnvironment,
  type Scope,
  type TestPanel,
} from './helpers/app.js';
import { spawnPanel, startPanelProcess } from './helpers/panel-process.js';

const BWRAP = findBubblewrap(process.env.PATH ?? '') !== null;
const ROOT = process.getuid?.() === 0;

async function startLog(t: Scope, env: Record<string, string>): Promise<string[]> {
  const lines: string[] = [];
  const panel = await startPanel(
    t,
    { LOG_LEVEL: 'info', ...env },
    { logStream: { write: (line: string) => lines.push(line) } },
  );
  await panel.close();
  return lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
}

describe('the start-up log', () => {
  it(
    'says SANDBOX=none turned the sandbox off, not that bubblewrap is missing',
    {
      skip: BWRAP ? false : 'bubblewrap is not installed here',
    },
    async (t) => {
      const said = (await startLog(t, { SANDBOX: 'none' })).join('\n');
      assert.match(said, /WITHOUT a sandbox \(SANDBOX=none\)/);
      assert.doesNotMatch(said, /install bubblewrap/);
    },
  );

  it('names the users servers run as (one uid each as root), never root', async (t) => {
    const said = (await startLog(t, {})).join('\n');
    if (ROOT)
      assert.match(said, /servers run each as a uid of its own \(200000 \+ the server's id/);
    else assert.match(said, /servers run as the panel's own user .*, all of them/);
    assert.doesNotMatch(said, /uid 0\)/);
  });

  it('warns about, and tightens, a data directory that others could read', async (t) => {
    const lines: string[] = [];
    const first = await startPanel(t, {});
    const dataDir = first.dataDir;
    await first.app.close();
    chmodSync(dataDir, 0o755);
    const { loadConfig } = await import('../src/config.js');
    const { buildApp } = await import('../src/app.js');
    const app = await buildApp(
      loadConfig({
        ...process.env,
        ...(first.config.database.kind === 'sqlite'
          ? {}
          : { DATABASE_URL: first.config.database.url }),
        DATA_DIR: dataDir,
        JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256!',
        LOG_LEVEL: 'info',
      }),
      {
        logStream: { write: (line: string) => lines.push(line) },
      },
    );
    try {
      await app.ready();
      assert.ok(
        lines.some((line) => line.includes('was open to others (mode 0755)')),
        lines.join('\n'),
      );
      assert.equal(statSync(dataDir).mode & 0o077, ROOT ? 0o011 : 0);
    } finally {
      await app.close();
      await first.close();
    }
  });
});

describe('the start-up log for people', () => {
  const config = (env: Record<string, string> = {}) =>
    loadConfigPure({ DATA_DIR: '/srv/panel', ...env }, false);

  it('ends with where to open the panel and, with no account yet, who becomes the admin', () => {
    const at = 'http://127.0.0.1:40123';
    assert.equal(
      openLine(config({ PORT: '0' }), at, false),
      "Open http://127.0.0.1:40123/ and create the first account: it becomes the panel's admin.",
    );
    assert.equal(
      openLine(config(), 'http://127.0.0.1:8000', true),
      'Open http://127.0.0.1:8000/ to use the panel.',
    );
    assert.equal(
      openLine(config({ PUBLIC_URL: 'https://panel.example/' }), at, true),
      'Open https://panel.example/ to use the panel.',
    );
    assert.match(
      openLine(config({ HOST: '0.0.0.0', PORT: '0' }), 'http://0.0.0.0:40123', true),
      /^Open http:\/\/<this machine's address>:40123\/ \(set PUBLIC_URL/,
    );
    assert.match(
      openLine(config({ REGISTRATION: 'closed' }), at, false),
      /no account exists yet and REGISTRATION=closed, so make the admin with: npm run cli -- user create <name> --admin$/,
    );
  });

  it('is its last line, as the panel runs', async (t) => {
    const { env, cleanup } = await testEnvironment();
    t.after(cleanup);
    const children: ChildProcess[] = [];
    t.after(() => {
      for (const child of children) child.kill('SIGKILL');
    });
    const panel = await startPanelProcess(env, (child) => children.push(child));
    for (let waited = 0; !panel.output().includes('Open http'); waited += 50) {
      assert.ok(waited < 30_000, panel.output());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const messages = panel
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg)
      .filter((msg) => msg !== 'removed the leftovers of an earlier run');
    assert.equal(
      messages.at(-1),
      `Open ${panel.url}/ and create the first account: it becomes the panel's admin.`,
    );
    assert.ok(messages.includes('configuration read from /dev/null'), messages.join('\n'));
  });
});

describe('request log lines', () => {
  interface Line {
    level: number;
    msg: string;
    req?: { url: string };
    res?: { statusCode: number };
    responseTime?: number;
  }

  async function logOf(t: Scope, level: string, requests: (panel: TestPanel) => Promise<void>) {
    const lines: Line[] = [];
    const panel = await startPanel(
      t,
      { LOG_LEVEL: level },
      { logStream: { write: (line: string) => lines.push(JSON.parse(line) as Line) } },
    );
    lines.length = 0;
    await requests(panel);
    return lines.filter((line) => line.req !== undefined || line.msg.includes('request'));
  }

  const requests = async ({ app }: TestPanel) => {
    const registered = await app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { username: 'logged', password: 'a long enough password' },
    });
    const token = registered.json<{ access_token: string }>().access_token;
    rememberSecret(token);
    await app.inject({ method: 'GET', url: '/api/health' });
    await app.inject({
      method: 'GET',
      url: '/api/servers',
      headers: { authorization: `Bearer ${token}` },
    });
    await app.inject({ method: 'GET', url: `/api/nothing?token=${token}` });
  };

  it('writes one line per request once answered, and none at info for polling', async (t) => {
    const lines = await logOf(t, 'info', requests);
    assert.deepEqual(
      lines.map((line) => [line.level, line.msg.replace(/\d+ ms$/, 'N ms')]),
      [
        [30, 'POST /api/auth/register 200 N ms'],
        [30, 'GET /api/nothing?token=%5Bredacted%5D 404 N ms'],
      ],
    );
    const first = lines[0];
    assert.ok(first);
    assert.equal(first.res?.statusCode, 200);
    assert.equal(typeof first.responseTime, 'number');
  });

  it('writes the polled requests at debug', async (t) => {
    const lines = await logOf(t, 'debug', requests);
    const polled = lines.filter((line) => line.level === 20).map((line) => line.msg);
    assert.deepEqual(
      polled.map((msg) => msg.replace(/\d+ ms$/, 'N ms')),
      ['GET /api/health 200 N ms', 'GET /api/servers 200 N ms'],
    );
  });

  it('writes lines for people with LOG_FORMAT=pretty, JSON by default off a terminal', async () => {
    assert.equal(logFormatOf('auto', { isTTY: true }), 'pretty');
    assert.equal(logFormatOf('auto', {}), 'json');
    assert.equal(logFormatOf('json', { isTTY: true }), 'json');
    assert.equal(logFormatOf('pretty', {}), 'pretty');
    const { env, cleanup } = await testEnvironment();
    const children: ChildProcess[] = [];
    try {
      const child = spawnPanel({ ...env, LOG_FORMAT: 'pretty', LOG_LEVEL: 'info', PORT: '0' });
      children.push(child);
      let output = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (/INFO.*Open http/.test(output)) resolve();
        });
        child.once('exit', () => {
          reject(new Error(output));
        });
      });
      assert.match(output, /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] INFO: configuration read from/m);
      assert.ok(!output.includes('{"level"'), output);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await cleanup();
    }
  });
});
