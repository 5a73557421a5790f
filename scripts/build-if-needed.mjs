#!/usr/bin/env node
// Builds what `npm start` needs only when it has never been built or a source changed since the
// last build: `npm start` then starts in about a second instead of compiling every time. Two
// parts, each with its own stamp that a successful build writes:
//   the server (tsc into dist/,      src/, package.json, package-lock.json, the tsconfigs,
//   then bundled into dist/panel.mjs) scripts/bundle-server.mjs → dist/.build-stamp
//   the web UI (Vite into dist/web/) web/ except its tests and node_modules, package.json,
//                                     package-lock.json
//                                     → dist/.web-build-stamp
// A part is due when one of its inputs is newer than its stamp, or its stamp is missing.
// `--always` (npm run build) builds both regardless, and stamps them too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const always = process.argv.includes('--always');
const shared = ['package.json', 'package-lock.json'];

const filesUnder = (dir, keep = () => true) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((file) => path.join(dir, file))
    .filter(keep);

const parts = [
  {
    name: 'the panel',
    first: 'Building the panel (once; about a minute on a small machine)…',
    stamp: path.join('dist', '.build-stamp'),
    inputs: () => [
      ...shared,
      'tsconfig.json',
      'tsconfig.build.json',
      'scripts/bundle-server.mjs',
      ...filesUnder('src'),
    ],
    commands: [
      ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
      ['scripts/bundle-server.mjs'],
    ],
  },
  {
    name: 'the web UI',
    first: 'Building the web UI (once; a few seconds)…',
    stamp: path.join('dist', '.web-build-stamp'),
    // The UI's own tests (unit and end-to-end) do not change what is served.
    inputs: () => [
      ...shared,
      ...filesUnder(
        'web',
        (file) =>
          !file.startsWith(path.join('web', 'e2e')) &&
          // Vite bundles its config into web/node_modules/.vite-temp on every build.
          !file.startsWith(path.join('web', 'node_modules')) &&
          !/\.test\.tsx?$/.test(file),
      ),
    ],
    commands: [['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.mjs']],
  },
];

for (const part of parts) {
  const built = existsSync(part.stamp) ? statSync(part.stamp).mtimeMs : 0;
  const changed = always
    ? 'a full build'
    : part.inputs().find((file) => existsSync(file) && statSync(file).mtimeMs > built);
  if (changed === undefined) continue;
  if (!always) {
    console.log(
      built === 0
        ? part.first
        : `Rebuilding ${part.name}: ${changed} changed since the last build…`,
    );
  }
  const started = new Date();
  for (const command of part.commands) {
    const result = spawnSync(process.execPath, command, { stdio: 'inherit' });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
  mkdirSync('dist', { recursive: true });
  // Dated when the build started: a file saved while it ran is newer, and builds next time.
  writeFileSync(part.stamp, `${started.toISOString()}\n`);
  utimesSync(part.stamp, started, started);
}
