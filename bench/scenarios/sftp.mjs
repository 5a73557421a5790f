// SFTP (issue 29): a 1 GiB file of incompressible bytes uploaded and downloaded with OpenSSH's
// own `sftp` client in batch mode through the panel's SFTP server (the account's password typed
// by sshpass, as a person signs in), against the same client and file through a real OpenSSH
// sshd with `Subsystem sftp internal-sftp` (started here on a loopback port with its own
// configuration, host key and client key, writing into the same work directory, so onto the
// same disk), and against the panel's HTTP file API. The three take turns run by run, the order
// reversed every other run, so that each goes before each other as often and a change in the
// machine's load hits all alike; each ratio is the median of the run-by-run ratios. Every
// download lands in a file and is checked byte for byte (size and sha256) against the file
// uploaded: the scenario fails on any difference.
//
// Every upload is flushed before it is closed: `put -f` asks the SFTP server for an fsync
// (fsync@openssh.com); the panel flushes an upload before putting it in place whatever the
// client asks (docs/sftp.md, "Uploads land whole"), and so does its HTTP upload. Without it
// sshd would be measured writing into the page cache only.
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { copyFile, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import process from 'node:process';
import { spawnTracked } from '../lib/panel.mjs';
import { reapedCpuSeconds, treeCpuSeconds, waitForQuiet } from '../lib/proc.mjs';
import { exitWithin, freePort, log, MiB, nowMs, round, stopChild, waitFor } from '../lib/util.mjs';
import {
  download,
  makePayload,
  mbps,
  median,
  pairRatio,
  TRANSFER_RUNS,
  transferFigures,
  upload,
  watched,
} from './files.mjs';
import { FILES_SERVER, PASSWORD } from './seed.mjs';

const SSHD = '/usr/sbin/sshd';
/** What the scenario runs, and the Debian package each comes from. */
const TOOLS = [
  { name: SSHD, from: 'openssh-server' },
  { name: 'sftp', from: 'openssh-client' },
  { name: 'ssh-keygen', from: 'openssh-client' },
  { name: 'sshpass', from: 'sshpass' },
];
/** One transfer may take this long before the scenario gives up (1 GiB at under 6 MiB/s). */
const TRANSFER_LIMIT_MS = 180_000;
/** Sign-ins timed on their own (a batch of one `pwd`), per SFTP server. */
const CONNECT_RUNS = 3;
/** The three ways in, in the order of the even runs (the odd ones go the other way). */
const WAYS = ['panelSftp', 'openssh', 'http'];

/** Whether `name` can be run: an absolute name as it is, others found in PATH. */
function found(name) {
  const candidates = path.isAbsolute(name)
    ? [name]
    : (process.env.PATH ?? '/usr/bin:/bin').split(':').map((dir) => path.join(dir, name));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function sha256File(file) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * MiB })) hash.update(chunk);
  return hash.digest('hex');
}

/** Runs `command`; resolves with its standard error, throws when it fails or takes too long. */
async function run(command, args, { cwd, limitMs = 30_000 } = {}) {
  const child = spawnTracked(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-16_000);
  });
  await new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  if (!(await exitWithin(child, limitMs))) {
    await stopChild(child, 2_000);
    throw new Error(`${command} took over ${limitMs / 1000} s`);
  }
  if (child.exitCode !== 0) {
    throw new Error(
      `${command} failed (${child.exitCode ?? child.signalCode}): ${stderr.trim().slice(-500)}`,
    );
  }
  return stderr;
}

/** Resolves once something accepts a TCP connection on 127.0.0.1:`port`. */
const waitForPort = (what, port) =>
  waitFor(
    what,
    () =>
      new Promise((resolve) => {
        const socket = connect({ host: '127.0.0.1', port });
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(undefined));
      }),
    { timeoutMs: 15_000, intervalMs: 50 },
  );

/**
 * A real OpenSSH sshd on a free loopback port, configured in `dir` only: its own Ed25519 host
 * key; root signs in with a client key made here (AuthorizedKeysFile in `dir`, StrictModes off
 * since `dir` is not root's home), no password, no PAM; SFTP served by the session's own sshd
 * process (internal-sftp). Resolves with the process, its port and the client's key.
 */
