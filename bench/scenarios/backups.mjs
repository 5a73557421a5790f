// Backups: two servers of the panel's own, one holding a single 1 GiB file of incompressible
// bytes and one holding 10,000 small files in nested folders, each backed up through the API
// (`POST …/backups`, polled until done), downloaded (its sha256 checked against the recorded
// checksum) and restored (`POST …/backups/{id}/restore`) over a changed folder, which must then
// be byte-for-byte what was backed up. The baseline, measured in the same run right after the
// panel, is the system's `tar -czf` of the same folder (then an fsync of the archive, as the
// panel flushes its own) and `tar -xzf` of that archive into an empty folder. The panel's memory
// is watched throughout: it must not grow with the folder's size. Both servers are deleted
// through the API afterwards and the scenario waits for the panel to have removed their files.
import { Buffer } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, rmSync } from 'node:fs';
import { mkdir, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { downloadHashed, spawnTracked } from '../lib/panel.mjs';
import { memory, ProcessWatch, waitForQuiet } from '../lib/proc.mjs';
import { exitWithin, log, MiB, nowMs, pool, round, waitFor } from '../lib/util.mjs';
import { printerCommand } from './seed.mjs';

/** The servers this scenario makes (and deletes); not in the seed, so the API rows stay as they were. */
export const BACKUP_BIG_SERVER = 'backup-big';
export const BACKUP_MANY_SERVER = 'backup-many';
const BIG_FILE = 'world/region.bin';
/** The random block the big file repeats: far beyond gzip's 32 KiB window, so incompressible. */
const BLOCK = 4 * MiB;
const FOLDERS = 10;
const SUBFOLDERS = 10;
/** How long one backup or restore may take before the scenario gives up (a 1 GiB one: ~30 s). */
const JOB_LIMIT_MS = 180_000;
const POLL_MS = 50;

const mbps = (bytes, ms) => round(bytes / MiB / (ms / 1000), 0);

/** `size` bytes of incompressible data: one random 4 MiB block, repeated. */
async function makeBigFile(file, size) {
  await mkdir(path.dirname(file), { recursive: true });
  const block = randomBytes(BLOCK);
  await pipeline(
    Readable.from(
      (function* () {
        for (let left = size; left > 0; left -= BLOCK) {
          yield left >= BLOCK ? block : block.subarray(0, left);
        }
      })(),
    ),
    createWriteStream(file),
  );
}

/**
 * `count` files in FOLDERS × SUBFOLDERS folders: sizes from 0 to about 8 KiB, half of them
 * text (compressible), half random bytes; plus an empty folder. Returns the bytes written.
 */
async function makeManyFiles(root, count) {
  const random = randomBytes(64 * 1024);
  const perFolder = Math.ceil(count / (FOLDERS * SUBFOLDERS));
  const tasks = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const folder = Math.floor(i / perFolder);
    const dir = path.join(
      root,
      `plugins-${String(Math.floor(folder / SUBFOLDERS)).padStart(2, '0')}`,
      `data-${String(folder % SUBFOLDERS).padStart(2, '0')}`,
    );
    const size = (i * 7919) % 8192; // 0 now and then, up to 8 KiB
    const content =
      i % 2 === 0
        ? Buffer.from(`line ${i} of a configuration file\n`.repeat(Math.ceil(size / 30))).subarray(
            0,
            size,
          )
        : random.subarray(i % (random.length - size), (i % (random.length - size)) + size);
    bytes += size;
    tasks.push(async () => {
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, `file-${String(i).padStart(5, '0')}.dat`), content);
    });
  }
  await pool(32, tasks);
  await mkdir(path.join(root, 'empty-folder'));
  return bytes;
}

/**
 * Every entry below `root`, as sorted lines "<kind> <path> <mode> [<size> <sha256>]": what the
 * round trip must keep. Files are hashed 8 at a time (one 1 MiB read stream each).
 */
