/**
 * What Linux's /proc says about processes: identity (so a reused pid is never mistaken for the
 * process the panel started), process trees and groups, and CPU and memory use. Reads only.
 */
import { readdir, readFile } from 'node:fs/promises';

/** Linux reports CPU time in USER_HZ ticks, which is 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  /** utime + stime, in ticks. */
  readonly cpuTicks: number;
  /** Start time after boot, in ticks: with the boot id, it tells a process from a later one. */
  readonly startTicks: string;
  readonly state: string;
}

let bootId: Promise<string> | undefined;

/** Identifies this boot of the machine; pids and start times mean nothing across boots. */
function currentBootId(): Promise<string> {
  bootId ??= readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
    (id) => id.trim(),
    () => 'unknown-boot',
  );
  return bootId;
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and parentheses. */
function parseStat(pid: number, text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 of proc(5): state, ppid, pgrp, session, tty, tpgid, flags, minflt,
  // cminflt, majflt, cmajflt, utime (14), stime (15), …, starttime (22).
  const [state, ppid, pgrp] = fields;
  const utime = fields[11];
  const stime = fields[12];
  const start = fields[19];
  if (!state || !ppid || !pgrp || !utime || !stime || !start) return null;
  return {
    pid,
    ppid: Number(ppid),
    pgrp: Number(pgrp),
    cpuTicks: Number(utime) + Number(stime),
    startTicks: start,
    state,
  };
}

export async function readStat(pid: number): Promise<ProcStat | null> {
  try {
    return parseStat(pid, await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Every process visible now. */
export async function allProcesses(): Promise<ProcStat[]> {
  const entries = await readdir('/proc');
  const stats = await Promise.all(
    entries.filter((entry) => /^\d+$/.test(entry)).map((entry) => readStat(Number(entry))),
  );
  return stats.filter((stat): stat is ProcStat => stat !== null && stat.state !== 'Z');
}

/** A string that names exactly one process for the life of this boot. */
export async function processIdentity(pid: number): Promise<string | null> {
  const stat = await readStat(pid);
  return stat ? `${await currentBootId()}:${stat.startTicks}` : null;
}

/**
 * The processes that belong to a server started as the leader of process group `root`: the group
 * itself plus every descendant of `root`, so one that left the group (setsid) is still found.
 */
export async function processTree(root: number): Promise<ProcStat[]> {
  const processes = await allProcesses();
  const children = new Map<number, ProcStat[]>();
  for (const stat of processes) {
    const siblings = children.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else children.set(stat.ppid, [stat]);
  }
  const found = new Map<number, ProcStat>();
  for (const stat of processes)
    if (stat.pgrp === root || stat.pid === root) found.set(stat.pid, stat);
  const queue = [...found.values()];
  for (let stat = queue.pop(); stat; stat = queue.pop()) {
    for (const child of children.get(stat.pid) ?? []) {
      if (!found.has(child.pid)) {
        found.set(child.pid, child);
        queue.push(child);
      }
    }
  }
  return [...found.values()];
}

/** Resident memory of a process in bytes (0 when it is gone). */
export async function residentBytes(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match?.[1] ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export const ticksToSeconds = (ticks: number): number => ticks / TICKS_PER_SECOND;
