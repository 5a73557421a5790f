import { useState } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { useCreateSchedule, useSchedules } from '../../../hooks/useSchedules';
import page from '../../Page.module.css';
import { useServerOutlet } from '../outlet';
import { ScheduleForm } from './ScheduleForm';
import { ScheduleRow } from './ScheduleRow';
import cards from '../../../components/Cards.module.css';

/** The server's schedules, and a form to make one. */
export default function SchedulesTab() {
  const { name } = useServerOutlet();
  const schedules = useSchedules(name);
  const create = useCreateSchedule(name);
  // A new key empties the form after a schedule was made.
  const [formKey, setFormKey] = useState(0);
  const [made, setMade] = useState<string | null>(null);

  return (
    <div className={cards.tab}>
      <section className={page.card} aria-labelledby="schedules-title">
        <h2 id="schedules-title">Schedules</h2>
        {schedules.isPending ? (
          <p className={page.placeholder} role="status">
            Loading schedules…
          </p>
        ) : schedules.isError ? (
          <Alert tone="error">{errorMessage(schedules.error)}</Alert>
        ) : schedules.data.length === 0 ? (
          <div className={page.placeholder}>
            <p className={page.emptyTitle}>No schedules yet</p>
            <p>
              Make one below: a command, start, stop, restart or backup at the times you choose.
            </p>
          </div>
        ) : (
          <ul className={cards.list} aria-label="Schedules">
            {schedules.data.map((schedule) => (
              <ScheduleRow key={schedule.id} server={name} schedule={schedule} />
            ))}
          </ul>
        )}
      </section>

      <section className={page.card} aria-labelledby="new-schedule-title">
        <h2 id="new-schedule-title">New schedule</h2>
        {made !== null && <Alert tone="success">Schedule {made} created</Alert>}
        <ScheduleForm
          key={formKey}
          id="new-schedule"
          submitLabel="Create schedule"
          pending={create.isPending}
          error={create.error}
          onSubmit={(body) => {
            setMade(null);
            create.mutate(body, {
              onSuccess: (schedule) => {
                setMade(schedule.name);
                create.reset();
                setFormKey((key) => key + 1);
              },
            });
          }}
        />
      </section>
    </div>
  );
}
