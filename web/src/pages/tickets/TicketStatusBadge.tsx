import { STATUS_LABELS, type TicketStatus } from './model';
import styles from './Tickets.module.css';

/** A ticket's status as a word and a colour (the word alone carries the meaning). */
export function TicketStatusBadge({ status }: { status: TicketStatus }) {
  return <span className={`${styles.badge} ${styles[status]}`}>{STATUS_LABELS[status]}</span>;
}
