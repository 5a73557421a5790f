// Files on a remote node against the same on `local` (issue 30, docs/nodes.md "Files on a
// node"): a panel of the scenario's own with one server on `local` and one on an engine standing
// in for a node (test/helpers/docker-nodes.ts), both reached through the panel's HTTP API.
// Listing a folder of 1,000 files, uploading and downloading a 64 MiB file: each on both
// servers in turn (which goes first alternates), each pair giving the ratio remote / local of
// their times, the median ratio reported with the raw figures.
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  addNode,
  createLocalServer,
  createServerOn,
  dockerNodes,
  removeLeftovers,
  scenarioPanel,
} from '../lib/nodes.mjs';
import { downloadHashed, spawnTracked, summariseLog } from '../lib/panel.mjs';
import { waitForQuiet } from '../lib/proc.mjs';
import { exitWithin, log, MiB, nowMs, round, stopChild } from '../lib/util.mjs';
import { makePayload, mbps, pairRatio, upload, watched } from './files.mjs';

const LOCAL = 'files-local';
const REMOTE = 'files-remote';
const LISTED_FILES = 1000;
/** Pairs of listings after two warm-ups each (even: each side goes first as often). */
const LISTING_RUNS = 20;
/** Pairs of transfers. */
const TRANSFER_RUNS = 4;

async function sha256Of(file) {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** The median of a sorted copy of `values`. */
const middle = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const half = sorted.length / 2;
  return sorted.length % 2 === 1 ? sorted[Math.floor(half)] : (sorted[half - 1] + sorted[half]) / 2;
};

/**
 * `task(name)` on both servers `pairs` times, taking turns; `{ local: [...], remote: [...] }`.
 * Waits for a quiet machine before each pair, or (`quietOnce`: short tasks) before the first.
 */
async function inTurn(pairs, task, { quietOnce = false } = {}) {
  const runs = { local: [], remote: [] };
  for (let i = 0; i < pairs; i++) {
    if (i === 0 || !quietOnce) await waitForQuiet();
    const order = i % 2 === 0 ? ['local', 'remote'] : ['remote', 'local'];
    for (const side of order) runs[side].push(await task(side === 'local' ? LOCAL : REMOTE));
  }
  return runs;
}

/** A transfer's figures on one side: the median run, every run, the panel's CPU. */
function sideFigures(runs, size) {
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  const typical = sorted[Math.floor(sorted.length / 2)];
  return {
    seconds: round(typical.ms / 1000, 2),
    mibPerSecond: mbps(size, typical.ms),
    allMibPerSecond: runs.map((run) => mbps(size, run.ms)),
    panelCpuPercent: round(typical.usage.cpuPercent, 0),
    panelRssGrowthMiB: round(Math.max(...runs.map((run) => run.usage.growth)) / MiB, 1),
    othersCpuPercent: round(typical.usage.othersCpuPercent, 0),
  };
}