async function manifest(root) {
  const entries = [];
  const files = [];
  const walk = async (dir, relative) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        const info = await stat(full);
        entries.push(`d ${rel} ${(info.mode & 0o7777).toString(8)}`);
        await walk(full, rel);
      } else if (entry.isFile()) {
        files.push({ full, rel });
      } else {
        entries.push(`? ${rel}`);
      }
    }
  };
  await walk(root, '');
  let bytes = 0;
  await pool(
    8,
    files.map(({ full, rel }) => async () => {
      const info = await stat(full);
      const hash = createHash('sha256');
      for await (const chunk of createReadStream(full, { highWaterMark: MiB })) hash.update(chunk);
      bytes += info.size;
      entries.push(
        `f ${rel} ${(info.mode & 0o7777).toString(8)} ${info.size} ${hash.digest('hex')}`,
      );
    }),
  );
  entries.sort();
  return { entries, files: files.length, bytes };
}

/** Throws, naming the first differences, unless the two manifests are the same. */
function compareManifests(what, expected, actual) {
  const want = new Set(expected.entries);
  const got = new Set(actual.entries);
  const missing = expected.entries.filter((line) => !got.has(line));
  const extra = actual.entries.filter((line) => !want.has(line));
  if (missing.length === 0 && extra.length === 0) return;
  throw new Error(
    `${what}: the restored folder is not the one backed up: ${missing.length} entries missing or ` +
      `changed (${missing.slice(0, 3).join('; ')}), ${extra.length} new or changed ` +
      `(${extra.slice(0, 3).join('; ')})`,
  );
}

/** Runs the system's tar with `args`; resolves with its time in ms, throws when it fails. */
async function tar(args) {
  const started = nowMs();
  const child = spawnTracked('tar', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (chunk) => {
    errors += chunk;
  });
  if (!(await exitWithin(child, JOB_LIMIT_MS))) throw new Error(`tar ${args[0]} took too long`);
  if (child.exitCode !== 0) {
    throw new Error(`tar ${args.join(' ')} failed (${child.exitCode}): ${errors.slice(0, 300)}`);
  }
  return nowMs() - started;
}

/** Changes the folder so that a restore has something to undo: a byte run, a file gone, one more. */
async function scramble(root, sample) {
  const first = path.join(root, sample);
  const info = await stat(first);
  const handle = await open(first, 'r+');
  try {
    await handle.write(Buffer.alloc(Math.min(4096, info.size), 0x5a), 0, undefined, info.size >> 1);
  } finally {
    await handle.close();
  }
  await writeFile(path.join(root, 'added-after-the-backup.txt'), 'not in the backup\n');
  await writeFile(path.join(root, sample.replace(/[^/]+$/, 'also-new.dat')), randomBytes(1000));
}

