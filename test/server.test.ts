/**
 * The panel as an operator runs it: a separate process started from src/server.ts, listening on
 * HOST/PORT, refusing a bad setting with one line, and closing cleanly on SIGINT and SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { testEnvironment } from './helpers/app.js';

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
}

function run(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts the panel on a free port and waits for its "listening" log line. */
async function start(env: Record<string, string>): Promise<Running> {
  const child = run({ ...env, PORT: '0', LOG_LEVEL: 'info' });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      reject(new Error(`panel exited with ${code}: ${output}`));
    });
  });
  return { child, url, output: () => output };
}

describe('npm start', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await testEnvironment());
  });
  after(() => cleanup());

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`serves on HOST/PORT and exits 0 on ${signal}`, async () => {
      const panel = await start(env);
      const health = await fetch(`${panel.url}/api/health`);
      assert.equal(health.status, 200);
      assert.deepEqual(((await health.json()) as { data: unknown }).data, {
        status: 'ok',
        version: '0.1.0',
      });
      const exited = once(panel.child, 'exit');
      panel.child.kill(signal);
      const [code] = (await exited) as [number | null];
      assert.equal(code, 0, panel.output());
      await assert.rejects(fetch(`${panel.url}/api/health`));
    });
  }

  it('keeps data across restarts', async () => {
    const first = await start(env);
    const registered = await fetch(`${first.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'persistent', password: 'long enough' }),
    });
    assert.equal(registered.status, 200);
    const { access_token: token } = (await registered.json()) as { access_token: string };
    first.child.kill('SIGTERM');
    await once(first.child, 'exit');

    const second = await start(env);
    try {
      const me = await fetch(`${second.url}/api/auth/me`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { username: string }).username, 'persistent');
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    }
  });

  it('refuses a bad setting with one line naming it, and exit code 1', async () => {
    const child = run({ ...env, PORT: 'eighty' });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1);
    assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
    assert.match(stderr, /^Configuration error: PORT: /);
  });
});
