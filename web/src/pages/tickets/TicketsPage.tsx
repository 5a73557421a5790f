import { useId } from 'react';
import { Link, useSearchParams } from 'react-router';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useMe } from '../../hooks/useMe';
import { useSession } from '../../hooks/useSession';
import { useTickets } from '../../hooks/useTickets';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import {
  formatTime,
  isStatus,
  listPlaceFrom,
  listQueryOf,
  pageCount,
  searchOf,
  STATUS_LABELS,
  STATUSES,
  type ListPlace,
} from './model';
import { TicketStatusBadge } from './TicketStatusBadge';
import styles from './Tickets.module.css';

/**
 * The tickets the caller may see, newest activity first, a page at a time; the status filter and
 * the page live in the URL, so a reload or a shared link lands on the same list.
 */
export default function TicketsPage() {
  useTitle('Tickets');
  const [search, setSearch] = useSearchParams();
  const place = listPlaceFrom(search);
  const tickets = useTickets(listQueryOf(place));
  const me = useMe();
  const { session } = useSession();
  const role = me.data?.role ?? session?.role;
  const isStaff = role === 'admin' || role === 'support';
  const filterId = useId();
  const total = tickets.data?.total;

  return (
    <>
      <div className={page.pageHeader}>
        <h1>Tickets</h1>
        <Link to="/tickets/new" className="button primary">
          New ticket
        </Link>
      </div>
      <div className={styles.toolbar}>
        <div className={styles.filter}>
          <label htmlFor={filterId} className={styles.label}>
            Status
          </label>
          <select
            id={filterId}
            className={styles.select}
            value={place.status ?? ''}
            onChange={(event) => {
              const status = event.target.value;
              setSearch(searchOf({ status: isStatus(status) ? status : null, page: 1 }));
            }}
          >
            <option value="">All statuses</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {STATUS_LABELS[status]}
              </option>
            ))}
          </select>
        </div>
        {total !== undefined && (
          <p className={page.muted} role="status">
            {total} {total === 1 ? 'ticket' : 'tickets'}
            {place.status === null ? '' : ` ${STATUS_LABELS[place.status].toLowerCase()}`}
          </p>
        )}
      </div>
      <section aria-label="Ticket list" aria-busy={tickets.isFetching}>
        {tickets.isPending ? (
          <p className={page.placeholder} role="status">
            Loading tickets…
          </p>
        ) : tickets.isError ? (
          <Alert tone="error">{errorMessage(tickets.error)}</Alert>
        ) : tickets.data.tickets.length === 0 ? (
          <Empty place={place} total={tickets.data.total} isStaff={isStaff} />
        ) : (
          <ul className={styles.list}>
            {tickets.data.tickets.map((ticket) => (
              <li key={ticket.id} className={styles.item}>
                <div className={styles.itemMain}>
                  <Link to={`/tickets/${ticket.id}`} className={styles.itemTitle}>
                    {ticket.title}
                  </Link>
                  <p className={styles.meta}>
                    #{ticket.id} by {ticket.owner.username}
                    {ticket.owner.deleted ? ' (deleted)' : ''} · opened{' '}
                    <time dateTime={ticket.createdAt}>{formatTime(ticket.createdAt)}</time> · last
                    activity <time dateTime={ticket.updatedAt}>{formatTime(ticket.updatedAt)}</time>{' '}
                    · {ticket.messageCount} {ticket.messageCount === 1 ? 'reply' : 'replies'}
                  </p>
                </div>
                <TicketStatusBadge status={ticket.status} />
              </li>
            ))}
          </ul>
        )}
      </section>
      {total !== undefined && pageCount(total) > 1 && <Pager place={place} total={total} />}
    </>
  );
}

function Empty({ place, total, isStaff }: { place: ListPlace; total: number; isStaff: boolean }) {
  if (total > 0) {
    // A page past the end: the list got shorter since the link was made.
    return (
      <div className={page.placeholder}>
        <p className={page.emptyTitle}>No tickets on this page</p>
        <p>
          <Link to={searchOf({ ...place, page: 1 })}>Go to the first page</Link>
        </p>
      </div>
    );
  }
  if (place.status !== null) {
    return (
      <div className={page.placeholder}>
        <p className={page.emptyTitle}>No {STATUS_LABELS[place.status].toLowerCase()} tickets</p>
        <p>
          <Link to="/tickets">Show all statuses</Link>
        </p>
      </div>
    );
  }
  return (
    <div className={page.placeholder}>
      <p className={page.emptyTitle}>No tickets yet</p>
      <p>
        {isStaff
          ? 'When someone opens a ticket it appears here; you can also open one with "New ticket".'
          : 'Need help with a server? Open a ticket with "New ticket" and support will answer here.'}
      </p>
    </div>
  );
}

/** Newer and Older move a page (the list is newest first); the page is in the URL. */
function Pager({ place, total }: { place: ListPlace; total: number }) {
  const pages = pageCount(total);
  return (
    <nav aria-label="Pages" className={styles.pager}>
      {place.page > 1 ? (
        <Link
          className="button secondary"
          to={searchOf({ ...place, page: Math.min(place.page - 1, pages) })}
        >
          Newer
        </Link>
      ) : (
        <span className={`button secondary ${styles.disabled}`} aria-disabled="true">
          Newer
        </span>
      )}
      <span className={page.muted}>
        Page {place.page} of {pages}
      </span>
      {place.page < pages ? (
        <Link className="button secondary" to={searchOf({ ...place, page: place.page + 1 })}>
          Older
        </Link>
      ) : (
        <span className={`button secondary ${styles.disabled}`} aria-disabled="true">
          Older
        </span>
      )}
    </nav>
  );
}
