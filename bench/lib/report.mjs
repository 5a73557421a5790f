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
  const ui = results.ui;
  if (ui?.firstPage) {
    targets.push({
      target: 'UI: JavaScript of the first page (sign-in, then the server list) ≤ 250 KB gzip',
      measured: `${fmt(ui.firstPage.gzipBytes / 1000, 1)} KB gzip in ${Object.keys(ui.firstPage.files).length} files (${fmt(ui.firstPage.bytes / 1000, 0)} KB as built)`,
      met: ui.firstPage.gzipBytes <= 250_000,
    });
  }
  if (ui?.consoleFlood) {
    const flood = ui.consoleFlood;
    targets.push({
      target: `UI: the console keeps up with ${fmt(flood.rate)} lines/s for ${flood.seconds} s, no main-thread task over 200 ms`,
      measured: `${fmt(flood.longTasks)} long tasks (over 50 ms), the longest ${fmt(flood.longTaskMaxMs)} ms, ${fmt(flood.longTaskTotalMs)} ms in all; the printer's end line ${flood.shownEndLine ? `shown ${fmt(flood.pageSeconds, 1)} s after the command` : 'never shown'}`,
      met: flood.shownEndLine && flood.longTaskMaxMs <= 200,
    });
  }
  const me = results.api?.endpoints.find((row) => row.path === '/api/auth/me');
  if (me) {
    targets.push({
      target: '`GET /api/auth/me` ≥ 50 % of the bare route’s throughput',
      measured: `${pct(me.throughputRatio)} (${fmt(me.panel.requestsPerSecond)} vs ${fmt(me.bare.requestsPerSecond)} req/s)`,
      met: me.throughputRatio >= 0.5,
    });
  }
  // Console (protocol v2, issue 12): the four targets of the issue.
  const fanout = results.console?.cells.find(
    (c) => c.clients === 100 && c.requestedRate === 20_000,
  );
  if (fanout) {
    const expected = fanout.sentLines * fanout.clients;
    targets.push(
      {
        target:
          'console: 100 readers (another process), the server printing 20,000 lines/s for 5 s: every reader receives every line (0 skipped, 0 lost), p99 < 100 ms',
        measured:
          `${fmt(fanout.receivedLines)} of ${fmt(expected)} lines received over ${fmt(fanout.seconds, 1)} s, ` +
          `${fmt(fanout.skippedLines)} skipped, ${fmt(fanout.linesLost)} lost, ` +
          `${fmt(fanout.sequenceGaps + fanout.outOfOrder)} gaps or out of order; ` +
          `p99 ${fmt(fanout.latencyP99Ms, 1)} ms (p50 ${fmt(fanout.latencyP50Ms, 1)}, max ${fmt(fanout.latencyMaxMs)})`,
        met:
          fanout.complete &&
          fanout.receivedLines === expected &&
          fanout.skippedLines === 0 &&
          fanout.linesLost === 0 &&
          fanout.sequenceGaps === 0 &&
          fanout.outOfOrder === 0 &&
          fanout.clientsClosed === 0 &&
          fanout.latencyP99Ms < 100,
      },
      {
        target:
          'console: same row, the printer’s own rate ≥ 95 % of the 20,000 lines/s asked (the panel never slows the server)',
        measured: `${fmt(fanout.sentPerSecond)} lines/s (${pct(fanout.sentRatio)}), from its end line`,
        met: fanout.sentRatio !== null && fanout.sentRatio >= 0.95,
      },
    );
  }
  const drain = results.console?.cells.find((c) => c.clients === 1 && c.requestedRate === 'max');
  if (drain) {
    targets.push({
      target:
        'console: 1 reader, the server printing as fast as the pipe takes: ≥ 200,000 lines/s drained',
      measured:
        `${fmt(drain.sentPerSecond)} lines/s printed, so read by the panel; the reader was shown ` +
        `${fmt(drain.shownPerClientMedian)}/s and told ${fmt(drain.skippedPerClientMedian)}/s were skipped` +
        (drain.linesLost > 0 ? `; ${fmt(drain.linesLost)} lines lost` : ''),
      met: drain.sentPerSecond !== null && drain.sentPerSecond >= 200_000,
    });
  }
  const stall = results.console?.stall;
  const alone = results.console?.stallAlone;
  if (stall && alone) {
    targets.push({
      target:
        'console: 10 readers + 1 that never reads, 5,000 lines/s: the readers’ p99 within 2× of the same 10 alone; panel memory growth < 32 MiB',
      measured:
        `p99 ${fmt(stall.latencyP99Ms, 1)} ms vs ${fmt(alone.latencyP99Ms, 1)} ms alone ` +
        `(${fmt(stall.p99RatioToAlone, 2)}×); panel memory +${fmt(stall.panelRssGrowthMiB, 1)} MiB ` +
        `(+${fmt(alone.panelRssGrowthMiB, 1)} alone); the readers: ${fmt(stall.skippedLines)} skipped, ` +
        `${fmt(stall.linesLost)} lost; for the one that never reads the panel skipped ` +
        `${fmt(stall.stalledClient.linesSkipped)} lines`,
      met: stall.p99RatioToAlone <= 2 && stall.panelRssGrowthMiB < 32,
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
        target:
          'upload of 1 GiB ≥ 80 % of a bare Fastify multipart upload into a file (temporary file, fsync, rename), same run; panel memory growth < 64 MiB',
        measured:
          `${pct(files.upload.ratioToBareFastify)} (${fmt(files.upload.mibPerSecond)} vs ` +
          `${fmt(files.upload.bareFastifyMibPerSecond)} MiB/s; a plain stream copy with fsync ` +
          `${fmt(files.upload.plainStreamMibPerSecond)} MiB/s), +${fmt(files.upload.panelRssGrowthMiB, 1)} MiB`,
        met: files.upload.ratioToBareFastify >= 0.8 && files.upload.panelRssGrowthMiB < 64,
      },
      {
        target: 'download of 1 GiB ≥ 90 % of a bare Fastify streaming the same file, same run',
        measured:
          `${pct(files.download.ratioToBareFastify)} (${fmt(files.download.mibPerSecond)} vs ` +
          `${fmt(files.download.bareFastifyMibPerSecond)} MiB/s; a plain stream read ` +
          `${fmt(files.download.plainStreamMibPerSecond)} MiB/s)`,
        met: files.download.ratioToBareFastify >= 0.9,
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
  const sftp = results.sftp;
  if (sftp?.upload) {
    const versus = (direction) => {
      const d = sftp[direction];
      return (
        `${pct(d.ratioToOpenssh)} (${fmt(d.panelSftp.mibPerSecond)} vs ` +
        `${fmt(d.openssh.mibPerSecond)} MiB/s; the HTTP API ${fmt(d.http.mibPerSecond)} MiB/s)`
      );
    };
    // Half: a world of gigabytes never takes more than twice as long as through OpenSSH on the
    // same machine, while the panel checks the rights of now, the quota and the audit log on
    // every request (docs/sftp.md) in the event loop that also serves the API.
    targets.push(
      {
        target: `SFTP: upload of ${fmt(sftp.bytes / 2 ** 20)} MiB ≥ 50 % of OpenSSH's sshd (internal-sftp), same client, same disk, same run`,
        measured: versus('upload'),
        met: sftp.upload.ratioToOpenssh >= 0.5,
      },
      {
        target: `SFTP: download of ${fmt(sftp.bytes / 2 ** 20)} MiB ≥ 50 % of OpenSSH's sshd (internal-sftp), same client, same run`,
        measured: versus('download'),
        met: sftp.download.ratioToOpenssh >= 0.5,
      },
      {
        target: `SFTP: panel memory growth < 64 MiB during a ${fmt(sftp.bytes / 2 ** 20)} MiB transfer`,
        measured: `upload +${fmt(sftp.upload.panelSftp.panelRssGrowthMiB, 1)} MiB, download +${fmt(sftp.download.panelSftp.panelRssGrowthMiB, 1)} MiB`,
        met:
          Math.max(
            sftp.upload.panelSftp.panelRssGrowthMiB,
            sftp.download.panelSftp.panelRssGrowthMiB,
          ) < 64,
      },
    );
  }
  const backups = results.backups;
  if (backups) {
    const rows = [backups.big, backups.many];
    const growth = (row) => Math.max(row.backup.panelRssGrowthMiB, row.restore.panelRssGrowthMiB);
    targets.push(
      {
        target: `backups: a ${fmt(backups.bigFileBytes / 2 ** 20)} MiB file and ${fmt(backups.smallFiles)} small files round-trip byte for byte (download = recorded sha256; restore = the folder backed up)`,
        measured: rows
          .map(
            (row) =>
              `${row.label}: ${row.download.checksumMatches ? 'checksum matches' : 'checksum differs'}, ${row.identical ? 'identical' : 'not identical'}`,
          )
          .join('; '),
        met: rows.every((row) => row.identical && row.download.checksumMatches),
      },
      {
        target: `backups: panel memory growth < 64 MiB while backing up and restoring the ${fmt(backups.bigFileBytes / 2 ** 20)} MiB file, < 128 MiB for the ${fmt(backups.smallFiles)} files`,
        measured: rows
          .map(
            (row) =>
              `${row.label}: backup +${fmt(row.backup.panelRssGrowthMiB, 1)} MiB, restore +${fmt(row.restore.panelRssGrowthMiB, 1)} MiB`,
          )
          .join('; '),
        met: growth(backups.big) < 64 && growth(backups.many) < 128,
      },
      {
        target: `backups: the ${fmt(backups.bigFileBytes / 2 ** 20)} MiB file backed up in ≤ 3× the time of \`tar -czf\` + fsync, restored in ≤ 3× that of \`tar -xzf\`, same run`,
        measured:
          `backup ${fmt(backups.big.timeRatioToTar, 2)}× (${fmt(backups.big.backup.seconds, 1)} s vs ${fmt(backups.big.tar.seconds, 1)} s), ` +
          `restore ${fmt(backups.big.restoreTimeRatioToTar, 2)}× (${fmt(backups.big.restore.seconds, 1)} s vs ${fmt(backups.big.tar.unpackSeconds, 1)} s); ` +
          `for the ${fmt(backups.smallFiles)} files (no target): ${fmt(backups.many.timeRatioToTar, 1)}× and ${fmt(backups.many.restoreTimeRatioToTar, 1)}×`,
        met: backups.big.timeRatioToTar <= 3 && backups.big.restoreTimeRatioToTar <= 3,
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
    const rows = [...c.cells, c.stallAlone, c.stall];
    out.push('### 2. Console fan-out');
    out.push(
      'Console protocol v2 (batches of lines). Each row: the printer prints for the seconds in ' +
        `column "s" (${fmt(c.seconds, 1)} s unless said); lines neither received nor announced ` +
        `in a \`skipped\` frame ${c.lateLimitSeconds} s after it stopped count as lost. "printed" is ` +
        'the printer’s own rate from its end line: what it wrote, so what the panel read. Shown and ' +
        'skipped are per client, over the printer’s time. Latency is from the timestamp written into ' +
        'the line to the arrival of its frame at the client, over every line every client received. ' +
        '"max" is as fast as the pipe to the panel takes lines. The clients run in the benchmark’s ' +
        'process, not the panel’s ("client CPU"). "Waiting for a CPU" is the share of the row the ' +
        'panel’s and the clients’ event loops were ready to run but had no core (`/proc/<pid>/schedstat`): ' +
        'where it is high, the machine, not the code, set the pace.',
    );
    const row = (cell) => [
      `${cell.clients}${cell.stalledClients ? ' + 1 that never reads' : ''}`,
      typeof cell.requestedRate === 'number' ? fmt(cell.requestedRate) : cell.requestedRate,
      fmt(cell.seconds, 1),
      `${fmt(cell.sentPerSecond)}${cell.sentRatio === null ? '' : ` (${pct(cell.sentRatio)})`}`,
      `${fmt(cell.shownPerClientMedian)} / ${fmt(cell.shownPerClientMin)}`,
      fmt(cell.skippedPerClientMedian),
      `${fmt(cell.linesLost)}${cell.clientsClosed ? ` (${cell.clientsClosed} closed)` : ''}`,
      fmt(cell.linesPerFrame),
      `${fmt(cell.latencyP50Ms, 1)} / ${fmt(cell.latencyP99Ms, 1)} / ${fmt(cell.latencyMaxMs)}`,
      `${fmt(cell.panelCpuPercent)} %`,
      `${fmt(cell.panelPeakRssMiB)} (+${fmt(cell.panelRssGrowthMiB, 1)})`,
      `${fmt(cell.benchClientCpuPercent)} %`,
      `${fmt(cell.panelWaitedForCpuPercent)} / ${fmt(cell.clientWaitedForCpuPercent)} %`,
      `${fmt(cell.othersCpuPercent)} %`,
    ];
    out.push(
      table(
        [
          'clients',
          'asked lines/s',
          's',
          'printed lines/s',
          'shown lines/s per client (median / min)',
          'skipped lines/s per client',
          'lines lost',
          'lines per frame',
          'latency p50 / p99 / max ms',
          'panel CPU',
          'panel peak RSS MiB (growth)',
          'client CPU',
          'panel / client waiting for a CPU',
          'others’ CPU',
        ],
        rows.map(row),
      ),
    );
    const outOfOrder = rows.reduce((sum, cell) => sum + cell.outOfOrder, 0);
    const unannounced = rows.filter(
      (cell) => cell.linesLost > 0 || cell.linesMissingInGaps > cell.skippedLines,
    );
    out.push(
      (unannounced.length === 0
        ? 'Every line a client did not receive was announced to it in a `skipped` frame'
        : `In ${unannounced.length} rows lines went missing without a \`skipped\` frame`) +
        (outOfOrder === 0
          ? '; no line arrived out of order.'
          : `; ${fmt(outOfOrder)} times a line arrived out of order.`),
    );
    const s = c.stall.stalledClient;
    out.push(
      `The client that never reads stops reading at the TCP level: it read ${fmt(s.bytesReadWhileStalled)} ` +
        `bytes while its row ran. When it read again it got ${fmt(s.linesReceivedAfterwards)} lines and ` +
        `was told in ${fmt(s.skippedFrames)} \`skipped\` frame${s.skippedFrames === 1 ? '' : 's'} that ${fmt(s.linesSkipped)} were dropped ` +
        `for it${s.receivedTheEnd ? ', up to the end of the run' : ''}${s.closed ? `; it was closed (${s.closeCode})` : ''}. ` +
        `Compare the last row with the one before it: the same 10 readers at ${fmt(c.stall.requestedRate)} ` +
        `lines/s for ${fmt(c.stall.seconds)} s without it; their p99 next to it was ` +
        `${fmt(c.stall.p99RatioToAlone, 2)}× that.`,
    );
  }

  if (results.files) {
    const f = results.files;
    out.push('### 3. Files');
    out.push(
      `${fmt(f.bytes / 2 ** 20)} MiB of random bytes, each transfer ${f.upload.runs}× (median shown, ` +
        'then every run), the panel and a bare Fastify in another process taking turns. The bare ' +
        'Fastify does the same work with nothing else: `@fastify/multipart` piped into a ' +
        'temporary file, `fsync`, rename into place; a `createReadStream` (4 MiB chunks) as the ' +
        'reply. "panel / bare" is the median of the run-by-run ratios. The plain stream, for ' +
        'context, runs in another process too: `createReadStream` → `createWriteStream` then ' +
        '`fsync`, and `createReadStream` into nothing. Every file was just written, so reads come ' +
        'from the page cache.',
    );
    out.push(
      table(
        [
          '',
          'panel MiB/s',
          'bare Fastify MiB/s',
          'panel / bare',
          'plain stream MiB/s',
          'panel / bare CPU',
          'panel RSS growth',
          'others’ CPU',
        ],
        [
          [
            'upload (multipart `POST …/files/upload`)',
            `${fmt(f.upload.mibPerSecond)} (${f.upload.allMibPerSecond.map((v) => fmt(v)).join(', ')})`,
            `${fmt(f.upload.bareFastifyMibPerSecond)} (${(f.upload.bareFastifyAllMibPerSecond ?? []).map((v) => fmt(v)).join(', ')})`,
            pct(f.upload.ratioToBareFastify),
            `${fmt(f.upload.plainStreamMibPerSecond)} (${fmt(f.upload.plainStreamWithoutFsyncMibPerSecond)} without fsync)`,
            `${fmt(f.upload.panelCpuPercent)} / ${fmt(f.upload.bareFastifyCpuPercent)} %`,
            `+${fmt(f.upload.panelRssGrowthMiB, 1)} MiB (peak ${fmt(f.upload.panelPeakRssMiB)} MiB)`,
            `${fmt(f.upload.othersCpuPercent)} %`,
          ],
          [
            'download (`GET …/files/download`)',
            `${fmt(f.download.mibPerSecond)} (${f.download.allMibPerSecond.map((v) => fmt(v)).join(', ')})`,
            `${fmt(f.download.bareFastifyMibPerSecond)} (${(f.download.bareFastifyAllMibPerSecond ?? []).map((v) => fmt(v)).join(', ')})`,
            pct(f.download.ratioToBareFastify),
            fmt(f.download.plainStreamMibPerSecond),
            `${fmt(f.download.panelCpuPercent)} / ${fmt(f.download.bareFastifyCpuPercent)} %`,
            `+${fmt(f.download.panelRssGrowthMiB, 1)} MiB (peak ${fmt(f.download.panelPeakRssMiB)} MiB)`,
            `${fmt(f.download.othersCpuPercent)} %`,
          ],
        ],
      ),
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
      'From spawning `node dist/panel.mjs` to the first 200 of `/api/health` (polled every 2 ms), ' +
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
  if (results.backups) {
    const b = results.backups;
    out.push('### 6. Backups');
    out.push(
      `Two servers made for the scenario: one with a single ${fmt(b.bigFileBytes / 2 ** 20)} MiB file ` +
        `of random bytes (incompressible), one with ${fmt(b.smallFiles)} files of 0 to 8 KiB in ` +
        '100 folders. Each is backed up through the API (`POST …/backups`, polled every 50 ms ' +
        'until `done`), downloaded (the sha256 of the bytes received checked against the recorded ' +
        'checksum) and restored (`POST …/backups/{id}/restore`, until `lastRestore` is `done`) over ' +
        'a folder changed meanwhile, which is then compared file by file (path, mode, size, sha256) ' +
        'with the folder backed up. Right after the panel, the system’s `tar -czf` packs the same ' +
        'folder (then an fsync of its archive, as the panel flushes its own) and `tar -xzf` unpacks ' +
        'that archive into an empty folder; "÷ tar" divides the panel’s time by tar’s. Memory is ' +
        'the panel’s growth over each job (peak minus the resident size when it began).',
    );
    out.push(
      table(
        [
          '',
          'archive',
          'backup s (MiB/s)',
          '`tar -czf` s',
          'backup ÷ tar',
          'panel CPU',
          'panel RSS growth',
          'download MiB/s',
          'restore s',
          '`tar -xzf` s',
          'restore ÷ tar',
          'panel RSS growth',
          'identical',
          'others’ CPU',
        ],
        [b.big, b.many].map((row) => [
          `${row.label} (${fmt(row.unpackedBytes / 2 ** 20, 1)} MiB, ${fmt(row.entries)} entries)`,
          `${fmt(row.archiveBytes / 2 ** 20, 1)} MiB`,
          `${fmt(row.backup.seconds, 1)} (${fmt(row.backup.mibPerSecond)})`,
          fmt(row.tar.seconds, 1),
          `${fmt(row.timeRatioToTar, 2)}×`,
          `${fmt(row.backup.panelCpuPercent)} %`,
          `+${fmt(row.backup.panelRssGrowthMiB, 1)} MiB`,
          fmt(row.download.mibPerSecond),
          fmt(row.restore.seconds, 1),
          fmt(row.tar.unpackSeconds, 1),
          `${fmt(row.restoreTimeRatioToTar, 2)}×`,
          `+${fmt(row.restore.panelRssGrowthMiB, 1)} MiB`,
          row.identical && row.download.checksumMatches ? 'yes' : '**no**',
          `${fmt(row.backup.othersCpuPercent)} / ${fmt(row.restore.othersCpuPercent)} %`,
        ]),
      ),
    );
  }
  if (results.sftp?.skipped) {
    out.push('### 7. SFTP');
    out.push(`Skipped: ${results.sftp.skipped}.`);
  } else if (results.sftp) {
    const s = results.sftp;
    const all = (side) =>
      `${fmt(side.mibPerSecond)} (${side.allMibPerSecond.map((v) => fmt(v)).join(', ')})`;
    const cipher = (way) => (way.cipher === null ? 'an unknown cipher' : `\`${way.cipher}\``);
    out.push('### 7. SFTP');
    out.push(
      `${fmt(s.bytes / 2 ** 20)} MiB of random bytes, each transfer ${s.runs}× (median shown, then ` +
        'every run), with OpenSSH’s own `sftp` client in batch mode (its defaults: 32 KiB ' +
        'requests, 64 in flight): through the panel’s SFTP server (the admin’s password, typed ' +
        'by `sshpass`), through a real OpenSSH sshd started for the run on loopback (`Subsystem ' +
        'sftp internal-sftp`, a key for root) writing into the same work directory, and through ' +
        'the panel’s HTTP API (multipart upload, download into a file). The three take turns, ' +
        'the order reversed every other run; "panel / OpenSSH" and "panel / HTTP" are medians ' +
        'of the run-by-run ratios. Uploads are flushed before they are closed: `put -f` ' +
        '(fsync@openssh.com) for both SFTP servers, as the panel always does and as its HTTP ' +
        `upload does. Ciphers agreed on: ${cipher(s.signIn.panelSftp)} with the panel, ` +
        `${cipher(s.signIn.openssh)} with sshd. Each transfer's time includes signing in, which ` +
        `alone (a batch of one \`pwd\`) took ${fmt(s.signIn.panelSftp.ms)} ms on the panel ` +
        `(its password check) and ${fmt(s.signIn.openssh.ms)} ms on sshd. ` +
        `Every download was compared with the file sent (size and sha256): ` +
        `${fmt(s.downloadsVerified)} identical.`,
    );
    out.push(
      table(
        [
          '',
          'panel SFTP MiB/s',
          'OpenSSH MiB/s',
          'panel / OpenSSH',
          'HTTP API MiB/s',
          'panel SFTP / HTTP',
          'server CPU: panel SFTP / sshd / panel HTTP',
          '`ssh` client CPU: panel / sshd',
          'panel RSS growth: SFTP / HTTP',
          'others’ CPU',
        ],
        ['upload', 'download'].map((direction) => {
          const d = s[direction];
          return [
            direction === 'upload' ? 'upload (`put -f`)' : 'download (`get`)',
            all(d.panelSftp),
            all(d.openssh),
            pct(d.ratioToOpenssh),
            all(d.http),
            pct(d.ratioToHttp),
            `${fmt(d.panelSftp.serverCpuPercent)} / ${fmt(d.openssh.serverCpuPercent)} / ${fmt(d.http.serverCpuPercent)} %`,
            `${fmt(d.panelSftp.clientCpuPercent)} / ${fmt(d.openssh.clientCpuPercent)} %`,
            `+${fmt(d.panelSftp.panelRssGrowthMiB, 1)} / +${fmt(d.http.panelRssGrowthMiB, 1)} MiB`,
            `${fmt(d.panelSftp.othersCpuPercent)} / ${fmt(d.openssh.othersCpuPercent)} / ${fmt(d.http.othersCpuPercent)} %`,
          ];
        }),
      ),
    );
  }
  const separately = (measuredAt, only) =>
    results.startedAt &&
    measuredAt &&
    Math.abs(Date.parse(measuredAt) - Date.parse(results.startedAt)) > 3_600_000
      ? ` Measured separately, ${measuredAt.slice(0, 16).replace('T', ' ')} UTC (\`npm run bench -- --only ${only}\`).`
      : '';
  const logged = (log) => {
    const entries = Object.entries(log ?? {});
    return entries.length === 0
      ? 'Its panel logged no warning or error.'
      : `Its panel logged: ${entries.map(([message, count]) => `${message} (${count}×)`).join('; ')}.`;
  };
  const leftovers = (removed) =>
    removed === null || removed === undefined
      ? ''
      : typeof removed === 'string'
        ? ` Removing what the panel left on the node failed: ${removed}.`
        : removed.containers.length + removed.volumes.length === 0
          ? ' The panel left nothing on the node.'
          : ` The panel left on the node, removed by the benchmark: ${[...removed.containers, ...removed.volumes].join(', ')}.`;
  if (results.nodeFiles?.skipped) {
    out.push('### 8. Files on a node');
    out.push(`Skipped: ${results.nodeFiles.skipped}.`);
  } else if (results.nodeFiles) {
    const f = results.nodeFiles;
    const side = (s) =>
      `${fmt(s.mibPerSecond)} (${s.allMibPerSecond.map((v) => fmt(v)).join(', ')})`;
    out.push('### 8. Files on a node');
    out.push(
      `A panel of its own with one server on \`local\` and one on \`${f.node}\`, an engine ` +
        'standing in for a remote node (a `dockerd` in a network namespace, mutual TLS), whose ' +
        'files go through a file agent in a helper container (docs/nodes.md). Everything through ' +
        'the panel’s HTTP API, the two servers taking turns (which goes first alternates); ' +
        '"remote / local" is the median of the pair-by-pair ratios of their times (2× = the node ' +
        `takes twice as long). ${fmt(f.bytes / 2 ** 20)} MiB of random bytes, each transfer ` +
        `${f.upload.runs}× per server (median shown, then every run); every download hashed ` +
        `and compared with the file sent: ${fmt(f.download.verified)} identical. The listing is ` +
        `of a folder of ${fmt(f.listing.entries)} files (${fmt(f.listing.responseBytes / 1024)} ` +
        `KiB of JSON) unpacked from the same archive on both, ${f.listing.runs}× each after ` +
        `two warm-ups. Making the server on the node took ${fmt(f.remoteServerCreateMs)} ms ` +
        '(its volume made and given to its user; the helper image sent unless the node had it), ' +
        `and the first call on its files ${fmt(f.firstCallMs.remote)} ms ` +
        `(${fmt(f.firstCallMs.local)} ms on \`local\`).` +
        separately(f.measuredAt, 'node-files'),
    );
    out.push(
      table(
        ['', '`local`', 'node', 'remote / local (time)', 'panel CPU: local / node', 'others’ CPU'],
        [
          [
            `listing ${fmt(f.listing.entries)} files, median ms (min–max)`,
            `${fmt(f.listing.local.p50Ms, 1)} (${fmt(f.listing.local.minMs, 1)}–${fmt(f.listing.local.maxMs, 1)})`,
            `${fmt(f.listing.remote.p50Ms, 1)} (${fmt(f.listing.remote.minMs, 1)}–${fmt(f.listing.remote.maxMs, 1)})`,
            `${fmt(f.listing.ratio, 2)}×`,
            '–',
            '–',
          ],
          ...['upload', 'download'].map((way) => [
            `${way} (${way === 'upload' ? 'multipart `POST …/files/upload`' : '`GET …/files/download`'}), MiB/s`,
            side(f[way].local),
            side(f[way].remote),
            `${fmt(f[way].ratio, 2)}×`,
            `${fmt(f[way].local.panelCpuPercent)} / ${fmt(f[way].remote.panelCpuPercent)} %`,
            `${fmt(f[way].local.othersCpuPercent)} / ${fmt(f[way].remote.othersCpuPercent)} %`,
          ]),
        ],
      ),
    );
    out.push(`${logged(f.panelLog)}${leftovers(f.leftoversRemoved)}`);
  }
  if (results.nodeDown?.skipped) {
    out.push('### 9. A node that does not answer');
    out.push(`Skipped: ${results.nodeDown.skipped}.`);
  } else if (results.nodeDown) {
    const d = results.nodeDown;
    const [base, ...broken] = d.phases;
    // The phases' labels, short enough for a column's head.
    const PHASES = ['reachable', 'cut off', 'engine stopped'];
    const counts = (seen) =>
      Object.entries(seen)
        .map(([key, count]) => `${key} ${fmt(count)}×`)
        .join(', ');
    out.push('### 9. A node that does not answer');
    out.push(
      `A panel of its own, its default settings (each node asked every 15 s, within 5 s), with ` +
        `${d.localServers} servers on \`local\` and one running in a container on \`${d.node}\`. ` +
        'One client asks the requests below one at a time, in turn, as a user clicking through ' +
        'the UI; meanwhile a second asks the stats of the server on the node every second (its ' +
        `page, open in a browser). First with every node reachable (${base.seconds} s); then ` +
        `"cut off" (${broken[0].seconds} s): every packet to the node's engine dropped in ` +
        'its namespace, no refusal, no reset, as behind a dead link; then, the node back, ' +
        `"engine stopped" (${broken[1].seconds} s): connections refused, the container running ` +
        'on (`--live-restore`). Each phase starts when the node is broken, so it holds the moment ' +
        'the panel finds out. "vs reachable" divides by the same request with every node ' +
        'reachable, same run.' +
        separately(d.measuredAt, 'node-down'),
    );
    out.push(
      table(
        [
          'request',
          ...d.phases.map((_, i) => `${PHASES[i]}: p50 / p95 ms`),
          ...broken.map((_, i) => `${PHASES[i + 1]}: p50 / p95 vs reachable`),
        ],
        base.requests.map((request, i) => [
          `${request.label}${request.failed > 0 ? ` (${fmt(request.failed)} not 200)` : ''}`,
          ...d.phases.map(
            (phase) =>
              `${fmt(phase.requests[i].p50Ms, 2)} / ${fmt(phase.requests[i].p95Ms, 2)}` +
              (phase.requests[i].failed > 0 ? ` (${fmt(phase.requests[i].failed)} not 200)` : ''),
          ),
          ...broken.map(
            (phase) =>
              `${fmt(phase.requests[i].p50Ratio, 2)}× / ${fmt(phase.requests[i].p95Ratio, 2)}×`,
          ),
        ]),
      ),
    );
    out.push(
      table(
        ['', ...d.phases.map((_, i) => PHASES[i])],
        [
          ['requests answered (each kind)', ...d.phases.map((p) => fmt(p.requests[0].requests))],
          [
            'the node as `GET /api/admin/nodes` said it',
            ...d.phases.map(
              (p) =>
                counts(p.nodeHealth) +
                (p.markedUnreachableAfterS === null
                  ? ''
                  : `; first \`unreachable\` ${fmt(p.markedUnreachableAfterS, 1)} s in`),
            ),
          ],
          [
            'the server on the node as `GET /api/servers` said it',
            ...d.phases.map((p) => counts(p.remoteStatus)),
          ],
          [
            'its stats (`GET …/stats`, every second): answers, p50 / max ms',
            ...d.phases.map(
              (p) =>
                `${counts(p.remoteStats.statuses)}; ${fmt(p.remoteStats.p50Ms, 1)} / ${fmt(p.remoteStats.maxMs, 1)}`,
            ),
          ],
          ['panel CPU', ...d.phases.map((p) => `${fmt(p.panelCpuPercent)} %`)],
          ['others’ CPU', ...d.phases.map((p) => `${fmt(p.othersCpuPercent)} %`)],
        ],
      ),
    );
    out.push(
      `Once let through again the node was seen \`online\` ${fmt(d.onlineAfterReconnectS, 1)} s ` +
        `later, and ${fmt(d.onlineAfterStartS, 1)} s after its engine was started again; the server ` +
        `on it was then \`${d.remoteStatusAtEnd}\`. Stopping it afterwards (\`POST …/stop\`) ` +
        `answered ${d.remoteStop?.status ?? '–'} (${fmt(d.remoteStop?.ms)} ms)` +
        (Object.keys(d.deleteFailed ?? {}).length > 0
          ? `; deleting it answered ${Object.entries(d.deleteFailed)
              .map(([name, status]) => `${status} (${name})`)
              .join(', ')}.`
          : '.') +
        ` ${logged(d.panelLog)}${leftovers(d.leftoversRemoved)}`,
    );
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
