// Turns the results into bench/results.json and the generated part of docs/benchmarks.md (between
// the markers; the prose around them is kept), both formatted with the repository's Prettier
// settings so that `prettier --check` stays clean.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { REPO } from './panel.mjs';

const RESULTS = path.join(REPO, 'bench', 'results.json');
const DOC = path.join(REPO, 'docs', 'benchmarks.md');
export const START = '<!-- bench:results:start (written by npm run bench; edits here are lost) -->';
export const END = '<!-- bench:results:end -->';

const fmt = (value, digits = 0) =>
  value === null || value === undefined
    ? '–'
    : Number(value).toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
const pct = (ratio) => (ratio === null || ratio === undefined ? '–' : `${fmt(ratio * 100)} %`);
const yes = (met) => (met ? '**met**' : '**missed**');
const table = (head, rows) =>
  [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

/** Each target, what was measured against it, and whether it was met. */
export function evaluateTargets(results) {
  const targets = [];
  const me = results.api?.endpoints.find((row) => row.path === '/api/auth/me');
  if (me) {
    targets.push({
      target: '`GET /api/auth/me` ≥ 50 % of the bare route’s throughput',
      measured: `${pct(me.throughputRatio)} (${fmt(me.panel.requestsPerSecond)} vs ${fmt(me.bare.requestsPerSecond)} req/s)`,
      met: me.throughputRatio >= 0.5,
    });
  }
  const fanout = results.console?.cells.find(
    (c) => c.clients === 100 && c.requestedRate === 20_000,
  );
  if (fanout) {
    const delivered = fanout.linesNotReceived === 0 && fanout.clientsCutOff === 0;
    targets.push({
      target: 'console: 100 clients each receive 20,000 lines/s, p99 < 100 ms, none lost',
      measured:
        `${fmt(fanout.deliveredPerClientMedian)} lines/s per client (printer managed ` +
        `${fmt(fanout.sentPerSecond)}/s), p99 ${fmt(fanout.latencyP99Ms, 1)} ms, ` +
        `${fmt(fanout.linesNotReceived)} lines not received within ${results.console.lateLimitSeconds} s`,
      met:
        delivered &&
        fanout.sentPerSecond >= 19_800 &&
        fanout.deliveredPerClientMin >= 19_800 &&
        fanout.latencyP99Ms < 100,
    });
  }
  const stall = results.console?.stall;
  const alone = results.console?.stallAlone;
  if (stall && alone) {
    targets.push({
      target:
        'console: a client that never reads is cut off, memory stays bounded, the others are unaffected',
      measured:
        `${stall.stalledClientCutOff ? `cut off after ${fmt(stall.stalledClientCutOffAfterSeconds, 1)} s` : 'not cut off'}; ` +
        `panel memory +${fmt(stall.panelRssGrowthMiB, 1)} MiB (+${fmt(alone.panelRssGrowthMiB, 1)} without it); ` +
        `the 10 readers: ${fmt(stall.linesNotReceived)} lines not received, ` +
        `p99 ${fmt(stall.latencyP99Ms, 1)} ms (${fmt(alone.latencyP99Ms, 1)} ms without it)`,
      met:
        stall.stalledClientCutOff &&
        stall.linesNotReceived === 0 &&
        stall.clientsCutOff === 0 &&
        stall.panelRssGrowthMiB < 64 &&
        // Unaffected: at most twice the readers' p99 without it, plus 5 ms.
        stall.latencyP99Ms <= 2 * alone.latencyP99Ms + 5,
    });
  }
  const noisy = results.noisy;
  if (noisy) {
    const [quiet, alone, watched] = noisy.rows;
    targets.push({
      target:
        '`GET /api/health` p99 < 50 ms while a server runs `yes`, without and with 10 console readers',
      measured:
        `p99 ${fmt(alone.p99Ms, 1)} ms alone, ${fmt(watched.p99Ms, 1)} ms with 10 readers ` +
        `(${fmt(alone.p99Ratio, 1)}× and ${fmt(watched.p99Ratio, 1)}× the ${fmt(quiet.p99Ms, 2)} ms ` +
        'with no server printing)',
      met:
        alone.p99Ms < 50 &&
        watched.p99Ms < 50 &&
        alone.errors === 0 &&
        watched.errors === 0 &&
        watched.readersCutOff === 0,
    });
  }
  const files = results.files;
  if (files) {
    targets.push(
      {
        target: 'upload ≥ 50 % of a plain stream write (with fsync, as the panel does)',
        measured: `${pct(files.upload.ratio)} (${fmt(files.upload.mibPerSecond)} vs ${fmt(files.upload.plainStreamMibPerSecond)} MiB/s)`,
        met: files.upload.ratio >= 0.5,
      },
      {
        target: 'download ≥ 70 % of a plain stream read',
        measured: `${pct(files.download.ratio)} (${fmt(files.download.mibPerSecond)} vs ${fmt(files.download.plainStreamMibPerSecond)} MiB/s)`,
        met: files.download.ratio >= 0.7,
      },
      {
        target: 'panel memory growth < 64 MiB during a 1 GiB transfer',
        measured: `upload +${fmt(files.upload.panelRssGrowthMiB, 1)} MiB, download +${fmt(files.download.panelRssGrowthMiB, 1)} MiB`,
        met: Math.max(files.upload.panelRssGrowthMiB, files.download.panelRssGrowthMiB) < 64,
      },
      {
        target: 'listing a folder of 10,000 files < 100 ms',
        measured: `median ${fmt(files.listing.p50Ms, 1)} ms (max ${fmt(files.listing.maxMs, 1)} ms)`,
        met: files.listing.p50Ms < 100,
      },
    );
  }
  for (const row of results.startup?.rows ?? []) {
    targets.push({
      target: `start-up < 1 s, ${row.label}`,
      measured: `median ${fmt(row.medianMs)} ms (${fmt(row.minMs)} to ${fmt(row.maxMs)})`,
      met: row.medianMs < 1000,
    });
  }
  return targets;
}

function markdown(results) {
  const { machine } = results;
  const out = [];
  out.push(
    `Measured ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC on ${machine.cores} cores ` +
      `(${machine.cpu}), ${fmt(machine.memoryGiB, 1)} GiB, Node ${machine.node}, ${machine.platform}; ` +
      `the panel ${results.panelLog.sandbox ?? 'with an unknown sandbox setting'}. ` +
      `The whole \`npm run bench\` took ${fmt(results.runSeconds)} s (build included: ` +
      `${results.buildSeconds === null ? 'not measured' : `${fmt(results.buildSeconds)} s`}). ` +
      `Other processes on the machine used ${fmt(results.background.othersCpuPercent)} % of a core ` +
      `when the run began (after waiting ${fmt(results.background.waitedForQuietSeconds)} s for ` +
      `quiet), and ${fmt(results.background.duringRunOthersCpuPercent)} % on average during it ` +
      `(100 % = one core); rows waited ${fmt(results.background.rowsWaitedForQuietSeconds)} s in all ` +
      'for the machine to calm down.',
  );
  out.push(
    '"Others’ CPU" columns give the CPU used meanwhile by processes outside the benchmark ' +
      '(100 % = one core of the two): anything above a few percent took cores from the panel ' +
      'and made its figures worse.',
  );
  out.push('### Targets');
  out.push(
    table(
      ['target', 'measured', ''],
      results.targets.map((t) => [t.target, t.measured, yes(t.met)]),
    ),
  );

  if (results.api) {
    out.push('### 1. API overhead');
    out.push(
      `autocannon, ${results.api.connections} connections, ${results.api.warmupSeconds} s warm-up then ` +
        `${results.api.seconds} s measured per row; latency of every response. The bare route is ` +
        'Fastify in another process answering the same JSON body.',
    );
    out.push(
      table(
        [
          'endpoint',
          'body',
          'panel req/s',
          'p50 / p99 ms',
          'panel CPU',
          'bare req/s',
          'p50 / p99 ms',
          'panel / bare',
          'others’ CPU',
        ],
        results.api.endpoints.map((row) => [
          `\`${row.endpoint}\``,
          `${fmt(row.responseBytes / 1024, 1)} KiB`,
          fmt(row.panel.requestsPerSecond),
          `${fmt(row.panel.p50Ms, 2)} / ${fmt(row.panel.p99Ms, 2)}`,
          `${fmt(row.panel.cpuPercent)} %`,
          fmt(row.bare.requestsPerSecond),
          `${fmt(row.bare.p50Ms, 2)} / ${fmt(row.bare.p99Ms, 2)}`,
          pct(row.throughputRatio),
          `${fmt(row.panel.othersCpuPercent)} / ${fmt(row.bare.othersCpuPercent)} %`,
        ]),
      ),
    );
  }

  if (results.console) {
    const c = results.console;
    out.push('### 2. Console fan-out');
    out.push(
      `Each row: the printer prints for ${fmt(c.seconds, 1)} s; lines still missing ` +
        `${c.lateLimitSeconds} s after it stopped count as not received. Latency is from the ` +
        'timestamp written into the line to its arrival at the client, over every line every ' +
        'client received. "max" is as fast as the pipe to the panel takes lines.',
    );
    const row = (cell) => [
      `${cell.clients}${cell.stalledClients ? ' + 1 that never reads' : ''}`,
      typeof cell.requestedRate === 'number' ? fmt(cell.requestedRate) : cell.requestedRate,
      fmt(cell.sentPerSecond),
      `${fmt(cell.deliveredPerClientMedian)} / ${fmt(cell.deliveredPerClientMin)}`,
      `${fmt(cell.latencyP50Ms, 1)} / ${fmt(cell.latencyP99Ms, 1)}`,
      `${fmt(cell.linesNotReceived)}${cell.clientsCutOff ? ` (${cell.clientsCutOff} cut off)` : ''}`,
      `${fmt(cell.panelCpuPercent)} %`,
      `${fmt(cell.panelPeakRssMiB)} (+${fmt(cell.panelRssGrowthMiB, 1)})`,
      `${fmt(cell.benchClientCpuPercent)} %`,
      `${fmt(cell.othersCpuPercent)} %`,
    ];
    out.push(
      table(
        [
          'clients',
          'asked lines/s',
          'printed lines/s',
          'delivered lines/s per client (median / min)',
          'latency p50 / p99 ms',
          'lines not received',
          'panel CPU',
          'panel peak RSS MiB (growth)',
          'client CPU',
          'others’ CPU',
        ],
        [...c.cells, c.stallAlone, c.stall].map(row),
      ),
    );
    const gaps = [...c.cells, c.stallAlone, c.stall].reduce(
      (sum, cell) => sum + cell.sequenceGaps,
      0,
    );
    out.push(
      gaps === 0
        ? 'No client ever saw a gap in the sequence numbers: lines "not received" were late ' +
            '(still queued in the panel or held back in the pipe), never skipped.'
        : `Clients saw ${fmt(gaps)} lines missing from the middle of the sequence.`,
    );
    out.push(
      `The client that never reads was ${c.stall.stalledClientCutOff ? `cut off by the panel ${fmt(c.stall.stalledClientCutOffAfterSeconds, 1)} s after the printing began, having received ${fmt(c.stall.stalledClientReceivedMiB, 1)} MiB` : '**not** cut off'}; ` +
        `compare the last row with the one before it: the same 10 readers at ${fmt(c.stall.requestedRate)} lines/s for ${fmt(c.stall.seconds)} s without it.`,
    );
  }

  if (results.files) {
    const f = results.files;
    out.push('### 3. Files');
    out.push(
      `${fmt(f.bytes / 2 ** 20)} MiB of random bytes, each transfer ${f.upload.runs}× (median shown, ` +
        'then every run). The plain stream runs in another process: ' +
        '`createReadStream` → `createWriteStream` then `fsync` (the panel flushes uploads too), and ' +
        '`createReadStream` into nothing. Every file was just written, so reads come from the page cache.',
    );
    out.push(
      table(
        [
          '',
          'panel MiB/s',
          'plain stream MiB/s',
          'panel / plain',
          'panel CPU',
          'panel RSS growth',
          'others’ CPU',
        ],
        [
          [
            'upload (multipart `POST …/files/upload`)',
            `${fmt(f.upload.mibPerSecond)} (${f.upload.allMibPerSecond.map((v) => fmt(v)).join(', ')})`,
            `${fmt(f.upload.plainStreamMibPerSecond)} (${fmt(f.upload.plainStreamWithoutFsyncMibPerSecond)} without fsync)`,
            `${pct(f.upload.ratio)} (${pct(f.upload.ratioWithoutFsync)})`,
            `${fmt(f.upload.panelCpuPercent)} %`,
            `+${fmt(f.upload.panelRssGrowthMiB, 1)} MiB (peak ${fmt(f.upload.panelPeakRssMiB)} MiB)`,
            `${fmt(f.upload.othersCpuPercent)} %`,
          ],
          [
            'download (`GET …/files/download`)',
            `${fmt(f.download.mibPerSecond)} (${f.download.allMibPerSecond.map((v) => fmt(v)).join(', ')})`,
            fmt(f.download.plainStreamMibPerSecond),
            pct(f.download.ratio),
            `${fmt(f.download.panelCpuPercent)} %`,
            `+${fmt(f.download.panelRssGrowthMiB, 1)} MiB (peak ${fmt(f.download.panelPeakRssMiB)} MiB)`,
            `${fmt(f.download.othersCpuPercent)} %`,
          ],
        ],
      ),
    );
    out.push(
      'What HTTP on loopback costs by itself, measured with a bare Fastify in another process: ' +
        `streaming the same file (\`createReadStream\` as the reply, 1 MiB chunks, as the panel does) ` +
        `gave ${fmt(f.download.bareFastifyMibPerSecond)} MiB/s, the panel ${pct(f.download.ratioToBareFastify)} ` +
        `of that; taking the same upload (\`@fastify/multipart\`, piped into a file, then \`fsync\`) ` +
        `gave ${fmt(f.upload.bareFastifyMibPerSecond)} MiB/s, the panel ${pct(f.upload.ratioToBareFastify)} of that.`,
    );
    out.push(
      `Listing a folder of ${fmt(f.listing.entries)} files (\`GET …/files?path=many\`, ` +
        `${fmt(f.listing.responseBytes / 2 ** 20, 1)} MiB of JSON), ${f.listing.runs} requests after two ` +
        `warm-ups: median ${fmt(f.listing.p50Ms, 1)} ms, min ${fmt(f.listing.minMs, 1)} ms, ` +
        `max ${fmt(f.listing.maxMs, 1)} ms. ${f.listing.concurrent} such requests at once took ` +
        `${fmt(f.listing.concurrentWallMs)} ms in all (slowest answer ${fmt(f.listing.concurrentSlowestMs)} ms).`,
    );
  }

  if (results.startup) {
    out.push('### 4. Start-up');
    out.push(
      'From spawning `node dist/server.js` to the first 200 of `/api/health` (polled every 2 ms), ' +
        `${results.startup.runs} starts each.`,
    );
    out.push(
      table(
        ['data directory', 'median ms', 'min ms', 'max ms', 'slowest SIGTERM shutdown ms'],
        results.startup.rows.map((row) => [
          row.label,
          fmt(row.medianMs),
          fmt(row.minMs),
          fmt(row.maxMs),
          row.shutdownMaxMs === null ? 'killed after 15 s' : fmt(row.shutdownMaxMs),
        ]),
      ),
    );
  }
  if (results.noisy) {
    const n = results.noisy;
    out.push('### 5. A server that never stops printing');
    const separately =
      results.startedAt &&
      Math.abs(Date.parse(n.measuredAt) - Date.parse(results.startedAt)) > 3_600_000
        ? ` Measured separately, ${n.measuredAt.slice(0, 16).replace('T', ' ')} UTC (\`npm run bench -- --only noisy\`).`
        : '';
    const watched = n.rows.find((row) => row.readers > 0);
    out.push(
      `autocannon on \`GET /api/health\`, ${n.connections} connection (one request at a time), ` +
        `1 s warm-up then ${n.seconds} s measured per row: with no server printing, while the ` +
        'server `noisy` runs `yes` (2-byte lines as fast as the pipe takes them), and then with ' +
        '10 console sockets reading it. "vs quiet" divides by the first row. Server CPU is ' +
        "`yes`'s own (stats API): it prints as fast as the panel empties the pipe. Lines a reader " +
        'did not get were read and counted by the panel, and announced as skipped.' +
        separately,
    );
    out.push(
      table(
        [
          '',
          'req/s',
          'p50 / p99 / max ms',
          'p50 / p99 vs quiet',
          'panel CPU',
          'server CPU',
          'lines/s per reader (skipped/s)',
          'readers cut off',
          'others’ CPU',
        ],
        n.rows.map((row) => [
          row.label,
          fmt(row.requestsPerSecond),
          `${fmt(row.p50Ms, 2)} / ${fmt(row.p99Ms, 2)} / ${fmt(row.maxMs, 1)}`,
          row.p99Ratio === undefined ? '–' : `${fmt(row.p50Ratio, 1)}× / ${fmt(row.p99Ratio, 1)}×`,
          `${fmt(row.panelCpuPercent)} %`,
          row.serverCpuPercent === null ? '–' : `${fmt(row.serverCpuPercent)} %`,
          row.readers > 0
            ? `${fmt(row.linesPerReaderMedian)} (${fmt(row.skippedPerReaderMedian)})`
            : '–',
          row.readers > 0 ? fmt(row.readersCutOff) : '–',
          `${fmt(row.othersCpuPercent)} %`,
        ]),
      ),
    );
    if (watched?.readMiBPerSecond !== undefined && n.bareMiBPerSecond !== undefined) {
      out.push(
        `With the readers, the panel read \`yes\` at ${fmt(watched.readMiBPerSecond)} MiB/s ` +
          `(lines shown plus lines skipped, 2 bytes each); a bare Node process that only reads ` +
          `it managed ${fmt(n.bareMiBPerSecond)} MiB/s.`,
      );
    }
  }
  const notes = Object.entries(results.panelLog.warningsAndErrors);
  out.push(
    notes.length === 0
      ? 'The panel logged no warning or error during the run.'
      : `The panel logged: ${notes.map(([message, count]) => `${message} (${count}×)`).join('; ')}.`,
  );
  return out.join('\n\n');
}

const SKELETON = `# Benchmarks

${START}
${END}
`;

export async function writeReport(results) {
  const config = (await prettier.resolveConfig(DOC)) ?? {};
  const json = await prettier.format(JSON.stringify(results), { ...config, filepath: RESULTS });
  writeFileSync(RESULTS, json);

  const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : SKELETON;
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  const base = start >= 0 && end > start ? doc : `${doc.trimEnd()}\n\n${START}\n${END}\n`;
  const from = base.indexOf(START) + START.length;
  const to = base.indexOf(END);
  const updated = `${base.slice(0, from)}\n\n${markdown(results)}\n\n${base.slice(to)}`;
  writeFileSync(DOC, await prettier.format(updated, { ...config, filepath: DOC }));
}
