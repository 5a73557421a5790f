import { useId, useState, type SyntheticEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useCreateTicket } from '../../hooks/useTickets';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { LimitedTextArea } from './LimitedTextArea';
import { TITLE_MAX_CHARS, titleLength } from './model';
import styles from './Tickets.module.css';

/** A new ticket: a title and the first message; once opened, on to its thread. */
export default function NewTicketPage() {
  useTitle('New ticket');
  const create = useCreateTicket();
  const navigate = useNavigate();
  const titleId = useId();
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const length = titleLength(title);

  // Sent as typed, even empty: the API's own message says what is missing.
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    create.mutate(
      { title, description },
      {
        onSuccess: (ticket) => {
          void navigate(`/tickets/${ticket.id}`);
        },
      },
    );
  };

  return (
    <>
      <p>
        <Link to="/tickets">All tickets</Link>
      </p>
      <section className={page.card} aria-labelledby="new-ticket-title">
        <h1 id="new-ticket-title">New ticket</h1>
        <form className={styles.form} onSubmit={submit}>
          <div className={styles.field}>
            <label className={styles.label} htmlFor={titleId}>
              Title
            </label>
            <input
              id={titleId}
              className={styles.input}
              name="title"
              autoComplete="off"
              aria-describedby={`${titleId}-count`}
              value={title}
              onChange={(event) => {
                setTitle(event.target.value);
              }}
            />
            <p
              id={`${titleId}-count`}
              className={length > TITLE_MAX_CHARS ? `${styles.hint} ${styles.over}` : styles.hint}
            >
              {length} of {TITLE_MAX_CHARS} characters: what the problem is, in a line
            </p>
          </div>
          <LimitedTextArea
            label="Message"
            name="description"
            rows={8}
            value={description}
            hint="What happened, on which server, what you expected. Line breaks are kept."
            onChange={(event) => {
              setDescription(event.target.value);
            }}
          />
          {create.isError && <Alert tone="error">{errorMessage(create.error)}</Alert>}
          <div>
            <button type="submit" className="button primary" disabled={create.isPending}>
              Create ticket
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
