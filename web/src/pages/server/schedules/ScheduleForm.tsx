import { useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field, SelectField } from '../../../components/Field';
import { FormButtons } from '../../../components/FormButtons';
import type { Schedule, ScheduleInput } from '../../../hooks/useSchedules';
import styles from './Schedules.module.css';

type Action = ScheduleInput['tasks'][number]['action'];
const ACTIONS: readonly { value: Action; label: string }[] = [
  { value: 'command', label: 'Send a command' },
  { value: 'start', label: 'Start' },
  { value: 'stop', label: 'Stop' },
  { value: 'restart', label: 'Restart' },
  { value: 'backup', label: 'Back up' },
];

interface TaskRow {
  /** A key that survives removals above it. */
  readonly key: number;
  readonly action: Action;
  readonly payload: string;
  readonly delay: string;
}

let nextKey = 0;
const taskRow = (action: Action = 'command', payload = '', delay = '0'): TaskRow => ({
  key: nextKey++,
  action,
  payload,
  delay,
});

/** The browser's own timezone, the form's default. */
export const browserTimezone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * A schedule's fields and its tasks, empty for a new one or filled from `initial`. Nothing is
 * checked here: what the API refuses is its own message, at the field its `details` names.
 */
export function ScheduleForm({
  id,
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  /** Makes the fields' names unique on a page with two forms. */
  id: string;
  initial?: Schedule;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (input: ScheduleInput) => void;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(initial?.name ?? '');
  const [cron, setCron] = useState(initial?.cron ?? '');
  const [timezone, setTimezone] = useState(initial?.timezone ?? browserTimezone());
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const [onlyWhenRunning, setOnlyWhenRunning] = useState(initial?.onlyWhenRunning ?? false);
  const [tasks, setTasks] = useState<readonly TaskRow[]>(() =>
    initial === undefined
      ? [taskRow()]
      : initial.tasks.map((task) =>
          taskRow(task.action, task.payload ?? '', String(task.delaySeconds)),
        ),
  );
  const details = error instanceof ApiError ? error.details : [];
  const at = (path: string) => details.find((detail) => detail.path === `body/${path}`)?.message;
  const atTask = (index: number) =>
    details
      .filter((detail) => detail.path.startsWith(`body/tasks/${index}`))
      .map((detail) => detail.message)[0];
  const update = (key: number, change: Partial<Omit<TaskRow, 'key'>>) => {
    setTasks((current) =>
      current.map((task) => (task.key === key ? { ...task, ...change } : task)),
    );
  };

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    onSubmit({
      name: name.trim(),
      cron: cron.trim(),
      timezone: timezone.trim(),
      enabled,
      onlyWhenRunning,
      tasks: tasks.map((task) => ({
        action: task.action,
        ...(task.action === 'command' ? { payload: task.payload } : {}),
        // Text that is no number goes as it is (NaN becomes null in JSON), for the API to refuse.
        delaySeconds: task.delay.trim() === '' ? 0 : Number(task.delay.trim()),
      })),
    });
  };

  return (
    <form className={styles.form} onSubmit={submit} noValidate aria-label={submitLabel}>
      <div className={styles.fields}>
        <Field
          label="Name"
          name={`${id}-name`}
          autoComplete="off"
          value={name}
          error={at('name')}
          onChange={(event) => {
            setName(event.target.value);
          }}
        />
        <Field
          label="Cron expression"
          name={`${id}-cron`}
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          hint="Five fields: minute hour day-of-month month day-of-week, e.g. 0 4 * * * (daily at 4:00)"
          value={cron}
          error={at('cron')}
          onChange={(event) => {
            setCron(event.target.value);
          }}
        />
        <Field
          label="Timezone"
          name={`${id}-timezone`}
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          hint="An IANA name, e.g. Europe/Berlin or UTC"
          value={timezone}
          error={at('timezone')}
          onChange={(event) => {
            setTimezone(event.target.value);
          }}
        />
        <div className={styles.checks}>
          <label className={styles.check}>
            <input
              type="checkbox"
              checked={enabled}
              onChange={(event) => {
                setEnabled(event.target.checked);
              }}
            />
            Enabled
          </label>
          <label className={styles.check}>
            <input
              type="checkbox"
              checked={onlyWhenRunning}
              onChange={(event) => {
                setOnlyWhenRunning(event.target.checked);
              }}
            />
            Only when the server is running
          </label>
        </div>
      </div>

      <fieldset className={styles.tasks}>
        <legend>Tasks, run in order</legend>
        {at('tasks') !== undefined && <p className={styles.taskError}>{at('tasks')}</p>}
        <ol className={styles.taskList}>
          {tasks.map((task, index) => {
            const which = `Task ${index + 1}`;
            const problem = atTask(index);
            return (
              <li key={task.key} className={styles.task}>
                <SelectField
                  label={`${which} action`}
                  value={task.action}
                  options={ACTIONS}
                  onChange={(event) => {
                    update(task.key, { action: event.target.value as Action });
                  }}
                />
                {task.action === 'command' ? (
                  <Field
                    label={`${which} command`}
                    autoComplete="off"
                    autoCapitalize="none"
                    spellCheck={false}
                    value={task.payload}
                    onChange={(event) => {
                      update(task.key, { payload: event.target.value });
                    }}
                  />
                ) : (
                  <span />
                )}
                <Field
                  label={`${which} delay (seconds)`}
                  inputMode="numeric"
                  autoComplete="off"
                  value={task.delay}
                  onChange={(event) => {
                    update(task.key, { delay: event.target.value });
                  }}
                />
                <button
                  type="button"
                  className="button secondary"
                  aria-label={`Remove task ${index + 1}`}
                  disabled={tasks.length === 1}
                  onClick={() => {
                    setTasks((current) => current.filter((other) => other.key !== task.key));
                  }}
                >
                  Remove
                </button>
                {problem !== undefined && <p className={styles.taskError}>{problem}</p>}
              </li>
            );
          })}
        </ol>
        <div>
          <button
            type="button"
            className="button secondary"
            disabled={tasks.length >= 20}
            onClick={() => {
              setTasks((current) => [...current, taskRow()]);
            }}
          >
            Add task
          </button>
        </div>
      </fieldset>

      {error != null && <Alert tone="error">{errorMessage(error)}</Alert>}
      <FormButtons
        submit={submitLabel}
        pendingSubmit="Saving…"
        pending={pending}
        onCancel={onCancel}
      />
    </form>
  );
}
