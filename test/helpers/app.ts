/**
 * A fresh panel per test file: its own data directory and its own database, a SQLite file by
 * default or, when TEST_DATABASE_URL is set, a fresh database on that PostgreSQL server (dropped
 * on close). Everything goes through the real HTTP surface with `app.inject`.
 *
 * A panel closes itself when its scope ends: `startPanel(t, …)` in a test registers
 * `t.after(close)`, and in a `before` hook it is given the `suiteScope()` of its describe block.
 * An explicit `close()` stays for tests that stop a panel on purpose (closing twice is harmless).
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import pg from 'pg';
import { buildApp, type AppOverrides } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { fixtureFolder } from './fixture.js';

export type Panel = Awaited<ReturnType<typeof buildApp>>;

export interface TestPanel {
  readonly app: Panel;
  /** A second handle on the same database, for inserting rows that have no endpoint yet. */
  readonly db: Db;
  readonly config: Config;
  readonly dataDir: string;
  /** Listens on a free loopback port (once; for WebSocket clients) and answers its base URL. */
  listen(): Promise<string>;
  /** Closes the app, the second handle and the database; once, however often it is called. */
  close(): Promise<void>;
  /** Runs `fn` first when this panel closes (a panel on its data closes before its database goes). */
  beforeClose(fn: () => Promise<void>): void;
}

/**
 * What a panel closes with: anything with an `after(fn)` that runs `fn` when it ends. A test's
 * context `t` is one; for a describe block (or a file's top level) it is `suiteScope()`.
 */
export interface Scope {
  after(fn: () => Promise<void>): void;
}

/**
 * The scope of the describe block (or test file) whose body calls it, synchronously: what is
 * registered on it runs, in order, in one `after` hook of that block, where the call stands among
 * its other `after` hooks. Node 20's suite context has no `after` of its own, and `after` called
 * inside a `before` hook would belong to the hook.
 */
export function suiteScope(): Scope {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });
  return { after: (fn) => void cleanups.push(fn) };
}

/** The database the tests run on, for messages and for skipping dialect-specific checks. */
export const testDialect = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

/**
 * Creates a fresh database on the PostgreSQL server of TEST_DATABASE_URL and returns its URL;
 * `drop` removes it. A database each, not a schema each: the migrator's catalog queries look at
 * every schema of a database, and would trip over another test file dropping its own.
 */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const name = `panel_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * The environment a test panel starts from: no configuration file, a temporary DATA_DIR, a fixed
 * JWT secret, no logs,
 * open registration without limits, and the test database. `env` overrides any of it.
 */
export async function testEnvironment(
  env: Record<string, string> = {},
): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'panel-test-'));
  const postgres = testDialect === 'postgres' ? await freshPostgresDatabase() : undefined;
  return {
    env: {
      // An empty configuration file: neither this machine's /etc/game-panel/panel.env nor a
      // developer's .env reaches a panel a test spawns (src/config-file.ts).
      PANEL_CONFIG: '/dev/null',
      DATA_DIR: dataDir,
      JWT_SECRET: TEST_JWT_SECRET,
      LOG_LEVEL: 'silent',
      SANDBOX_READ_ONLY_PATHS: fixtureFolder(),
      // Most tests register several people from one address and write many tickets: registration
      // is opened and the per-address and per-user limits raised, as an operator may set them.
      // The defaults are tested by passing '' (unset) for these (test/registration.test.ts).
      REGISTRATION: 'open',
      REGISTRATION_MAX_PER_ADDRESS: '100000',
      // No SFTP server unless a test asks for one on a port of its own (test/helpers/sftp.ts):
      // panels run side by side, and 2022 is one port.
      SFTP_PORT: '0',
      TICKETS_PER_HOUR: '100000',
      TICKET_MESSAGES_PER_HOUR: '100000',
      ...(postgres ? { DATABASE_URL: postgres.url } : {}),
      ...env,
    },
    cleanup: async () => {
      await postgres?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * When the test runner sets TEST_LOG_FILE, every panel logs there at debug level, and every
 * secret a test uses is listed in `<TEST_LOG_FILE>.secrets`: after the run, the runner checks
 * that none of them ever reached the log (scripts/test.mjs).
 */
export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256!';

const LOG_FILE = process.env.TEST_LOG_FILE;
let logStream: WriteStream | undefined;

/** Records a secret (password, token, key) that must never appear in the panel's log. */
export function rememberSecret(secret: string): void {
  if (LOG_FILE && secret.length >= 8) appendFileSync(`${LOG_FILE}.secrets`, `${secret}\n`);
}
rememberSecret(TEST_JWT_SECRET);

/** Starts a panel that `scope` closes when it ends (see the opening comment). */
export async function startPanel(
  scope: Scope,
  env: Record<string, string> = {},
  overrides: Omit<AppOverrides, 'db'> = {},
): Promise<TestPanel> {
  const { env: fullEnv, cleanup } = await testEnvironment({
    ...(LOG_FILE ? { LOG_LEVEL: 'debug' } : {}),
    ...env,
  });
  const config = loadConfig(fullEnv);
  if (LOG_FILE && !overrides.logStream) logStream ??= createWriteStream(LOG_FILE, { flags: 'a' });
  const app = await buildApp(config, {
    ...(logStream ? { logStream } : {}),
    ...overrides,
  });
  await app.ready();
  const db = await openDatabase(config.database);
  let listening: Promise<string> | undefined;
  let closing: Promise<void> | undefined;
  const first: (() => Promise<void>)[] = [];
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      for (const fn of first) await fn();
      await app.close();
      await db.close();
      await cleanup();
    })());
  scope.after(close);
  return {
    app,
    db,
    config,
    dataDir: config.dataDir,
    listen() {
      listening ??= app.listen({ host: '127.0.0.1', port: 0 });
      return listening;
    },
    close,
    beforeClose: (fn) => void first.push(fn),
  };
}

/**
 * A second panel on `panel`'s data and database, as after a restart of the panel (close the
 * first one with `serversAtClose: () => 'keep'` to have its servers run on). Closes with `scope`
 * (its app only: the first panel's close cleans up the data).
 */
export async function restartedPanel(
  scope: Scope,
  panel: TestPanel,
  overrides: Omit<AppOverrides, 'db'> = {},
): Promise<TestPanel> {
  const app = await buildApp(panel.config, {
    ...(logStream ? { logStream } : {}),
    ...overrides,
  });
  await app.ready();
  let listening: Promise<string> | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= app.close().then(() => undefined));
  scope.after(close);
  // Before the first panel's close removes the data and the database this one uses.
  panel.beforeClose(close);
  return {
    app,
    db: panel.db,
    config: panel.config,
    dataDir: panel.dataDir,
    listen() {
      listening ??= app.listen({ host: '127.0.0.1', port: 0 });
      return listening;
    },
    close,
    beforeClose: (fn) => {
      panel.beforeClose(fn);
    },
  };
}
