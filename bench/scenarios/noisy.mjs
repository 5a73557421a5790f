// A noisy server: `GET /api/health` latency while a server of the panel prints without pause
// (`yes`: 2-byte lines, as fast as the pipe takes them), without and then with 10 console
// readers, against the same panel with no server printing. The panel must keep reading the
// output and still answer every request within 50 ms. How fast a bare Node process reads `yes`
// gives the scale of what the panel reads.
import { spawn } from 'node:child_process'; // eslint-disable-line no-restricted-imports -- the baseline reads `yes` itself
import process from 'node:process';
import { cannon } from '../lib/cannon.mjs';
import { children } from '../lib/panel.mjs';
import { ProcessWatch, waitForQuiet } from '../lib/proc.mjs';
import { ConsoleReader } from '../lib/ws-reader.mjs';
import { log, MiB, nowMs, round, sleep } from '../lib/util.mjs';

export const NOISY_SERVER = 'noisy';
const READERS = 10;
/** One request at a time, as a health check or a person's browser does. */
const CONNECTIONS = 1;
const HEALTH = '/api/health';

async function bareRead(seconds) {
  const child = spawn('yes', [], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let bytes = 0;
  child.stdout.on('data', (chunk) => {
    bytes += chunk.length;
  });
  const started = nowMs();
  await sleep(seconds * 1000);
  const rate = bytes / ((nowMs() - started) / 1000);
  child.kill();
  return rate;
}

/** The server's own CPU (whole process tree) since the previous reading, from the stats API. */
async function serverCpu(api) {
  const stats = await api.call('GET', `/api/servers/${NOISY_SERVER}/stats`);
  return stats.data.cpu.percent;
}

async function row({ label, panel, api, seconds, warmupSeconds, readers = [], noisy }) {
  await waitForQuiet();
  await cannon({
    port: panel.port,
    urlPath: HEALTH,
    seconds: warmupSeconds,
    connections: CONNECTIONS,
  });
  if (noisy) await serverCpu(api);
  const before = readers.map((reader) => ({
    lines: reader.logLines,
    skipped: reader.skippedLines,
  }));
  const clientCpu = process.cpuUsage();
  const started = nowMs();
  const watch = new ProcessWatch(panel.pid);
  let measured;
  let usage;
  try {
    measured = await cannon({
      port: panel.port,
      urlPath: HEALTH,
      seconds,
      connections: CONNECTIONS,
    });
  } finally {
    // Its sampling timer would otherwise keep the run alive after a failure.
    usage = watch.stop();
  }
  const { result, latency } = measured;
  const wallSeconds = (nowMs() - started) / 1000;
  const client = process.cpuUsage(clientCpu);
  const received = readers.map((reader, i) => (reader.logLines - before[i].lines) / wallSeconds);
  const skipped = readers.map(
    (reader, i) => (reader.skippedLines - before[i].skipped) / wallSeconds,
  );
  const sorted = [...received].sort((a, b) => a - b);
  return {
    label,
    readers: readers.length,
    requests: result['2xx'],
    errors: result.errors + result.timeouts + result.non2xx,
    requestsPerSecond: round(result['2xx'] / usage.seconds, 0),
    p50Ms: round(latency.percentile(50) / 1000, 2),
    p99Ms: round(latency.percentile(99) / 1000, 2),
    maxMs: round(latency.max / 1000, 1),
    serverCpuPercent: noisy ? round(await serverCpu(api), 0) : null,
    linesPerReaderMedian: readers.length > 0 ? round(sorted[sorted.length >> 1], 0) : null,
    skippedPerReaderMedian: readers.length > 0 ? round(median(skipped), 0) : null,
    readersCutOff: readers.filter((reader) => reader.closed).length,
    // Every line read is shown or counted skipped: `y\n`, 2 bytes each.
    readMiBPerSecond:
      readers.length > 0
        ? round((2 * (sorted[sorted.length >> 1] + median(skipped))) / MiB, 0)
        : null,
    panelCpuPercent: round(usage.cpuPercent, 0),
    panelPeakRssMiB: round(usage.peakRss / MiB, 1),
    panelRssGrowthMiB: round(usage.growth / MiB, 1),
    benchClientCpuPercent: round(
      ((client.user + client.system) / 1000 / (wallSeconds * 1000)) * 100,
      0,
    ),
    othersCpuPercent: round(usage.othersCpuPercent, 0),
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

/** Opens `count` console sockets on the noisy server as `token` (10 sockets per user at most). */
async function openReaders(port, token, count) {
  const readers = [];
  for (let i = 0; i < count; i++) {
    // A socket closed just before may still count against the user for a moment: retry 429.
    for (let attempt = 0; ; attempt++) {
      try {
        readers.push(await ConsoleReader.open({ port, server: NOISY_SERVER, token }));
        break;
      } catch (error) {
        if (error.status !== 429 || attempt >= 50) throw error;
        await sleep(100);
      }
    }
  }
  return readers;
}

function describe(result) {
  return (
    `${result.label}: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms, ` +
    `${result.requestsPerSecond} req/s, panel CPU ${result.panelCpuPercent} %` +
    (result.serverCpuPercent === null ? '' : `, server CPU ${result.serverCpuPercent} %`) +
    (result.readers > 0
      ? `, ${result.linesPerReaderMedian} lines/s per reader (${result.skippedPerReaderMedian}/s ` +
        `skipped: ${result.readMiBPerSecond} MiB/s read), ${result.readersCutOff} cut off`
      : '')
  );
}

export async function noisyScenario({ panel, seeded, quick }) {
  const api = panel.api.as(seeded.adminToken);
  const seconds = quick ? 2 : 4;
  const warmupSeconds = 1;
  const common = { panel, api, seconds, warmupSeconds };
  await api.call('POST', '/api/servers/create', {
    name: NOISY_SERVER,
    displayName: 'Prints without pause',
    startCommand: 'yes',
  });
  let readers = [];
  try {
    const quiet = await row({ ...common, label: 'no server printing', noisy: false });
    log(`noisy: ${describe(quiet)}`);
    const started = await api.call('POST', `/api/servers/${NOISY_SERVER}/start`);
    if (started.data.status !== 'running') throw new Error('the noisy server did not start');
    const alone = await row({ ...common, label: '`yes` running', noisy: true });
    log(`noisy: ${describe(alone)}`);
    readers = await openReaders(panel.port, seeded.adminToken, READERS);
    const watched = await row({
      ...common,
      label: `\`yes\` running, ${READERS} console readers`,
      readers,
      noisy: true,
    });
    log(`noisy: ${describe(watched)}`);
    for (const reader of readers) reader.destroy();
    readers = [];
    await api.call('POST', `/api/servers/${NOISY_SERVER}/stop`);
    await waitForQuiet();
    const bareMiBPerSecond = round((await bareRead(seconds)) / MiB, 0);
    log(`noisy: a bare Node process reads \`yes\` at ${bareMiBPerSecond} MiB/s`);
    for (const result of [alone, watched]) {
      result.p50Ratio = round(result.p50Ms / quiet.p50Ms, 1);
      result.p99Ratio = round(result.p99Ms / quiet.p99Ms, 1);
    }
    return {
      measuredAt: new Date().toISOString(),
      seconds,
      connections: CONNECTIONS,
      bareMiBPerSecond,
      rows: [quiet, alone, watched],
    };
  } finally {
    for (const reader of readers) reader.destroy();
    // Deleting stops it if it still runs.
    await api.request('DELETE', `/api/servers/${NOISY_SERVER}`);
  }
}
