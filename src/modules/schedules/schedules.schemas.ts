import { Type } from 'typebox';
import {
  MAX_DELAY_SECONDS,
  MAX_TASKS,
  SCHEDULE_ACTIONS,
  SCHEDULE_OUTCOMES,
} from '../../domain/schedule.js';
import { Envelope } from '../../http/schemas.js';

export const ScheduleListParams = Type.Object({
  server: Type.String({ minLength: 1, maxLength: 256 }),
});

export const ScheduleParams = Type.Object({
  server: Type.String({ minLength: 1, maxLength: 256 }),
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});

const ActionSchema = Type.Union(
  SCHEDULE_ACTIONS.map((action) => Type.Literal(action)),
  { description: '`backup` makes a backup of the server and waits for it to end' },
);

const TaskBody = Type.Object(
  {
    action: ActionSchema,
    payload: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          'The console line of a `command` task (required there, one line); no other task takes one',
      }),
    ),
    delaySeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_DELAY_SECONDS,
        description: 'Seconds to wait before this task; 0 by default',
      }),
    ),
  },
  { additionalProperties: false },
);

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  cron: Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'Five fields: minute hour day-of-month month day-of-week (croner syntax)',
  }),
  timezone: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'The IANA timezone the expression is read in; UTC by default',
  }),
  enabled: Type.Boolean({ description: 'true by default' }),
  onlyWhenRunning: Type.Boolean({
    description: 'Skip a run that finds the server neither running nor starting; false by default',
  }),
  tasks: Type.Array(TaskBody, {
    minItems: 1,
    maxItems: MAX_TASKS,
    description: 'Run in order; the first that fails ends the run',
  }),
};

export const CreateScheduleBody = Type.Object(
  {
    name: fields.name,
    cron: fields.cron,
    timezone: Type.Optional(fields.timezone),
    enabled: Type.Optional(fields.enabled),
    onlyWhenRunning: Type.Optional(fields.onlyWhenRunning),
    tasks: fields.tasks,
  },
  { additionalProperties: false },
);

export const UpdateScheduleBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    cron: Type.Optional(fields.cron),
    timezone: Type.Optional(fields.timezone),
    enabled: Type.Optional(fields.enabled),
    onlyWhenRunning: Type.Optional(fields.onlyWhenRunning),
    tasks: Type.Optional(fields.tasks),
  },
  { additionalProperties: false },
);

const OutcomeSchema = Type.Union([
  Type.Object({
    status: Type.Union(SCHEDULE_OUTCOMES.map((status) => Type.Literal(status))),
    message: Type.String(),
    at: Type.String({ format: 'date-time' }),
  }),
  Type.Null(),
]);

export const ScheduleSchema = Type.Object({
  id: Type.Integer(),
  server: Type.String(),
  name: Type.String(),
  cron: Type.String(),
  timezone: Type.String(),
  enabled: Type.Boolean(),
  onlyWhenRunning: Type.Boolean(),
  tasks: Type.Array(
    Type.Object({
      action: ActionSchema,
      payload: Type.Optional(Type.String()),
      delaySeconds: Type.Integer(),
    }),
  ),
  nextRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'null when disabled, or when the expression matches no later date',
  }),
  lastRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When a run last began',
  }),
  lastOutcome: OutcomeSchema,
  running: Type.Boolean({ description: 'A run is in progress' }),
  createdAt: Type.String({ format: 'date-time' }),
  author: Type.Union([Type.String(), Type.Null()], {
    description:
      'Who last made or changed the schedule: each run needs this account to hold `schedules` and every task’s permission on the server. null: no live account (the schedule does not run)',
  }),
});

export const ScheduleEnvelope = Envelope(ScheduleSchema);
export const ScheduleListEnvelope = Envelope(Type.Array(ScheduleSchema));
export const ScheduleDeletedEnvelope = Envelope(Type.Object({ id: Type.Integer() }));
