// Console fan-out: the line printer runs as a server of the panel and prints at fixed rates and
// as fast as it can, while 1, 10 and 100 WebSocket clients read the console. Then one client
// that never reads joins 10 readers.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { Histogram } from '../lib/histogram.mjs';
import { ProcessWatch, waitForQuiet } from '../lib/proc.mjs';
import { ConsoleReader } from '../lib/ws-reader.mjs';
import { log, MiB, nowMs, pool, round, sleep } from '../lib/util.mjs';
import { CONSOLE_SERVER } from './seed.mjs';

const SOCKETS_PER_USER = 10;
/** How long after the end of the printing a line may still arrive before it counts as lost. */
const LATE_LIMIT_MS = 10_000;
/**
 * The client that never reads sits next to 10 readers, at a rate they take with room to spare,
 * long enough for its queue (4 MiB in the panel, plus the kernel's socket buffers) to fill; the
 * same readers first run alone for comparison.
 */
const STALL = { readers: 10, rate: 5_000, ms: 12_000 };

/** Opens `count` reading sockets, spread over the seeded users (10 sockets each at most). */
async function openReaders(panel, users, count) {
  return pool(
    10,
    Array.from({ length: count }, (_, i) => async () => {
      const user = users[Math.floor(i / SOCKETS_PER_USER)];
      // A socket closed just before may still count against its user for a moment: retry 429.
      for (let attempt = 0; ; attempt++) {
        try {
          return await ConsoleReader.open({
            port: panel.port,
            server: CONSOLE_SERVER,
            token: user.token,
          });
        } catch (error) {
          if (error.status !== 429 || attempt >= 50) throw error;
          await sleep(100);
        }
      }
    }),
  );
}

/**
 * One cell: the printer prints run `id` at `rate` lines/s (0: as fast as it can) for `ms`; waits
 * until every reader has the run's last line or was cut off (bounded), then sums up.
 */
async function cell({ panel, api, dataDir, readers, stalled = [], id, rate, ms }) {
  await waitForQuiet();
  for (const reader of readers) reader.startRun(id);
  const watch = new ProcessWatch(panel.pid);
  const clientCpu = process.cpuUsage();
  const started = nowMs();
  await api.call('POST', `/api/servers/${CONSOLE_SERVER}/command`, {
    command: `run ${id} ${rate} ${ms}`,
  });
  // Everything is in once each reader saw the end line or is gone. Lines still missing
  // LATE_LIMIT_MS after the printing ended count as not received (the panel fell behind).
  let complete = false;
  while (nowMs() - started < ms + LATE_LIMIT_MS) {
    complete = readers.every((reader) => reader.closed || reader.run.end !== null);
    if (complete) break;
    await sleep(20);
  }
  const wallMs = nowMs() - started;
  const usage = watch.stop();
  const client = process.cpuUsage(clientCpu);

  const end =
    readers.find((reader) => reader.run.end !== null)?.run.end ?? (await endFromFile(dataDir, id));
  const sent = end?.count ?? Math.max(0, ...readers.map((reader) => reader.run.nextSeq));
  const latency = new Histogram();
  const perClient = [];
  let notReceived = 0;
  let sequenceGaps = 0;
  let cutOff = 0;
  for (const reader of readers) {
    const run = reader.run;
    latency.add(run.latency);
    notReceived += Math.max(0, sent - run.received);
    sequenceGaps += run.missing;
    if (reader.closed) cutOff += 1;
    const spanUs = run.lastAt !== null && run.firstAt !== null ? run.lastAt - run.firstAt : 0;
    perClient.push({
      rate: spanUs > 0 ? run.received / (spanUs / 1e6) : 0,
      p99: run.latency.percentile(99),
    });
  }
  const rates = perClient.map((c) => c.rate).sort((a, b) => a - b);
  const p99s = perClient.map((c) => c.p99 ?? 0);
  return {
    complete,
    clients: readers.length,
    stalledClients: stalled.length,
    requestedRate: rate === 0 ? 'max' : rate,
    seconds: ms / 1000,
    sentLines: sent,
    sentPerSecond: end ? round(end.count / (end.elapsedUs / 1e6), 0) : null,
    deliveredPerClientMedian: round(rates[Math.floor(rates.length / 2)] ?? 0, 0),
    deliveredPerClientMin: round(rates[0] ?? 0, 0),
    latencyP50Ms: round((latency.percentile(50) ?? 0) / 1000, 2),
    latencyP99Ms: round((latency.percentile(99) ?? 0) / 1000, 2),
    worstClientP99Ms: round(Math.max(0, ...p99s) / 1000, 2),
    latencyMaxMs: round(latency.max / 1000, 1),
    linesNotReceived: notReceived,
    sequenceGaps,
    clientsCutOff: cutOff,
    panelCpuPercent: round(usage.cpuPercent, 0),
    panelPeakRssMiB: round(usage.peakRss / MiB, 1),
    panelRssGrowthMiB: round(usage.growth / MiB, 1),
    benchClientCpuPercent: round(((client.user + client.system) / 1000 / wallMs) * 100, 0),
    othersCpuPercent: round(usage.othersCpuPercent, 0),
    waitedSeconds: round(wallMs / 1000, 1),
  };
}

