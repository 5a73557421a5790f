/**
 * The configuration file (src/config-file.ts): where it is looked for, how it reads, that the
 * environment wins over it, and that the panel started as an operator starts it reads it, names
 * it, and writes nothing when a setting is wrong.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../src/config.js';
import {
  configFilePath,
  configFileTarget,
  loadPanelConfig,
  readConfigFile,
  SYSTEM_CONFIG_FILE,
} from '../src/config-file.js';

const ROOT = process.getuid?.() === 0;
const SERVER = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'panel-config-file-'));
  // Servers' uids (as root) pass through it on their way to a DATA_DIR below.
  await chmod(dir, 0o711);
});
after(() => rm(dir, { recursive: true, force: true }));

/** A fresh folder holding `files` (name → text, mode 0600). */
async function folder(files: Record<string, string> = {}): Promise<string> {
  const made = await mkdtemp(path.join(dir, 'case-'));
  await chmod(made, 0o711);
  for (const [name, text] of Object.entries(files)) {
    await writeFile(path.join(made, name), text, { mode: 0o600 });
  }
  return made;
}

describe('where the configuration file is', () => {
  it('is PANEL_CONFIG when set, else the system file, else .env here, else none', async () => {
    const here = await folder({ '.env': 'PORT=9001\n', 'named.env': 'PORT=9002\n' });
    const system = path.join(here, 'system.env');
    const lookup = { cwd: here, systemFile: system };

    assert.equal(configFilePath({}, lookup)?.path, path.join(here, '.env'));
    await writeFile(system, 'PORT=9003\n', { mode: 0o600 });
    assert.deepEqual(configFilePath({}, lookup), { path: system, named: false });
    assert.deepEqual(configFilePath({ PANEL_CONFIG: 'named.env' }, lookup), {
      path: path.join(here, 'named.env'),
      named: true,
    });
    assert.equal(loadPanelConfig({}, lookup).config.port, 9003);
    assert.equal(loadPanelConfig({ PANEL_CONFIG: 'named.env' }, lookup).config.port, 9002);

    const empty = await folder();
    assert.equal(configFilePath({}, { cwd: empty, systemFile: path.join(empty, 'no') }), null);
    const none = loadPanelConfig({ DATA_DIR: empty }, { cwd: empty, systemFile: '/nonexistent' });
    assert.equal(none.file, null);
    assert.equal(none.config.port, 8000);
  });

  it('refuses a PANEL_CONFIG that cannot be read, naming PANEL_CONFIG', async () => {
    const here = await folder({ '.env': 'PORT=9001\n' });
    assert.throws(
      () => loadPanelConfig({ PANEL_CONFIG: 'missing.env' }, { cwd: here }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.variable === 'PANEL_CONFIG' &&
        error.message.includes(path.join(here, 'missing.env')) &&
        error.message.includes('ENOENT'),
    );
  });

  it('is written where it is read first: PANEL_CONFIG, the system file as root, else .env', () => {
    assert.equal(configFileTarget({ PANEL_CONFIG: '/srv/p.env' }, true), '/srv/p.env');
    assert.equal(configFileTarget({}, true, '/srv/checkout'), SYSTEM_CONFIG_FILE);
    assert.equal(configFileTarget({}, false, '/srv/checkout'), '/srv/checkout/.env');
  });
});

describe('reading the configuration file', () => {
  it('takes NAME=value lines, comments, quoted values, and the environment over them', async () => {
    const here = await folder({
      'panel.env': [
        '# The panel of the test',
        '',
        'PORT=9100',
        'PUBLIC_URL="https://panel.example"   # where people come in',
        'REGISTRATION=closed',
        `DATA_DIR=${path.join(dir, 'somewhere')}`,
        'export LOG_LEVEL=warn',
      ].join('\n'),
    });
    const env = { PANEL_CONFIG: path.join(here, 'panel.env') };
    const { config, file } = loadPanelConfig(env);
    assert.equal(file, path.join(here, 'panel.env'));
    assert.equal(config.port, 9100);
    assert.equal(config.publicUrl, 'https://panel.example');
    assert.equal(config.registration, 'closed');
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.dataDir, path.join(dir, 'somewhere'));
    // The environment wins, even with an empty value (which means: the default).
    const overridden = loadPanelConfig({ ...env, PORT: '9200', REGISTRATION: '' }).config;
    assert.equal(overridden.port, 9200);
    assert.equal(overridden.registration, null);
  });

  it('names the variable and the file of a bad value, not the file when the environment set it', async () => {
    const here = await folder({ 'panel.env': 'PORT=eighty\n' });
    const file = path.join(here, 'panel.env');
    assert.throws(
      () => loadPanelConfig({ PANEL_CONFIG: file }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.variable === 'PORT' &&
        error.message === `PORT (in ${file}): must be a whole number, got "eighty"`,
    );
    assert.throws(
      () => loadPanelConfig({ PANEL_CONFIG: file, PORT: 'ninety' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === 'PORT: must be a whole number, got "ninety"',
    );
    assert.equal(loadPanelConfig({ PANEL_CONFIG: file, PORT: '81' }).config.port, 81);
  });

  it('refuses a line that is no NAME=value, with its number and not its text', async () => {
    const here = await folder({
      'panel.env': 'PORT=9000\nMOTD="two\nlines"\nREGISTRATON closed\n',
      'secret.env': `PORT=9000\n${'x'.repeat(40)}-pasted-alone\n`,
    });
    assert.throws(
      () => readConfigFile({ path: path.join(here, 'panel.env'), named: false }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message === `${path.join(here, 'panel.env')}: line 4 is not NAME=value`,
    );
    assert.throws(
      () => readConfigFile({ path: path.join(here, 'secret.env'), named: true }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          `PANEL_CONFIG: ${path.join(here, 'secret.env')}: line 2 is not NAME=value`,
    );
  });

  it('warns when the file holds a secret and others can read it', async () => {
    const here = await folder({
      'secret.env': `JWT_SECRET=${'k'.repeat(40)}\n`,
      'database.env': 'DATABASE_URL=postgres://panel:hunter2hunter2@db.example/panel\n',
      'plain.env': 'PORT=9000\nDATABASE_URL=postgres://panel@db.example/panel\n',
    });
    const warningsOf = async (name: string, mode: number) => {
      await chmod(path.join(here, name), mode);
      return loadPanelConfig({ PANEL_CONFIG: path.join(here, name), DATA_DIR: here }).warnings;
    };
    assert.deepEqual(await warningsOf('secret.env', 0o600), []);
    const [warning] = await warningsOf('secret.env', 0o640);
    assert.match(warning ?? '', /holds JWT_SECRET and others can read it \(mode 0640\): chmod 600/);
    assert.ok(!(warning ?? '').includes('kkkk'), 'the secret itself is not in the warning');
    assert.match(
      (await warningsOf('database.env', 0o644))[0] ?? '',
      /holds DATABASE_URL \(its password\)/,
    );
    assert.ok(!(await warningsOf('database.env', 0o644)).join().includes('hunter2'));
    assert.deepEqual(await warningsOf('plain.env', 0o644), []);
  });
});

interface Run {
  readonly status: number | null;
  readonly output: string;
}

/**
 * Runs the panel as `npm start` does, from `cwd`, with exactly `env` (and PATH), until it prints
 * `until` (then it is stopped) or exits.
 */
function runPanel(
  cwd: string,
  env: Record<string, string>,
  until?: RegExp,
  as?: { uid: number; gid: number },
): Promise<Run> {
  const child = spawn(process.execPath, ['--import', TSX, SERVER], {
    cwd,
    // No SFTP server: these panels run beside others, and 2022 is one port.
    env: { PATH: process.env.PATH ?? '', SFTP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...as,
  });
  let output = '';
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (until?.test(output)) child.kill('SIGTERM');
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => {
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

describe('the panel and its configuration file', () => {
  it('starts from the .env of its checkout, names it, and says where to open it', async () => {
    const checkout = await folder();
    const dataDir = path.join(checkout, 'data');
    await writeFile(
      path.join(checkout, '.env'),
      `PORT=0\nDATA_DIR=${dataDir}\nJWT_SECRET=${'s'.repeat(40)}\nREGISTRATION=open\n`,
      { mode: 0o600 },
    );
    const run = await runPanel(checkout, {}, /"msg":"Open http/);
    assert.match(run.output, new RegExp(`configuration read from ${path.join(checkout, '.env')}`));
    assert.match(run.output, /Open http:\/\/127\.0\.0\.1:\d+\/ and create the first account/);
    assert.ok(existsSync(path.join(dataDir, 'panel.sqlite')), run.output);
  });

  it(
    "runs as the README's Run it says, as a plain user: no settings, data in ./data",
    {
      skip: !ROOT
        ? 'needs root, to run the panel as another user'
        : existsSync(SYSTEM_CONFIG_FILE)
          ? `${SYSTEM_CONFIG_FILE} exists on this machine`
          : false,
    },
    async () => {
      const checkout = await folder();
      const nobody = { uid: 65534, gid: 65534 };
      await chown(checkout, nobody.uid, nobody.gid);
      // PORT=0 only because other panels may hold 8000 here: nothing else is set.
      const run = await runPanel(checkout, { PORT: '0' }, /"msg":"Open http/, nobody);
      assert.match(run.output, /no configuration file/);
      assert.match(run.output, /Open http:\/\/127\.0\.0\.1:\d+\/ and create the first account/);
      assert.ok(existsSync(path.join(checkout, 'data', 'panel.sqlite')), run.output);
      assert.equal((await stat(path.join(checkout, 'data', 'jwt-secret'))).mode & 0o777, 0o600);
    },
  );

  it('stops at a bad value in the file, naming it, and writes nothing', async () => {
    const checkout = await folder();
    const file = path.join(checkout, 'panel.env');
    await writeFile(file, `DATA_DIR=${path.join(checkout, 'data')}\nPORT=eighty\n`);
    const run = await runPanel(checkout, { PANEL_CONFIG: file });
    assert.equal(run.status, 1, run.output);
    assert.equal(
      run.output,
      `Configuration error: PORT (in ${file}): must be a whole number, got "eighty"\n`,
    );
    assert.deepEqual(await readdir(checkout), ['panel.env']);
  });

  type Failure = [what: string, env: Record<string, string>, message: RegExp];
  const failures: Failure[] = [
    ['a bad variable', { PORT: '70000' }, /^Configuration error: PORT: /],
    ['a missing PANEL_CONFIG', { PANEL_CONFIG: '/nonexistent/panel.env' }, /PANEL_CONFIG: /],
    ['SANDBOX=bwrap without bubblewrap', { SANDBOX: 'bwrap', PATH: '/nonexistent' }, /SANDBOX/],
    ...(ROOT ? [['SERVER_USER=root', { SERVER_USER: 'root' }, /SERVER_USER/] as Failure] : []),
  ];
  for (const [what, env, message] of failures) {
    it(`leaves no data folder, secret or database behind after ${what}`, async () => {
      const checkout = await folder();
      const dataDir = path.join(checkout, 'data');
      const run = await runPanel(checkout, {
        PANEL_CONFIG: '/dev/null',
        DATA_DIR: dataDir,
        PORT: '0',
        ...env,
      });
      assert.equal(run.status, 1, run.output);
      assert.match(run.output, message);
      assert.deepEqual(await readdir(checkout), [], 'nothing written');
    });
  }

  it(
    'as root, refuses a DATA_DIR servers cannot reach, proposing one, and writes nothing',
    { skip: ROOT ? false : 'servers run as uids of their own only when the panel runs as root' },
    async () => {
      const checkout = await folder();
      // A home folder, as /root is: its owner's alone.
      const home = path.join(checkout, 'root');
      await mkdir(home, { mode: 0o700 });
      const dataDir = path.join(home, 'game-panel', 'data');
      const run = await runPanel(checkout, {
        PANEL_CONFIG: '/dev/null',
        DATA_DIR: dataDir,
        PORT: '0',
        SANDBOX: 'none',
      });
      assert.equal(run.status, 1, run.output);
      assert.match(
        run.output,
        /^Configuration error: DATA_DIR: servers run as uids of their own .* cannot reach .*: choose a DATA_DIR they can reach, such as DATA_DIR=\/var\/lib\/game-panel/,
      );
      assert.doesNotMatch(run.output, /chmod/, 'never proposes opening up a home folder');
      assert.deepEqual(await readdir(home), [], 'nothing written');
    },
  );
});
