/**
 * `game-panel setup` as an operator runs it (a real process): the configuration file it writes
 * from flags or from answers on standard input, read back with the parser the panel uses
 * (`util.parseEnv`); mode 0600; an existing file kept unless --force, which keeps its secret;
 * bad input refused with exit status 2 and nothing written; a PostgreSQL URL checked by
 * connecting.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseEnv } from 'node:util';
import { UnwritableValue, renderConfigFile } from '../src/cli/config-file.js';
import { SYSTEM_CONFIG_FILE, configFileTarget } from '../src/config-file.js';
import { PANEL_ROOT } from '../src/paths.js';
import { runCliProcess } from './helpers/cli.js';

const root = mkdtempSync(path.join(tmpdir(), 'cli-setup-'));
after(() => {
  rmSync(root, { recursive: true, force: true });
});

let count = 0;
/** A folder of its own for each test, and the configuration file's path in it (not yet made). */
function place(): { dir: string; file: string; env: Record<string, string> } {
  const dir = path.join(root, String(++count));
  const file = path.join(dir, 'panel.env');
  return { dir, file, env: { PANEL_CONFIG: file } };
}

function readBack(file: string): Record<string, string | undefined> {
  return parseEnv(readFileSync(file, 'utf8'));
}

describe('setup with flags', () => {
  it('writes every value given, a generated secret, at mode 0600, and shows no secret', async () => {
    const { dir, file, env } = place();
    const result = await runCliProcess(
      [
        'setup',
        '--yes',
        '--public-url',
        'https://panel.example.com/',
        '--host',
        '0.0.0.0',
        '--port',
        '9000',
        '--registration',
        'closed',
      ],
      env,
    );
    assert.equal(result.status, 0, result.stderr);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o755, 'a folder made for it lets others pass');
    const values = readBack(file);
    assert.equal(values.HOST, '0.0.0.0');
    assert.equal(values.PORT, '9000');
    assert.equal(values.PUBLIC_URL, 'https://panel.example.com');
    assert.equal(values.REGISTRATION, 'closed');
    assert.equal(values.DATABASE_URL, undefined, 'sqlite: DATABASE_URL stays unset');
    assert.equal(values.TRUST_PROXY, undefined);
    const secret = values.JWT_SECRET ?? '';
    assert.match(secret, /^[\w-]{64}$/, '48 random bytes in base64url');
    assert.ok(!result.stdout.includes(secret) && !result.stderr.includes(secret));
    assert.match(result.stdout, new RegExp(`Wrote ${file}`));
    assert.match(result.stdout, /npm start/);
  });

  it('--behind-proxy listens on loopback and believes the proxy there', async () => {
    const { file, env } = place();
    const result = await runCliProcess(
      ['setup', '--yes', '--behind-proxy', '--public-url', 'https://games.example.org'],
      env,
    );
    assert.equal(result.status, 0, result.stderr);
    const values = readBack(file);
    assert.equal(values.HOST, '127.0.0.1');
    assert.equal(values.TRUST_PROXY, '127.0.0.1');
    assert.equal(values.PORT, '8000');
    assert.equal(values.PUBLIC_URL, 'https://games.example.org');
    assert.equal(values.REGISTRATION, undefined, 'unset unless asked');
  });

  it('warns about plain HTTP on an address others reach', async () => {
    const { env } = place();
    const result = await runCliProcess(['setup', '--yes', '--host', '0.0.0.0'], env);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /Warning: .*plain HTTP/);
  });

  for (const [args, named] of [
    [['--port', '70000'], '--port'],
    [['--port', '0'], '--port'],
    [['--public-url', 'panel.example.com'], '--public-url'],
    [['--public-url', 'ftp://panel.example.com'], '--public-url'],
    [['--host', 'not a host'], '--host'],
    [['--database', 'mysql://db/panel'], '--database'],
    [['--registration', 'sometimes'], '--registration'],
    [['--behind-proxy', '--host', '0.0.0.0'], '--behind-proxy'],
    [['--colour', 'blue'], '--colour'],
  ] as const) {
    it(`refuses ${args.join(' ')} with exit status 2, naming ${named}, writing nothing`, async () => {
      const { dir, env } = place();
      const result = await runCliProcess(['setup', '--yes', ...args], env);
      assert.equal(result.status, 2);
      assert.ok(result.stderr.includes(named), result.stderr);
      assert.match(result.stderr, /Usage: game-panel setup/);
      assert.equal(statSync(dir, { throwIfNoEntry: false }), undefined, 'nothing created');
    });
  }
});

describe('setup with answers on standard input', () => {
  it('asks for what the flags leave open and writes the answers', async () => {
    const { file, env } = place();
    const answers = ['no', '0.0.0.0', '8123', 'https://games.example.org', 'sqlite', 'open', ''];
    const result = await runCliProcess(['setup'], env, answers.join('\n'));
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /Port to listen on \[8000\]: 8123/);
    const values = readBack(file);
    assert.equal(values.HOST, '0.0.0.0');
    assert.equal(values.PORT, '8123');
    assert.equal(values.PUBLIC_URL, 'https://games.example.org');
    assert.equal(values.REGISTRATION, 'open');
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it('takes the defaults for empty answers and skips what a flag gave', async () => {
    const { file, env } = place();
    const result = await runCliProcess(['setup', '--port', '8500'], env, '\n\n\n\n\n');
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /Port to listen on/);
    const values = readBack(file);
    assert.equal(values.HOST, '127.0.0.1');
    assert.equal(values.PORT, '8500');
    assert.equal(values.PUBLIC_URL, 'http://127.0.0.1:8500');
    assert.equal(values.REGISTRATION, undefined);
  });

  it('a yes to the reverse proxy question sets loopback and TRUST_PROXY, asks no address', async () => {
    const { file, env } = place();
    const result = await runCliProcess(['setup'], env, 'yes\n\nhttps://p.example.net\n\nclosed\n');
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /Address to listen on/);
    const values = readBack(file);
    assert.equal(values.HOST, '127.0.0.1');
    assert.equal(values.TRUST_PROXY, '127.0.0.1');
    assert.equal(values.PUBLIC_URL, 'https://p.example.net');
    assert.equal(values.REGISTRATION, 'closed');
  });

  it('stops at a bad answer from a script (exit status 2, the question named, nothing written)', async () => {
    const { dir, env } = place();
    const result = await runCliProcess(['setup'], env, 'no\n127.0.0.1\n70000\n');
    assert.equal(result.status, 2);
    assert.match(result.stderr, /port: must be a port from 1 to 65535, got "70000"/);
    assert.equal(statSync(dir, { throwIfNoEntry: false }), undefined);
  });
});

