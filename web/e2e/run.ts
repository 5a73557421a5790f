/**
 * `npm run test:e2e`: builds what changed (as `npm start` would), then runs every journey
 * (web/e2e/*.e2e.ts) with Node's test runner, one file at a time, each against its own panel
 * started from the build on SQLite, in Debian's Chromium. Screenshots go to docs/screenshots/.
 * Journey files may be given as arguments.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM } from './helpers/browser.js';

if (!existsSync(CHROMIUM)) {
  console.error(
    `No Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium) or set CHROMIUM_PATH`,
  );
  process.exit(1);
}
const build = spawnSync(process.execPath, ['scripts/build-if-needed.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const given = process.argv.slice(2);
const files =
  given.length > 0
    ? given
    : readdirSync('web/e2e')
        .filter((file) => file.endsWith('.e2e.ts'))
        .sort()
        .map((file) => path.join('web/e2e', file));
const run = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=1', ...files],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);
