#!/usr/bin/env node
// Builds the panel (tsc into dist/) only when it has never been built or a source changed since
// the last build: `npm start` then starts in about a second instead of compiling every time.
// A build is due when any file under src/, package.json, package-lock.json or a tsconfig is newer
// than dist/.build-stamp, which a successful build writes.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const stamp = path.join('dist', '.build-stamp');
const inputs = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  ...readdirSync('src', { recursive: true, encoding: 'utf8' }).map((file) =>
    path.join('src', file),
  ),
];
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = inputs.find((file) => existsSync(file) && statSync(file).mtimeMs > built);
if (changed === undefined) process.exit(0);

console.log(
  built === 0
    ? 'Building the panel (once; about a minute on a small machine)…'
    : `Rebuilding the panel: ${changed} changed since the last build…`,
);
const result = spawnSync(
  process.execPath,
  ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
  {
    stdio: 'inherit',
  },
);
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
