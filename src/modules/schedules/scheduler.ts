/**
 * Runs schedules when they are due. One timer is armed for the soonest due schedule; the clock
 * and the timer functions are handed in, so tests advance a fake clock instead of sleeping.
 *
 * The rules (docs/api.md, "Schedules"):
 * - Times come from the database at start: a run missed while the panel was down (the first due
 *   time after the last one dealt with, or after the schedule's last change) runs once at start
 *   when it is less than one interval late (the interval being the time from that run to the
 *   one after it), else it is recorded as `skipped`.
 * - One run per schedule at a time: a due time that finds the previous run still going is
 *   recorded as `skipped`.
 * - `onlyWhenRunning`: a run that finds the server neither running nor starting is `skipped`.
 * - The first task that fails ends the run, recorded as `failed` with its message.
 * - Before the run and before each task, the schedule's author must still be allowed to do it
 *   (`refusal`): if not, the run ends there, recorded as `failed` with why, and the schedule is
 *   disabled, so it stays stopped until someone who may saves it again.
 * - Tasks act on the server through the panel (`ServersService.actingAs`), named on the console
 *   as the schedule, once their author's rights were checked.
 */
import type { Cron } from 'croner';
import {
  timingOf,
  type Schedule,
  type ScheduleOutcome,
  type ScheduleTask,
} from '../../domain/schedule.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ServerActor } from '../servers/servers.service.js';
import type { SchedulesRepository } from './schedules.repository.js';

/** Time as the scheduler sees it. */
export interface ScheduleClock {
  now(): Date;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock = (now: () => Date): ScheduleClock => ({
  now,
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
});

/** Node's timers take at most 2^31 - 1 ms; a later due time is reached in several waits. */
const MAX_WAIT_MS = 2_147_483_647;

interface Entry {
  readonly schedule: Schedule;
  readonly cron: Cron;
  /** The next due time, or null when the expression never matches again. */
  next: Date | null;
}

interface Sleep {
  readonly handle: unknown;
  readonly wake: (completed: boolean) => void;
}

/** What a Scheduler is made from. */
export interface SchedulerDeps {
  readonly schedules: SchedulesRepository;
  /** The server's own rights, the console naming the schedule (`schedule:<name>`). */
  readonly actor: (by: string) => ServerActor;
  /**
   * Makes a backup of the server and waits for it; rejects with why it failed. Its save
   * commands are typed in the name of whoever set them (docs/backups.md).
   */
  readonly backup: (server: string) => Promise<void>;
  readonly clock: ScheduleClock;
  readonly log: Logger;
  /**
   * Why the schedule's author may no longer have it run (null: it may); asked before the run
   * and before each task.
   */
  readonly refusal: (schedule: Schedule) => Promise<string | null>;
  /** Told how each run ended or why it was skipped (the audit log records it). */
  readonly ran?: (schedule: Schedule, outcome: ScheduleOutcome) => void;
}

export class Scheduler {
  readonly #entries = new Map<number, Entry>();
  /** The runs in progress, by schedule id. */
  readonly #running = new Map<number, Schedule>();
  /** Runs in progress whose schedule was deleted. */
  readonly #cancelled = new Set<number>();
  readonly #runs = new Set<Promise<void>>();
  readonly #sleeps = new Set<Sleep>();
  /**
   * Each schedule's writes, chained: they reach the database in the order they were made (with
   * a pool of connections, a skipped due time recorded first could otherwise land last).
   */
  readonly #writes = new Map<number, Promise<void>>();
  #timer: { handle: unknown; at: number } | null = null;
  #state: 'idle' | 'started' | 'stopped' = 'idle';
  readonly #deps: SchedulerDeps;

  constructor(deps: SchedulerDeps) {
    this.#deps = deps;
  }

  /**
   * Loads every schedule, deals with the runs missed while the panel was down, and arms the
   * timer. Missed runs are started, not awaited.
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle') return;
    const now = this.#deps.clock.now();
    for (const schedule of await this.#deps.schedules.list()) {
      const entry = this.#enter(schedule, now);
      if (entry === undefined) continue;
      await this.#catchUp(entry, now);
    }
    this.#state = 'started';
    this.#arm();
  }

  /** Disarms every timer and cancels the delays of runs in progress; they end at their next task. */
  stop(): void {
    this.#state = 'stopped';
    this.#disarm();
    for (const sleep of this.#sleeps) {
      this.#deps.clock.clearTimeout(sleep.handle);
      sleep.wake(false);
    }
    this.#sleeps.clear();
  }