function describe(result) {
  return (
    `${result.clients} clients${result.stalledClients ? ' + 1 stalled' : ''} @ ${result.requestedRate}: ` +
    `sent ${result.sentPerSecond}/s, delivered ${result.deliveredPerClientMedian}/s per client, ` +
    `p99 ${result.latencyP99Ms} ms, not received ${result.linesNotReceived}, ` +
    `cut off ${result.clientsCutOff}, panel CPU ${result.panelCpuPercent} %, ` +
    `peak RSS ${result.panelPeakRssMiB} MiB`
  );
}

/** The printer's own record of run `id` (for runs whose end line reached no client in time). */
async function endFromFile(dataDir, id) {
  const file = path.join(dataDir, 'servers', CONSOLE_SERVER, 'printer-runs.log');
  // The printer stops on its own at most 5 s after the planned end; it may still be finishing.
  for (let i = 0; i < 50; i++) {
    const line = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .find((text) => text.startsWith(`E ${id} `))
      : undefined;
    if (line) {
      const [, , count, elapsedUs] = line.split(' ').map(Number);
      return { count, elapsedUs, at: null };
    }
    await sleep(100);
  }
  return null;
}

/** Stops and starts the console server: whatever an overrun cell left queued is dropped. */
async function restartServer(api) {
  await api.request('POST', `/api/servers/${CONSOLE_SERVER}/stop`);
  const started = await api.call('POST', `/api/servers/${CONSOLE_SERVER}/start`);
  if (started.data.status !== 'running') throw new Error('the console server did not start');
}

/** When the panel logged that it cut off a client that does not read, after `since` (epoch ms). */
function cutOffTimes(logFile, since) {
  const times = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('cut off a console client')) continue;
    try {
      const entry = JSON.parse(line);
      if (entry.time >= since) times.push(entry.time);
    } catch {
      // Not a log entry.
    }
  }
  return times;
}

export async function consoleScenario({ panel, seeded, logFile, dataDir, quick }) {
  const api = panel.api.as(seeded.adminToken);
  const rates = [1_000, 10_000, 20_000, 50_000, 0];
  const clientCounts = [1, 10, 100];
  const ms = quick ? 1_500 : 3_000;
  await restartServer(api);
  const cells = [];
  let id = 0;
  let readers = [];
  const closeAll = async () => {
    for (const reader of readers) reader.destroy();
    readers = [];
    await sleep(200);
  };
  try {
    for (const count of clientCounts) {
      for (const rate of rates) {
        // Readers cut off in an earlier cell are replaced, so every cell starts with `count`.
        readers = readers.filter((reader) => !reader.closed);
        if (readers.length < count) {
          readers.push(...(await openReaders(panel, seeded.users, count - readers.length)));
        }
        const result = await cell({ panel, api, dataDir, readers, id: ++id, rate, ms });
        log(`console: ${describe(result)}`);
        cells.push(result);
        if (!result.complete) {
          // Lines of this run are still queued somewhere: start the next cell from clean.
          await closeAll();
          await restartServer(api);
        }
      }
      await closeAll();
    }

    // One client that never reads, next to readers; first the readers alone.
    readers = await openReaders(panel, seeded.users, STALL.readers);
    const alone = await cell({
      panel,
      api,
      dataDir,
      readers,
      id: ++id,
      rate: STALL.rate,
      ms: STALL.ms,
    });
    log(`console: ${describe(alone)}`);
    const stalledUser = seeded.users[seeded.users.length - 1];
    const stalled = await ConsoleReader.open({
      port: panel.port,
      server: CONSOLE_SERVER,
      token: stalledUser.token,
      read: false,
    });
    const since = Date.now();
    const result = await cell({
      panel,
      api,
      dataDir,
      readers,
      stalled: [stalled],
      id: ++id,
      rate: STALL.rate,
      ms: STALL.ms,
    });
    // Read again: a client the panel cut off finds its connection ended.
    stalled.resume();
    const deadline = nowMs() + 3_000;
    while (!stalled.closed && nowMs() < deadline) await sleep(20);
    const cutOffs = cutOffTimes(logFile, since);
    result.stalledClientCutOff = stalled.closed;
    result.stalledClientCutOffAfterSeconds =
      cutOffs.length > 0 ? round((cutOffs[0] - since) / 1000, 1) : null;
    result.stalledClientReceivedMiB = round(stalled.bytes / MiB, 1);
    stalled.destroy();
    log(
      `console: ${describe(result)}; the stalled client was ` +
        (stalled.closed
          ? `cut off after ${result.stalledClientCutOffAfterSeconds} s`
          : 'NOT cut off'),
    );
    await closeAll();
    return {
      seconds: ms / 1000,
      lateLimitSeconds: LATE_LIMIT_MS / 1000,
      cells,
      stallAlone: alone,
      stall: result,
    };
  } finally {
    await closeAll();
    await api.request('POST', `/api/servers/${CONSOLE_SERVER}/stop`);
  }
}
