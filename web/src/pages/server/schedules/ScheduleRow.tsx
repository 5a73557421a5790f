import { useState } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Confirm } from '../../../components/Confirm';
import {
  useDeleteSchedule,
  useRunSchedule,
  useUpdateSchedule,
  type Schedule,
} from '../../../hooks/useSchedules';
import { formatModified } from '../files/paths';
import { ScheduleForm } from './ScheduleForm';
import cards from '../../../components/Cards.module.css';
import styles from './Schedules.module.css';

type Mode = 'idle' | 'edit' | 'delete';

const OUTCOME: Record<NonNullable<Schedule['lastOutcome']>['status'], string> = {
  ok: 'OK',
  failed: 'Failed',
  skipped: 'Skipped',
};

const describeTask = (task: Schedule['tasks'][number]) => {
  const what = task.action === 'command' ? `command “${task.payload ?? ''}”` : task.action;
  return task.delaySeconds > 0 ? `after ${task.delaySeconds} s, ${what}` : what;
};

/** One schedule: when and what, its next and last run, and Run now, Edit and Delete. */
export function ScheduleRow({ server, schedule }: { server: string; schedule: Schedule }) {
  const [mode, setMode] = useState<Mode>('idle');
  const update = useUpdateSchedule(server);
  const remove = useDeleteSchedule(server);
  const run = useRunSchedule(server);
  const [ran, setRan] = useState(false);
  const open = (next: Mode) => {
    for (const mutation of [update, remove, run]) mutation.reset();
    setRan(false);
    setMode(next);
  };
  const outcome = schedule.lastOutcome;

  return (
    <li className={cards.row} aria-label={schedule.name}>
      <div className={cards.head}>
        <h3 className={cards.name}>{schedule.name}</h3>
        <span className={schedule.enabled ? styles.on : styles.off}>
          {schedule.enabled ? 'Enabled' : 'Disabled'}
        </span>
        {schedule.running && <span className={styles.on}>Running now</span>}
      </div>
      <dl className={`${cards.facts} ${styles.facts}`}>
        <div>
          <dt>When</dt>
          <dd>
            <code>{schedule.cron}</code> ({schedule.timezone})
            {schedule.onlyWhenRunning ? ', only while the server runs' : ''}
          </dd>
        </div>
        <div>
          <dt>Next run</dt>
          <dd>
            {schedule.nextRunAt === null ? (
              'None'
            ) : (
              <time dateTime={schedule.nextRunAt}>{formatModified(schedule.nextRunAt)}</time>
            )}
          </dd>
        </div>
        <div>
          <dt>Last run</dt>
          <dd>
            {schedule.lastRunAt === null ? (
              'Never'
            ) : (
              <time dateTime={schedule.lastRunAt}>{formatModified(schedule.lastRunAt)}</time>
            )}
            {outcome !== null && (
              <>
                {' · '}
                <span className={outcome.status === 'failed' ? styles.failed : undefined}>
                  {OUTCOME[outcome.status]}
                </span>
                {outcome.message !== '' ? `: ${outcome.message}` : ''}
              </>
            )}
          </dd>
        </div>
        <div className={cards.wide}>
          <dt>Tasks</dt>
          <dd>{schedule.tasks.map(describeTask).join('; then ')}</dd>
        </div>
      </dl>

      {mode === 'idle' && (
        <div className={cards.buttons}>
          <button
            type="button"
            className="button secondary"
            aria-label={`Run now: ${schedule.name}`}
            disabled={run.isPending}
            onClick={() => {
              setRan(false);
              run.mutate(schedule.id, {
                onSuccess: () => {
                  setRan(true);
                },
              });
            }}
          >
            {run.isPending ? 'Starting…' : 'Run now'}
          </button>
          <button
            type="button"
            className="button secondary"
            aria-label={`Edit ${schedule.name}`}
            onClick={() => {
              open('edit');
            }}
          >
            Edit
          </button>
          <button
            type="button"
            className="button secondary"
            aria-label={`Delete ${schedule.name}`}
            onClick={() => {
              open('delete');
            }}
          >
            Delete
          </button>
        </div>
      )}
      {ran && <Alert tone="success">Run started; its outcome shows under Last run</Alert>}
      {run.isError && <Alert tone="error">{errorMessage(run.error)}</Alert>}

      {mode === 'edit' && (
        <ScheduleForm
          id={`schedule-${schedule.id}`}
          initial={schedule}
          submitLabel="Save schedule"
          pending={update.isPending}
          error={update.error}
          onSubmit={(body) => {
            update.mutate(
              { id: schedule.id, body },
              {
                onSuccess: () => {
                  setMode('idle');
                },
              },
            );
          }}
          onCancel={() => {
            open('idle');
          }}
        />
      )}
      {mode === 'delete' && (
        <Confirm
          label={`Delete ${schedule.name}?`}
          action="Delete schedule"
          pendingAction="Deleting…"
          pending={remove.isPending}
          error={remove.error}
          autoFocus
          onConfirm={() => {
            remove.mutate(schedule.id);
          }}
          onCancel={() => {
            open('idle');
          }}
        >
          Delete the schedule <strong>{schedule.name}</strong>? A run in progress ends before its
          next task.
        </Confirm>
      )}
    </li>
  );
}
