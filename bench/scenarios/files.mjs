// Files: a 1 GiB upload and download through the API against a bare Fastify in another process
// doing the same work (bench/bare-server.mjs: @fastify/multipart into a temporary file, fsync,
// rename; a read stream as the reply), with plain streams (the disk's and page cache's own
// speed, bench/disk-baseline.mjs) for context; then the listing of a folder of 10,000 files.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { REPO, spawnNode } from '../lib/panel.mjs';
import { ProcessWatch, waitForQuiet } from '../lib/proc.mjs';
import { exitWithin, log, MiB, nowMs, pool, round, stopChild } from '../lib/util.mjs';
import { startBare } from './api.mjs';
import { FILES_SERVER } from './seed.mjs';

const LISTED_FILES = 10_000;
const LISTING_RUNS = 10;
const CONCURRENT_LISTINGS = 10;
/**
 * Each 1 GiB transfer is measured this many times; the median run is reported. Even, so that
 * the panel and the bare Fastify each go first as often.
 */
export const TRANSFER_RUNS = 4;

/** The run with the median duration. */
export const median = (runs) => [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];

/** Times `task` while watching the panel's CPU and memory; `result` is what the task gave. */
export async function watched(pid, task) {
  const watch = new ProcessWatch(pid);
  const started = nowMs();
  const result = await task();
  const ms = nowMs() - started;
  return { ms, usage: watch.stop(), result };
}

/**
 * `size` bytes of incompressible data: one random MiB, repeated, each copy stamped with its
 * number in its first 8 bytes, so that a MiB served from the wrong offset changes the checksum.
 */
export async function makePayload(file, size) {
  const block = randomBytes(MiB);
  const blocks = size / MiB;
  await pipeline(
    Readable.from(
      (function* () {
        for (let i = 0; i < blocks; i++) {
          // A copy each time: the write stream may still hold the one before.
          const stamped = Buffer.from(block);
          stamped.writeBigUInt64BE(BigInt(i));
          yield stamped;
        }
      })(),
    ),
    createWriteStream(file),
  );
}

