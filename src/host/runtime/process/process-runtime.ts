/**
 * Runs game servers as local child processes: without a shell, in the server's directory, as the
 * leader of their own process group, with a minimal environment (none of the panel's secrets),
 * and never with privilege:
 *
 * - as an unprivileged user: the panel's own, or `SERVER_USER` when the panel runs as root
 *   (server-user.ts); never uid 0;
 * - with bubblewrap, in a sandbox made by that user (so the kernel gives it no capability on the
 *   host): a new user, PID, IPC and UTS namespace, no capabilities, `no_new_privs`, and a view of
 *   the file system that holds only what a game server needs (see {@link sandboxView});
 * - without bubblewrap, still as that user, with `no_new_privs` (setpriv) where available;
 * - in a cgroup of its own where the panel can make one (cgroup.ts), so nothing it starts
 *   survives a stop; elsewhere its process tree and group are ended.
 *
 * The only module that spawns processes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, type SandboxMode, type ServerNetwork } from '../../../config.js';
import { openCgroups, type Cgroups, type ServerCgroup } from './cgroup.js';
import {
  type ExitInfo,
  type LaunchSpec,
  type OutputStream,
  type Runtime,
  type RunningProcess,
  INSTALL_SCRIPT_DIR,
  INSTALL_SERVER_DIR,
  SERVER_OOM_SCORE_ADJ,
  StartError,
  StartRefusedError,
  type Usage,
} from '../runtime.js';
import {
  processIdentity,
  processTree,
  readStat,
  residentBytes,
  ticksToSeconds,
  type ProcStat,
} from './proc.js';
import { removeInstallScript, writeInstallScript } from '../install-script.js';
import { probeUserOf, resolveServerUsers, type ServerUser, type UidRange } from '../server-user.js';

/** The whole environment a server process gets (and HOME, its own folder). */
const SERVER_ENV = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games',
  LANG: 'C.UTF-8',
} as const;

/** How long leftovers of an exited server get between SIGKILL and being reported gone anyway. */
const REAP_TIMEOUT_MS = 5_000;

/**
 * What of the host's /etc a sandboxed server sees: what programs need to load libraries, resolve
 * names, speak TLS and know the time and users; nothing that holds a secret. Entries whose name
 * starts with one of {@link ETC_PREFIXES} come too (Java's and Python's own configuration).
 */
const ETC_ENTRIES = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'fonts',
  'gai.conf',
  'group',
  'host.conf',
  'hostname',
  'hosts',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'passwd',
  'protocols',
  'resolv.conf',
  'services',
  'ssl',
  'timezone',
];
const ETC_PREFIXES = ['java', 'python3', 'mono', 'dotnet'];
/** Top-level folders that merged-/usr systems make symlinks into /usr, others real folders. */
const ROOT_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

export interface ProcessRuntimeOptions {
  readonly sandbox: SandboxMode;
  /** Where to look for bubblewrap and setpriv. */
  readonly searchPath: string;
  readonly dataDir: string;
  /** The folder that holds every server's folder: the server user must be able to reach it. */
  readonly serversDir: string;
  /** `SERVER_USER`: only the panel's own user, when the panel does not run as root. */
  readonly serverUser: string | null;
  /** `SERVER_UID_RANGE`: where each server's own uid comes from when the panel runs as root. */
  readonly serverUidRange: UidRange;
  /** Host paths a sandboxed server may also read. */
  readonly readOnlyPaths: readonly string[];
  readonly network: ServerNetwork;
  /** How a process is identified; tests delay it to widen the start/exit race. */
  readonly identityOf?: (pid: number) => Promise<string | null>;
  /** Where the cgroup file system is; tests point it where none is, to see limits refused. */
  readonly cgroupRoot?: string;
}

/** What the rest of the panel learns about the runtime it was given. */
export interface LocalRuntime extends Runtime {
  /**
   * The uids servers get, one each, when the panel runs as root; `null`: servers run as the
   * panel's own user.
   */
  readonly serverUsers: UidRange | null;
  /** Whether each server runs in a cgroup of its own. */
  readonly cgroups: Cgroups['version'];
  /** Whether servers, as the user they run as, can enter `dir` (the folder of server folders). */
  canEnter(dir: string): boolean;
}

/** Finds an executable called `name` in the absolute folders of `searchPath`. */
function findProgram(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  return null;
}

