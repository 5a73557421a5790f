/**
 * Runs game servers as local child processes: without a shell, in the server's directory, as the
 * leader of their own process group, with a minimal environment (none of the panel's secrets).
 * With bubblewrap, each runs in a sandbox: the host read-only, its own directory writable, the
 * rest of DATA_DIR hidden, its own PID namespace, and killed with the panel.
 *
 * The only module that spawns processes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, type SandboxMode } from '../../config.js';
import {
  type ExitInfo,
  type LaunchSpec,
  type OutputStream,
  type ProcessRuntime,
  type RunningProcess,
  StartError,
  type Usage,
} from './process-runtime.js';
import {
  processIdentity,
  processTree,
  readStat,
  residentBytes,
  ticksToSeconds,
  type ProcStat,
} from './proc.js';

/** The whole environment a server process gets. */
const SERVER_ENV = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  LANG: 'C.UTF-8',
} as const;

/** How long leftovers of an exited server get between SIGKILL and being reported gone anyway. */
const REAP_TIMEOUT_MS = 5_000;

export interface LocalRuntimeOptions {
  readonly sandbox: SandboxMode;
  /** Where to look for bubblewrap. */
  readonly searchPath: string;
  /** Hidden from sandboxed servers, but for their own directory. */
  readonly dataDir: string;
}

/**
 * The absolute path of a bubblewrap that can make a sandbox on this machine, looked up on the
 * panel's PATH; `null` when there is none. Servers are then started through that exact file.
 */
export function findBubblewrap(searchPath: string): string | null {
  for (const dir of searchPath.split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const probe = spawnSync(
      candidate,
      ['--ro-bind', '/', '/', '--unshare-pid', '--die-with-parent', '--', 'true'],
      { stdio: 'ignore', timeout: 10_000, env: SERVER_ENV },
    );
    return probe.status === 0 ? candidate : null;
  }
  return null;
}

export function createLocalRuntime(options: LocalRuntimeOptions): ProcessRuntime {
  const bwrap = options.sandbox === 'none' ? null : findBubblewrap(options.searchPath);
  if (options.sandbox === 'bwrap' && bwrap === null) {
    throw new ConfigError(
      'SANDBOX',
      'is bwrap, but bubblewrap (bwrap) is missing or cannot run here',
    );
  }
  const sandboxed = bwrap !== null;

  const wrap = (spec: LaunchSpec): string[] =>
    bwrap !== null
      ? [
          bwrap,
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--tmpfs',
          '/tmp',
          '--tmpfs',
          options.dataDir,
          '--bind',
          spec.cwd,
          spec.cwd,
          '--unshare-pid',
          '--die-with-parent',
          '--chdir',
          spec.cwd,
          '--',
          ...spec.argv,
        ]
      : [...spec.argv];

  return {
    isolated: sandboxed,
    description: sandboxed
      ? 'servers run in a bubblewrap sandbox'
      : 'servers run WITHOUT a sandbox: install bubblewrap (apt-get install bubblewrap) to isolate them',

    async start(spec) {
      const [program, ...args] = wrap(spec);
      if (program === undefined) throw new StartError('Empty command');
      const child = spawn(program, args, {
        cwd: spec.cwd,
        env: { ...SERVER_ENV, HOME: spec.cwd },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      try {
        await Promise.race([
          once(child, 'spawn'),
          once(child, 'error').then(([error]: unknown[]) => {
            throw error;
          }),
        ]);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new StartError(`Cannot start ${spec.argv[0]}: ${reason}`, { cause: error });
      }
      const pid = child.pid;
      if (pid === undefined) throw new StartError(`Cannot start ${spec.argv[0]}`);
      // The sandbox adds two processes above the server: bwrap, and its init in the namespace.
      const wrapperDepth = sandboxed ? 2 : 0;
      return localProcess(
        child,
        pid,
        (await processIdentity(pid)) ?? `unknown:${pid}`,
        wrapperDepth,
      );
    },

    async reap(leftover) {
      const stat = await readStat(leftover.pid);
      // Gone, a zombie waiting to be reaped, or another process now holding the pid: nothing to end.
      if (stat === null || stat.state === 'Z') return false;
      if ((await processIdentity(leftover.pid)) !== leftover.identity) return false;
      const tree = await processTree(leftover.pid);
      signalAll(tree, 'SIGTERM');
      signalGroup(leftover.pid, 'SIGTERM');
      if (await gone(leftover.pid, REAP_TIMEOUT_MS)) return true;
      signalAll(await processTree(leftover.pid), 'SIGKILL');
      signalGroup(leftover.pid, 'SIGKILL');
      await gone(leftover.pid, REAP_TIMEOUT_MS);
      return true;
    },
  };
}

function localProcess(
  child: ChildProcess,
  pid: number,
  identity: string,
  wrapperDepth: number,
): RunningProcess {
  const startedAt = new Date();
  child.stdin?.on('error', () => undefined); // EPIPE once the server closed its input
  let lastSample: { ticks: number; at: number; percent: number } | undefined;

  const mainExit = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  const exited = mainExit.then(async (info) => {
    // Whatever the server left behind in its group or tree goes with it.
    signalAll(await processTree(pid), 'SIGKILL');
    signalGroup(pid, 'SIGKILL');
    await gone(pid, REAP_TIMEOUT_MS);
    return info;
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
    pid,
    identity,
    startedAt,
    exited,
    onOutput(listener) {
      const forward = (stream: OutputStream) => (chunk: Buffer) => {
        listener(chunk, stream);
      };
      child.stdout?.on('data', forward('stdout'));
      child.stderr?.on('data', forward('stderr'));
    },
    writeLine(line) {
      const stdin = child.stdin;
      if (!stdin || stdin.destroyed || !stdin.writable) return false;
      stdin.write(`${line}\n`);
      return true;
    },
    async terminate() {
      const processes = await serverProcesses();
      signalAll(processes, 'SIGTERM');
      // Unsandboxed, the group covers what the tree walk may miss. Sandboxed, the wrapper is
      // spared so the server can save, unless the server has not even started inside it yet:
      // then ending the wrapper ends the sandbox, and there is nothing to save.
      if (wrapperDepth === 0 || processes.length === 0) signalGroup(pid, 'SIGTERM');
    },
    async kill() {
      signalAll(await processTree(pid), 'SIGKILL');
      signalGroup(pid, 'SIGKILL');
    },
    async usage(): Promise<Usage> {
      const processes = await serverProcesses();
      const ticks = processes.reduce((sum, stat) => sum + stat.cpuTicks, 0);
      const memoryBytes = (
        await Promise.all(processes.map((stat) => residentBytes(stat.pid)))
      ).reduce((sum, bytes) => sum + bytes, 0);
      const now = Date.now();
      let percent: number;
      if (lastSample === undefined) {
        const elapsed = (now - startedAt.getTime()) / 1000;
        percent = elapsed > 0 ? (ticksToSeconds(ticks) / elapsed) * 100 : 0;
      } else if (now - lastSample.at < 500) {
        percent = lastSample.percent; // too soon for a meaningful difference
      } else {
        const used = ticksToSeconds(Math.max(0, ticks - lastSample.ticks));
        percent = (used / ((now - lastSample.at) / 1000)) * 100;
      }
      if (lastSample === undefined || now - lastSample.at >= 500) {
        lastSample = { ticks, at: now, percent };
      }
      return { cpuPercent: Math.round(percent * 10) / 10, memoryBytes };
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
