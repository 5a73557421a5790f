/**
 * Schedules: a server's timed sequences of tasks. A schedule belongs to its server; its tasks
 * act with the rights of the account that last made or changed it, as that account holds them
 * at each run (docs/api.md, "Schedules").
 */
import { Cron } from 'croner';
import type { ServerPermission } from './policy.js';

export type ScheduleAction = 'command' | 'start' | 'stop' | 'restart' | 'backup';
export const SCHEDULE_ACTIONS: readonly ScheduleAction[] = [
  'command',
  'start',
  'stop',
  'restart',
  'backup',
];

/** The permission a task uses: needed to make or change it, and by its author at each run. */
export function permissionOf(action: ScheduleAction): ServerPermission {
  switch (action) {
    case 'command':
      return 'console.write';
    case 'start':
    case 'stop':
    case 'restart':
      return 'power';
    case 'backup':
      return 'backups.create';
    default:
      return unreachable(action);
  }
}

function unreachable(action: never): never {
  throw new Error(`unknown schedule action ${String(action)}`);
}

export interface ScheduleTask {
  readonly action: ScheduleAction;
  /** The console line of a `command` task; absent for the others. */
  readonly payload?: string;
  /** Seconds to wait before this task. */
  readonly delaySeconds: number;
}

export type ScheduleOutcomeStatus = 'ok' | 'failed' | 'skipped';
export const SCHEDULE_OUTCOMES: readonly ScheduleOutcomeStatus[] = ['ok', 'failed', 'skipped'];

export interface ScheduleOutcome {
  readonly status: ScheduleOutcomeStatus;
  readonly message: string;
  /** When the run ended or was skipped (ISO-8601 UTC). */
  readonly at: string;
}

export interface Schedule {
  readonly id: number;
  readonly server: string;
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly enabled: boolean;
  readonly onlyWhenRunning: boolean;
  readonly tasks: readonly ScheduleTask[];
  /** When a run last began. */
  readonly lastRunAt: string | null;
  readonly lastOutcome: ScheduleOutcome | null;
  /**
   * The last due time the scheduler dealt with (ran or skipped), or the last change of the
   * schedule if later: where the search for runs missed while the panel was down begins.
   */
  readonly handledUntil: string;
  readonly createdAt: string;
  /** The account that last made or changed it; null: none recorded (it does not run). */
  readonly changedBy: number | null;
}

/** What a schedule's owner sets; the rest is the scheduler's. */
export type ScheduleFields = Pick<
  Schedule,
  'name' | 'cron' | 'timezone' | 'enabled' | 'onlyWhenRunning' | 'tasks'
>;

export const MAX_TASKS = 20;
export const MAX_DELAY_SECONDS = 3600;

/** What the cron and timezone of a schedule say, or why they cannot be read. */
export type Timing =
  | { readonly ok: true; readonly cron: Cron }
  | { readonly ok: false; readonly field: 'cron' | 'timezone'; readonly reason: string };

/**
 * Reads a 5-field cron expression in an IANA timezone. The timezone is checked first: croner
 * reports a bad one only when it computes a date.
 */
export function timingOf(cron: string, timezone: string): Timing {
  if (!isTimezone(timezone)) {
    return { ok: false, field: 'timezone', reason: `${timezone} is not an IANA timezone name` };
  }
  try {
    return { ok: true, cron: new Cron(cron, { timezone, mode: '5-part', paused: true }) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, field: 'cron', reason: message.replace(/^CronPattern: /, '') };
  }
}

/** An IANA name such as Europe/Berlin or UTC; UTC offsets ("+01:00") are refused. */
function isTimezone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The first run strictly after `after`, or null when the expression never matches again. */
export function nextRunOf(cron: Cron, after: Date): Date | null {
  return cron.nextRun(after);
}