/**
 * Where the server's program is: a path (relative to the server's folder) or a name looked up
 * on the servers' PATH; `null` when there is no executable file there.
 */
function findCommand(command: string, cwd: string): string | null {
  if (!command.includes('/')) return findProgram(command, SERVER_ENV.PATH);
  const file = path.resolve(cwd, command);
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    return null;
  }
}

/**
 * The absolute path of a bubblewrap that can make an unprivileged sandbox on this machine, as
 * `user` (the panel's own user when `null`); `null` when there is none or it cannot run.
 */
export function findBubblewrap(searchPath: string, user: ServerUser | null = null): string | null {
  const candidate = findProgram('bwrap', searchPath);
  if (candidate === null) return null;
  const probe = spawnSync(
    candidate,
    [
      '--unshare-user',
      '--unshare-pid',
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--die-with-parent',
      '--',
      'true',
    ],
    { stdio: 'ignore', timeout: 10_000, env: SERVER_ENV, ...identity(user) },
  );
  return probe.status === 0 ? candidate : null;
}

const identity = (user: { readonly uid: number; readonly gid: number } | null) =>
  user ? { uid: user.uid, gid: user.gid } : {};

/**
 * The sandbox's view of the file system, as bubblewrap arguments: /usr and the system's library
 * and program folders read-only, a chosen part of /etc, /sys read-only, a private /dev, /proc
 * (of its own PID namespace), /tmp and /var/tmp, the operator's extra read-only paths, and the
 * server's own folder read-write. Not there: the panel's data directory and configuration, /home,
 * /root, /run and /var (so no host socket: databases, Docker, D-Bus), /srv, /opt, /mnt.
 */
export function sandboxView(readOnlyPaths: readonly string[]): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const name of ROOT_LINKS) {
    const target = `/${name}`;
    const stat = lstatSync(target, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) args.push('--symlink', readlinkSync(target), target);
    else if (stat?.isDirectory()) args.push('--ro-bind', target, target);
  }
  const etc = readdirSync('/etc').filter(
    (entry) =>
      ETC_ENTRIES.includes(entry) || ETC_PREFIXES.some((prefix) => entry.startsWith(prefix)),
  );
  for (const entry of etc.sort()) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  args.push('--ro-bind-try', '/sys', '/sys');
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp');
  // Last, so that an extra path under /tmp or /var/tmp is not hidden by the private ones.
  for (const extra of readOnlyPaths) args.push('--ro-bind-try', extra, extra);
  return args;
}

/**
 * Makes the kernel's out-of-memory killer pick the server first (SERVER_OOM_SCORE_ADJ). Raising
 * it needs no privilege; a process that ended meanwhile is no failure.
 */
