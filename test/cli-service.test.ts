/**
 * `game-panel service install` and `uninstall` as an operator runs them (a real process). The
 * unit goes to a folder of the test's own (SYSTEMD_UNIT_DIR) and systemctl is a stand-in script
 * (SYSTEMCTL) that records its calls, so that no test touches the host's systemd. The written
 * unit is checked by systemd's own `systemd-analyze verify`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { renderUnit } from '../src/cli/systemd-unit.js';
import { PANEL_ROOT } from '../src/paths.js';
import { runCliProcess } from './helpers/cli.js';

const ROOT = process.getuid?.() === 0;
const ANALYZE = spawnSync('systemd-analyze', ['--version']).status === 0;
const root = mkdtempSync(path.join(tmpdir(), 'cli-service-'));
after(() => {
  rmSync(root, { recursive: true, force: true });
});

let count = 0;
/**
 * A configuration file, a unit folder and a systemctl of the test's own: `answer` is the exit
 * status it gives, and every call is appended to `calls` (one line of arguments each).
 */
function place(answer = 0): { units: string; calls: string; env: Record<string, string> } {
  const dir = path.join(root, String(++count));
  mkdirSync(dir);
  const config = path.join(dir, 'panel.env');
  writeFileSync(config, 'PORT=8000\n', { mode: 0o600 });
  const calls = path.join(dir, 'calls');
  const systemctl = path.join(dir, 'systemctl');
  writeFileSync(
    systemctl,
    `#!/bin/sh\necho "$*" >> '${calls}'\n[ ${answer} -eq 0 ] || echo 'System has not been booted with systemd' >&2\nexit ${answer}\n`,
  );
  chmodSync(systemctl, 0o755);
  const units = path.join(dir, 'units');
  return {
    units,
    calls,
    env: { PANEL_CONFIG: config, SYSTEMD_UNIT_DIR: units, SYSTEMCTL: systemctl },
  };
}

function called(calls: string): string[] {
  return existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [];
}

describe('service install', { skip: ROOT ? false : 'these tests expect a root unit' }, () => {
  it('writes a system unit that keeps the games running, and enables it', async () => {
    const { units, calls, env } = place();
    const result = await runCliProcess(['service', 'install'], env);
    assert.equal(result.status, 0, result.stderr);
    const unitFile = path.join(units, 'game-panel.service');
    const unit = readFileSync(unitFile, 'utf8');
    const lines = unit.split('\n');
    for (const line of [
      'KillMode=process',
      'Restart=on-failure',
      'User=root',
      `WorkingDirectory=${PANEL_ROOT}`,
      `Environment=PANEL_CONFIG=${env.PANEL_CONFIG}`,
      `ExecStart=${process.execPath} ${PANEL_ROOT}/dist/panel.mjs`,
      'WantedBy=multi-user.target',
    ]) {
      assert.ok(lines.includes(line), `the unit has ${line}`);
    }
    assert.match(unit, /^TimeoutStopSec=\d+s$/m);
    assert.match(unit, /^LimitNOFILE=\d{5,}$/m);
    assert.equal(statSync(unitFile).mode & 0o777, 0o644);
    assert.deepEqual(called(calls), ['daemon-reload', 'enable game-panel.service']);
    assert.doesNotMatch(result.stdout + result.stderr, /Warning/);
    assert.match(result.stdout, /systemctl start game-panel/);
    assert.match(result.stdout, /journalctl -u game-panel -f/);
  });

  it(
    'writes a unit that systemd-analyze verify accepts without a word',
    { skip: ANALYZE ? false : 'systemd-analyze is not installed (Debian package systemd)' },
    async () => {
      const { units, env } = place();
      assert.equal((await runCliProcess(['service', 'install'], env)).status, 0);
      const verify = spawnSync(
        'systemd-analyze',
        ['verify', path.join(units, 'game-panel.service')],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(verify.status, 0, verify.stderr);
      assert.equal(`${verify.stdout}${verify.stderr}`.trim(), '', 'no warning either');
    },
  );

  it('where systemctl fails, still writes the unit, warns and says what to run (status 0)', async () => {
    const { units, env } = place(1);
    const result = await runCliProcess(['service', 'install'], env);
    assert.equal(result.status, 0, result.stderr);
    assert.ok(existsSync(path.join(units, 'game-panel.service')));
    assert.match(
      result.stderr,
      /Warning: the unit is written, but systemctl could not daemon-reload/,
    );
    assert.match(result.stderr, /System has not been booted with systemd/);
    assert.match(result.stderr, /systemctl daemon-reload\n\s+systemctl enable game-panel/);
    assert.match(result.stdout, /systemctl start game-panel/);
  });

  it('warns about a configuration file that others can read', async () => {
    const { env } = place();
    chmodSync(env.PANEL_CONFIG!, 0o644);
    const result = await runCliProcess(['service', 'install'], env);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /Warning: .*panel\.env is readable by others.*chmod 600/);
  });

  it('refuses without a configuration file (exit status 1), writing no unit', async () => {
    const { units, calls, env } = place();
    const result = await runCliProcess(['service', 'install'], {
      ...env,
      PANEL_CONFIG: path.join(root, 'missing.env'),
    });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /No configuration file at .*missing\.env: run setup first/);
    assert.ok(!existsSync(units));
    assert.deepEqual(called(calls), []);
  });

  it('refuses a missing or unknown action with exit status 2 and the usage', async () => {
    const { env } = place();
    for (const args of [['service'], ['service', 'reinstall'], ['service', 'install', 'now']]) {
      const result = await runCliProcess(args, env);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /Usage: game-panel service install/);
    }
  });
});