export async function nodeFilesScenario({ workDir, quick }) {
  const measuredAt = new Date().toISOString();
  const found = await dockerNodes(1);
  if (!found.ok) {
    log(`node-files: skipped: ${found.why}`);
    return { measuredAt, skipped: found.why };
  }
  const [node] = found.nodes;
  const size = (quick ? 16 : 64) * MiB;
  const pairs = quick ? 2 : TRANSFER_RUNS;
  const listingPairs = quick ? 6 : LISTING_RUNS;
  const { panel, api, token, dataDir, logFile } = await scenarioPanel(workDir, 'node-files');
  let result;
  let panelLog = null;
  let leftoversRemoved = null;
  log(`node-files: panel pid ${panel.pid} on port ${panel.port}, node ${node.name}`);
  try {
    await addNode(api, node);
    await createLocalServer(api, LOCAL);
    // The first server on a node with this panel's helper image: the image is sent unless the
    // node has it from an earlier run; the server's volume is made and given to its user.
    const createdAt = nowMs();
    await createServerOn(api, REMOTE, node, found.gameServerCommand);
    const createMs = nowMs() - createdAt;

    // The first call on each: on the node, a helper container is started for it.
    const firstCallMs = {};
    for (const name of [LOCAL, REMOTE]) {
      const at = nowMs();
      await api.call('GET', `/api/servers/${name}/files?path=`);
      firstCallMs[name] = nowMs() - at;
    }

    // The same archive of 1,000 files unpacked on both, through the API.
    const folder = path.join(workDir, 'node-files', 'many');
    mkdirSync(folder);
    for (let i = 0; i < LISTED_FILES; i++) {
      writeFileSync(path.join(folder, `file-${String(i).padStart(4, '0')}.dat`), 'x'.repeat(100));
    }
    const archive = path.join(workDir, 'node-files', 'many.tar.gz');
    const tar = spawnTracked('tar', ['-czf', archive, '-C', path.dirname(folder), 'many'], {
      stdio: 'ignore',
    });
    if (!(await exitWithin(tar, 60_000)) || tar.exitCode !== 0) throw new Error('tar failed');
    const archiveBytes = (await stat(archive)).size;
    for (const name of [LOCAL, REMOTE]) {
      const up = await upload({
        port: panel.port,
        token,
        file: archive,
        size: archiveBytes,
        name: 'many.tar.gz',
        urlPath: `/api/servers/${name}/files/upload?path=`,
      });
      if (up.status !== 200) throw new Error(`archive upload answered ${up.status}: ${up.body}`);
      await api.call('POST', `/api/servers/${name}/files/decompress`, {
        path: 'many.tar.gz',
        destination: '',
      });
      await api.call('DELETE', `/api/servers/${name}/files?path=many.tar.gz`);
    }

    log(`node-files: listing ${LISTED_FILES} files, ${listingPairs}× each in turn`);
    let responseBytes = 0;
    const list = async (name) => {
      const at = nowMs();
      const res = await api.request('GET', `/api/servers/${name}/files?path=many`);
      const ms = nowMs() - at;
      if (res.status !== 200 || res.body?.data?.length !== LISTED_FILES) {
        throw new Error(`${name}: listing answered ${res.status} with ${res.body?.data?.length}`);
      }
      responseBytes = res.raw.length;
      return { ms };
    };
    await inTurn(2, list, { quietOnce: true }); // warm-up
    const listings = await inTurn(listingPairs, list, { quietOnce: true });

    log(`node-files: upload of ${size / MiB} MiB, ${pairs}× each in turn`);
    const source = path.join(workDir, 'node-files', 'payload.bin');
    await makePayload(source, size);
    const sourceSha256 = await sha256Of(source);
    const uploads = await inTurn(pairs, (name) =>
      watched(panel.pid, async () => {
        const up = await upload({
          port: panel.port,
          token,
          file: source,
          size,
          name: 'payload.bin',
          urlPath: `/api/servers/${name}/files/upload?path=`,
        });
        if (up.status !== 200) throw new Error(`${name}: upload answered ${up.status}`);
      }),
    );

    log(`node-files: download of ${size / MiB} MiB, ${pairs}× each in turn`);
    let verified = 0;
    const downloads = await inTurn(pairs, (name) =>
      watched(panel.pid, async () => {
        const down = await downloadHashed({
          port: panel.port,
          token,
          urlPath: `/api/servers/${name}/files/download?path=payload.bin`,
        });
        if (down.status !== 200 || down.bytes !== size || down.sha256 !== sourceSha256) {
          throw new Error(
            `${name}: download answered ${down.status} with ${down.bytes} bytes, ` +
              `${down.sha256 === sourceSha256 ? 'the same' : 'another'} sha256`,
          );
        }
        verified += 1;
      }),
    );

    const listingSide = (runs) => ({
      p50Ms: round(middle(runs.map((run) => run.ms)), 1),
      minMs: round(Math.min(...runs.map((run) => run.ms)), 1),
      maxMs: round(Math.max(...runs.map((run) => run.ms)), 1),
    });
    result = {
      measuredAt,
      node: node.name,
      remoteServerCreateMs: round(createMs, 0),
      firstCallMs: { local: round(firstCallMs[LOCAL], 0), remote: round(firstCallMs[REMOTE], 0) },
      listing: {
        entries: LISTED_FILES,
        responseBytes,
        runs: listingPairs,
        local: listingSide(listings.local),
        remote: listingSide(listings.remote),
        ratio: pairRatio(listings.local, listings.remote),
      },
      bytes: size,
      upload: {
        runs: pairs,
        local: sideFigures(uploads.local, size),
        remote: sideFigures(uploads.remote, size),
        ratio: pairRatio(uploads.local, uploads.remote),
      },
      download: {
        runs: pairs,
        local: sideFigures(downloads.local, size),
        remote: sideFigures(downloads.remote, size),
        ratio: pairRatio(downloads.local, downloads.remote),
        verified,
      },
    };
    log(
      `node-files: remote / local time: listing ${result.listing.ratio}× ` +
        `(${result.listing.remote.p50Ms} vs ${result.listing.local.p50Ms} ms), ` +
        `upload ${result.upload.ratio}× (${result.upload.remote.mibPerSecond} vs ` +
        `${result.upload.local.mibPerSecond} MiB/s), download ${result.download.ratio}× ` +
        `(${result.download.remote.mibPerSecond} vs ${result.download.local.mibPerSecond} MiB/s)`,
    );
  } finally {
    // Deleting a server through the API removes its volume from the node (and its helper): the
    // node keeps nothing of the run but the helper image, which the next panel reuses. What the
    // panel failed to remove is removed from the node afterwards (and reported).
    for (const name of [LOCAL, REMOTE]) {
      const gone = await api
        .request('DELETE', `/api/servers/${name}`, undefined, { timeoutMs: 20_000 })
        .catch((error) => ({ status: String(error) }));
      if (gone.status !== 200 && gone.status !== 404) {
        log(`node-files: deleting ${name} answered ${gone.status}`);
      }
    }
    await stopChild(panel.child, 15_000);
    panelLog = summariseLog(logFile).warningsAndErrors;
    leftoversRemoved = await removeLeftovers(node, dataDir).catch((error) => String(error));
  }
  return { ...result, panelLog, leftoversRemoved };
}