async function startSshd(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hostKey = path.join(dir, 'host_ed25519');
  const identity = path.join(dir, 'client_ed25519');
  for (const key of [hostKey, identity]) {
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'panel-bench', '-f', key]);
  }
  const authorizedKeys = path.join(dir, 'authorized_keys');
  await copyFile(`${identity}.pub`, authorizedKeys);
  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      'StrictModes no',
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'X11Forwarding no',
      'AllowTcpForwarding no',
      'PrintMotd no',
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  // Debian's sshd refuses to start without its privilege separation folder (made at boot by
  // its service, which need not be running).
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  // An absolute path: sshd executes itself again for every connection. -D keeps it in the
  // foreground (so it is this child, stopped at the end), -e logs to standard error.
  const child = spawnTracked(SSHD, ['-D', '-e', '-f', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  const exited = new Promise((_resolve, reject) => {
    child.once('exit', (code, signal) => {
      reject(new Error(`sshd exited at start (${code ?? signal}): ${stderr.trim()}`));
    });
  });
  exited.catch(() => undefined);
  try {
    await Promise.race([waitForPort('OpenSSH sshd to listen', port), exited]);
  } catch (error) {
    await stopChild(child, 2_000);
    throw error;
  }
  return { child, port, identity };
}

/** The processes sshd `pid` runs for connections: one each (with its own below it). */
function connectionsOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * OpenSSH's `sftp -b` as `login` on 127.0.0.1:`port`: with `password` through sshpass (the
 * invocation of test/helpers/sftp-panel.ts), else with the key `identity`. Resolves with the
 * CPU the client used (sshpass, sftp and ssh, counted once they are reaped) and its standard
 * error; throws when a command of the batch fails.
 */
async function sftpBatch({ port, login, password, identity, commands, dir, verbose = false }) {
  const batch = path.join(dir, 'batch');
  await writeFile(batch, `${commands.join('\n')}\n`);
  const options = [
    // Before -b, so that it wins over the BatchMode=yes that -b sets: sshpass types the password.
    ...(password === undefined ? [] : ['-o', 'BatchMode=no']),
    '-b',
    batch,
    '-P',
    String(port),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'ConnectTimeout=20',
    // -v: the ciphers agreed on, in debug lines; otherwise only errors (and no host key note).
    ...(verbose ? ['-v'] : ['-o', 'LogLevel=ERROR']),
    ...(password === undefined
      ? ['-i', identity, '-o', 'IdentitiesOnly=yes', '-o', 'PreferredAuthentications=publickey']
      : ['-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password']),
    `${login}@127.0.0.1`,
  ];
  const [command, args] =
    password === undefined ? ['sftp', options] : ['sshpass', ['-p', password, 'sftp', ...options]];
  const before = reapedCpuSeconds(process.pid);
  const stderr = await run(command, args, { cwd: dir, limitMs: TRANSFER_LIMIT_MS });
  return { clientCpuSeconds: reapedCpuSeconds(process.pid) - before, stderr };
}

/** "chacha20-poly1305@openssh.com" (with " + <MAC>" when it is separate) from `sftp -v`. */
function cipherOf(stderr) {
  const match = /kex: server->client cipher: (\S+) MAC: (\S+)/.exec(stderr);
  if (!match) return null;
  return match[2] === '<implicit>' ? match[1] : `${match[1]} + ${match[2]}`;
}

const cpuPercent = (seconds, ms) => round((seconds / (ms / 1000)) * 100, 0);

