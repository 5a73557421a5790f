#!/usr/bin/env node
// Runs the test suite with Node's test runner through tsx: every test/**/*.test.ts, or the files
// given as arguments. (Node 20's runner does not expand globs itself.) Without arguments, the web
// UI's unit tests (Vitest, web/src/**/*.test.ts) run afterwards too.
// The database is SQLite unless TEST_DATABASE_URL names a PostgreSQL database.
//
// Every panel the tests start logs (at debug level) into one file, and the tests list every
// password, token and key they use; afterwards the log is scanned: no secret, nothing shaped like
// a token or a password hash, may ever appear in it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const given = process.argv.slice(2);
const all =
  given.length > 0
    ? given
    : readdirSync('test', { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.test.ts'))
        .map((file) => path.join('test', file))
        .sort();
// On PostgreSQL (TEST_DATABASE_URL set) the whole suite runs only the files that can open a
// database: the others run the very same code on either (docs/testing.md, "Two databases").
const postgresRun = given.length === 0 && Boolean(process.env.TEST_DATABASE_URL);
const files = postgresRun ? all.filter((file) => reachesDatabase(file)) : all;
if (postgresRun) {
  console.log(
    `ℹ PostgreSQL: the ${files.length} test files that open a database; ${all.length - files.length} that never do ran on SQLite`,
  );
}

const logDir = mkdtempSync(path.join(tmpdir(), 'panel-test-log-'));
const logFile = path.join(logDir, 'panel.log');

const args = [
  '--import',
  'tsx',
  '--test',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  // A file that failed as a whole, with its last standard error, listed again at the very end.
  '--test-reporter=./scripts/failed-files-reporter.mjs',
  '--test-reporter-destination=stdout',
  '--test-concurrency=4',
  ...files,
];
const child = spawn(process.execPath, args, {
  stdio: 'inherit',
  env: { ...process.env, TEST_LOG_FILE: logFile },
});
child.on('exit', (code, signal) => {
  const leaks = scanLog();
  rmSync(logDir, { recursive: true, force: true });
  const status = leaks > 0 ? 1 : (code ?? (signal ? 1 : 0));
  // The web UI's unit tests never touch a database: once, on SQLite.
  if (given.length > 0 || postgresRun) process.exit(status);
  const web = spawn(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', '--config', 'web/vite.config.mjs'],
    { stdio: 'inherit' },
  );
  web.on('exit', (webCode, webSignal) => {
    process.exit(status !== 0 ? status : (webCode ?? (webSignal ? 1 : 0)));
  });
});

/** Prints and counts log lines holding a secret; 0 when the log is clean. */
function scanLog() {
  if (!existsSync(logFile)) return 0;
  const log = readFileSync(logFile, 'utf8');
  const secretsFile = `${logFile}.secrets`;
  const secrets = existsSync(secretsFile)
    ? [...new Set(readFileSync(secretsFile, 'utf8').split('\n').filter(Boolean))]
    : [];
  const shapes = [/eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]+/, /\$argon2(id|i|d)\$/];
  let leaks = 0;
  for (const line of log.split('\n')) {
    const secret = secrets.find((candidate) => line.includes(candidate));
    const shape = shapes.find((pattern) => pattern.test(line));
    if (secret !== undefined || shape !== undefined) {
      leaks += 1;
      if (leaks <= 5) {
        const what = secret !== undefined ? 'a test secret' : `text shaped like ${shape}`;
        console.error(
          `Log leak: ${what} in: ${line.slice(0, 300).replaceAll(secret ?? '\0', '[…]')}`,
        );
      }
    }
  }
  const lines = log.split('\n').length - 1;
  if (leaks > 0) console.error(`✖ the panel's log holds secrets on ${leaks} lines`);
  else console.log(`ℹ log scan: ${lines} log lines, ${secrets.length} test secrets, no leak`);
  return leaks;
}

/**
 * Whether a test file can open a database: it, or a module of the tests it imports (followed
 * through every relative import), starts a panel (`startPanel`, `testEnvironment`: each gets a
 * fresh PostgreSQL database when TEST_DATABASE_URL is set) or reads TEST_DATABASE_URL itself (the
 * CLI and lifecycle tests, for the panels they spawn). test/helpers/app.ts, which defines them,
 * is not a reason: importing it for a type or a helper opens nothing.
 */
function reachesDatabase(file, seen = new Set()) {
  const resolved = path.resolve(file);
  if (seen.has(resolved) || resolved === path.resolve('test/helpers/app.ts')) return false;
  seen.add(resolved);
  let source;
  try {
    source = readFileSync(resolved, 'utf8');
  } catch {
    return false;
  }
  if (/\b(startPanel|testEnvironment|freshPostgresDatabase)\(|TEST_DATABASE_URL/.test(source)) {
    return true;
  }
  for (const [, specifier] of source.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    // Only the tests' own modules: the panel's source never opens a database of the tests.
    const target = path.resolve(path.dirname(resolved), specifier).replace(/\.js$/, '.ts');
    if (target.startsWith(path.resolve('test')) && reachesDatabase(target, seen)) return true;
  }
  return false;
}
