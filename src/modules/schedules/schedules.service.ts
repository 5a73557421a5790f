/**
 * A server's schedules. They belong to the server: whoever holds `schedules` on it (admins every
 * server) sees and deletes them. Making, changing or running one now also needs the permission
 * of each of its tasks (`permissionOf`), and makes the caller its author: every run is checked
 * against what the author holds then, and a schedule whose author may no longer do it is
 * disabled instead of run, saying why (docs/api.md, "Schedules").
 */
import { NoLongerExists } from '../../domain/conflicts.js';
import type { ServerAction } from '../../domain/policy.js';
import {
  MAX_DELAY_SECONDS,
  permissionOf,
  timingOf,
  type Schedule,
  type ScheduleFields,
  type ScheduleTask,
} from '../../domain/schedule.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { ServersService } from '../servers/servers.service.js';
import type { Scheduler } from './scheduler.js';
import type { SchedulesRepository } from './schedules.repository.js';

/** A task as sent: its delay may be left out, and its payload is checked here. */
export type TaskInput = Pick<ScheduleTask, 'action'> &
  Partial<Pick<ScheduleTask, 'payload' | 'delaySeconds'>>;

/** The fields sent; those left out keep their default (a new schedule) or value (a change). */
export type ScheduleInput = Partial<Omit<ScheduleFields, 'tasks'>> & {
  readonly tasks?: readonly TaskInput[] | undefined;
};

/** A schedule as its caller sees it: not the scheduler's bookkeeping, and its author by name. */
export type ScheduleView = Omit<Schedule, 'handledUntil' | 'changedBy'> & {
  readonly nextRunAt: string | null;
  readonly running: boolean;
  /** Who last made or changed it, whose rights its runs use; null: nobody (it does not run). */
  readonly author: string | null;
};

/** What a SchedulesService is made from. */
export interface SchedulesServiceDeps {
  readonly schedules: SchedulesRepository;
  readonly servers: Pick<ServersService, 'require' | 'stillPermits'>;
  /** The account's name; undefined once it is deleted. */
  readonly usernameOf: (userId: number) => Promise<string | undefined>;
  readonly scheduler: Scheduler;
  readonly now: () => Date;
}

export class SchedulesService {
  readonly #deps: SchedulesServiceDeps;

  constructor(deps: SchedulesServiceDeps) {
    this.#deps = deps;
  }

