/**
 * A container the docker runtime started or took over, as the supervisor's RunningProcess
 * (./docker-runtime.ts makes it): its output from the attach stream (what it printed before, as
 * the engine kept it, first), its input, signals sent through the engine, its usage from the
 * engine's stats, its exit from the runtime's wait. An attach connection that breaks while the
 * container runs on (its engine restarted with `--live-restore`) is made again once the engine
 * answers, with what the container printed meanwhile taken from the engine's log
 * (docs/nodes.md "Servers on a node").
 */
import { PassThrough, type Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import type { Usage } from '../../host.js';
import {
  RuntimeUnavailableError,
  type ExitInfo,
  type OutputStream,
  type RunningProcess,
} from '../runtime.js';
import { statusOf, type EngineCall } from './engine.js';

/**
 * How many times, a second apart, the runtime asks again for an engine that went away while a
 * container ran: its wait, and its attach (by default; `engineReturnAttempts`). Past that, the
 * wait tells an unknown end (`ExitInfo.lost`).
 */
export const ENGINE_RETURN_ATTEMPTS = 60;

/** Lines of a taken-over container's output shown as its history (the console keeps 1000). */
const HISTORY_TAIL_LINES = 1000;

/** A promise that never settles: the wait of a container the panel let go of. */
export const never = (): Promise<never> => new Promise<never>(() => undefined);

/** What a container's process needs of its engine. */
export interface ContainerEngine {
  /** The client of short calls. */
  readonly api: Docker;
  /** Runs a short call: a failed connection or a passed deadline is RuntimeUnavailableError. */
  readonly call: EngineCall;
  /** A hijacked connection to the container's standard input, output and error. */
  attach(id: string): Promise<Duplex>;
  /** How many times, a second apart, an attach broken by the engine's absence is tried again. */
  readonly returnAttempts: number;
}

/**
 * What container `id` printed up to `until` (and from `since`; seconds since the epoch), as far
 * as the engine keeps it: the last HISTORY_TAIL_LINES lines, in order. An engine that cannot say
 * gives nothing.
 */
export async function containerHistory(
  { api, call }: ContainerEngine,
  id: string,
  until: number,
  since = 0,
): Promise<[Buffer, OutputStream][]> {
  try {
    const logs: unknown = await call(() =>
      api.getContainer(id).logs({
        stdout: true,
        stderr: true,
        follow: false,
        tail: HISTORY_TAIL_LINES,
        since,
        until,
      }),
    );
    return Buffer.isBuffer(logs) ? demultiplex(logs) : [];
  } catch {
    return [];
  }
}

/**
 * The running container `id`, attached through `io`; `exited` from `exit`, a wait aborted by
 * `letGo` when the panel lets go of it. An attach connection that breaks while the container
 * runs on (its engine restarted, `--live-restore`) is made again once the engine answers,
 * with what the container printed meanwhile first (docs/nodes.md "Servers on a node").
 */
export function containerProcess(
  engine: ContainerEngine,
  id: string,
  pid: number,
  startedAt: Date,
  attached: Duplex | null,
  exit: Promise<ExitInfo>,
  letGo: AbortController,
  printed: [Buffer, OutputStream][] = [],
): RunningProcess {
  const { api, call } = engine;
  const container = api.getContainer(id);
  let outputListener: ((chunk: Buffer, stream: OutputStream) => void) | null = null;
  const held: [Buffer, OutputStream][] = [...printed];
  const forward = (stream: OutputStream) => {
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => {
      if (outputListener) outputListener(chunk, stream);
      else held.push([chunk, stream]);
    });
    return sink;
  };
  const stdout = forward('stdout');
  const stderr = forward('stderr');
  let io: Duplex | null = null;
  let ioEnded: Promise<void> = Promise.resolve();
  let settled = false;
  const follow = (stream: Duplex) => {
    io = stream;
    api.modem.demuxStream(stream, stdout, stderr);
    // A broken connection only means the container is gone or the engine is, which the wait
    // and the attach made again tell; unhandled, it would end the panel.
    stream.on('error', () => undefined);
    ioEnded = new Promise((resolve) => {
      stream.once('close', resolve);
      stream.once('end', resolve);
    });
    void ioEnded.then(() => {
      if (!over()) void reattach(Date.now());
    });
  };
  /** The container ended, or the panel let go of it: nothing more is attached. */
  const over = () => letGo.signal.aborted || settled;
  /** Attaches again while the container runs, for as long as the wait asks again. */
  const reattach = async (lostAt: number) => {
    for (let attempt = 0; attempt < engine.returnAttempts; attempt++) {
      await sleep(1_000);
      if (over()) return;
      try {
        if (!(await call(() => api.getContainer(id).inspect())).State.Running) return;
        const stream = await engine.attach(id);
        if (over()) {
          stream.destroy();
          return;
        }
        // What it printed while no connection took it, then what it prints from now on.
        const missed = await containerHistory(engine, id, Date.now() / 1000, lostAt / 1000);
        for (const [chunk, kind] of missed) (kind === 'stdout' ? stdout : stderr).write(chunk);
        follow(stream);
        return;
      } catch (error) {
        // The engine answered (the container is gone): the wait tells how it ended.
        if (!(error instanceof RuntimeUnavailableError)) return;
      }
    }
  };
  if (attached !== null) follow(attached);
  // Output still on its way is shown before the exit (for a second at most).
  const exited = exit.then(async (info) => {
    settled = true;
    if (letGo.signal.aborted) return never();
    await Promise.race([ioEnded, sleep(1_000)]);
    io?.destroy();
    return info;
  });
  const signal = async (name: 'SIGTERM' | 'SIGINT' | 'SIGKILL') => {
    try {
      await call(() => container.kill({ signal: name }));
    } catch (error) {
      // Not running any more (409) or gone (404): nothing to end.
      if (statusOf(error) !== 404 && statusOf(error) !== 409) throw error;
    }
  };
  let lastSample: { cpuNanos: number; at: number } | null = null;
  return {
    pid,
    identity: id,
    startedAt,
    exited,
    onOutput(listener) {
      outputListener = listener;
      for (const [chunk, stream] of held.splice(0)) listener(chunk, stream);
    },
    writeLine(line) {
      if (io === null || io.destroyed || !io.writable) return false;
      io.write(`${line}\n`);
      return true;
    },
    readsInput: () => Promise.resolve(io !== null && !io.destroyed),
    terminate: (name = 'SIGTERM') => signal(name),
    kill: () => signal('SIGKILL'),
    detach() {
      outputListener = null;
      letGo.abort();
      io?.destroy();
    },
    async usage(): Promise<Usage> {
      let stats: Docker.ContainerStats;
      try {
        stats = await call(() => container.stats({ stream: false, 'one-shot': true }));
      } catch (error) {
        // The engine answered: the container is gone, or ending and being removed (404, 409,
        // or a 500 while its cgroup goes away). Nothing of it runs any more.
        if (statusOf(error) !== undefined) return { cpuPercent: 0, memoryBytes: 0, pids: 0 };
        throw error;
      }
      const now = Date.now();
      // Fields of a container that is not running are left out by some engines.
      const current = stats.cpu_stats as Partial<Docker.CPUStats> | undefined;
      const pre = stats.precpu_stats as Partial<Docker.CPUStats> | undefined;
      const cpuNanos = current?.cpu_usage?.total_usage ?? 0;
      const system = current?.system_cpu_usage ?? 0;
      const preSystem = pre?.system_cpu_usage ?? 0;
      let percent: number;
      if (preSystem > 0 && system > preSystem) {
        // The engine's own two readings: share of the whole machine, times its cores.
        const cores = current?.online_cpus ?? 1;
        percent =
          ((cpuNanos - (pre?.cpu_usage?.total_usage ?? 0)) / (system - preSystem)) * cores * 100;
      } else if (lastSample !== null && now - lastSample.at >= 200) {
        percent = ((cpuNanos - lastSample.cpuNanos) / 1e6 / (now - lastSample.at)) * 100;
      } else {
        const elapsed = now - startedAt.getTime();
        percent = elapsed > 0 ? (cpuNanos / 1e6 / elapsed) * 100 : 0;
      }
      if (lastSample === null || now - lastSample.at >= 200) lastSample = { cpuNanos, at: now };
      const memory = stats.memory_stats as
        { usage?: number; stats?: Record<string, number | undefined> } | undefined;
      // Page cache the kernel can take back is not the server's (as `docker stats` counts).
      const cache = memory?.stats?.total_inactive_file ?? memory?.stats?.inactive_file ?? 0;
      return {
        cpuPercent: Math.round(Math.max(0, percent) * 10) / 10,
        memoryBytes: Math.max(0, (memory?.usage ?? 0) - cache),
        pids: stats.pids_stats?.current ?? 0,
      };
    },
  };
}

/**
 * The engine's multiplexed output of a container without a terminal (8-byte headers: the
 * stream, then the payload's length), as chunks of each stream in order.
 */
export function demultiplex(logs: Buffer): [Buffer, OutputStream][] {
  const chunks: [Buffer, OutputStream][] = [];
  let offset = 0;
  while (offset + 8 <= logs.length) {
    const kind = logs.readUInt8(offset);
    const length = logs.readUInt32BE(offset + 4);
    const payload = logs.subarray(offset + 8, offset + 8 + length);
    if (kind === 1 || kind === 2) chunks.push([payload, kind === 2 ? 'stderr' : 'stdout']);
    offset += 8 + length;
  }
  return chunks;
}
