/**
 * One cgroup per game server, so that everything a server starts is found and ended with it
 * (whatever it forks, whether it leaves its process group with `setsid` or outlives its parent),
 * and so that the kernel holds it to its limits: memory, CPU time and the number of processes.
 * A process cannot leave a cgroup it was put in without write access to the cgroup tree, which
 * only the panel (as root) has.
 *
 * The cgroups live under a parent named after the panel's data directory
 * (`game-panel-<hash>`), so two panels on one machine never share one, and a panel that was
 * killed finds its servers' cgroups again when it starts. cgroup v2 is used where it is mounted
 * at /sys/fs/cgroup, with the memory, cpu and pids controllers enabled for the parent; on a v1
 * (or hybrid) host, a cgroup in each of the `pids`, `memory`, `cpu` and `cpuacct` hierarchies
 * that can be written. The `pids` one (v1) holds the server's processes for finding and ending
 * them; without it there are no cgroups. Where none can be written (the panel is not root, or
 * the cgroup file system is read-only), there are no cgroups and no limits: the runtime falls
 * back to ending process trees and groups, and refuses to start a server that has limits.
 */
import { constants, existsSync, realpathSync } from 'node:fs';
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { panelId } from '../../../data-dir.js';
import type { LimitName, ResourceLimits } from '../runtime.js';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** How long ending a cgroup's processes may take before it is reported as not done. */
const KILL_TIMEOUT_MS = 5_000;
/** The CPU period the CPU limit is expressed in (the kernel's default, 100 ms). */
const CPU_PERIOD_US = 100_000;

export interface ServerCgroup {
  readonly path: string;
  /** Sets the kernel's limits (null: none); before the server's process is added. */
  limit(limits: ResourceLimits): Promise<void>;
  /** Moves a process into the cgroup: everything it forks from then on is in it too. */
  add(pid: number): Promise<void>;
  /** The processes in the cgroup now. */
  pids(): Promise<number[]>;
  /** Processes and threads in the cgroup now, as its pids limit counts them; null if unknown. */
  tasks(): Promise<number | null>;
  /** CPU time used by everything in the cgroup since it was made, in µs; null if not counted. */
  cpuMicros(): Promise<number | null>;
  /** How many times the kernel ended a process here for passing the memory limit. */
  oomKills(): Promise<number>;
  /** SIGKILLs every process in the cgroup until none is left; false if some outlived 5 s. */
  killAll(): Promise<boolean>;
  /** Removes the (empty) cgroup; a cgroup still holding processes is left in place. */
  remove(): Promise<void>;
}

export interface Cgroups {
  /** `v2`, `v1` or `null` when servers get no cgroup. */
  readonly version: 'v1' | 'v2' | null;
  /** The limits the kernel can enforce here. */
  readonly enforces: ReadonlySet<LimitName>;
  /** Why some limits cannot be enforced, when so. */
  readonly limitsUnavailableReason: string | undefined;
  /** One line for the start-up log. */
  readonly description: string;
  /** The server's cgroup, created if needed; `null` when cgroups are not available. */
  forServer(name: string): Promise<ServerCgroup | null>;
  /** Removes the panel's parent cgroup if it is empty (at shutdown). */
  close(): Promise<void>;
}

type Controller = 'pids' | 'memory' | 'cpu' | 'cpuacct';

const LIMIT_CONTROLLER: Record<LimitName, Controller> = {
  memoryBytes: 'memory',
  cpuPercent: 'cpu',
  pids: 'pids',
};
const LIMIT_WORDS: Record<LimitName, string> = {
  memoryBytes: 'memory',
  cpuPercent: 'CPU',
  pids: 'processes',
};