  async list(user: User, server: string): Promise<ScheduleView[]> {
    await this.#deps.servers.require(user, server, 'server.schedules');
    return Promise.all(
      (await this.#deps.schedules.list(server)).map((schedule) => this.#view(schedule)),
    );
  }

  async get(user: User, server: string, id: number): Promise<ScheduleView> {
    return this.#view(await this.#find(user, server, id));
  }

  /**
   * Why the schedule may not run now (null: it may): its author must exist, not be banned, have
   * the server and hold `schedules` and each task's permission there. For the scheduler.
   */
  async refusal(schedule: Schedule): Promise<string | null> {
    if (schedule.changedBy === null) return 'it has no recorded author';
    const standing = await this.#deps.servers.stillPermits(schedule.changedBy, schedule.server, [
      'server.schedules',
      ...taskActions(schedule.tasks),
    ]);
    return standing.ok ? null : standing.reason;
  }

  async create(user: User, server: string, input: ScheduleInput): Promise<ScheduleView> {
    await this.#deps.servers.require(user, server, 'server.schedules');
    const fields = checkFields(
      {
        name: input.name ?? '',
        cron: input.cron ?? '',
        timezone: input.timezone ?? 'UTC',
        enabled: input.enabled ?? true,
        onlyWhenRunning: input.onlyWhenRunning ?? false,
        tasks: input.tasks ?? [],
      },
      this.#deps.now(),
    );
    await this.#requireTasks(user, server, fields.tasks);
    const schedule = await this.#deps.schedules
      .insert(server, fields, this.#deps.now().toISOString(), user.id)
      .catch((error: unknown) => {
        if (error instanceof NoLongerExists) throw notFound('Server');
        throw error;
      });
    this.#deps.scheduler.changed(schedule);
    return this.#view(schedule);
  }

  /**
   * Changes the fields sent; the schedule's next run is counted afresh from now. The caller
   * becomes its author, so must hold the permission of every task it keeps or gets.
   */
  async update(
    user: User,
    server: string,
    id: number,
    input: ScheduleInput,
  ): Promise<ScheduleView> {
    const current = await this.#find(user, server, id);
    const fields = checkFields(
      {
        name: input.name ?? current.name,
        cron: input.cron ?? current.cron,
        timezone: input.timezone ?? current.timezone,
        enabled: input.enabled ?? current.enabled,
        onlyWhenRunning: input.onlyWhenRunning ?? current.onlyWhenRunning,
        tasks: input.tasks ?? current.tasks,
      },
      this.#deps.now(),
    );
    await this.#requireTasks(user, server, fields.tasks);
    const updated = await this.#deps.schedules.update(
      server,
      id,
      fields,
      this.#deps.now().toISOString(),
      user.id,
    );
    if (!updated) throw notFound('Schedule');
    this.#deps.scheduler.changed(updated);
    return this.#view(updated);
  }

  /** Deletes the schedule; a run in progress ends before its next task. */
  async remove(user: User, server: string, id: number): Promise<void> {
    await this.#find(user, server, id);
    if (!(await this.#deps.schedules.delete(server, id))) throw notFound('Schedule');
    this.#deps.scheduler.removed(id);
  }

  /**
   * Starts a run now (disabled or not); 409 while one is in progress. The caller must hold what
   * the tasks use (running it is doing them now); the run is checked against its author too.
   */
  async run(user: User, server: string, id: number): Promise<ScheduleView> {
    const schedule = await this.#find(user, server, id);
    await this.#requireTasks(user, server, schedule.tasks);
    this.#deps.scheduler.runNow(schedule);
    return this.#view(schedule);
  }

  /** 403 naming the first task whose permission the caller lacks on the server. */
  async #requireTasks(user: User, server: string, tasks: readonly ScheduleTask[]): Promise<void> {
    for (const [index, task] of tasks.entries()) {
      const permission = permissionOf(task.action);
      try {
        await this.#deps.servers.require(user, server, `server.${permission}`);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'FORBIDDEN') throw error;
        const message = `a ${task.action} task needs the ${permission} permission, which you lack on this server`;
        throw new AppError('FORBIDDEN', `tasks.${index}: ${message}`, {
          details: [{ path: `body/tasks/${index}/action`, message }],
        });
      }
    }
  }

  async #find(user: User, server: string, id: number): Promise<Schedule> {
    await this.#deps.servers.require(user, server, 'server.schedules');
    const schedule = await this.#deps.schedules.find(server, id);
    if (!schedule) throw notFound('Schedule');
    return schedule;
  }

  async #view(schedule: Schedule): Promise<ScheduleView> {
    const next = this.#deps.scheduler.nextRunAt(schedule);
    const author =
      schedule.changedBy === null
        ? null
        : ((await this.#deps.usernameOf(schedule.changedBy)) ?? null);
    return {
      id: schedule.id,
      server: schedule.server,
      name: schedule.name,
      cron: schedule.cron,
      timezone: schedule.timezone,
      enabled: schedule.enabled,
      onlyWhenRunning: schedule.onlyWhenRunning,
      tasks: schedule.tasks,
      nextRunAt: next === null ? null : next.toISOString(),
      lastRunAt: schedule.lastRunAt,
      lastOutcome: schedule.lastOutcome,
      running: this.#deps.scheduler.isRunning(schedule.id),
      createdAt: schedule.createdAt,
      author,
    };
  }
}

/** The server actions a schedule's tasks use, each once. */
const taskActions = (tasks: readonly ScheduleTask[]): ServerAction[] => [
  ...new Set(tasks.map((task): ServerAction => `server.${permissionOf(task.action)}`)),
];

const invalid = (path: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', `${path.replace(/\//g, '.')}: ${message}`, {
    details: [{ path: `body/${path}`, message }],
  });

/** The rules the body schema cannot say: the expression, the timezone and each task. */
function checkFields(
  fields: Omit<ScheduleFields, 'tasks'> & { tasks: readonly TaskInput[] },
  now: Date,
): ScheduleFields {
  if (fields.name.trim() === '') throw invalid('name', 'required');
  const timing = timingOf(fields.cron, fields.timezone);
  if (!timing.ok) throw invalid(timing.field, timing.reason);
  if (timing.cron.nextRun(now) === null) throw invalid('cron', 'never matches a date');
  if (fields.tasks.length === 0) throw invalid('tasks', 'at least one task is required');
  const tasks = fields.tasks.map((task, index): ScheduleTask => {
    const at = (field: string) => `tasks/${index}/${field}`;
    const delaySeconds = task.delaySeconds ?? 0;
    if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
      throw invalid(at('delaySeconds'), `must be a whole number from 0 to ${MAX_DELAY_SECONDS}`);
    }
    switch (task.action) {
      case 'command': {
        const payload = task.payload ?? '';
        if (payload.trim() === '') throw invalid(at('payload'), 'a command task needs the command');
        if (/[\r\n\0]/.test(payload)) throw invalid(at('payload'), 'must be a single line');
        return { action: 'command', payload, delaySeconds };
      }
      case 'backup':
      case 'start':
      case 'stop':
      case 'restart':
        if (task.payload !== undefined) {
          throw invalid(at('payload'), 'only a command task takes a payload');
        }
        return { action: task.action, delaySeconds };
      default:
        return unreachable(task.action);
    }
  });
  return { ...fields, tasks };
}

function unreachable(action: never): never {
  throw new Error(`unknown schedule action ${String(action)}`);
}