describe('setup over an existing file', () => {
  it('refuses without --force and leaves the file as it was', async () => {
    const { file, env } = place();
    assert.equal((await runCliProcess(['setup', '--yes'], env)).status, 0);
    const before = readFileSync(file, 'utf8');
    const result = await runCliProcess(['setup', '--yes', '--port', '9999'], env);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /exists already.*--force/s);
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  it('with --force keeps the secret and the other variables, and rewrites the rest', async () => {
    const { dir, file, env } = place();
    const first = await runCliProcess(
      ['setup', '--yes', '--database', 'sqlite', '--registration', 'open'],
      env,
    );
    assert.equal(first.status, 0, first.stderr);
    const secret = readBack(file).JWT_SECRET;
    // Lines an operator added by hand, quoted as the parser needs.
    const providers = '[{"id":"corp","name":"Corp # SSO"}]';
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8')}LOG_LEVEL=debug\nOIDC_PROVIDERS='${providers}'\n`,
    );

    const result = await runCliProcess(['setup', '--yes', '--force', '--port', '8100'], env);
    assert.equal(result.status, 0, result.stderr);
    const values = readBack(file);
    assert.equal(values.JWT_SECRET, secret);
    assert.equal(values.PORT, '8100');
    assert.equal(values.PUBLIC_URL, 'http://127.0.0.1:8100', 'derived again from the new port');
    assert.equal(values.REGISTRATION, 'open', "the old file's answer is the default");
    assert.equal(values.LOG_LEVEL, 'debug');
    assert.equal(values.OIDC_PROVIDERS, providers);
    assert.match(result.stdout, /JWT_SECRET: kept/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['panel.env'], 'no temporary file left behind');
  });
});

describe('setup with PostgreSQL', () => {
  const url = process.env.TEST_DATABASE_URL;

  it('writes a PostgreSQL URL it could connect to', { skip: url === undefined }, async () => {
    const { file, env } = place();
    const result = await runCliProcess(['setup', '--yes', '--database', url ?? ''], env);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(readBack(file).DATABASE_URL, url);
  });

  it('refuses one it cannot reach (exit status 1), never showing its password', async () => {
    const { dir, env } = place();
    const result = await runCliProcess(
      ['setup', '--yes', '--database', 'postgres://panel:hunter2-db-pass@127.0.0.1:1/panel'],
      env,
    );
    assert.equal(result.status, 1);
    assert.match(
      result.stderr,
      /Cannot reach the database postgres:\/\/panel:\*\*\*@127\.0\.0\.1:1/,
    );
    assert.ok(!`${result.stdout}${result.stderr}`.includes('hunter2-db-pass'));
    assert.equal(statSync(dir, { throwIfNoEntry: false }), undefined);
  });
});

describe('help', () => {
  it('lists setup and service, and shows the usage of each', async () => {
    const list = await runCliProcess(['help'], {});
    assert.equal(list.status, 0);
    assert.match(list.stdout, /^ {2}setup +write the configuration file/m);
    assert.match(list.stdout, /^ {2}service +install or uninstall the systemd service/m);
    const setup = await runCliProcess(['help', 'setup'], {});
    assert.match(setup.stdout, /--behind-proxy/);
    const service = await runCliProcess(['help', 'service'], {});
    assert.match(service.stdout, /KillMode=process/);
  });
});

describe('the configuration file', () => {
  it('is PANEL_CONFIG, else /etc/game-panel/panel.env for root, else .env in the checkout', () => {
    assert.equal(configFileTarget({ PANEL_CONFIG: '/srv/panel.env' }, true), '/srv/panel.env');
    assert.equal(configFileTarget({}, true), SYSTEM_CONFIG_FILE);
    assert.equal(SYSTEM_CONFIG_FILE, '/etc/game-panel/panel.env');
    assert.equal(configFileTarget({}, false, PANEL_ROOT), path.join(PANEL_ROOT, '.env'));
  });

  it('quotes each value so that util.parseEnv reads it back unchanged, or refuses it', () => {
    const values = ['plain', 'a b', 'a#b', 'say "hi"', `it's "x"`, 'back\\n slash', ''];
    const text = renderConfigFile(
      ['header'],
      values.map((value, index) => [`V${index}`, value]),
    );
    const read = parseEnv(text);
    values.forEach((value, index) => {
      assert.equal(read[`V${index}`], value);
    });
    assert.throws(() => renderConfigFile([], [['V', 'two\nlines']]), UnwritableValue);
    assert.throws(() => renderConfigFile([], [['V', `all of ' " \``]]), UnwritableValue);
  });
});