  /** Resolves once every run in progress has ended and what they recorded is written. */
  async idle(): Promise<void> {
    while (this.#runs.size > 0 || this.#writes.size > 0) {
      await Promise.allSettled([...this.#runs, ...this.#writes.values()]);
    }
  }

  /** When the schedule runs next, as the scheduler knows it; null when disabled or never. */
  nextRunAt(schedule: Schedule): Date | null {
    if (!schedule.enabled) return null;
    const entry = this.#entries.get(schedule.id);
    if (entry) return entry.next;
    const timing = timingOf(schedule.cron, schedule.timezone);
    return timing.ok ? timing.cron.nextRun(this.#deps.clock.now()) : null;
  }

  isRunning(id: number): boolean {
    return this.#running.has(id);
  }

  /** A schedule was made or changed: it runs next after now. */
  changed(schedule: Schedule): void {
    this.#entries.delete(schedule.id);
    this.#enter(schedule, this.#deps.clock.now());
    this.#arm();
  }

  /** A schedule was deleted; a run in progress ends before its next task. */
  removed(id: number): void {
    this.#entries.delete(id);
    if (this.#running.has(id)) this.#cancelled.add(id);
    this.#arm();
  }

  /** A server was deleted (its schedules with it, by the database). */
  serverRemoved(name: string): void {
    for (const [id, entry] of this.#entries) {
      if (entry.schedule.server === name) this.#entries.delete(id);
    }
    for (const [id, schedule] of this.#running) {
      if (schedule.server === name) this.#cancelled.add(id);
    }
    this.#arm();
  }

  /** Starts a run now, without waiting for it; 409 while one is in progress. */
  runNow(schedule: Schedule): void {
    if (this.#running.has(schedule.id)) {
      throw new AppError('CONFLICT', 'The schedule is running already');
    }
    this.#launch(schedule);
  }

  /** Adds an enabled schedule whose expression reads, its next run after `after`. */
  #enter(schedule: Schedule, after: Date): Entry | undefined {
    if (!schedule.enabled) return undefined;
    const timing = timingOf(schedule.cron, schedule.timezone);
    if (!timing.ok) {
      this.#deps.log.warn(
        { schedule: schedule.id, reason: timing.reason },
        'a schedule cannot be read; it does not run',
      );
      return undefined;
    }
    const entry: Entry = { schedule, cron: timing.cron, next: timing.cron.nextRun(after) };
    this.#entries.set(schedule.id, entry);
    return entry;
  }

  async #catchUp(entry: Entry, now: Date): Promise<void> {
    const { schedule, cron } = entry;
    const missed = cron.nextRun(new Date(schedule.handledUntil));
    if (missed === null || missed.getTime() > now.getTime()) return;
    const after = cron.nextRun(missed);
    const lateMs = now.getTime() - missed.getTime();
    const intervalMs = after === null ? Infinity : after.getTime() - missed.getTime();
    if (lateMs < intervalMs) {
      this.#deps.log.info(
        { schedule: schedule.id, server: schedule.server, due: missed.toISOString() },
        'a schedule missed while the panel was down runs now',
      );
      this.#launch(schedule);
    } else {
      await this.#record(schedule, {
        status: 'skipped',
        message: `Missed while the panel was down: due at ${missed.toISOString()}, more than one interval late`,
        at: now.toISOString(),
      });
    }
    await this.#handled(schedule.id, now);
  }

  #arm(): void {
    this.#disarm();
    if (this.#state !== 'started') return;
    let soonest: number | null = null;
    for (const entry of this.#entries.values()) {
      const at = entry.next?.getTime();
      if (at !== undefined && (soonest === null || at < soonest)) soonest = at;
    }
    if (soonest === null) return;
    const wait = Math.min(MAX_WAIT_MS, Math.max(0, soonest - this.#deps.clock.now().getTime()));
    this.#timer = {
      at: soonest,
      handle: this.#deps.clock.setTimeout(() => {
        this.#timer = null;
        this.#fire();
      }, wait),
    };
  }

  #disarm(): void {
    if (this.#timer !== null) this.#deps.clock.clearTimeout(this.#timer.handle);
    this.#timer = null;
  }

  /** Every schedule due by now: run (or skip) it, and move it to its next time after now. */
  #fire(): void {
    const now = this.#deps.clock.now();
    for (const entry of this.#entries.values()) {
      const due = entry.next;
      if (due === null || due.getTime() > now.getTime()) continue;
      entry.next = entry.cron.nextRun(now);
      const { schedule } = entry;
      if (this.#running.has(schedule.id)) {
        void this.#record(schedule, {
          status: 'skipped',
          message: `The run due at ${due.toISOString()} was skipped: the previous run was still going`,
          at: now.toISOString(),
        });
      } else {
        this.#launch(schedule);
      }
      void this.#handled(schedule.id, due);
    }
    this.#arm();
  }

  #launch(schedule: Schedule): void {
    this.#running.set(schedule.id, schedule);
    const run = this.#run(schedule).finally(() => {
      this.#running.delete(schedule.id);
      this.#cancelled.delete(schedule.id);
      this.#runs.delete(run);
    });
    this.#runs.add(run);
  }

  /** Runs the tasks in order; never rejects. */
  async #run(schedule: Schedule): Promise<void> {
    const { server, id } = schedule;
    const actor = this.#deps.actor(`schedule:${schedule.name}`);
    const at = () => this.#deps.clock.now().toISOString();
    try {
      if (await this.#refused(schedule, 'Not run')) return;
      if (schedule.onlyWhenRunning) {
        const status = actor.status(server);
        if (status !== 'running' && status !== 'starting') {
          await this.#record(schedule, {
            status: 'skipped',
            message: `The server is ${status}, and the schedule runs only while it runs`,
            at: at(),
          });
          return;
        }
      }
      const started = at();
      await this.#write(id, 'a schedule run could not be recorded', () =>
        this.#deps.schedules.recordStart(id, started),
      );
      for (const [index, task] of schedule.tasks.entries()) {
        if (task.delaySeconds > 0 && !(await this.#sleep(task.delaySeconds * 1000))) return;
        // Deleted meanwhile, or the panel is closing: the run ends here.
        if (this.#state === 'stopped' || this.#cancelled.has(id)) return;
        if (index > 0 && (await this.#refused(schedule, `Stopped before task ${index + 1}`))) {
          return;
        }
        try {
          if (task.action === 'backup') await this.#deps.backup(server);
          else await perform(actor, server, task);
        } catch (error) {
          const reason = error instanceof AppError ? error.message : 'an internal error';
          if (!(error instanceof AppError)) {
            this.#deps.log.error({ err: error, schedule: id }, 'a schedule task failed');
          }
          await this.#record(schedule, {
            status: 'failed',
            message: `Task ${index + 1} (${task.action}) failed: ${reason}`,
            at: at(),
          });
          return;
        }
      }
      await this.#record(schedule, {
        status: 'ok',
        message: `${schedule.tasks.length} task${schedule.tasks.length === 1 ? '' : 's'} done`,
        at: at(),
      });
    } catch (error) {
      this.#deps.log.error({ err: error, schedule: id }, 'a schedule run could not be recorded');
    }
  }

  /**
   * When the author may no longer have the schedule run: disables it, records the run as failed
   * with why (`what` happened, then the reason) and answers true.
   */
  async #refused(schedule: Schedule, what: string): Promise<boolean> {
    const reason = await this.#deps.refusal(schedule);
    if (reason === null) return false;
    this.#entries.delete(schedule.id);
    this.#arm();
    await this.#write(schedule.id, 'a schedule could not be disabled', () =>
      this.#deps.schedules.disable(schedule.id),
    );
    await this.#record(schedule, {
      status: 'failed',
      message: `${what}, and the schedule was disabled: ${reason}`,
      at: this.#deps.clock.now().toISOString(),
    });
    return true;
  }

  /** Waits `ms` on the clock: true when it elapsed, false when the scheduler stopped. */
  #sleep(ms: number): Promise<boolean> {
    if (this.#state === 'stopped') return Promise.resolve(false);
    return new Promise((resolve) => {
      const sleep: Sleep = {
        wake: resolve,
        handle: this.#deps.clock.setTimeout(() => {
          this.#sleeps.delete(sleep);
          resolve(true);
        }, ms),
      };
      this.#sleeps.add(sleep);
    });
  }

  #record(schedule: Schedule, outcome: ScheduleOutcome): Promise<void> {
    this.#deps.ran?.(schedule, outcome);
    return this.#write(schedule.id, 'a schedule outcome could not be recorded', () =>
      this.#deps.schedules.recordOutcome(schedule.id, outcome),
    );
  }

  #handled(id: number, at: Date): Promise<void> {
    return this.#write(id, 'a schedule time could not be recorded', () =>
      this.#deps.schedules.recordHandled(id, at.toISOString()),
    );
  }

  /** Runs `write` after the schedule's earlier writes; never rejects (failures are logged). */
  #write(id: number, failure: string, write: () => Promise<void>): Promise<void> {
    const previous = this.#writes.get(id) ?? Promise.resolve();
    const next = previous.then(write).catch((error: unknown) => {
      this.#deps.log.error({ err: error, schedule: id }, failure);
    });
    this.#writes.set(id, next);
    void next.then(() => {
      if (this.#writes.get(id) === next) this.#writes.delete(id);
    });
    return next;
  }
}

async function perform(actor: ServerActor, server: string, task: ScheduleTask): Promise<void> {
  switch (task.action) {
    case 'command':
      await actor.command(server, task.payload ?? '');
      return;
    case 'start':
      await actor.start(server);
      return;
    case 'stop':
      await actor.stop(server);
      return;
    case 'restart':
      await actor.restart(server);
      return;
    case 'backup':
      throw new Error('a backup task is performed by the scheduler itself');
    default:
      return unreachable(task.action);
  }
}

function unreachable(action: never): never {
  throw new Error(`unknown schedule action ${String(action)}`);
}
