/**
 * docs/deploy.md as written: its Caddyfile is one Debian's Caddy accepts (`caddy validate`, which
 * adapts and provisions it without listening or asking for certificates). Its nginx block runs
 * for real in the journey web/e2e/proxy.e2e.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { blockOfDeployDoc } from './helpers/deploy-doc.js';

const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy';

describe('docs/deploy.md', () => {
  it(
    'gives a Caddyfile that Caddy accepts, proxying to the panel on loopback',
    { skip: existsSync(CADDY) ? false : `no caddy at ${CADDY} (apt-get install -y caddy)` },
    () => {
      const caddyfile = blockOfDeployDoc('caddyfile', 'caddyfile');
      assert.match(caddyfile, /reverse_proxy 127\.0\.0\.1:8000/);
      const dir = mkdtempSync(path.join(tmpdir(), 'panel-caddy-'));
      try {
        const file = path.join(dir, 'Caddyfile');
        writeFileSync(file, caddyfile);
        // Caddy's own folders in the test's, not the home folder of whoever runs the tests.
        const result = spawnSync(CADDY, ['validate', '--config', file, '--adapter', 'caddyfile'], {
          env: {
            PATH: process.env.PATH ?? '',
            HOME: dir,
            XDG_DATA_HOME: dir,
            XDG_CONFIG_HOME: dir,
          },
          encoding: 'utf8',
          timeout: 30_000,
        });
        assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
        assert.match(result.stdout + result.stderr, /Valid configuration/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