export async function sftpScenario({ panel, token, workDir, dataDir, quick }) {
  const missing = TOOLS.filter((tool) => !found(tool.name));
  if (missing.length > 0) {
    const message = `missing ${missing.map((tool) => `${tool.name} (Debian package ${tool.from})`).join(', ')}`;
    log(`sftp: ${message}; skipped`);
    return { skipped: message };
  }
  if (!panel.sftpPort) throw new Error('sftp: the panel was started without an SFTP port');
  await waitForPort("the panel's SFTP server", panel.sftpPort);

  const size = quick ? 256 * MiB : 1024 * MiB;
  const runs = quick ? 1 : TRANSFER_RUNS;
  // The client's side (the file sent, the files received) and sshd's side, in the work
  // directory; the panel's side is the files server's folder in its data directory, beside it.
  const local = path.join(workDir, 'sftp-client');
  const opensshRoot = path.join(workDir, 'sftp-openssh');
  mkdirSync(local, { recursive: true });
  mkdirSync(opensshRoot, { recursive: true });
  const source = path.join(local, 'payload.bin');
  log(`sftp: making ${size / MiB} MiB of random bytes`);
  await makePayload(source, size);
  const sourceSha = await sha256File(source);
  const serverFolder = path.join(dataDir, 'servers', FILES_SERVER);

  const sshd = await startSshd(path.join(workDir, 'sftp-sshd'));
  const panelLogin = {
    port: panel.sftpPort,
    login: `admin.${FILES_SERVER}`,
    password: PASSWORD,
    dir: local,
  };
  const opensshLogin = { port: sshd.port, login: 'root', identity: sshd.identity, dir: local };
  /** Times an sftp batch against sshd, counting the CPU of every sshd process meanwhile. */
  const throughSshd = async (commands) => {
    const before = treeCpuSeconds(sshd.child.pid);
    const measured = await watched(sshd.child.pid, () => sftpBatch({ ...opensshLogin, commands }));
    // The connection's processes may still be ending: their CPU counts once they are reaped.
    await waitFor(
      "sshd's connection to end",
      () => (connectionsOf(sshd.child.pid) === '' ? true : undefined),
      { timeoutMs: 10_000 },
    );
    return { ...measured, serverCpuSeconds: treeCpuSeconds(sshd.child.pid) - before };
  };
  const throughPanel = async (task) => {
    const measured = await watched(panel.pid, task);
    return { ...measured, serverCpuSeconds: measured.usage.cpuSeconds };
  };
  const quoted = (file) => `"${file}"`;
  const ways = {
    panelSftp: {
      stored: path.join(serverFolder, 'sftp-payload.bin'),
      received: path.join(local, 'from-panel-sftp.bin'),
      upload: () =>
        throughPanel(() =>
          sftpBatch({ ...panelLogin, commands: [`put -f ${quoted(source)} sftp-payload.bin`] }),
        ),
      download: () =>
        throughPanel(() =>
          sftpBatch({
            ...panelLogin,
            commands: [`get sftp-payload.bin ${quoted(ways.panelSftp.received)}`],
          }),
        ),
    },
    openssh: {
      stored: path.join(opensshRoot, 'payload.bin'),
      received: path.join(local, 'from-openssh.bin'),
      upload: () => throughSshd([`put -f ${quoted(source)} ${quoted(ways.openssh.stored)}`]),
      download: () =>
        throughSshd([`get ${quoted(ways.openssh.stored)} ${quoted(ways.openssh.received)}`]),
    },
    http: {
      stored: path.join(serverFolder, 'http-payload.bin'),
      received: path.join(local, 'from-http.bin'),
      upload: () =>
        throughPanel(async () => {
          const up = await upload({
            port: panel.port,
            token,
            file: source,
            size,
            name: 'http-payload.bin',
          });
          if (up.status !== 200) {
            throw new Error(`upload answered ${up.status}: ${up.body.slice(0, 300)}`);
          }
        }),
      download: () =>
        throughPanel(async () => {
          const down = await download({
            port: panel.port,
            token,
            urlPath: `/api/servers/${FILES_SERVER}/files/download?path=http-payload.bin`,
            file: ways.http.received,
          });
          if (down.status !== 200) throw new Error(`download answered ${down.status}`);
        }),
    },
  };
  const measured = Object.fromEntries(WAYS.map((way) => [way, { upload: [], download: [] }]));
  const signIn = {};
  let verified = 0;
  try {
    // Signing in alone (and the ciphers agreed on): part of every transfer's time below.
    for (const [way, login] of [
      ['panelSftp', panelLogin],
      ['openssh', opensshLogin],
    ]) {
      const times = [];
      let cipher = null;
      for (let i = 0; i < CONNECT_RUNS; i++) {
        const started = nowMs();
        const { stderr } = await sftpBatch({ ...login, commands: ['pwd'], verbose: true });
        times.push({ ms: nowMs() - started });
        cipher ??= cipherOf(stderr);
      }
      signIn[way] = { ms: round(median(times).ms, 0), cipher };
    }

    for (const direction of ['upload', 'download']) {
      log(
        `sftp: ${direction} of ${size / MiB} MiB through the panel's SFTP, OpenSSH's sshd and ` +
          `the HTTP API, ${runs}× each`,
      );
      for (let i = 0; i < runs; i++) {
        await waitForQuiet();
        const order = i % 2 === 0 ? WAYS : [...WAYS].reverse();
        for (const name of order) {
          const way = ways[name];
          // Each transfer makes its file anew: no run truncates or replaces the one before.
          rmSync(direction === 'upload' ? way.stored : way.received, { force: true });
          measured[name][direction].push(await way[direction]());
          if (direction === 'upload') {
            const { size: stored } = await stat(way.stored);
            if (stored !== size) {
              throw new Error(`sftp: ${name} upload stored ${stored} bytes of ${size}`);
            }
          } else {
            // Byte for byte: what came back is what was sent (each way reads its own upload).
            const { size: received } = await stat(way.received);
            const sha = received === size ? await sha256File(way.received) : null;
            if (sha !== sourceSha) {
              throw new Error(
                `sftp: ${name} download gave ${received} bytes ` +
                  `${sha === null ? '' : `with sha256 ${sha} `}instead of ${size} with ${sourceSha}`,
              );
            }
            verified += 1;
            rmSync(way.received, { force: true });
          }
        }
      }
    }
  } finally {
    await stopChild(sshd.child, 5_000);
    for (const way of Object.values(ways)) {
      rmSync(way.stored, { force: true });
      rmSync(way.received, { force: true });
    }
    rmSync(local, { recursive: true, force: true });
    rmSync(opensshRoot, { recursive: true, force: true });
  }

  /** Speed (median run, every run) and CPU of one way; memory where the panel served. */
  const side = (runsOf, { panel: served }) => {
    const typical = median(runsOf);
    const { panelPeakRssMiB, panelRssGrowthMiB } = transferFigures(runsOf, size);
    return {
      mibPerSecond: mbps(size, typical.ms),
      allMibPerSecond: runsOf.map((one) => mbps(size, one.ms)),
      // The panel's process, or sshd's listener and every process below it.
      serverCpuPercent: cpuPercent(typical.serverCpuSeconds, typical.ms),
      // sshpass, sftp and ssh; none for the HTTP API (the client is the benchmark itself).
      ...(typical.result?.clientCpuSeconds === undefined
        ? {}
        : { clientCpuPercent: cpuPercent(typical.result.clientCpuSeconds, typical.ms) }),
      ...(served ? { panelPeakRssMiB, panelRssGrowthMiB } : {}),
      othersCpuPercent: round(typical.usage.othersCpuPercent, 0),
    };
  };
  const figures = (direction) => {
    const panelRuns = measured.panelSftp[direction];
    const opensshRuns = measured.openssh[direction];
    const httpRuns = measured.http[direction];
    return {
      panelSftp: side(panelRuns, { panel: true }),
      openssh: side(opensshRuns, { panel: false }),
      http: side(httpRuns, { panel: true }),
      ratioToOpenssh: pairRatio(panelRuns, opensshRuns),
      ratioToHttp: pairRatio(panelRuns, httpRuns),
    };
  };
  const result = {
    bytes: size,
    runs,
    signIn,
    upload: figures('upload'),
    download: figures('download'),
    downloadsVerified: verified,
  };
  log(
    `sftp: upload ${result.upload.panelSftp.mibPerSecond} MiB/s (OpenSSH ` +
      `${result.upload.openssh.mibPerSecond}, ratio ${result.upload.ratioToOpenssh}; HTTP ` +
      `${result.upload.http.mibPerSecond}, ratio ${result.upload.ratioToHttp}), download ` +
      `${result.download.panelSftp.mibPerSecond} MiB/s (OpenSSH ` +
      `${result.download.openssh.mibPerSecond}, ratio ${result.download.ratioToOpenssh}; HTTP ` +
      `${result.download.http.mibPerSecond}, ratio ${result.download.ratioToHttp}); ` +
      `${verified} downloads identical`,
  );
  return result;
}