async function raiseOomScore(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/oom_score_adj`, String(SERVER_OOM_SCORE_ADJ)).catch(
    () => undefined,
  );
}

export async function createProcessRuntime(options: ProcessRuntimeOptions): Promise<LocalRuntime> {
  const serverUsers = resolveServerUsers(options.serverUser, options.serverUidRange);
  // Probes run as a uid of the range that is no server's: what every server's user can do.
  const probeUser = serverUsers === null ? null : probeUserOf(serverUsers);
  const bwrap = options.sandbox === 'none' ? null : findBubblewrap(options.searchPath, probeUser);
  if (options.sandbox === 'bwrap' && bwrap === null) {
    throw new ConfigError(
      'SANDBOX',
      'is bwrap, but bubblewrap (bwrap) is missing or cannot run here',
    );
  }
  const setpriv = findProgram('setpriv', options.searchPath);
  const cgroups = await openCgroups(options.dataDir, options.cgroupRoot);
  const identityOf = options.identityOf ?? processIdentity;
  const view = bwrap !== null ? sandboxView(options.readOnlyPaths) : [];

  /** `scriptDir`: the folder that holds an install's script, shown at INSTALL_SCRIPT_DIR. */
  const wrap = (spec: LaunchSpec, scriptDir: string | null): string[] => {
    if (bwrap === null) {
      return setpriv !== null ? [setpriv, '--no-new-privs', '--', ...spec.argv] : [...spec.argv];
    }
    const install =
      scriptDir === null
        ? []
        : ['--bind', spec.cwd, INSTALL_SERVER_DIR, '--ro-bind', scriptDir, INSTALL_SCRIPT_DIR];
    return [
      bwrap,
      '--unshare-user',
      // No user namespace inside: less of the kernel within reach of a hostile server.
      '--disable-userns',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(options.network === 'none' ? ['--unshare-net'] : []),
      '--die-with-parent',
      '--new-session',
      ...view,
      '--bind',
      spec.cwd,
      spec.cwd,
      ...install,
      // The sandbox's own root folder, where bubblewrap made the mount points, is read-only too.
      '--remount-ro',
      '/',
      '--chdir',
      scriptDir === null ? spec.cwd : INSTALL_SERVER_DIR,
      '--',
      ...spec.argv,
    ];
  };

  const who = serverUsers
    ? `each as a uid of its own (${serverUsers.first} + the server's id, up to ${serverUsers.last})`
    : `as the panel's own user (uid ${process.getuid?.() ?? '?'}), all of them: run the panel as root to give each server a uid of its own`;
  const description =
    bwrap !== null
      ? `servers run ${who} in a bubblewrap sandbox; ${cgroups.description}`
      : options.sandbox === 'none'
        ? `servers run ${who} WITHOUT a sandbox (SANDBOX=none): they see the host's files as that user; ${cgroups.description}`
        : `servers run ${who} WITHOUT a sandbox: install bubblewrap (apt-get install bubblewrap) to isolate them; ${cgroups.description}`;

  return {
    kind: 'process',
    enforces: cgroups.enforces,
    limitsUnavailableReason: cgroups.limitsUnavailableReason,
    isolated: bwrap !== null,
    description,
    serverUsers,
    cgroups: cgroups.version,

    async start(spec) {
      // Said at once, as a failed start, rather than as an exit of the wrapper a moment later.
      if (findCommand(spec.argv[0], spec.cwd) === null)
        throw new StartError(`Cannot start ${spec.argv[0]}: no such program`);
      if (spec.install !== null && bwrap === null) {
        throw new StartRefusedError(
          `An install script expects the server's folder at ${INSTALL_SERVER_DIR}: it needs the bubblewrap sandbox (apt-get install bubblewrap)`,
        );
      }
      const scriptDir =
        spec.install === null ? null : await writeInstallScript(spec.install.script);
      const removeScript = () => removeInstallScript(scriptDir);
      const group = await cgroups.forServer(spec.name);
      let oomKillsBefore = 0;
      if (group !== null) {
        await group.limit(spec.limits);
        oomKillsBefore = await group.oomKills();
      }
      const [program, ...args] = wrap(spec, scriptDir);
      if (program === undefined) throw new StartError('Empty command');
      // In a cgroup, the process waits on fd 3 until the panel has moved it in, so that nothing
      // it forks can start outside. It reads in a subshell: `<&3` in the shell itself would move
      // its fd 0, the server's input, for a moment, and the panel looks at fd 0 meanwhile.
      const argv: [string, string[]] =
        group === null
          ? [program, args]
          : [
              '/bin/sh',
              ['-c', '(read -r _ <&3) && exec 3<&- && exec "$@"', 'sh', program, ...args],
            ];
      const child = spawn(argv[0], argv[1], {
        cwd: spec.cwd,
        env: {
          ...spec.env,
          ...SERVER_ENV,
          HOME: spec.cwd,
          PWD: scriptDir === null ? spec.cwd : INSTALL_SERVER_DIR,
        },
        detached: true,
        stdio: group === null ? ['pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe', 'pipe'],
        ...identity(spec.user),
      });
      // Listeners first, before anything is awaited: an exit or output while the panel waits
      // for the spawn, the cgroup or the process identity is kept, never lost.
      const running = localProcess(child, group, bwrap !== null ? 2 : 0, oomKillsBefore);
      // A process that ends before it read its go-ahead resets this socket (ECONNRESET); its
      // exit is handled like any other, and an unhandled 'error' would end the panel.
      child.stdio[3]?.on('error', () => undefined);
      try {
        await Promise.race([
          once(child, 'spawn'),
          once(child, 'error').then(([error]: unknown[]) => {
            throw error;
          }),
        ]);
        // Before the go-ahead (in a cgroup), so that the server and all it forks inherit it.
        if (child.pid !== undefined) await raiseOomScore(child.pid);
        if (group !== null && child.pid !== undefined) {
          await group.add(child.pid);
          const go = child.stdio[3] as NodeJS.WritableStream | null;
          go?.end('go\n');
        }
      } catch (error) {
        child.kill('SIGKILL');
        await group?.killAll();
        await group?.remove();
        await removeScript();
        const reason = error instanceof Error ? error.message : String(error);
        throw new StartError(`Cannot start ${spec.argv[0]}: ${reason}`, { cause: error });
      }
      const pid = child.pid;
      if (pid === undefined) throw new StartError(`Cannot start ${spec.argv[0]}`);
      const started = running.ready(pid, (await identityOf(pid)) ?? `unknown:${pid}`);
      if (scriptDir === null) return started;
      return { ...started, exited: started.exited.finally(removeScript) };
    },

    async reap(leftover) {
      let ended = false;
      const group = await cgroups.forServer(leftover.name);
      if (group !== null) {
        ended = (await group.pids()).length > 0;
        await group.killAll();
        await group.remove();
      }
      if (leftover.pid === null || leftover.identity === null) return ended;
      const stat = await readStat(leftover.pid);
      // Gone, a zombie waiting to be reaped, or another process now holding the pid: nothing to end.
      if (stat === null || stat.state === 'Z') return ended;
      if ((await identityOf(leftover.pid)) !== leftover.identity) return ended;
      const tree = await processTree(leftover.pid);
      signalAll(tree, 'SIGTERM');
      signalGroup(leftover.pid, 'SIGTERM');
      if (await gone(leftover.pid, REAP_TIMEOUT_MS)) return true;
      signalAll(await processTree(leftover.pid), 'SIGKILL');
      signalGroup(leftover.pid, 'SIGKILL');
      await gone(leftover.pid, REAP_TIMEOUT_MS);
      return true;
    },

    close: () => cgroups.close(),

    canEnter(dir) {
      const probe = spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', dir], {
        stdio: 'ignore',
        timeout: 10_000,
        env: SERVER_ENV,
        ...identity(probeUser),
      });
      return probe.status === 0;
    },
  };
}

