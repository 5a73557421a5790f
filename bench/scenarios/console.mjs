// Console fan-out (protocol v2): the line printer runs as a server of the panel and prints at
// fixed rates and as fast as the pipe takes its output, while 1, 10 and 100 WebSocket clients
// read the console. Then one client that never reads joins 10 readers.
//
// The readers run in this process (the benchmark's), never in the panel's: `node dist/panel.mjs`
// is a process of its own, so what the readers cost shows as "client CPU", not as the panel's.
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
 * The rows: readers, lines/s asked of the printer (0: as fast as the pipe takes them) and, for
 * the row the targets are about, its own length. Each tells something of its own: latency when
 * lines come one by one (1,000/s), the target rate, what is left above it (50,000/s), and how
 * fast the panel drains a server that prints without pause, shown and skipped.
 */
const ROWS = [
  { clients: 1, rate: 1_000 },
  { clients: 1, rate: 20_000 },
  { clients: 1, rate: 0 },
  { clients: 10, rate: 20_000 },
  { clients: 10, rate: 0 },
  { clients: 100, rate: 1_000 },
  { clients: 100, rate: 20_000, ms: 5_000, quickMs: 2_500 },
  { clients: 100, rate: 50_000 },
  { clients: 100, rate: 0 },
];
/**
 * The client that never reads sits next to 10 readers, at a rate they take with room to spare,
 * long enough for what waits for it to pass the panel's queue limit (4 MiB, behind the kernel's
 * socket buffers of a few MiB more) so that the panel drops lines for it; the same readers
 * first run alone for comparison. Shorter than the panel's 30 s limit for a socket that reads
 * nothing, so it is never closed here.
 */
const STALL = { readers: 10, rate: 5_000, ms: 20_000, quickMs: 10_000 };

