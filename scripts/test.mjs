#!/usr/bin/env node
// Runs the test suite with Node's test runner through tsx: every test/**/*.test.ts, or the files
// given as arguments. (Node 20's runner does not expand globs itself.)
// The database is SQLite unless TEST_DATABASE_URL names a PostgreSQL database.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const given = process.argv.slice(2);
const files =
  given.length > 0
    ? given
    : readdirSync('test', { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.test.ts'))
        .map((file) => path.join('test', file))
        .sort();

const args = [
  '--import',
  'tsx',
  '--test',
  '--test-reporter=spec',
  '--test-concurrency=4',
  ...files,
];
const child = spawn(process.execPath, args, { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
