/** The only code that queries the schedules table. */
import type { Kysely, Selectable } from 'kysely';
import { Type } from 'typebox';
import { withConstraints } from '../../db/database.js';
import { readJson } from '../../db/json-column.js';
import type { Database, SchedulesTable } from '../../db/schema.js';
import {
  SCHEDULE_ACTIONS,
  SCHEDULE_OUTCOMES,
  type Schedule,
  type ScheduleFields,
  type ScheduleOutcome,
} from '../../domain/schedule.js';

const Tasks = Type.Array(
  Type.Object({
    action: Type.Union(SCHEDULE_ACTIONS.map((action) => Type.Literal(action))),
    payload: Type.Optional(Type.String()),
    delaySeconds: Type.Number(),
  }),
);
const Outcome = Type.Object({
  status: Type.Union(SCHEDULE_OUTCOMES.map((status) => Type.Literal(status))),
  message: Type.String(),
  at: Type.String(),
});

const toSchedule = (row: Selectable<SchedulesTable>): Schedule => ({
  id: row.id,
  server: row.server_name,
  name: row.name,
  cron: row.cron,
  timezone: row.timezone,
  enabled: row.enabled === 1,
  onlyWhenRunning: row.only_when_running === 1,
  tasks: readJson(row.tasks, Tasks, 'schedules.tasks'),
  lastRunAt: row.last_run_at,
  lastOutcome:
    row.last_outcome === null
      ? null
      : readJson(row.last_outcome, Outcome, 'schedules.last_outcome'),
  handledUntil: row.handled_until,
  createdAt: row.created_at,
  changedBy: row.changed_by,
});

const columnsOf = (fields: ScheduleFields) => ({
  name: fields.name,
  cron: fields.cron,
  timezone: fields.timezone,
  enabled: fields.enabled ? 1 : 0,
  only_when_running: fields.onlyWhenRunning ? 1 : 0,
  tasks: JSON.stringify(fields.tasks),
});

export class SchedulesRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The server's schedules by id; every schedule without `server`. */
  async list(server?: string): Promise<Schedule[]> {
    let query = this.#db.selectFrom('schedules').selectAll().orderBy('id');
    if (server !== undefined) query = query.where('server_name', '=', server);
    return (await query.execute()).map(toSchedule);
  }

  async find(server: string, id: number): Promise<Schedule | undefined> {
    const row = await this.#db
      .selectFrom('schedules')
      .selectAll()
      .where('server_name', '=', server)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toSchedule(row);
  }

  /** Throws NoLongerExists when the server (or the author's account row) is gone. */
  async insert(
    server: string,
    fields: ScheduleFields,
    at: string,
    changedBy: number,
  ): Promise<Schedule> {
    const row = await withConstraints(() =>
      this.#db
        .insertInto('schedules')
        .values({
          server_name: server,
          ...columnsOf(fields),
          last_run_at: null,
          last_outcome: null,
          handled_until: at,
          created_at: at,
          changed_by: changedBy,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return toSchedule(row);
  }

  /**
   * A change starts the schedule afresh at `at`: nothing before it counts as missed. Whoever
   * changed it is its author from now on.
   */
  async update(
    server: string,
    id: number,
    fields: ScheduleFields,
    at: string,
    changedBy: number,
  ): Promise<Schedule | undefined> {
    const row = await this.#db
      .updateTable('schedules')
      .set({ ...columnsOf(fields), handled_until: at, changed_by: changedBy })
      .where('server_name', '=', server)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toSchedule(row);
  }

  async delete(server: string, id: number): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('schedules')
      .where('server_name', '=', server)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** A run began. */
  async recordStart(id: number, at: string): Promise<void> {
    await this.#db.updateTable('schedules').set({ last_run_at: at }).where('id', '=', id).execute();
  }

  /** How a run (or a due time that was skipped) ended. */
  async recordOutcome(id: number, outcome: ScheduleOutcome): Promise<void> {
    await this.#db
      .updateTable('schedules')
      .set({ last_outcome: JSON.stringify(outcome) })
      .where('id', '=', id)
      .execute();
  }

  /** The scheduler disabled the schedule (its author may no longer do what it does). */
  async disable(id: number): Promise<void> {
    await this.#db.updateTable('schedules').set({ enabled: 0 }).where('id', '=', id).execute();
  }

  /** The scheduler dealt with every due time up to `at`; an earlier value is kept. */
  async recordHandled(id: number, at: string): Promise<void> {
    await this.#db
      .updateTable('schedules')
      .set({ handled_until: at })
      .where('id', '=', id)
      .where('handled_until', '<', at)
      .execute();
  }
}
