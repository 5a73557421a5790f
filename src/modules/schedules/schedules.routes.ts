import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  CreateScheduleBody,
  ScheduleDeletedEnvelope,
  ScheduleEnvelope,
  ScheduleListEnvelope,
  ScheduleListParams,
  ScheduleParams,
  UpdateScheduleBody,
} from './schedules.schemas.js';
import type { SchedulesService } from './schedules.service.js';

/** A server's schedules: for whoever may use the server (docs/api.md, "Schedules"). */
export function schedulesRoutes(app: App, schedules: SchedulesService): void {
  app.get(
    '/api/servers/:server/schedules',
    {
      // Polled by the web UI: its request lines are logged at debug (src/http/logging.ts).
      config: { polled: true },
      schema: {
        tags: ['schedules'],
        summary: "The server's schedules",
        params: ScheduleListParams,
        response: responses(ScheduleListEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Schedules',
      data: await schedules.list(currentUser(request), request.params.server),
    }),
  );

  app.post(
    '/api/servers/:server/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Make a schedule: a cron expression in a timezone, and tasks run in order',
        description:
          '400 names the field: a cron expression croner cannot read (with its reason), an unknown timezone, a command task without its command or with more than one line. 403 names the task whose permission you lack (`console.write` for a command, `power` for start, stop and restart, `backups.create` for a backup). You become the schedule’s author: it runs only while you hold these.',
        params: ScheduleListParams,
        body: CreateScheduleBody,
        response: responses(ScheduleEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Schedule created',
      data: await schedules.create(currentUser(request), request.params.server, request.body),
    }),
  );

  app.get(
    '/api/servers/:server/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'A schedule, its next run and how its last run went',
        params: ScheduleParams,
        response: responses(ScheduleEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Schedule',
      data: await schedules.get(currentUser(request), request.params.server, request.params.id),
    }),
  );

  app.put(
    '/api/servers/:server/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Change the fields sent; the next run is counted afresh from now',
        description:
          'You become the schedule’s author, so you need the permission of every task it has after the change (403 naming the task).',
        params: ScheduleParams,
        body: UpdateScheduleBody,
        response: responses(ScheduleEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Schedule saved',
      data: await schedules.update(
        currentUser(request),
        request.params.server,
        request.params.id,
        request.body,
      ),
    }),
  );

  app.delete(
    '/api/servers/:server/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Delete a schedule; a run in progress ends before its next task',
        params: ScheduleParams,
        response: responses(ScheduleDeletedEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => {
      await schedules.remove(currentUser(request), request.params.server, request.params.id);
      return { message: 'Schedule deleted', data: { id: request.params.id } };
    },
  );

  app.post(
    '/api/servers/:server/schedules/:id/run',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Run the schedule now, enabled or not; answers once the run has begun',
        description:
          'The run goes on in the background: its outcome appears in `lastOutcome`. 403 naming the task whose permission you lack; 409 while a run of this schedule is in progress. The run is checked against its author too: one who may no longer do it gets the schedule disabled, with why in `lastOutcome`.',
        params: ScheduleParams,
        response: responses(ScheduleEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Schedule run started',
      data: await schedules.run(currentUser(request), request.params.server, request.params.id),
    }),
  );
}