/** Opens `count` reading sockets, spread over the seeded users (10 sockets each at most). */
async function openReaders(panel, users, count, first = 0) {
  return pool(
    10,
    Array.from({ length: count }, (_, i) => async () => {
      const user = users[Math.floor((first + i) / SOCKETS_PER_USER)];
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
 * How long the main thread of `pid` (the event loop) has waited for a CPU while ready to run,
 * in ms (Linux schedstat; null where unavailable). On a busy machine this, not the panel's own
 * code, is what makes a row late.
 */
function runQueueMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return null;
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

/**
 * One row: the printer prints run `id` at `rate` lines/s (0: as fast as it can) for `ms`; waits
 * until every reader has the run's last line or was closed (bounded), then sums up. `prepare`
 * runs once the machine is quiet, right before the printing (to open the client that never
 * reads as late as possible).
 */
async function cell({ panel, api, dataDir, readers, prepare, id, rate, ms }) {
  await waitForQuiet();
  const stalled = prepare ? await prepare() : [];
  for (const reader of [...readers, ...stalled]) reader.startRun(id);
  const watch = new ProcessWatch(panel.pid);
  const clientCpu = process.cpuUsage();
  const panelQueued = runQueueMs(panel.pid);
  const clientQueued = runQueueMs(process.pid);
  const started = nowMs();
  await api.call('POST', `/api/servers/${CONSOLE_SERVER}/command`, {
    command: `run ${id} ${rate} ${ms}`,
  });
  // Everything is in once each reader saw the end line or is gone. Lines still missing
  // LATE_LIMIT_MS after the printing ended, and never announced as skipped, count as lost.
  let complete = false;
  while (nowMs() - started < ms + LATE_LIMIT_MS) {
    complete = readers.every((reader) => reader.closed || reader.run.end !== null);
    if (complete) break;
    await sleep(20);
  }
  const wallMs = nowMs() - started;
  const usage = watch.stop();
  const client = process.cpuUsage(clientCpu);
  const waited = (before, pid) => {
    const after = runQueueMs(pid);
    return before === null || after === null ? null : round(((after - before) / wallMs) * 100, 0);
  };
  const panelWaitedForCpuPercent = waited(panelQueued, panel.pid);
  const clientWaitedForCpuPercent = waited(clientQueued, process.pid);

  const end =
    readers.find((reader) => reader.run.end !== null)?.run.end ?? (await endFromFile(dataDir, id));
  const sent = end?.count ?? Math.max(0, ...readers.map((reader) => reader.run.nextSeq));
  const printSeconds = end ? end.elapsedUs / 1e6 : ms / 1000;
  const latency = new Histogram();
  const shown = [];
  const skipped = [];
  const p99s = [];
  let received = 0;
  let skippedLines = 0;
  let lost = 0;
  let gaps = 0;
  let missing = 0;
  let outOfOrder = 0;
  let frames = 0;
  let closed = 0;
  for (const reader of readers) {
    const run = reader.run;
    latency.add(run.latency);
    received += run.received;
    skippedLines += run.skippedLines;
    // Neither received nor announced: lost, or still on its way after the late limit.
    lost += Math.max(0, sent - run.received - run.skippedLines);
    gaps += run.gaps;
    missing += run.missing;
    outOfOrder += run.outOfOrder;
    frames += run.frames;
    if (reader.closed) closed += 1;
    shown.push(run.received / printSeconds);
    skipped.push(run.skippedLines / printSeconds);
    p99s.push(run.latency.percentile(99) ?? 0);
  }
  return {
    complete,
    clients: readers.length,
    stalledClients: stalled.length,
    requestedRate: rate === 0 ? 'max' : rate,
    seconds: ms / 1000,
    sentLines: sent,
    // The printer's own rate, from its end line: what it wrote, so what the panel read.
    sentPerSecond: end ? round(end.count / printSeconds, 0) : null,
    sentRatio: end && rate > 0 ? round(end.count / printSeconds / rate, 3) : null,
    // Per client, over the printer's own time: lines shown, and lines announced as skipped.
    shownPerClientMedian: round(median(shown), 0),
    shownPerClientMin: round(Math.min(...shown), 0),
    skippedPerClientMedian: round(median(skipped), 0),
    receivedLines: received,
    skippedLines,
    linesLost: lost,
    sequenceGaps: gaps,
    linesMissingInGaps: missing,
    outOfOrder,
    linesPerFrame: frames > 0 ? round(received / frames, 0) : null,
    latencyP50Ms: round((latency.percentile(50) ?? 0) / 1000, 2),
    latencyP99Ms: round((latency.percentile(99) ?? 0) / 1000, 2),
    worstClientP99Ms: round(Math.max(0, ...p99s) / 1000, 2),
    latencyMaxMs: round(latency.max / 1000, 1),
    clientsClosed: closed,
    panelCpuPercent: round(usage.cpuPercent, 0),
    panelPeakRssMiB: round(usage.peakRss / MiB, 1),
    panelRssGrowthMiB: round(usage.growth / MiB, 1),
    benchClientCpuPercent: round(((client.user + client.system) / 1000 / wallMs) * 100, 0),
    // Share of the row the panel's and the clients' event loops were ready but had no CPU.
    panelWaitedForCpuPercent,
    clientWaitedForCpuPercent,
    othersCpuPercent: round(usage.othersCpuPercent, 0),
    waitedSeconds: round(wallMs / 1000, 1),
  };
}

function describe(result) {
  return (
    `${result.clients} clients${result.stalledClients ? ' + 1 that never reads' : ''} @ ` +
    `${result.requestedRate}: printed ${result.sentPerSecond}/s, shown ` +
    `${result.shownPerClientMedian}/s per client (min ${result.shownPerClientMin}), skipped ` +
    `${result.skippedPerClientMedian}/s, ${result.linesPerFrame} lines per frame, p50/p99 ` +
    `${result.latencyP50Ms}/${result.latencyP99Ms} ms, lost ${result.linesLost}, gaps ` +
    `${result.sequenceGaps}, closed ${result.clientsClosed}, panel CPU ` +
    `${result.panelCpuPercent} %, client CPU ${result.benchClientCpuPercent} %, waited for a ` +
    `CPU ${result.panelWaitedForCpuPercent} / ${result.clientWaitedForCpuPercent} %, peak RSS ` +
    `${result.panelPeakRssMiB} MiB (+${result.panelRssGrowthMiB}), others ` +
    `${result.othersCpuPercent} %`
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

/** Stops and starts the console server: whatever an overrun row left queued is dropped. */
async function restartServer(api) {
  await api.request('POST', `/api/servers/${CONSOLE_SERVER}/stop`);
  const started = await api.call('POST', `/api/servers/${CONSOLE_SERVER}/start`);
  if (started.data.status !== 'running') throw new Error('the console server did not start');
}

export async function consoleScenario({ panel, seeded, dataDir, quick }) {
  const api = panel.api.as(seeded.adminToken);
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
    for (const row of ROWS) {
      if (readers.length > row.clients) await closeAll();
      // Readers closed in an earlier row are replaced, so every row starts with `clients`.
      readers = readers.filter((reader) => !reader.closed);
      if (readers.length < row.clients) {
        readers.push(
          ...(await openReaders(panel, seeded.users, row.clients - readers.length, readers.length)),
        );
      }
      const rowMs = (quick ? row.quickMs : row.ms) ?? ms;
      const result = await cell({
        panel,
        api,
        dataDir,
        readers,
        id: ++id,
        rate: row.rate,
        ms: rowMs,
      });
      log(`console: ${describe(result)}`);
      cells.push(result);
      if (!result.complete) {
        // Lines of this run are still queued somewhere: start the next row from clean.
        await closeAll();
        await restartServer(api);
      }
    }
    await closeAll();

    // One client that never reads, next to readers; first the readers alone.
    const stallMs = quick ? STALL.quickMs : STALL.ms;
    readers = await openReaders(panel, seeded.users, STALL.readers);
    const alone = await cell({
      panel,
      api,
      dataDir,
      readers,
      id: ++id,
      rate: STALL.rate,
      ms: stallMs,
    });
    log(`console: ${describe(alone)}`);
    // The eleventh user: the readers' users are at their cap of 10 sockets.
    const stalledUser = seeded.users[seeded.users.length - 1];
    let stalled = null;
    let bytesAtOpen = 0;
    const result = await cell({
      panel,
      api,
      dataDir,
      readers,
      prepare: async () => {
        stalled = await ConsoleReader.open({
          port: panel.port,
          server: CONSOLE_SERVER,
          token: stalledUser.token,
          read: false,
        });
        bytesAtOpen = stalled.bytes;
        return [stalled];
      },
      id: ++id,
      rate: STALL.rate,
      ms: stallMs,
    });
    result.p99RatioToAlone = round(result.latencyP99Ms / alone.latencyP99Ms, 2);
    // It did not read at all meanwhile (bytes past those that came with the history); now it
    // reads what the panel kept for it: the newest batches, after a count of the lines dropped.
    const bytesWhileStalled = stalled.bytes - bytesAtOpen;
    stalled.resume();
    const deadline = nowMs() + 5_000;
    while (!stalled.closed && stalled.run.end === null && nowMs() < deadline) await sleep(20);
    result.stalledClient = {
      bytesReadWhileStalled: bytesWhileStalled,
      closed: stalled.closed,
      closeCode: stalled.closeInfo?.code ?? null,
      linesReceivedAfterwards: stalled.run.received,
      linesSkipped: stalled.run.skippedLines,
      skippedFrames: stalled.run.skippedFrames,
      receivedTheEnd: stalled.run.end !== null,
      lost: Math.max(0, result.sentLines - stalled.run.received - stalled.run.skippedLines),
    };
    stalled.destroy();
    log(
      `console: ${describe(result)}; the others' p99 ${result.p99RatioToAlone}× alone; the ` +
        `client that never reads read ${bytesWhileStalled} bytes meanwhile, then got ` +
        `${stalled.run.received} lines and ${stalled.run.skippedLines} announced as skipped`,
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
