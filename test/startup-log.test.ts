/**
 * What the panel says at start about how servers run: the truth for each SANDBOX mode (not
 * "install bubblewrap" when it is installed and turned off on purpose), who servers run as, and a
 * data directory that was open to others.
 */
import assert from 'node:assert/strict';
import { chmodSync, statSync } from 'node:fs';
import { describe, it } from 'node:test';
import { findBubblewrap } from '../src/host/runtime/process/process-runtime.js';
import { startPanel } from './helpers/app.js';

const BWRAP = findBubblewrap(process.env.PATH ?? '') !== null;
const ROOT = process.getuid?.() === 0;

async function startLog(env: Record<string, string>): Promise<string[]> {
  const lines: string[] = [];
  const panel = await startPanel(
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
    async () => {
      const said = (await startLog({ SANDBOX: 'none' })).join('\n');
      assert.match(said, /WITHOUT a sandbox \(SANDBOX=none\)/);
      assert.doesNotMatch(said, /install bubblewrap/);
    },
  );

  it('names the users servers run as (one uid each as root), never root', async () => {
    const said = (await startLog({})).join('\n');
    if (ROOT)
      assert.match(said, /servers run each as a uid of its own \(200000 \+ the server's id/);
    else assert.match(said, /servers run as the panel's own user .*, all of them/);
    assert.doesNotMatch(said, /uid 0\)/);
  });

  it('warns about, and tightens, a data directory that others could read', async () => {
    const lines: string[] = [];
    const first = await startPanel({});
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
