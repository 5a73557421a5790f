/**
 * Install runs: the template's install script run with the server's folder at /mnt/server, its
 * output in the console, as the server would run (same runtime, user and limits); its image
 * pulled first when the engine lacks it (./pull-first.ts). Refused while the panel closes, while
 * a restore holds the server, or while it runs. Its end sets the install state: `installed` on
 * exit code 0; else `failed`, with the reason (stopped, out of memory, the signal or exit code
 * that ended it, or why it could not start) and the last INSTALL_LAST_LINES lines it printed,
 * which the start's refusal and the server's view then show.
 */
import { INSTALL_LAST_LINES, type ServerRecord, type ServerStatus } from '../../domain/server.js';
import { AppError } from '../../errors.js';
import { StartError, type ExitInfo, type RunningProcess } from '../runtime/runtime.js';
import type { CrashRestarts } from './crash-restart.js';
import { installLaunch } from './launch.js';
import { OutputTail } from './output-tail.js';
import type { PullFirst } from './pull-first.js';
import {
  follow,
  recordOf,
  refusal,
  refuseUnenforced,
  resourceLimits,
  setStatus,
  type Entry,
  type SupervisorDeps,
} from './server-entry.js';

type InstallDeps = Pick<
  SupervisorDeps,
  'servers' | 'templates' | 'runtimes' | 'storage' | 'userOf' | 'log' | 'now'
>;

export interface InstallHooks {
  /** True once the panel is closing: nothing more is installed. */
  readonly closing: () => boolean;
  readonly pulls: PullFirst;
  readonly restarts: CrashRestarts;
}

export class InstallRuns {
  readonly #deps: InstallDeps;
  readonly #hooks: InstallHooks;

  constructor(deps: InstallDeps, hooks: InstallHooks) {
    this.#deps = deps;
    this.#hooks = hooks;
  }

  /**
   * Starts the install script; answers once it has started, or once its image pull has begun.
   * `pulled`: its image was just pulled for it. Must run under the entry's lock.
   */
  async run(name: string, entry: Entry, pulled: boolean): Promise<ServerStatus> {
    if (this.#hooks.closing()) throw new AppError('CONFLICT', 'The panel is shutting down');
    if (entry.held !== null) throw new AppError('BACKUP_IN_PROGRESS', entry.held);
    if (
      entry.process !== null ||
      (!pulled && entry.status !== 'stopped' && entry.status !== 'crashed')
    ) {
      throw new AppError(
        'CONFLICT',
        `Stop the server before installing it (it is ${entry.status})`,
      );
    }
    this.#hooks.restarts.cancel(entry);
    const record = await recordOf(this.#deps.servers, name);
    const template =
      record.template === null ? undefined : await this.#deps.templates.find(record.template);
    const script = template?.install;
    if (!template || !script) {
      throw new AppError('CONFLICT', "The server's template has no install script");
    }
    const runtime = this.#deps.runtimes[record.runtime];
    const launch = installLaunch(record, template);
    refuseUnenforced(runtime, record, entry);
    const images = record.runtime === 'docker' ? runtime.images : undefined;
    if (
      images !== undefined &&
      (await this.#hooks.pulls.onHost(images, script.image, pulled)) === null
    ) {
      setStatus(entry, 'installing');
      await this.#deps.servers.setInstall(name, {
        state: 'installing',
        reason: null,
        lastLines: [],
      });
      this.#hooks.pulls.begin(name, entry, images, script.image, 'install', () =>
        this.run(name, entry, true),
      );
      return entry.status;
    }
    entry.features.begin(record, template);
    setStatus(entry, 'installing');
    await this.#deps.servers.setInstall(name, {
      state: 'installing',
      reason: null,
      lastLines: [],
    });
    let process: RunningProcess;
    try {
      const user = this.#deps.userOf(record);
      await this.#deps.storage.create(name, user);
      entry.log.append(`[panel] installing with the ${launch.argv[0]} script of the template`);
      process = await runtime.start({
        name,
        argv: launch.argv,
        shells: launch.shells,
        cwd: this.#deps.storage.directoryOf(name),
        limits: resourceLimits(record),
        image: record.runtime === 'docker' ? script.image : null,
        env: launch.env,
        ports: [],
        install: { script: script.script },
        user,
        say: (line) => {
          entry.log.append(`[panel] ${line}`);
        },
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      entry.log.append(`[panel] the install could not start: ${message}`);
      await this.#deps.servers.setInstall(name, {
        state: 'failed',
        exitCode: null,
        finishedAt: this.#deps.now().toISOString(),
        reason: `it could not start: ${message}`,
        lastLines: [],
      });
      setStatus(entry, 'stopped');
      if (error instanceof StartError) return entry.status;
      throw refusal(error);
    }
    entry.installing = process;
    entry.process = process;
    entry.stopRequested = false;
    const tail = new OutputTail(INSTALL_LAST_LINES);
    void follow(
      this.#deps.log,
      name,
      entry,
      process,
      'the end of an install',
      (exit) => entry.lock.run(() => this.#installed(name, entry, process, exit, tail.lines())),
      tail,
    );
    return entry.status;
  }

  /**
   * The install script ended, having printed `lastLines` last (kept with a failure). Must run
   * under the entry's lock.
   */
  async #installed(
    name: string,
    entry: Entry,
    process: RunningProcess,
    exit: ExitInfo,
    lastLines: readonly string[],
  ) {
    // A stop or kill of the install has already ended it as a stop; its state is set here.
    if (entry.installing !== process) return;
    if (entry.process === process) entry.process = null;
    entry.installing = null;
    const ok = exit.code === 0 && !entry.stopRequested;
    const how = exit.signal === null ? `code ${exit.code ?? 'unknown'}` : `signal ${exit.signal}`;
    entry.log.append(
      ok
        ? '[panel] installed'
        : `[panel] the install failed (${how}); the server cannot start until an install succeeds`,
    );
    await this.#deps.servers.setInstall(name, {
      state: ok ? 'installed' : 'failed',
      exitCode: exit.code,
      finishedAt: this.#deps.now().toISOString(),
      reason: ok
        ? null
        : entry.stopRequested
          ? 'it was stopped before it ended'
          : exit.outOfMemory
            ? 'it ran out of memory'
            : exit.signal !== null
              ? `the script was ended by ${exit.signal}`
              : `the script exited with code ${exit.code ?? 'unknown'}`,
      lastLines: ok ? [] : lastLines,
    });
    setStatus(entry, 'stopped');
  }
}

/** ` (the script exited with code 2)`: why an install failed, as far as it is known. */
export function installFailure(install: ServerRecord['install']): string {
  if (install.reason !== null) return ` (${install.reason})`;
  return install.exitCode === null ? '' : ` (exit code ${install.exitCode})`;
}
