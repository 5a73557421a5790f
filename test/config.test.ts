import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { prepareDataDir } from '../src/data-dir.js';

describe('configuration', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'panel-config-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  const env = (extra: Record<string, string> = {}) => ({ DATA_DIR: dataDir, ...extra });

  it('has the defaults of docs/api.md, contract §1', () => {
    const config = loadConfig(env());
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8000);
    assert.equal(config.dataDir, dataDir);
    assert.deepEqual(config.database, { kind: 'sqlite', file: path.join(dataDir, 'panel.sqlite') });
    assert.equal(config.publicUrl, 'http://127.0.0.1:8000');
    assert.equal(config.sandbox, 'auto');
    // Unset: open until the first account exists, then as the admin sets it (closed).
    assert.equal(config.registration, null);
    assert.deepEqual(config.registrationLimit, { maxPerAddress: 5, windowSeconds: 3600 });
    assert.deepEqual(config.ticketLimits, { ticketsPerHour: 10, messagesPerHour: 60 });
    assert.equal(config.maxBodyBytes, 1024 * 1024);
    assert.equal(config.maxUploadBytes, null);
    assert.equal(config.maxEditBytes, 5 * 1024 * 1024);
    assert.ok(Object.isFrozen(config));
  });

  it('reads every variable it documents', () => {
    const config = loadConfig(
      env({
        HOST: '0.0.0.0',
        PORT: '9000',
        DATABASE_URL: 'postgres://panel@db.example:5432/panel',
        JWT_SECRET: 'x'.repeat(32),
        PUBLIC_URL: 'https://panel.example/',
        SANDBOX: 'none',
        REGISTRATION: 'closed',
        REGISTRATION_MAX_PER_ADDRESS: '3',
        REGISTRATION_WINDOW_SECONDS: '600',
        TICKETS_PER_HOUR: '4',
        TICKET_MESSAGES_PER_HOUR: '20',
        MAX_BODY_BYTES: '2048',
        MAX_UPLOAD_BYTES: '1000000',
        MAX_EDIT_BYTES: '1000',
        LOG_LEVEL: 'warn',
        TRUST_PROXY: '127.0.0.1, 10.0.0.0/8',
        METRICS_TOKEN: 'a-metrics-token-of-some-length',
        METRICS_ADDRESS: '127.0.0.1:9464',
        WEBHOOK_ALLOWED_HOSTS: 'Hooks.Internal, 10.0.0.5:8080, [::1], [FD00::5]:9000',
      }),
    );
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.port, 9000);
    assert.deepEqual(config.database, {
      kind: 'postgres',
      url: 'postgres://panel@db.example:5432/panel',
    });
    assert.equal(config.publicUrl, 'https://panel.example');
    assert.equal(config.sandbox, 'none');
    assert.equal(config.registration, 'closed');
    assert.deepEqual(config.registrationLimit, { maxPerAddress: 3, windowSeconds: 600 });
    assert.deepEqual(config.ticketLimits, { ticketsPerHour: 4, messagesPerHour: 20 });
    assert.equal(config.maxBodyBytes, 2048);
    assert.equal(config.maxUploadBytes, 1_000_000);
    assert.equal(config.maxEditBytes, 1000);
    assert.equal(config.logLevel, 'warn');
    assert.deepEqual(config.trustProxy, ['127.0.0.1', '10.0.0.0/8']);
    assert.deepEqual(config.metrics, {
      token: 'a-metrics-token-of-some-length',
      address: { host: '127.0.0.1', port: 9464 },
    });
    assert.deepEqual(loadConfig(env({ METRICS_ADDRESS: '[::1]:0' })).metrics.address, {
      host: '::1',
      port: 0,
    });
    assert.deepEqual(loadConfig(env()).metrics, { token: null, address: null });
    assert.deepEqual(config.webhookAllowedHosts, [
      { host: 'hooks.internal', port: null },
      { host: '10.0.0.5', port: 8080 },
      { host: '::1', port: null },
      { host: 'fd00::5', port: 9000 },
    ]);
    assert.deepEqual(loadConfig(env()).webhookAllowedHosts, []);
  });

  it('refuses bad values with an error naming the variable', () => {
    const cases: [string, string][] = [
      ['PORT', 'eighty'],
      ['PORT', '70000'],
      ['PORT', '-1'],
      ['DATABASE_URL', 'mysql://localhost/panel'],
      ['DATABASE_URL', 'not a url'],
      ['JWT_SECRET', 'short'],
      ['JWT_SECRET', 'x'.repeat(31)],
      ['PUBLIC_URL', 'ftp://panel.example'],
      ['PUBLIC_URL', '/relative'],
      ['SANDBOX', 'docker'],
      ['REGISTRATION', 'maybe'],
      ['MAX_BODY_BYTES', '1.5'],
      ['MAX_UPLOAD_BYTES', '0'],
      ['LOG_LEVEL', 'loud'],
      ['LOG_FORMAT', 'colourful'],
      ['TRUST_PROXY', 'proxy.example'],
      ['METRICS_TOKEN', 'too-short'],
      ['METRICS_TOKEN', 'has a space in the middle'],
      ['METRICS_ADDRESS', '9464'],
      ['METRICS_ADDRESS', '127.0.0.1'],
      ['METRICS_ADDRESS', '127.0.0.1:70000'],
      ['METRICS_ADDRESS', '::1:9464'],
      ['METRICS_ADDRESS', '[localhost]:9464'],
      ['METRICS_ADDRESS', 'http://127.0.0.1:9464'],
      ['AUDIT_RETENTION_DAYS', '-1'],
      ['AUDIT_RETENTION_DAYS', 'a year'],
      ['WEBHOOK_ALLOWED_HOSTS', 'http://hooks.internal'],
      ['WEBHOOK_ALLOWED_HOSTS', '::1'],
      ['WEBHOOK_ALLOWED_HOSTS', '[localhost]'],
      ['WEBHOOK_ALLOWED_HOSTS', 'hooks.internal:0'],
      ['WEBHOOK_ALLOWED_HOSTS', 'hooks.internal:70000'],
      ['WEBHOOK_ALLOWED_HOSTS', 'hooks.internal,,other'],
      ['WEBHOOK_ALLOWED_HOSTS', '10.0.0.0/8'],
      ['WEBHOOK_ALLOWED_HOSTS', '-bad.example'],
      ['SERVER_UID_RANGE', '0-99999'],
      ['SERVER_UID_RANGE', '999-5000'],
      ['SERVER_UID_RANGE', '300000-200000'],
      ['SERVER_UID_RANGE', '200000-4294967295'],
      ['SERVER_UID_RANGE', '200000'],
    ];
    for (const [variable, value] of cases) {
      assert.throws(
        () => loadConfig(env({ [variable]: value })),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.variable === variable &&
          error.message.startsWith(`${variable}: `) &&
          !error.message.includes('\n'),
        `${variable}=${value}`,
      );
    }
  });

  it('generates the JWT secret once, with mode 0600, and reuses it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'panel-secret-'));
    try {
      const config = loadConfig({ DATA_DIR: dir });
      assert.equal(config.jwtSecret, null, 'loading the configuration makes no secret');
      const first = prepareDataDir(config, false).jwtSecret;
      const file = path.join(dir, 'jwt-secret');
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      assert.ok(first.length >= 32);
      const second = prepareDataDir(loadConfig({ DATA_DIR: dir }), false).jwtSecret;
      assert.deepEqual(second, first);
      assert.equal((await readFile(file, 'utf8')).trim(), Buffer.from(first).toString());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a stored secret that others can read or that is too short', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'panel-secret-'));
    const file = path.join(dir, 'jwt-secret');
    const prepare = () => prepareDataDir(loadConfig({ DATA_DIR: dir }), false);
    try {
      await writeFile(file, 'y'.repeat(40), { mode: 0o644 });
      assert.throws(prepare, /JWT_SECRET: .*chmod 600/);
      await rm(file);
      await writeFile(file, 'tiny', { mode: 0o600 });
      assert.throws(prepare, /JWT_SECRET: .*fewer than 32 bytes/);
      assert.ok(!existsSync(path.join(dir, 'servers')), 'nothing is made past a refused secret');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads without writing: no data directory, no secret', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'panel-pure-'));
    try {
      const dataDir = path.join(parent, 'data');
      const config = loadConfig({ DATA_DIR: dataDir });
      assert.equal(config.dataDir, dataDir);
      assert.deepEqual(await readdir(parent), []);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('keeps its data in /var/lib/game-panel as root, in ./data otherwise', () => {
    const asRoot = loadConfig({}, true);
    assert.equal(asRoot.dataDir, '/var/lib/game-panel');
    assert.equal(asRoot.serversDir, '/var/lib/game-panel/servers');
    assert.equal(asRoot.backupDir, '/var/lib/game-panel/backups');
    assert.deepEqual(asRoot.database, {
      kind: 'sqlite',
      file: '/var/lib/game-panel/panel.sqlite',
    });
    const asUser = loadConfig({}, false);
    assert.equal(asUser.dataDir, path.resolve('data'));
    assert.equal(asUser.backupDir, path.resolve('data', 'backups'));
    assert.equal(loadConfig({ DATA_DIR: '/srv/panel' }, true).dataDir, '/srv/panel');
  });

  it('reads LOG_FORMAT: auto by default, pretty or json', () => {
    assert.equal(loadConfig(env()).logFormat, 'auto');
    assert.equal(loadConfig(env({ LOG_FORMAT: 'pretty' })).logFormat, 'pretty');
    assert.equal(loadConfig(env({ LOG_FORMAT: 'json' })).logFormat, 'json');
  });

  it('prefers JWT_SECRET over the stored file', () => {
    const config = loadConfig(env({ JWT_SECRET: 'z'.repeat(40) }));
    assert.equal(Buffer.from(config.jwtSecret ?? []).toString(), 'z'.repeat(40));
  });
});