/** Finds a writable cgroup hierarchy and makes the panel's parent cgroup in it. */
export async function openCgroups(dataDir: string, root = CGROUP_ROOT): Promise<Cgroups> {
  const none = (why: string): Cgroups => ({
    version: null,
    enforces: new Set(),
    limitsUnavailableReason: `no cgroups: ${why}`,
    description: `servers get no cgroup (${why}): a stopped server's processes are found by process tree and group; limits cannot be enforced`,
    forServer: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  });
  const parentName = `game-panel-${panelId(dataDir)}`;
  let hierarchy: Hierarchy | string;
  if (existsSync(path.join(root, 'cgroup.controllers'))) {
    hierarchy = await openV2(path.join(root, parentName), root);
  } else if (existsSync(path.join(root, 'pids', 'cgroup.procs'))) {
    hierarchy = await openV1(root, parentName);
  } else return none(`no cgroup file system at ${root}`);
  if (typeof hierarchy === 'string') return none(hierarchy);

  const { version, parents, enforces } = hierarchy;
  const missing = (Object.keys(LIMIT_CONTROLLER) as LimitName[]).filter(
    (limit) => !enforces.has(limit),
  );
  const limitsUnavailableReason =
    missing.length === 0
      ? undefined
      : `no writable ${missing.map((limit) => LIMIT_CONTROLLER[limit]).join(', ')} cgroup controller`;
  const enforced = [...enforces].map((limit) => LIMIT_WORDS[limit]).join(', ');
  return {
    version,
    enforces,
    limitsUnavailableReason,
    description:
      `each server runs in its own cgroup (${version}) under ${parents.get('pids') ?? ''}; ` +
      (missing.length === 0
        ? `limits of ${enforced} are enforced by the kernel`
        : `limits of ${enforced || 'nothing'} are enforced by the kernel, not of ${missing.map((limit) => LIMIT_WORDS[limit]).join(', ')} (${limitsUnavailableReason ?? ''})`),
    async forServer(name) {
      // Prefixed: a server may be called `tasks` or `cgroup.procs`, files of the parent cgroup.
      const dirs = new Map<Controller, string>();
      for (const [controller, parent] of parents) {
        const dir = path.join(parent, `server-${name}`);
        await mkdir(dir, { recursive: true });
        dirs.set(controller, dir);
      }
      return serverCgroup(dirs, version);
    },
    async close() {
      for (const parent of new Set(parents.values())) await rmdir(parent).catch(() => undefined);
    },
  };
}

interface Hierarchy {
  readonly version: 'v1' | 'v2';
  /** The panel's parent cgroup for each controller it may use (all one folder on v2). */
  readonly parents: ReadonlyMap<Controller, string>;
  readonly enforces: ReadonlySet<LimitName>;
}

