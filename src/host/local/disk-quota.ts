/**
 * The disk quota of running servers (docs/api.md, "Servers"): a start is refused while the
 * server already uses more than its quota; every DISK_CHECK_MS each running server's use is
 * compared with the quota it started with: one that passes it is warned in its console, and
 * stopped (the stop sequence) once it has stayed over for the grace period; one that gets back
 * within it is told so. A failed check is logged and tried again at the next.
 */
import type { ServerRecord } from '../../domain/server.js';
import { AppError } from '../../errors.js';
import type { Entry, SupervisorDeps } from './server-entry.js';

/** How often running servers' disk use is compared with their quota. */
const DISK_CHECK_MS = 5_000;

type QuotaDeps = Pick<
  SupervisorDeps,
  'storage' | 'diskGraceSeconds' | 'diskCheckMs' | 'now' | 'log'
>;

export interface QuotaHooks {
  /** Every server the supervisor keeps, with its entry. */
  readonly entries: () => Iterable<[string, Entry]>;
  /** True once the panel is closing: nothing more is checked. */
  readonly closing: () => boolean;
  /** Stops the server (the stop sequence, under its lock); an AppError: it is not running. */
  readonly stop: (name: string) => Promise<unknown>;
}

export class DiskQuota {
  readonly #deps: QuotaDeps;
  readonly #hooks: QuotaHooks;
  readonly #timer: NodeJS.Timeout;

  /** Starts the periodic check (it never keeps the process alive); {@link close} ends it. */
  constructor(deps: QuotaDeps, hooks: QuotaHooks) {
    this.#deps = deps;
    this.#hooks = hooks;
    this.#timer = setInterval(() => {
      void this.#check();
    }, deps.diskCheckMs ?? DISK_CHECK_MS);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
  }

  /** Refuses to start a server that already uses more disk than its quota. */
  async refuseOver(name: string, record: ServerRecord): Promise<void> {
    const quota = record.limits.diskBytes;
    if (quota === null) return;
    const used = await this.#deps.storage.diskUsage(name);
    if (used > quota) {
      throw new AppError(
        'OVER_QUOTA',
        `The server uses ${mebibytes(used)} of disk, more than its limit of ${mebibytes(quota)}: delete files before starting it`,
      );
    }
  }

  /**
   * Compares each running server's disk use with its quota: a server that passes it is warned in
   * its console, and stopped once it has stayed over for the grace period.
   */
  async #check(): Promise<void> {
    for (const [name, entry] of this.#hooks.entries()) {
      const limit = entry.diskLimit;
      if (limit === null || entry.status !== 'running' || this.#hooks.closing()) continue;
      try {
        const used = await this.#deps.storage.diskUsage(name);
        if (used <= limit) {
          if (entry.overQuotaSince !== null) {
            entry.overQuotaSince = null;
            entry.log.append('[panel] the server is back within its disk limit');
          }
          continue;
        }
        const grace = this.#deps.diskGraceSeconds;
        const now = this.#deps.now().getTime();
        if (entry.overQuotaSince === null) {
          entry.overQuotaSince = now;
          entry.log.append(
            `[panel] the server uses ${mebibytes(used)} of disk, more than its limit of ${mebibytes(limit)}: it will be stopped in ${grace} s unless it gets back within it`,
          );
        }
        if (now - entry.overQuotaSince >= grace * 1000) {
          entry.log.append(`[panel] still over its disk limit after ${grace} s; stopping`);
          entry.overQuotaSince = null;
          await this.#hooks.stop(name).catch((error: unknown) => {
            if (!(error instanceof AppError)) throw error;
          });
        }
      } catch (error) {
        this.#deps.log.error({ err: error, server: name }, "could not check a server's disk use");
      }
    }
  }
}

const mebibytes = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
