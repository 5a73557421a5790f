// The panel's CPU time and memory, read from /proc (Linux).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { execFileSync } from 'node:child_process'; // eslint-disable-line no-restricted-imports -- getconf, once

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // 100 on every Linux we know of.
}

/** User plus system CPU seconds used by `pid` so far (its own threads, not its children). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: fields count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond; // utime, stime
}

/** { rss, hwm } in bytes: resident memory now and its peak (since start or the last reset). */
export function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS') * 1024, hwm: kib('VmHWM') * 1024 };
}

/** Busy and total CPU ticks of the whole machine, all cores. */
function machineTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1);
  const values = fields.map(Number);
  const idle = (values[3] ?? 0) + (values[4] ?? 0); // idle, iowait
  const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0); // up to steal
  return { busy: total - idle, total };
}

/** CPU ticks used so far by `root` and every process below it (this benchmark's own tree). */
function treeTicks(root) {
  const stats = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        // Its own time plus that of the children it reaped: the CPU of processes that already
        // ended (panels, baselines) stays counted as ours.
        ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // Gone meanwhile.
    }
  }
  const ours = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const stat of stats) {
      if (!ours.has(stat.pid) && ours.has(stat.ppid)) {
        ours.add(stat.pid);
        grew = true;
      }
    }
  }
  return stats.filter((stat) => ours.has(stat.pid)).reduce((sum, stat) => sum + stat.ticks, 0);
}

/**
 * CPU seconds used so far by `pid` and every process below it, those that ended and were reaped
 * included: an OpenSSH sshd, which forks a process (and that one another) per connection.
 */
export const treeCpuSeconds = (pid) => treeTicks(pid) / ticksPerSecond;

/**
 * CPU seconds of the children `pid` has reaped so far, and of theirs (cutime, cstime): read before
 * and after a child runs, what that child's whole tree used once it has exited.
 */
export function reapedCpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / ticksPerSecond;
}

/**
 * What the rest of the machine is doing: CPU used by processes outside this benchmark (and the
 * panel, the servers and baselines it started), in % of one core. Another job on the machine
 * competes for the same two cores and makes every figure worse.
 */
export class MachineWatch {
  #machine = machineTicks();
  #ours = treeTicks(process.pid);

  stop() {
    const machine = machineTicks();
    const ours = treeTicks(process.pid);
    const cores = os.availableParallelism?.() ?? os.cpus().length;
    const totalTicks = machine.total - this.#machine.total;
    if (totalTicks <= 0) return { othersCpuPercent: 0, machineBusyPercent: 0 };
    const busy = machine.busy - this.#machine.busy;
    const others = Math.max(0, busy - (ours - this.#ours));
    // /proc/stat counts ticks over all cores: scale to "% of one core".
    return {
      othersCpuPercent: (others / totalTicks) * cores * 100,
      machineBusyPercent: (busy / totalTicks) * 100,
    };
  }
}

/**
 * Watches a process while a scenario runs: CPU time over the window, the resident memory at the
 * start and its peak. The kernel's own peak (VmHWM) is reset at the start when allowed
 * (/proc/<pid>/clear_refs), so short spikes between samples count too; samples every 50 ms
 * back it up.
 */
export class ProcessWatch {
  #pid;
  #timer;
  #startCpu;
  #startAt;
  #peak;
  #kernelPeak;
  #machine;

  constructor(pid) {
    this.#pid = pid;
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      this.#kernelPeak = true;
    } catch {
      this.#kernelPeak = false;
    }
    this.#machine = new MachineWatch();
    this.#startCpu = cpuSeconds(pid);
    this.#startAt = performance.now();
    this.startRss = memory(pid).rss;
    this.#peak = this.startRss;
    this.#timer = setInterval(() => {
      this.#sample();
    }, 50);
  }

  #sample() {
    try {
      const { rss, hwm } = memory(this.#pid);
      this.#peak = Math.max(this.#peak, rss, this.#kernelPeak ? hwm : 0);
    } catch {
      // The process is gone; keep what was seen.
    }
  }

  /** Stops watching; `cpuPercent` is 100 for one core fully used over the window. */
  stop() {
    clearInterval(this.#timer);
    this.#sample();
    const seconds = (performance.now() - this.#startAt) / 1000;
    let cpu = 0;
    try {
      cpu = cpuSeconds(this.#pid) - this.#startCpu;
    } catch {
      cpu = Number.NaN;
    }
    return {
      seconds,
      cpuSeconds: cpu,
      cpuPercent: seconds > 0 ? (cpu / seconds) * 100 : 0,
      startRss: this.startRss,
      peakRss: this.#peak,
      growth: this.#peak - this.startRss,
      ...this.#machine.stop(),
    };
  }
}

/** Time that `waitForQuiet` may still spend over the whole run, in ms. */
let quietBudgetMs = 0;
const QUIET_LIMIT_PERCENT = 20;
const QUIET_WINDOW_MS = 500;
const QUIET_WAIT_PER_ROW_MS = 20_000;

/** Lets `waitForQuiet` wait, in all, up to `ms` (0: never waits). */
export function setQuietBudget(ms) {
  quietBudgetMs = ms;
}

/**
 * Before a row is measured: while other processes use more than 20 % of a core, waits (in
 * half-second looks, at most 20 s per row and within the run's budget). Returns the seconds
 * waited; the row still records how busy the machine was while it ran.
 */
export async function waitForQuiet() {
  if (quietBudgetMs <= 0) return 0;
  const started = performance.now();
  for (;;) {
    const watch = new MachineWatch();
    await new Promise((resolve) => {
      setTimeout(resolve, QUIET_WINDOW_MS);
    });
    const waited = performance.now() - started;
    if (watch.stop().othersCpuPercent <= QUIET_LIMIT_PERCENT) break;
    if (waited >= QUIET_WAIT_PER_ROW_MS || waited >= quietBudgetMs) break;
  }
  const waited = performance.now() - started;
  quietBudgetMs -= waited;
  return waited / 1000;
}

/** What is left of the budget, in ms. */
export const quietBudgetLeft = () => Math.max(0, quietBudgetMs);
