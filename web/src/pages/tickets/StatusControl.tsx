import { useId, useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useSetStatus } from '../../hooks/useTickets';
import { isStatus, STATUS_LABELS, STATUSES, type Ticket, type TicketStatus } from './model';
import styles from './Tickets.module.css';

/**
 * Admin and support: "Status" and "Change status". Every status may follow every other (closing
 * and reopening included), so no step needs a confirmation: the next change undoes it.
 */
export function StatusControl({ ticket }: { ticket: Ticket }) {
  const id = useId();
  const setStatus = useSetStatus(ticket.id);
  const [status, setChoice] = useState<TicketStatus>(ticket.status);

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setStatus.mutate(status);
  };

  return (
    <form className={styles.statusForm} onSubmit={submit}>
      <div className={styles.filter}>
        <label htmlFor={id} className={styles.label}>
          Status
        </label>
        <select
          id={id}
          className={styles.select}
          value={status}
          onChange={(event) => {
            if (isStatus(event.target.value)) setChoice(event.target.value);
          }}
        >
          {STATUSES.map((choice) => (
            <option key={choice} value={choice}>
              {STATUS_LABELS[choice]}
            </option>
          ))}
        </select>
      </div>
      <button
        type="submit"
        className="button secondary"
        disabled={setStatus.isPending || status === ticket.status}
      >
        Change status
      </button>
      {setStatus.isError && <Alert tone="error">{errorMessage(setStatus.error)}</Alert>}
    </form>
  );
}
