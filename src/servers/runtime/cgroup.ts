/**
 * One cgroup per game server, so that everything a server starts is found and ended with it:
 * whatever it forks, whether it leaves its process group (`setsid`) or outlives its parent.
 * A process cannot leave a cgroup it was put in without write access to the cgroup tree, which
 * only the panel (as root) has.
 *
 * The cgroups live under a parent named after the panel's data directory
 * (`game-panel-<hash>`), so two panels on one machine never share one, and a panel that was
 * killed finds its servers' cgroups again when it starts. cgroup v2 is used where it is mounted
 * at /sys/fs/cgroup; on a v1 (or hybrid) host, the `pids` hierarchy. Where neither can be written
 * (the panel is not root, or the cgroup file system is read-only), there are no cgroups and the
 * runtime falls back to ending process trees and groups.
 */
import { createHash } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** How long ending a cgroup's processes may take before it is reported as not done. */
const KILL_TIMEOUT_MS = 5_000;

export interface ServerCgroup {
  readonly path: string;
  /** Moves a process into the cgroup: everything it forks from then on is in it too. */
  add(pid: number): Promise<void>;
  /** The processes in the cgroup now. */
  pids(): Promise<number[]>;
  /** SIGKILLs every process in the cgroup until none is left; false if some outlived 5 s. */
  killAll(): Promise<boolean>;
  /** Removes the (empty) cgroup; a cgroup still holding processes is left in place. */
  remove(): Promise<void>;
}

export interface Cgroups {
  /** `v2`, `v1` or `null` when servers get no cgroup. */
  readonly version: 'v1' | 'v2' | null;
  /** One line for the start-up log. */
  readonly description: string;
  /** The server's cgroup, created if needed; `null` when cgroups are not available. */
  forServer(name: string): Promise<ServerCgroup | null>;
  /** Removes the panel's parent cgroup if it is empty (at shutdown). */
  close(): Promise<void>;
}

/** Finds a writable cgroup hierarchy and makes the panel's parent cgroup in it. */
export async function openCgroups(dataDir: string): Promise<Cgroups> {
  const found = existsSync(path.join(CGROUP_ROOT, 'cgroup.controllers'))
    ? { version: 'v2' as const, root: CGROUP_ROOT }
    : existsSync(path.join(CGROUP_ROOT, 'pids', 'cgroup.procs'))
      ? { version: 'v1' as const, root: path.join(CGROUP_ROOT, 'pids') }
      : null;
  const none = (why: string): Cgroups => ({
    version: null,
    description: `servers get no cgroup (${why}): a stopped server's processes are found by process tree and group`,
    forServer: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  });
  if (found === null) return none('no cgroup file system at /sys/fs/cgroup');
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  const parent = path.join(found.root, `game-panel-${id}`);
  try {
    await mkdir(parent, { recursive: true });
    // Proves that processes can be moved here, not only that a folder can be made.
    await access(path.join(parent, 'cgroup.procs'), constants.W_OK);
  } catch (error) {
    return none(`cannot write ${parent}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return {
    version: found.version,
    description: `each server runs in its own cgroup (${found.version}) under ${parent}`,
    async forServer(name) {
      // Prefixed: a server may be called `tasks` or `cgroup.procs`, files of the parent cgroup.
      const dir = path.join(parent, `server-${name}`);
      await mkdir(dir, { recursive: true });
      return serverCgroup(dir, found.version);
    },
    async close() {
      await rmdir(parent).catch(() => undefined);
    },
  };
}

function serverCgroup(dir: string, version: 'v1' | 'v2'): ServerCgroup {
  const procsFile = path.join(dir, 'cgroup.procs');
  const pids = async (): Promise<number[]> => {
    const text = await readFile(procsFile, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map(Number);
  };
  return {
    path: dir,
    async add(pid) {
      await writeFile(procsFile, String(pid));
    },
    pids,
    async killAll() {
      const deadline = Date.now() + KILL_TIMEOUT_MS;
      const killFile = path.join(dir, 'cgroup.kill');
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
      await rmdir(dir).catch(() => undefined);
    },
  };
}