describe('service uninstall', { skip: ROOT ? false : 'these tests expect a root unit' }, () => {
  it('disables, stops and removes the unit', async () => {
    const { units, calls, env } = place();
    assert.equal((await runCliProcess(['service', 'install'], env)).status, 0);
    const result = await runCliProcess(['service', 'uninstall'], env);
    assert.equal(result.status, 0, result.stderr);
    assert.ok(!existsSync(path.join(units, 'game-panel.service')));
    assert.deepEqual(called(calls).slice(2), ['disable --now game-panel.service', 'daemon-reload']);
    assert.match(result.stdout, /Game servers keep running/);
  });

  it('removes the unit and its enabling link where systemctl fails, with a warning', async () => {
    const { units, env } = place(1);
    assert.equal((await runCliProcess(['service', 'install'], env)).status, 0);
    const wants = path.join(units, 'multi-user.target.wants');
    mkdirSync(wants);
    symlinkSync(path.join(units, 'game-panel.service'), path.join(wants, 'game-panel.service'));
    const result = await runCliProcess(['service', 'uninstall'], env);
    assert.equal(result.status, 0, result.stderr);
    assert.ok(!existsSync(path.join(units, 'game-panel.service')));
    assert.equal(
      statSync(path.join(wants, 'game-panel.service'), { throwIfNoEntry: false }),
      undefined,
    );
    assert.match(result.stderr, /Warning: systemctl could not disable --now/);
  });

  it('says so when there is nothing to remove', async () => {
    const { env } = place();
    const result = await runCliProcess(['service', 'uninstall'], env);
    assert.equal(result.status, 0);
    assert.match(result.stdout, /nothing to remove/);
  });
});

describe('the unit of a plain user', () => {
  it(
    'passes systemd-analyze --user verify without a word',
    { skip: ANALYZE ? false : 'systemd-analyze is not installed (Debian package systemd)' },
    () => {
      const dir = path.join(root, 'user-unit');
      const runtime = path.join(dir, 'runtime');
      mkdirSync(runtime, { recursive: true, mode: 0o700 });
      const unitFile = path.join(dir, 'game-panel.service');
      writeFileSync(
        unitFile,
        renderUnit({
          scope: 'user',
          checkout: PANEL_ROOT,
          node: process.execPath,
          configFile: path.join(PANEL_ROOT, '.env'),
        }),
      );
      // A user manager needs a runtime folder; a test has no login session to give it one.
      const verify = spawnSync('systemd-analyze', ['--user', 'verify', unitFile], {
        encoding: 'utf8',
        env: { ...process.env, XDG_RUNTIME_DIR: runtime },
      });
      assert.equal(verify.status, 0, verify.stderr);
      assert.equal(`${verify.stdout}${verify.stderr}`.trim(), '');
    },
  );

  it('is a user unit: no User=, started with the session, KillMode=process all the same', () => {
    const unit = renderUnit({
      scope: 'user',
      checkout: '/home/ann/game-panel',
      node: '/home/ann/.nvm/versions/node/v20.19.0/bin/node',
      configFile: '/home/ann/game-panel/.env',
    });
    assert.doesNotMatch(unit, /^User=/m);
    assert.match(unit, /^WantedBy=default\.target$/m);
    assert.match(unit, /^KillMode=process$/m);
    assert.match(unit, /^Environment=PATH=\/home\/ann\/\.nvm\/versions\/node\/v20\.19\.0\/bin:/m);
    assert.throws(() =>
      renderUnit({
        scope: 'user',
        checkout: '/home/ann/my panel',
        node: '/usr/bin/node',
        configFile: '/home/ann/.env',
      }),
    );
  });
});