/** One server: backup (timed, watched), tar baseline, download check, restore, comparison. */
async function roundTrip({ panel, api, token, dataDir, workDir, server, label }) {
  const folder = path.join(dataDir, 'servers', server);
  const original = await manifest(folder);
  // The largest file is the one the restore must mend (a byte run overwritten in its middle).
  const sample = original.entries
    .filter((line) => line.startsWith('f '))
    .map((line) => line.split(' '))
    .reduce((largest, fields) => (Number(fields[3]) > Number(largest[3]) ? fields : largest))[1];

  // The panel's backup, from the request to the record saying done.
  await waitForQuiet();
  const backupWatch = new ProcessWatch(panel.pid);
  const backupStarted = nowMs();
  const made = await api.call('POST', `/api/servers/${server}/backups`, {});
  const id = made.data.id;
  const backup = await waitFor(
    `the backup of ${server}`,
    async () => {
      const res = await api.call('GET', `/api/servers/${server}/backups/${id}`);
      return res.data.status === 'running' ? undefined : res.data;
    },
    { timeoutMs: JOB_LIMIT_MS, intervalMs: POLL_MS },
  );
  const backupMs = nowMs() - backupStarted;
  const backupUsage = { ...backupWatch.stop(), rssAfter: memory(panel.pid).rss };
  if (backup.status !== 'done') {
    throw new Error(`${label}: the backup ${backup.status}: ${backup.message}`);
  }
  if (backup.files !== original.files || backup.unpackedBytes !== original.bytes) {
    throw new Error(
      `${label}: the backup counted ${backup.files} files, ${backup.unpackedBytes} bytes; ` +
        `the folder holds ${original.files} files, ${original.bytes} bytes`,
    );
  }
  const archive = path.join(dataDir, 'backups', server, `${id}.tar.gz`);
  if ((await stat(archive)).size !== backup.bytes) {
    throw new Error(`${label}: the archive on disk is not the size recorded (${backup.bytes})`);
  }

  // The same folder through the system's tar right after, and its archive flushed like the
  // panel's: whatever else the machine is doing, it weighs on both alike.
  const tarFile = path.join(workDir, `baseline-${server}.tar.gz`);
  const tarPackMs = await tar(['-czf', tarFile, '-C', folder, '.']);
  const fsyncStarted = nowMs();
  const tarHandle = await open(tarFile, 'r');
  await tarHandle.sync();
  await tarHandle.close();
  const tarFsyncMs = nowMs() - fsyncStarted;
  const tarBytes = (await stat(tarFile)).size;

  // The download, hashed as it arrives.
  await waitForQuiet();
  const downloadWatch = new ProcessWatch(panel.pid);
  const downloadStarted = nowMs();
  const down = await downloadHashed({
    port: panel.port,
    token,
    urlPath: `/api/servers/${server}/backups/${id}/download`,
  });
  const downloadMs = nowMs() - downloadStarted;
  const downloadUsage = { ...downloadWatch.stop(), rssAfter: memory(panel.pid).rss };
  if (down.status !== 200 || down.bytes !== backup.bytes || down.sha256 !== backup.checksum) {
    throw new Error(
      `${label}: the download answered ${down.status} with ${down.bytes} bytes of ${backup.bytes}, ` +
        `sha256 ${down.sha256}, recorded ${backup.checksum}`,
    );
  }

  // The restore, over a folder changed since the backup.
  await scramble(folder, sample);
  await waitForQuiet();
  const restoreWatch = new ProcessWatch(panel.pid);
  const restoreStarted = nowMs();
  await api.call('POST', `/api/servers/${server}/backups/${id}/restore`);
  const restored = await waitFor(
    `the restore of ${server}`,
    async () => {
      const res = await api.call('GET', `/api/servers/${server}/backups/${id}`);
      const last = res.data.lastRestore;
      return last && last.status !== 'running' && res.data.progress === null ? last : undefined;
    },
    { timeoutMs: JOB_LIMIT_MS, intervalMs: POLL_MS },
  );
  const restoreMs = nowMs() - restoreStarted;
  const restoreUsage = { ...restoreWatch.stop(), rssAfter: memory(panel.pid).rss };
  if (restored.status !== 'done') {
    throw new Error(`${label}: the restore ${restored.status}: ${restored.message}`);
  }
  // The system's tar unpacking its own archive into an empty folder, right after.
  const unpacked = path.join(workDir, `baseline-${server}-unpacked`);
  await mkdir(unpacked);
  const tarUnpackMs = await tar(['-xzf', tarFile, '-C', unpacked]);
  rmSync(unpacked, { recursive: true, force: true });
  rmSync(tarFile, { force: true });

  compareManifests(label, original, await manifest(folder));

  const tarMs = tarPackMs + tarFsyncMs;
  const usage = (watch) => ({
    panelCpuPercent: round(watch.cpuPercent, 0),
    panelStartRssMiB: round(watch.startRss / MiB, 1),
    panelPeakRssMiB: round(watch.peakRss / MiB, 1),
    panelRssGrowthMiB: round(watch.growth / MiB, 1),
    /** Resident right after the job: what of the growth the panel kept. */
    panelRssAfterMiB: round(watch.rssAfter / MiB, 1),
    othersCpuPercent: round(watch.othersCpuPercent, 0),
  });
  return {
    label,
    files: original.files,
    entries: backup.entries,
    unpackedBytes: backup.unpackedBytes,
    archiveBytes: backup.bytes,
    identical: true,
    backup: {
      seconds: round(backupMs / 1000, 2),
      recordedSeconds: round(backup.durationMs / 1000, 2),
      mibPerSecond: mbps(backup.unpackedBytes, backupMs),
      filesPerSecond: round(original.files / (backupMs / 1000), 0),
      ...usage(backupUsage),
    },
    tar: {
      seconds: round(tarMs / 1000, 2),
      fsyncSeconds: round(tarFsyncMs / 1000, 2),
      mibPerSecond: mbps(backup.unpackedBytes, tarMs),
      archiveBytes: tarBytes,
      unpackSeconds: round(tarUnpackMs / 1000, 2),
    },
    /** The panel's backup time over tar's (with its fsync): 1 is as fast, 2 twice as slow. */
    timeRatioToTar: round(backupMs / tarMs, 2),
    download: {
      seconds: round(downloadMs / 1000, 2),
      mibPerSecond: mbps(backup.bytes, downloadMs),
      checksumMatches: true,
      ...usage(downloadUsage),
    },
    restore: {
      seconds: round(restoreMs / 1000, 2),
      mibPerSecond: mbps(backup.unpackedBytes, restoreMs),
      ...usage(restoreUsage),
    },
    /** The restore (checksum, unpacking, swap) over tar's unpacking of its own archive. */
    restoreTimeRatioToTar: round(restoreMs / tarUnpackMs, 2),
  };
}