/**
 * Wraps a just-spawned child: its exit and output are listened to at once (output is held until
 * the supervisor subscribes), and `ready` completes it once its pid and identity are known.
 */
function localProcess(
  child: ChildProcess,
  group: ServerCgroup | null,
  wrapperDepth: number,
  oomKillsBefore: number,
) {
  const startedAt = new Date();
  // EPIPE once no process holds the server's input any more.
  let inputClosed = false;
  child.stdin?.on('error', () => {
    inputClosed = true;
  });
  let lastSample: { seconds: number; at: number; percent: number } | undefined;
  let outputListener: ((chunk: Buffer, stream: OutputStream) => void) | null = null;
  const held: [Buffer, OutputStream][] = [];
  const forward = (stream: OutputStream) => (chunk: Buffer) => {
    if (outputListener) outputListener(chunk, stream);
    else held.push([chunk, stream]);
  };
  child.stdout?.on('data', forward('stdout'));
  child.stderr?.on('data', forward('stderr'));
  // A read error only means the process is gone, which its exit tells; unhandled, it would end
  // the panel.
  child.stdout?.on('error', () => undefined);
  child.stderr?.on('error', () => undefined);

  let pid = child.pid ?? -1;
  const endAll = async (): Promise<void> => {
    if (group !== null) {
      await group.killAll();
      await group.remove();
    }
    if (pid < 0) return;
    signalAll(await processTree(pid), 'SIGKILL');
    signalGroup(pid, 'SIGKILL');
    await gone(pid, REAP_TIMEOUT_MS);
  };
  const mainExit = new Promise<Omit<ExitInfo, 'outOfMemory'>>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  // Whatever the server left behind in its cgroup, group or tree goes with it. Whether the
  // kernel ended one of its processes at the memory limit is read first, while its cgroup is.
  const exited = mainExit.then(async (info): Promise<ExitInfo> => {
    const outOfMemory = group !== null && (await group.oomKills()) > oomKillsBefore;
    await endAll();
    return { ...info, outOfMemory };
  });

  const serverProcesses = async (): Promise<ProcStat[]> => {
    const tree = await processTree(pid);
    if (wrapperDepth === 0) return tree;
    const depth = new Map<number, number>([[pid, 0]]);
    const byPid = new Map(tree.map((stat) => [stat.pid, stat]));
    const depthOf = (stat: ProcStat): number => {
      const known = depth.get(stat.pid);
      if (known !== undefined) return known;
      const parent = byPid.get(stat.ppid);
      const value = parent ? depthOf(parent) + 1 : Number.POSITIVE_INFINITY;
      depth.set(stat.pid, value);
      return value;
    };
    return tree.filter((stat) => depthOf(stat) >= wrapperDepth);
  };

  return {
    ready(knownPid: number, identity: string): RunningProcess {
      pid = knownPid;
      // The server's end of its input, as /proc shows it (`socket:[inode]`). A sandbox wrapper
      // keeps it open all along, so only the server's own processes tell whether it is read.
      let input: string | null = null;
      try {
        input = readlinkSync(`/proc/${pid}/fd/0`);
      } catch (error) {
        // Closed already; else not ours to see, and only a failed write tells.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') inputClosed = true;
      }
      return {
        pid,
        identity,
        startedAt,
        exited,
        onOutput(listener) {
          outputListener = listener;
          for (const [chunk, stream] of held.splice(0)) listener(chunk, stream);
        },
        writeLine(line) {
          const stdin = child.stdin;
          if (!stdin || stdin.destroyed || !stdin.writable) return false;
          stdin.write(`${line}\n`);
          return true;
        },
        async readsInput() {
          const stdin = child.stdin;
          if (inputClosed || !stdin || stdin.destroyed) return false;
          if (input === null) return true;
          const processes = await serverProcesses();
          if (processes.length === 0) return true; // not started inside its sandbox yet
          const inputs = await Promise.all(
            processes.map((stat) => readlink(`/proc/${stat.pid}/fd/0`).catch(() => null)),
          );
          return inputs.includes(input);
        },
        async terminate(signal = 'SIGTERM') {
          const processes = await serverProcesses();
          signalAll(processes, signal);
          // Unsandboxed, the group covers what the tree walk may miss. Sandboxed, the wrapper is
          // spared so the server can save, unless the server has not even started inside it yet:
          // then ending the wrapper ends the sandbox, and there is nothing to save.
          if (wrapperDepth === 0 || processes.length === 0) signalGroup(pid, signal);
        },
        async kill() {
          if (group !== null) await group.killAll();
          signalAll(await processTree(pid), 'SIGKILL');
          signalGroup(pid, 'SIGKILL');
        },
        async usage(): Promise<Usage> {
          const processes = await serverProcesses();
          // The cgroup's own count where there is one: it includes processes already gone.
          const micros = group === null ? null : await group.cpuMicros();
          const seconds =
            (micros === null ? null : micros / 1e6) ??
            ticksToSeconds(processes.reduce((sum, stat) => sum + stat.cpuTicks, 0));
          const memoryBytes = (
            await Promise.all(processes.map((stat) => residentBytes(stat.pid)))
          ).reduce((sum, bytes) => sum + bytes, 0);
          const now = Date.now();
          let percent: number;
          if (lastSample === undefined) {
            const elapsed = (now - startedAt.getTime()) / 1000;
            percent = elapsed > 0 ? (seconds / elapsed) * 100 : 0;
          } else if (now - lastSample.at < 500) {
            percent = lastSample.percent; // too soon for a meaningful difference
          } else {
            const used = Math.max(0, seconds - lastSample.seconds);
            percent = (used / ((now - lastSample.at) / 1000)) * 100;
          }
          if (lastSample === undefined || now - lastSample.at >= 500) {
            lastSample = { seconds, at: now, percent };
          }
          return {
            cpuPercent: Math.round(percent * 10) / 10,
            memoryBytes,
            pids: (group === null ? null : await group.tasks()) ?? processes.length,
          };
        },
      };
    },
  };
}

function signalAll(processes: readonly ProcStat[], signal: NodeJS.Signals): void {
  for (const stat of processes) {
    try {
      process.kill(stat.pid, signal);
    } catch {
      // Already gone.
    }
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // No process left in the group.
  }
}

/** Waits until no process is left in the group or tree of `root`; false on timeout. */
async function gone(root: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const main = await readStat(root);
    const rest = await processTree(root);
    if ((main === null || main.state === 'Z') && rest.length === 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
}
