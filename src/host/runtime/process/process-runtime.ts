/**
 * Runs game servers as local child processes: without a shell, in the server's directory, as the
 * leader of their own process group, with a minimal environment (none of the panel's secrets),
 * and never with privilege:
 *
 * - as an unprivileged user: the panel's own, or `SERVER_USER` when the panel runs as root
 *   (server-user.ts); never uid 0;
 * - with bubblewrap, in a sandbox made by that user (so the kernel gives it no capability on the
 *   host): a new user, PID, IPC and UTS namespace, no capabilities, `no_new_privs`, and a view of
 *   the file system that holds only what a game server needs (./sandbox.ts);
 * - without bubblewrap, still as that user, with `no_new_privs` (setpriv) where available;
 * - in a cgroup of its own where the panel can make one (cgroup.ts), so nothing it starts
 *   survives a stop; elsewhere its process tree and group are ended.
 *
 * The only module that spawns processes (./sandbox.ts only builds their argv and probes).
 */
import { spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { readlink, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, type SandboxMode, type ServerNetwork } from '../../../config.js';
import { openCgroups, type Cgroups, type ServerCgroup } from './cgroup.js';
import {
  type ExitInfo,
  type OutputStream,
  type Runtime,
  type RunningProcess,
  INSTALL_SERVER_DIR,
  SERVER_OOM_SCORE_ADJ,
  StartError,
  StartRefusedError,
} from '../runtime.js';
import type { Usage } from '../../host.js';
import {
  processIdentity,
  processTree,
  readStat,
  residentBytes,
  ticksToSeconds,
  type ProcStat,
} from './proc.js';
import { removeInstallScript, writeInstallScript } from '../install-script.js';
import { withShell } from '../shells.js';
import {
  connectHolder,
  holderOf,
  holderFolder,
  holderSocket,
  makeHolderFolder,
  removeHolderFolder,
  spawnHolder,
  type HolderConnection,
  type HolderExit,
} from './holder-client.js';
import { probeUserOf, resolveServerUsers, type UidRange } from '../server-user.js';
import {
  findBubblewrap,
  findCommand,
  findProgram,
  identity,
  SERVER_ENV,
  sandboxArgv,
  sandboxView,
  type Sandbox,
} from './sandbox.js';

/** How long leftovers of an exited server get between SIGKILL and being reported gone anyway. */
const REAP_TIMEOUT_MS = 5_000;

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

  const sandbox: Sandbox = { bwrap, setpriv, view, network: options.network };

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

    async start(wanted) {
      const spec = await withShell(
        wanted,
        (program) => findCommand(program, wanted.cwd) !== null,
        'this host',
      );
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
      const folder = holderFolder(options.dataDir, spec.name);
      const meta: HolderMeta = {
        oomKillsBefore,
        wrapperDepth: bwrap !== null ? 2 : 0,
        install: spec.install !== null,
      };
      let connection: HolderConnection | null = null;
      let pending: PendingProcess | null = null;
      try {
        // The holder goes into the server's cgroup before it starts anything, so that nothing
        // of the server can start outside it.
        await makeHolderFolder(folder, spec.user);
        const holderPid = await spawnHolder(folder, spec.user, SERVER_ENV);
        await raiseOomScore(holderPid);
        await group?.add(holderPid);
        connection = await connectHolder(holderSocket(folder));
        if (connection.hello.holder !== holderPid) throw new Error('another holder answered');
        pending = holderProcess(connection, group, meta, folder);
        connection.send({
          type: 'start',
          argv: sandboxArgv(sandbox, spec, scriptDir),
          cwd: spec.cwd,
          env: {
            ...spec.env,
            ...SERVER_ENV,
            HOME: spec.cwd,
            PWD: scriptDir === null ? spec.cwd : INSTALL_SERVER_DIR,
          },
          meta: { ...meta },
        });
        const started = await pending.started;
        const identity = (await identityOf(started.pid)) ?? `unknown:${started.pid}`;
        const running = pending.ready(started.pid, identity, started.startedAt);
        if (scriptDir === null) return running;
        // An install's script goes once it ended; `detach` does not apply to installs, which
        // the panel ends at its close.
        return { ...running, exited: running.exited.finally(removeScript) };
      } catch (error) {
        connection?.send({ type: 'release' });
        connection?.close();
        await group?.killAll();
        await group?.remove();
        await removeScript();
        await removeHolderFolder(folder);
        const reason = error instanceof Error ? error.message : String(error);
        throw new StartError(`Cannot start ${spec.argv[0]}: ${reason}`, { cause: error });
      }
    },

    async adopt(leftover) {
      const folder = holderFolder(options.dataDir, leftover.name);
      let connection: HolderConnection;
      try {
        connection = await connectHolder(holderSocket(folder));
      } catch {
        return null; // no holder answers: nothing runs that could be taken over
      }
      if (!(await holderOf(folder, connection))) {
        connection.close();
        return null; // not this server's holder: nothing is sent to it, and it is left alone
      }
      const { hello } = connection;
      const meta = holderMeta(hello.meta);
      const letGo = (): null => {
        connection.send({ type: 'release' });
        connection.close();
        return null;
      };
      // Nothing started; an install, which the panel's end cut short; or not the process the
      // panel recorded: let go, and what is left is reaped.
      if (hello.pid === null || hello.startedAt === null || meta === null || meta.install)
        return letGo();
      if (leftover.pid !== null && leftover.pid !== hello.pid) return letGo();
      let identity = leftover.identity;
      if (hello.exit === null) {
        const current = await identityOf(hello.pid);
        if (current === null || (identity !== null && current !== identity)) return letGo();
        identity = current;
      }
      const group = await cgroups.forServer(leftover.name);
      const pending = holderProcess(connection, group, meta, folder);
      // What it printed while no panel watched comes first in its console, before the panel's
      // word that it took the server over.
      await pending.replayed;
      const running = pending.ready(
        hello.pid,
        identity ?? `unknown:${hello.pid}`,
        new Date(hello.startedAt),
      );
      // A server that ended meanwhile is answered with its exit settled (see Runtime.adopt).
      if (hello.exit !== null) await running.exited;
      return running;
    },

    async reap(leftover) {
      let ended = false;
      // A holder that no panel took over lets go of what it holds and ends.
      const folder = holderFolder(options.dataDir, leftover.name);
      const holder = await connectHolder(holderSocket(folder)).catch(() => null);
      if (holder !== null && !(await holderOf(folder, holder))) holder.close();
      else if (holder !== null) {
        ended = true;
        holder.send({ type: 'release' });
        holder.close();
      }
      await removeHolderFolder(folder);
      const group = await cgroups.forServer(leftover.name);
      if (group !== null) {
        ended = (await group.pids()).length > 0 || ended;
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

/** What the panel leaves with a holder, to take its server over later. */
interface HolderMeta {
  /** Out-of-memory kills in the server's cgroup before it started. */
  readonly oomKillsBefore: number;
  /** How many processes of the sandbox wrapper stand above the server's own. */
  readonly wrapperDepth: number;
  /** An install script rather than the server: never taken over. */
  readonly install: boolean;
}

/** The meta a holder answered, checked; `null` when it is not one this panel wrote. */
function holderMeta(value: Readonly<Record<string, unknown>> | null): HolderMeta | null {
  if (value === null) return null;
  const { oomKillsBefore, wrapperDepth, install } = value;
  if (typeof oomKillsBefore !== 'number' || typeof wrapperDepth !== 'number') return null;
  if (typeof install !== 'boolean') return null;
  return { oomKillsBefore, wrapperDepth, install };
}

interface PendingProcess {
  /** Settles once the holder has started the server, or rejects with why it could not. */
  readonly started: Promise<{ pid: number; startedAt: Date }>;
  /** Settles once the output the holder kept has all arrived (or the connection ended). */
  readonly replayed: Promise<void>;
  ready(pid: number, identity: string, startedAt: Date): RunningProcess;
}

/**
 * The server a holder holds, through the connection to it: its output and exit come from the
 * holder (output kept while the panel was away first), its input goes to it; signals, usage and
 * the end of whatever it leaves behind are the panel's, through /proc and its cgroup. Listens at
 * once, so nothing said before `ready` is lost.
 */
function holderProcess(
  connection: HolderConnection,
  group: ServerCgroup | null,
  meta: HolderMeta,
  folder: string,
): PendingProcess {
  const { wrapperDepth, oomKillsBefore } = meta;
  let inputClosed = false;
  let detached = false;
  let lastSample: { seconds: number; at: number; percent: number } | undefined;
  let outputListener: ((chunk: Buffer, stream: OutputStream) => void) | null = null;
  const held: [Buffer, OutputStream][] = [];
  let pid = -1;
  let resolveStarted!: (started: { pid: number; startedAt: Date }) => void;
  let rejectStarted!: (error: Error) => void;
  const started = new Promise<{ pid: number; startedAt: Date }>((resolve, reject) => {
    resolveStarted = resolve;
    rejectStarted = reject;
  });
  // Handled by whoever awaits it; unobserved when the server was taken over.
  started.catch(() => undefined);
  let endReplay!: () => void;
  const replayed = new Promise<void>((resolve) => {
    endReplay = resolve;
  });
  let endMain!: (exit: HolderExit) => void;
  const mainExit = new Promise<HolderExit>((resolve) => {
    endMain = resolve;
  });
  connection.listen({
    message(message) {
      switch (message.type) {
        case 'started':
          resolveStarted({ pid: message.pid, startedAt: new Date(message.startedAt) });
          return;
        case 'start-failed':
          rejectStarted(new Error(message.message));
          return;
        case 'input-closed':
          inputClosed = true;
          return;
        case 'exit':
          endMain({ code: message.code, signal: message.signal });
          return;
        case 'replayed':
          endReplay();
          return;
        case 'hello':
          return;
      }
    },
    output(chunk, stream) {
      if (outputListener) outputListener(chunk, stream);
      else held.push([chunk, stream]);
    },
    closed() {
      endReplay();
      if (detached) return;
      rejectStarted(new Error('the holder ended'));
      // The holder itself was ended (it never ends on its own before `release`): so was the
      // server, and how is not known.
      endMain({ code: null, signal: null });
    },
  });
  connection.send({ type: 'attach' });

  const endAll = async (): Promise<void> => {
    if (group !== null) {
      await group.killAll();
      await group.remove();
    }
    await removeHolderFolder(folder);
    if (pid < 0) return;
    signalAll(await processTree(pid), 'SIGKILL');
    signalGroup(pid, 'SIGKILL');
    await gone(pid, REAP_TIMEOUT_MS);
  };
  // Whatever the server left behind in its cgroup, group or tree goes with it, the holder too.
  // Whether the kernel ended one of its processes at the memory limit is read first, while its
  // cgroup is.
  const exited = mainExit.then(async (info): Promise<ExitInfo> => {
    const outOfMemory = group !== null && (await group.oomKills()) > oomKillsBefore;
    connection.send({ type: 'release' });
    connection.close();
    await endAll();
    return { code: info.code, signal: info.signal as NodeJS.Signals | null, outOfMemory };
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
    started,
    replayed,
    ready(knownPid: number, identity: string, startedAt: Date): RunningProcess {
      pid = knownPid;
      // The server's end of its input, as /proc shows it (`pipe:[inode]`). A sandbox wrapper
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
          if (inputClosed || connection.closed) return false;
          return connection.send({ type: 'input', line });
        },
        async readsInput() {
          if (inputClosed || connection.closed) return false;
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
        detach() {
          detached = true;
          outputListener = null;
          connection.close();
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
