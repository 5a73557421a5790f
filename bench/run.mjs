#!/usr/bin/env node
// `npm run bench`: builds the panel (tsc, as `npm run build`), starts it as a separate process
// on loopback with a fresh data directory under /var/tmp, seeds it through its API, runs every
// scenario, writes bench/results.json and the table in docs/benchmarks.md, and removes every
// process and file it made, whatever happens.
//
//   node bench/run.mjs [--only api,console,noisy,files,sftp,backups,ui,startup,node-files,node-down]
//                      [--quick] [--no-build]
//                      [--cpu-prof <dir>] [--keep] | --rewrite-docs
//
// --only and --cpu-prof runs print their figures and leave results.json and the docs alone;
// --cpu-prof runs the panel with `node --cpu-prof` and writes its profile into <dir>; --keep
// leaves the work directory (data directory, panel log) in place for a closer look;
// --rewrite-docs only renders docs/benchmarks.md again from bench/results.json.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { children, REPO, spawnNode, startPanel, summariseLog } from './lib/panel.mjs';
import { MachineWatch, quietBudgetLeft, setQuietBudget } from './lib/proc.mjs';
import { evaluateTargets, writeReport } from './lib/report.mjs';
import { exitWithin, freePort, log, round, sleep, stopChild } from './lib/util.mjs';
import { apiScenario } from './scenarios/api.mjs';
import { backupsScenario } from './scenarios/backups.mjs';
import { consoleScenario } from './scenarios/console.mjs';
import { filesScenario } from './scenarios/files.mjs';
import { nodeDownScenario } from './scenarios/node-down.mjs';
import { nodeFilesScenario } from './scenarios/node-files.mjs';
import { noisyScenario } from './scenarios/noisy.mjs';
import { FILES_SERVER, printerDir, seed } from './scenarios/seed.mjs';
import { sftpScenario } from './scenarios/sftp.mjs';
import { startupScenario } from './scenarios/startup.mjs';
import { uiScenario } from './scenarios/ui.mjs';

const ALL = [
  'api',
  'console',
  'noisy',
  'files',
  'sftp',
  'backups',
  'ui',
  'startup',
  'node-files',
  'node-down',
];
/** The scenarios that start a panel of their own, on engines standing in for nodes. */
const OWN_PANEL = ['startup', 'node-files', 'node-down'];
/**
 * The whole run is abandoned (and cleaned up) past this: a guard against a hang, not a budget.
 * With other jobs taking both cores, the backups took up to 9.5 minutes and SFTP 14.
 */
const RUN_LIMIT_MS = 40 * 60 * 1000;
/**
 * Before starting, wait up to QUIET_WAIT_S for other processes to use under QUIET_PERCENT; then
 * each row may wait for quiet too, QUIET_BUDGET_S in all.
 */
const QUIET_PERCENT = 20;
const QUIET_WAIT_S = 30;
const QUIET_BUDGET_S = 120;

