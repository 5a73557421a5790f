/**
 * The panel as an operator runs it: a separate process started from src/server.ts, listening on
 * HOST/PORT, refusing a bad setting with one line, and closing cleanly on SIGINT and SIGTERM.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { testEnvironment } from './helpers/app.js';
import { spawnPanel, startPanelProcess, type PanelProcess } from './helpers/panel-process.js';

const run = spawnPanel;
const start = (env: Record<string, string>): Promise<PanelProcess> => startPanelProcess(env);

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