/** Deletes the server through the API and waits until the panel has removed its files. */
async function removeServer({ api, dataDir, server }) {
  await api.call('DELETE', `/api/servers/${server}`);
  const trash = path.join(dataDir, 'servers', '.trash~');
  await waitFor(
    `the files of ${server} to be removed`,
    async () => {
      const left = existsSync(trash) ? await readdir(trash) : [];
      return left.length === 0 && !existsSync(path.join(dataDir, 'backups', server))
        ? true
        : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

export async function backupsScenario({ panel, token, workDir, dataDir, quick }) {
  const api = panel.api.as(token);
  const bigSize = quick ? 128 * MiB : 1024 * MiB;
  const fileCount = quick ? 1_000 : 10_000;
  const rows = [];
  for (const server of [BACKUP_BIG_SERVER, BACKUP_MANY_SERVER]) {
    await api.call('POST', '/api/servers/create', {
      name: server,
      displayName: `Server ${server}`,
      startCommand: printerCommand(workDir),
      stopCommand: 'stop',
      stopTimeoutSeconds: 2,
    });
  }
  try {
    const bigFolder = path.join(dataDir, 'servers', BACKUP_BIG_SERVER);
    log(`backups: writing ${bigSize / MiB} MiB of random bytes`);
    await makeBigFile(path.join(bigFolder, BIG_FILE), bigSize);
    await writeFile(path.join(bigFolder, 'server.properties'), 'motd=benchmark\n');
    log(`backups: backup, download and restore of a ${bigSize / MiB} MiB file`);
    rows.push(
      await roundTrip({
        panel,
        api,
        token,
        dataDir,
        workDir,
        server: BACKUP_BIG_SERVER,
        label: `one ${(bigSize / MiB).toLocaleString('en-US')} MiB file`,
      }),
    );
    // Not needed any more: the disk is given back before the next row.
    await rm(path.join(bigFolder, BIG_FILE), { force: true });

    const manyFolder = path.join(dataDir, 'servers', BACKUP_MANY_SERVER);
    log(`backups: writing ${fileCount} small files`);
    await makeManyFiles(manyFolder, fileCount);
    log(`backups: backup, download and restore of ${fileCount} files`);
    rows.push(
      await roundTrip({
        panel,
        api,
        token,
        dataDir,
        workDir,
        server: BACKUP_MANY_SERVER,
        label: `${fileCount.toLocaleString('en-US')} small files`,
      }),
    );
  } finally {
    for (const server of [BACKUP_BIG_SERVER, BACKUP_MANY_SERVER]) {
      await removeServer({ api, dataDir, server }).catch((error) => {
        log(`backups: could not remove ${server}: ${error.message}`);
      });
    }
  }
  for (const row of rows) {
    log(
      `backups: ${row.label}: backup ${row.backup.seconds} s (${row.backup.mibPerSecond} MiB/s, ` +
        `${row.timeRatioToTar}× tar's ${row.tar.seconds} s), panel +${row.backup.panelRssGrowthMiB} MiB; ` +
        `restore ${row.restore.seconds} s (${row.restoreTimeRatioToTar}× tar's ${row.tar.unpackSeconds} s), ` +
        `+${row.restore.panelRssGrowthMiB} MiB; identical`,
    );
  }
  const [big, many] = rows;
  return { bigFileBytes: bigSize, smallFiles: fileCount, big, many };
}
