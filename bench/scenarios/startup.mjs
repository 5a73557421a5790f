// Start-up: from spawning the panel to its first 200 on /api/health, on an empty database and
// on the populated one the other scenarios left (100+ servers, 12 users, 1,000 tickets).
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startPanel } from '../lib/panel.mjs';
import { waitForQuiet } from '../lib/proc.mjs';
import { log, round, stopChild } from '../lib/util.mjs';

async function measure({ label, dataDir, logFile, nodeArgs, runs, fresh }) {
  const times = [];
  const stops = [];
  for (let i = 0; i < runs; i++) {
    await waitForQuiet();
    const dir = fresh ? mkdtempSync(path.join(dataDir, 'empty-')) : dataDir;
    const panel = await startPanel({ dataDir: dir, logFile, nodeArgs, timeoutMs: 20_000 });
    times.push(panel.startupMs);
    stops.push(await stopChild(panel.child, 15_000));
    if (fresh) rmSync(dir, { recursive: true, force: true });
  }
  const sorted = [...times].sort((a, b) => a - b);
  const result = {
    label,
    runs,
    medianMs: round(sorted[Math.floor(sorted.length / 2)], 0),
    minMs: round(sorted[0], 0),
    maxMs: round(sorted[sorted.length - 1], 0),
    shutdownMaxMs: stops.includes(null) ? null : round(Math.max(...stops), 0),
  };
  log(`startup: ${label}: median ${result.medianMs} ms (${result.minMs} to ${result.maxMs})`);
  return result;
}

export async function startupScenario({ workDir, dataDir, nodeArgs, extraFolders, quick }) {
  const runs = quick ? 2 : 5;
  const logFile = path.join(workDir, 'startup.log');
  const rows = [];
  rows.push(
    await measure({
      label: 'empty database',
      dataDir: workDir,
      logFile,
      nodeArgs,
      runs,
      fresh: true,
    }),
  );
  if (extraFolders.length > 0) {
    rows.push(
      await measure({
        label: 'populated database, plus a server folder of 10,000 files',
        dataDir,
        logFile,
        nodeArgs,
        runs,
        fresh: false,
      }),
    );
    for (const folder of extraFolders) rmSync(folder, { recursive: true, force: true });
  }
  rows.push(
    await measure({
      label: 'populated database',
      dataDir,
      logFile,
      nodeArgs,
      runs,
      fresh: false,
    }),
  );
  return { runs, rows };
}
