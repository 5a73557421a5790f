import { Link, useParams } from 'react-router';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useMe } from '../../hooks/useMe';
import { useSession } from '../../hooks/useSession';
import { useTicket } from '../../hooks/useTickets';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { formatTime } from './model';
import { ReplyBox } from './ReplyBox';
import { StatusControl } from './StatusControl';
import { Thread } from './Thread';
import { TicketStatusBadge } from './TicketStatusBadge';
import styles from './Tickets.module.css';

/**
 * One ticket: its thread (the description, the messages and the status changes by time), the
 * reply box, and for admin and support the status control.
 */
export default function TicketPage() {
  const { id: param = '' } = useParams();
  // Anything that is not a ticket number still goes to the API, whose message says why not.
  const id = Number(param);
  const ticket = useTicket(id);
  const me = useMe();
  const { session } = useSession();
  const role = me.data?.role ?? session?.role;
  const isStaff = role === 'admin' || role === 'support';
  useTitle(ticket.data === undefined ? `Ticket ${param}` : ticket.data.title);

  return (
    <>
      <p>
        <Link to="/tickets">All tickets</Link>
      </p>
      {ticket.isPending ? (
        <p role="status">Loading the ticket…</p>
      ) : ticket.isError ? (
        <section className={page.card} aria-labelledby="ticket-error-title">
          <h1 id="ticket-error-title">Ticket {param}</h1>
          <Alert tone="error">{errorMessage(ticket.error)}</Alert>
        </section>
      ) : (
        <>
          <section className={page.card} aria-labelledby="ticket-title">
            <div className={styles.ticketHeader}>
              <h1 id="ticket-title" className={styles.ticketTitle}>
                {ticket.data.title}
              </h1>
              <TicketStatusBadge status={ticket.data.status} />
            </div>
            <p className={styles.meta}>
              #{ticket.data.id} opened by {ticket.data.owner.username}
              {ticket.data.owner.deleted ? ' (deleted)' : ''} on{' '}
              <time dateTime={ticket.data.createdAt}>{formatTime(ticket.data.createdAt)}</time> ·
              last activity{' '}
              <time dateTime={ticket.data.updatedAt}>{formatTime(ticket.data.updatedAt)}</time>
            </p>
            {isStaff && <StatusControl key={ticket.data.status} ticket={ticket.data} />}
          </section>
          <Thread key={ticket.data.id} ticket={ticket.data} />
          <ReplyBox ticket={ticket.data} isStaff={isStaff} />
        </>
      )}
    </>
  );
}