/** Makes `dir` and proves that processes can be moved there; the reason when not. */
async function makeParent(dir: string): Promise<string | null> {
  try {
    await mkdir(dir, { recursive: true });
    await access(path.join(dir, 'cgroup.procs'), constants.W_OK);
    return null;
  } catch (error) {
    return `cannot write ${dir}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

async function openV2(parent: string, root: string): Promise<Hierarchy | string> {
  const failed = await makeParent(parent);
  if (failed !== null) return failed;
  // Each level passes the controllers down to its children: the root to the panel's parent,
  // the parent to the servers' cgroups.
  for (const dir of [root, parent]) {
    for (const controller of ['memory', 'cpu', 'pids']) {
      await writeFile(path.join(dir, 'cgroup.subtree_control'), `+${controller}`).catch(
        () => undefined,
      );
    }
  }
  const enabled = (
    await readFile(path.join(parent, 'cgroup.subtree_control'), 'utf8').catch(() => '')
  )
    .trim()
    .split(/\s+/);
  const enforces = new Set(
    (Object.keys(LIMIT_CONTROLLER) as LimitName[]).filter((limit) =>
      enabled.includes(LIMIT_CONTROLLER[limit]),
    ),
  );
  const parents = new Map<Controller, string>(
    (['pids', 'memory', 'cpu', 'cpuacct'] as const).map((controller) => [controller, parent]),
  );
  return { version: 'v2', parents, enforces };
}

async function openV1(root: string, parentName: string): Promise<Hierarchy | string> {
  const parents = new Map<Controller, string>();
  const seen = new Set<string>();
  for (const controller of ['pids', 'memory', 'cpu', 'cpuacct'] as const) {
    const mount = path.join(root, controller);
    if (!existsSync(path.join(mount, 'cgroup.procs'))) continue;
    // `cpu` and `cpuacct` are often one hierarchy (`cpu,cpuacct`) under two names.
    const real = realpathSync(mount);
    if (seen.has(real)) {
      const same = [...parents].find(([, dir]) => path.dirname(dir) === real);
      if (same) parents.set(controller, same[1]);
      continue;
    }
    const parent = path.join(real, parentName);
    const failed = await makeParent(parent);
    if (failed !== null) {
      if (controller === 'pids') return failed;
      continue;
    }
    seen.add(real);
    parents.set(controller, parent);
  }
  const enforces = new Set(
    (Object.keys(LIMIT_CONTROLLER) as LimitName[]).filter((limit) =>
      parents.has(LIMIT_CONTROLLER[limit]),
    ),
  );
  return { version: 'v1', parents, enforces };
}

/** Reads `key value` lines (memory.events, memory.oom_control, cpu.stat) into numbers. */
async function readKeyed(file: string): Promise<Map<string, number>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.split(' ');
    if (key && value !== undefined) values.set(key, Number(value));
  }
  return values;
}

function serverCgroup(dirs: ReadonlyMap<Controller, string>, version: 'v1' | 'v2'): ServerCgroup {
  const dir = (controller: Controller): string | undefined => dirs.get(controller);
  const main = dir('pids') ?? '';
  const procsFile = path.join(main, 'cgroup.procs');
  const pids = async (): Promise<number[]> => {
    const text = await readFile(procsFile, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map(Number);
  };
  const set = (controller: Controller, file: string, value: string) => {
    const folder = dir(controller);
    return folder === undefined ? Promise.resolve() : writeFile(path.join(folder, file), value);
  };
  return {
    path: main,
    async limit(limits) {
      const { memoryBytes: memory, cpuPercent: cpu, pids: count } = limits;
      const quota = cpu === null ? null : Math.max(1_000, Math.round((cpu / 100) * CPU_PERIOD_US));
      if (version === 'v2') {
        await set('memory', 'memory.max', memory === null ? 'max' : String(memory));
        // No swap beyond the limit: what passes it is ended, not paged out.
        await set('memory', 'memory.swap.max', memory === null ? 'max' : '0').catch(
          () => undefined,
        );
        await set('cpu', 'cpu.max', `${quota ?? 'max'} ${CPU_PERIOD_US}`);
        await set('pids', 'pids.max', count === null ? 'max' : String(count));
        return;
      }
      // memsw (memory + swap) may never be below the memory limit: lift it, set, then lower it.
      const memsw =
        dir('memory') && existsSync(path.join(dir('memory') ?? '', 'memory.memsw.limit_in_bytes'));
      if (memsw) await set('memory', 'memory.memsw.limit_in_bytes', '-1');
      await set('memory', 'memory.limit_in_bytes', memory === null ? '-1' : String(memory));
      if (memsw && memory !== null)
        await set('memory', 'memory.memsw.limit_in_bytes', String(memory));
      await set('cpu', 'cpu.cfs_period_us', String(CPU_PERIOD_US));
      await set('cpu', 'cpu.cfs_quota_us', quota === null ? '-1' : String(quota));
      await set('pids', 'pids.max', count === null ? 'max' : String(count));
    },
    async add(pid) {
      // The pids cgroup last: once a process is there, the runtime counts it as the server's.
      for (const [controller, folder] of dirs) {
        if (controller !== 'pids' && folder !== main) {
          await writeFile(path.join(folder, 'cgroup.procs'), String(pid));
        }
      }
      await writeFile(procsFile, String(pid));
    },
    pids,
    async tasks() {
      const text = await readFile(path.join(main, 'pids.current'), 'utf8').catch(() => null);
      return text === null ? null : Number(text.trim());
    },
    async cpuMicros() {
      if (version === 'v2') {
        const usage = (await readKeyed(path.join(main, 'cpu.stat'))).get('usage_usec');
        return usage ?? null;
      }
      const folder = dir('cpuacct');
      if (folder === undefined) return null;
      const text = await readFile(path.join(folder, 'cpuacct.usage'), 'utf8').catch(() => null);
      return text === null ? null : Number(text.trim()) / 1000;
    },
    async oomKills() {
      const folder = dir('memory');
      if (folder === undefined) return 0;
      const file = version === 'v2' ? 'memory.events' : 'memory.oom_control';
      return (await readKeyed(path.join(folder, file))).get('oom_kill') ?? 0;
    },
    async killAll() {
      const deadline = Date.now() + KILL_TIMEOUT_MS;
      const killFile = path.join(main, 'cgroup.kill');
      // cgroup.kill (v2, Linux 5.14+) ends every process at once, even one forking right now.
      const atomic = version === 'v2' && existsSync(killFile);
      for (;;) {
        const left = await pids();
        if (left.length === 0) return true;
        if (atomic) await writeFile(killFile, '1').catch(() => undefined);
        else
          for (const pid of left) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // Gone already.
            }
          }
        if (Date.now() >= deadline) return false;
        await sleep(10);
      }
    },
    async remove() {
      for (const folder of new Set(dirs.values())) await rmdir(folder).catch(() => undefined);
    },
  };
}