function parseArgs(argv) {
  const options = { only: ALL, quick: false, cpuProf: null, build: true, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--only') options.only = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (arg === '--quick') options.quick = true;
    else if (arg === '--no-build') options.build = false;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--rewrite-docs') options.rewriteDocs = true;
    else if (arg === '--cpu-prof') options.cpuProf = path.resolve(argv[++i] ?? 'bench-profiles');
    else throw new Error(`unknown argument: ${arg}`);
  }
  for (const name of options.only) {
    if (!ALL.includes(name)) throw new Error(`unknown scenario: ${name}`);
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
if (options.rewriteDocs) {
  // Only re-renders docs/benchmarks.md (and the targets in results.json) from the last results.
  const results = JSON.parse(readFileSync(path.join(REPO, 'bench', 'results.json'), 'utf8'));
  results.targets = evaluateTargets(results);
  await writeReport(results);
  log('rewrote docs/benchmarks.md from bench/results.json');
  process.exit(0);
}
const official =
  options.only.length === ALL.length &&
  !options.quick &&
  options.cpuProf === null &&
  options.build &&
  !options.keep;
const workDir = mkdtempSync(
  path.join(existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir(), 'panel-bench-'),
);
// Run as root, the panel runs its servers as an unprivileged user, who must pass through here
// to reach the data directory (the panel refuses to start otherwise).
chmodSync(workDir, 0o711);

let cleaned = false;
async function cleanUp() {
  if (cleaned) return;
  cleaned = true;
  await Promise.all([...children].map((child) => stopChild(child, 5_000)));
  if (options.keep) log(`kept ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}
// Whatever goes wrong, the panel and every other child go, and so does the work directory.
for (const event of ['uncaughtException', 'unhandledRejection']) {
  process.on(event, (error) => {
    log(`${event}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void cleanUp().finally(() => process.exit(1));
  });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}
const watchdog = setTimeout(() => {
  log(`the run passed ${RUN_LIMIT_MS / 60_000} minutes; giving up`);
  void cleanUp().finally(() => process.exit(1));
}, RUN_LIMIT_MS);

async function main() {
  const started = performance.now();
  let buildSeconds = null;
  if (options.build) {
    // What `npm start` runs: tsc, the bundle (dist/panel.mjs) and the web UI.
    log('building the panel and its web UI (npm run build)');
    const build = path.join(REPO, 'scripts', 'build-if-needed.mjs');
    const child = spawnNode([build, '--always'], { cwd: REPO, stdio: 'inherit' });
    if (!(await exitWithin(child, 180_000)) || child.exitCode !== 0) {
      throw new Error('the build failed');
    }
    buildSeconds = round((performance.now() - started) / 1000, 1);
  }
  if (!existsSync(path.join(REPO, 'dist', 'panel.mjs'))) {
    throw new Error('dist/panel.mjs is missing: run `npm run build` first');
  }
  log(`work directory ${workDir}`);
  // Another job on this machine competes for the same cores: wait (a little) for it to calm
  // down, and record how busy the machine was.
  const background = { othersCpuPercent: null, waitedForQuietSeconds: 0 };
  const quietStarted = performance.now();
  for (;;) {
    const quiet = new MachineWatch();
    await sleep(2_000);
    background.othersCpuPercent = round(quiet.stop().othersCpuPercent, 0);
    const waited = (performance.now() - quietStarted) / 1000;
    // Only a full run (the one that writes the docs) waits.
    if (background.othersCpuPercent <= QUIET_PERCENT || waited >= QUIET_WAIT_S || !official) break;
    log(`other processes use ${background.othersCpuPercent} % of a core; waiting for quiet`);
  }
  background.waitedForQuietSeconds = round((performance.now() - quietStarted) / 1000, 0);
  if (background.othersCpuPercent > QUIET_PERCENT) {
    log(
      `WARNING: other processes use ${background.othersCpuPercent} % of a core; ` +
        'the figures will be lower than this machine can do',
    );
  }
  const duringRun = new MachineWatch();
  if (!options.quick) setQuietBudget(QUIET_BUDGET_S * 1000);
  const machine = {
    cores: os.availableParallelism?.() ?? os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
  const dataDir = path.join(workDir, 'data');
  const logFile = path.join(workDir, 'panel.log');
  const nodeArgs = options.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProf] : [];
  const results = { machine, startedAt: new Date().toISOString(), buildSeconds, background };
  const quick = options.quick;

  const needsPanel = options.only.some((name) => !OWN_PANEL.includes(name));
  let panel = null;
  let seeded = null;
  if (needsPanel || options.only.includes('startup')) {
    panel = await startPanel({
      dataDir,
      logFile,
      nodeArgs,
      readOnlyPaths: [printerDir(workDir)],
      // SFTP only when it is measured, on a loopback port of its own.
      sftpPort: options.only.includes('sftp') ? await freePort() : 0,
    });
    log(`panel pid ${panel.pid} on port ${panel.port}`);
    seeded = await seed(panel.api, workDir);
  }
  try {
    if (options.only.includes('api')) {
      results.api = await apiScenario({
        panel,
        token: seeded.adminToken,
        workDir,
        seconds: quick ? 2 : 4,
        warmupSeconds: 1,
      });
    }
    if (options.only.includes('console')) {
      results.console = await consoleScenario({ panel, seeded, logFile, dataDir, quick });
    }
    if (options.only.includes('noisy')) {
      results.noisy = await noisyScenario({ panel, seeded, quick });
    }
    if (options.only.includes('files')) {
      results.files = await filesScenario({
        panel,
        token: seeded.adminToken,
        workDir,
        dataDir,
        quick,
      });
    }
    if (options.only.includes('sftp')) {
      results.sftp = await sftpScenario({
        panel,
        token: seeded.adminToken,
        workDir,
        dataDir,
        quick,
      });
    }
    if (options.only.includes('backups')) {
      results.backups = await backupsScenario({
        panel,
        token: seeded.adminToken,
        workDir,
        dataDir,
        quick,
      });
    }
    if (options.only.includes('ui')) {
      results.ui = await uiScenario({ panel, seeded, quick });
    }
  } finally {
    if (panel) {
      const shutdownMs = await stopChild(panel.child, 15_000);
      log(
        `panel stopped in ${shutdownMs === null ? 'more than 15 s (killed)' : `${shutdownMs | 0} ms`}`,
      );
    }
  }
  if (options.only.includes('startup')) {
    results.startup = await startupScenario({
      workDir,
      dataDir,
      nodeArgs,
      quick,
      extraFolders: options.only.includes('files')
        ? [path.join(dataDir, 'servers', FILES_SERVER, 'many')]
        : [],
    });
  }
  // Each on a panel of its own with nodes added, so that no other scenario (start-up above all)
  // measures a panel with nodes.
  if (options.only.includes('node-files')) {
    results.nodeFiles = await nodeFilesScenario({ workDir, quick });
  }
  if (options.only.includes('node-down')) {
    results.nodeDown = await nodeDownScenario({ workDir, quick });
  }
  background.duringRunOthersCpuPercent = round(duringRun.stop().othersCpuPercent, 0);
  background.rowsWaitedForQuietSeconds = options.quick
    ? 0
    : round(QUIET_BUDGET_S - quietBudgetLeft() / 1000, 0);
  results.runSeconds = round((performance.now() - started) / 1000, 0);
  results.panelLog = summariseLog(logFile);
  results.targets = evaluateTargets(results);
  for (const target of results.targets) {
    log(`${target.met ? 'met   ' : 'MISSED'} ${target.target}: ${target.measured}`);
  }
  if (official) {
    await writeReport(results);
    log('wrote bench/results.json and docs/benchmarks.md');
  } else {
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  }
  log(`done in ${results.runSeconds} s`);
}

try {
  await main();
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  clearTimeout(watchdog);
  await cleanUp();
}