/** Runs bench/disk-baseline.mjs in its own process; resolves with its JSON answer. */
async function baseline(args) {
  const child = spawnNode([path.join(REPO, 'bench', 'disk-baseline.mjs'), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  if (!(await exitWithin(child, 120_000))) throw new Error('disk baseline took over 2 minutes');
  if (child.exitCode !== 0) throw new Error(`disk baseline failed (${child.exitCode})`);
  return JSON.parse(out);
}

/** POSTs `file` as multipart field "file"; resolves with the status and body. */
export function upload({ port, token, file, size, name, urlPath }) {
  const boundary = `----panel-bench-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: urlPath ?? `/api/servers/${FILES_SERVER}/files/upload?path=`,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + size + tail.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    const body = Readable.from(
      (async function* () {
        yield head;
        yield* createReadStream(file);
        yield tail;
      })(),
    );
    pipeline(body, req).catch(reject);
  });
}

/** GETs `urlPath`, counting the bytes and writing them into `file` (discarded without one). */
export function download({ port, token, urlPath, file = null }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: urlPath, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk) => {
          bytes += chunk.length;
        });
        if (file === null) {
          res.on('end', () => resolve({ status: res.statusCode, bytes }));
          res.on('error', reject);
        } else {
          pipeline(res, createWriteStream(file)).then(
            () => resolve({ status: res.statusCode, bytes }),
            reject,
          );
        }
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export const mbps = (bytes, ms) => round(bytes / MiB / (ms / 1000), 0);

/** The other side's time over the panel's, run by run (the panel's speed over its); the median. */
export function pairRatio(panelRuns, otherRuns) {
  const ratios = panelRuns.map((run, i) => otherRuns[i].ms / run.ms).sort((a, b) => a - b);
  const middle = ratios.length / 2;
  return round(
    ratios.length % 2 === 1
      ? ratios[Math.floor(middle)]
      : (ratios[middle - 1] + ratios[middle]) / 2,
    3,
  );
}

/** The figures of a transfer measured by `watched` several times: the median run, every run. */
export function transferFigures(measured, size) {
  const typical = median(measured);
  return {
    runs: measured.length,
    seconds: round(typical.ms / 1000, 2),
    mibPerSecond: mbps(size, typical.ms),
    allMibPerSecond: measured.map((run) => mbps(size, run.ms)),
    panelCpuPercent: round(typical.usage.cpuPercent, 0),
    panelStartRssMiB: round(typical.usage.startRss / MiB, 1),
    panelPeakRssMiB: round(Math.max(...measured.map((run) => run.usage.peakRss)) / MiB, 1),
    // The largest growth of any run: the target is about the worst case.
    panelRssGrowthMiB: round(Math.max(...measured.map((run) => run.usage.growth)) / MiB, 1),
    othersCpuPercent: round(typical.usage.othersCpuPercent, 0),
  };
}

export async function filesScenario({ panel, token, workDir, dataDir, quick }) {
  const size = quick ? 256 * MiB : 1024 * MiB;
  const source = path.join(workDir, 'payload.bin');
  const copy = path.join(workDir, 'baseline-copy.bin');
  const name = 'payload.bin';
  await makePayload(source, size);

  const runs = quick ? 1 : TRANSFER_RUNS;
  const downloadPath = `/api/servers/${FILES_SERVER}/files/download?path=${name}`;

  // The panel and the bare Fastify take turns, run by run (which goes first alternates), so a
  // change in the machine's load or the disk's mood between runs hits both alike; each pair
  // gives a ratio, and the median ratio is reported.
  const bareTarget = path.join(workDir, 'bare-upload.bin');
  const bare = await startBare(workDir, {}, source, bareTarget);
  const plainWrites = [];
  const uploads = [];
  const bareUploads = [];
  const plainReads = [];
  const downloads = [];
  const bareDownloads = [];
  try {
    const panelUpload = () =>
      watched(panel.pid, async () => {
        const up = await upload({ port: panel.port, token, file: source, size, name });
        if (up.status !== 200) {
          throw new Error(`upload answered ${up.status}: ${up.body.slice(0, 300)}`);
        }
      });
    const bareUpload = () =>
      watched(bare.child.pid, async () => {
        const up = await upload({
          port: bare.port,
          token,
          file: source,
          size,
          name,
          urlPath: '/upload',
        });
        if (up.status !== 200) throw new Error(`bare upload answered ${up.status}`);
      });
    // The plain streams run apart from the pairs, so that no pair starts right after one.
    log(`files: plain-stream write of ${size / MiB} MiB, ${runs}×`);
    for (let i = 0; i < runs; i++) {
      await waitForQuiet();
      rmSync(copy, { force: true });
      const plain = await baseline(['write', source, copy]);
      plainWrites.push({ ...plain, ms: plain.ms + plain.fsyncMs, withoutFsyncMs: plain.ms });
    }
    log(`files: upload through the panel and a bare Fastify, ${runs}× each`);
    for (let i = 0; i < runs; i++) {
      await waitForQuiet();
      if (i % 2 === 0) {
        uploads.push(await panelUpload());
        bareUploads.push(await bareUpload());
      } else {
        bareUploads.push(await bareUpload());
        uploads.push(await panelUpload());
      }
    }
    const stored = await stat(path.join(dataDir, 'servers', FILES_SERVER, name));
    if (stored.size !== size) throw new Error(`upload stored ${stored.size} bytes of ${size}`);
    rmSync(bareTarget, { force: true });

    const panelDownload = () =>
      watched(panel.pid, async () => {
        const down = await download({ port: panel.port, token, urlPath: downloadPath });
        if (down.status !== 200 || down.bytes !== size) {
          throw new Error(`download answered ${down.status} with ${down.bytes} bytes of ${size}`);
        }
      });
    const bareDownload = () =>
      watched(bare.child.pid, async () => {
        const down = await download({ port: bare.port, token, urlPath: '/file' });
        if (down.bytes !== size) throw new Error(`bare download gave ${down.bytes} bytes`);
      });
    log(`files: plain-stream read, ${runs}×`);
    for (let i = 0; i < runs; i++) {
      await waitForQuiet();
      plainReads.push(await baseline(['read', copy]));
    }
    log(`files: download through the panel and a bare Fastify, ${runs}× each`);
    for (let i = 0; i < runs; i++) {
      await waitForQuiet();
      if (i % 2 === 0) {
        downloads.push(await panelDownload());
        bareDownloads.push(await bareDownload());
      } else {
        bareDownloads.push(await bareDownload());
        downloads.push(await panelDownload());
      }
    }
    rmSync(copy, { force: true });
  } finally {
    await stopChild(bare.child, 5_000);
  }
  const plainWrite = median(plainWrites);
  const plainRead = median(plainReads);
  rmSync(source, { force: true });
  await panel.api.as(token).call('DELETE', `/api/servers/${FILES_SERVER}/files?path=${name}`);

  log(`files: listing a folder of ${LISTED_FILES} files`);
  const folder = path.join(dataDir, 'servers', FILES_SERVER, 'many');
  await mkdir(folder);
  const content = 'x'.repeat(100);
  await pool(
    32,
    Array.from(
      { length: LISTED_FILES },
      (_, i) => () =>
        writeFile(path.join(folder, `file-${String(i).padStart(5, '0')}.dat`), content),
    ),
  );
  await waitForQuiet();
  const listingMs = [];
  let listing = null;
  const api = panel.api.as(token);
  for (let i = 0; i < LISTING_RUNS + 2; i++) {
    const at = nowMs();
    listing = await api.request('GET', `/api/servers/${FILES_SERVER}/files?path=many`);
    const ms = nowMs() - at;
    if (listing.status !== 200 || listing.body.data.length !== LISTED_FILES) {
      throw new Error(
        `listing answered ${listing.status} with ${listing.body?.data?.length} entries`,
      );
    }
    if (i >= 2) listingMs.push(ms); // the first two warm up
  }
  listingMs.sort((a, b) => a - b);
  // The same listing asked by CONCURRENT_LISTINGS clients at once.
  const together = nowMs();
  const concurrent = await Promise.all(
    Array.from({ length: CONCURRENT_LISTINGS }, async () => {
      const at = nowMs();
      const res = await api.request('GET', `/api/servers/${FILES_SERVER}/files?path=many`);
      if (res.status !== 200) throw new Error(`concurrent listing answered ${res.status}`);
      return nowMs() - at;
    }),
  );
  const concurrentWallMs = nowMs() - together;

  const up = transferFigures(uploads, size);
  const down = transferFigures(downloads, size);
  const bareFigures = (measured) => {
    const typical = median(measured);
    return {
      bareFastifyMibPerSecond: mbps(size, typical.ms),
      bareFastifyAllMibPerSecond: measured.map((run) => mbps(size, run.ms)),
      bareFastifyCpuPercent: round(typical.usage.cpuPercent, 0),
      bareFastifyRssGrowthMiB: round(Math.max(...measured.map((run) => run.usage.growth)) / MiB, 1),
    };
  };
  const result = {
    bytes: size,
    upload: {
      ...up,
      ...bareFigures(bareUploads),
      ratioToBareFastify: pairRatio(uploads, bareUploads),
      plainStreamMibPerSecond: mbps(size, plainWrite.ms),
      plainStreamWithoutFsyncMibPerSecond: mbps(size, plainWrite.withoutFsyncMs),
      ratio: round(plainWrite.ms / median(uploads).ms, 3),
      ratioWithoutFsync: round(plainWrite.withoutFsyncMs / median(uploads).ms, 3),
    },
    download: {
      ...down,
      ...bareFigures(bareDownloads),
      ratioToBareFastify: pairRatio(downloads, bareDownloads),
      plainStreamMibPerSecond: mbps(size, plainRead.ms),
      ratio: round(plainRead.ms / median(downloads).ms, 3),
    },
    listing: {
      entries: LISTED_FILES,
      responseBytes: listing.raw.length,
      runs: LISTING_RUNS,
      p50Ms: round(listingMs[Math.floor(listingMs.length / 2)], 1),
      minMs: round(listingMs[0], 1),
      maxMs: round(listingMs[listingMs.length - 1], 1),
      concurrent: CONCURRENT_LISTINGS,
      concurrentWallMs: round(concurrentWallMs, 0),
      concurrentSlowestMs: round(Math.max(...concurrent), 0),
    },
  };
  log(
    `files: upload ${result.upload.mibPerSecond} MiB/s (bare Fastify ${result.upload.bareFastifyMibPerSecond}, ` +
      `ratio ${result.upload.ratioToBareFastify}), download ${result.download.mibPerSecond} MiB/s ` +
      `(bare Fastify ${result.download.bareFastifyMibPerSecond}, ratio ${result.download.ratioToBareFastify}), ` +
      `listing p50 ${result.listing.p50Ms} ms`,
  );
  return result;
}
