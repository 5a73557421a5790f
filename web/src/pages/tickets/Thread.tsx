import { useState } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useOlderEntries } from '../../hooks/useTickets';
import {
  formatTime,
  mergeHistory,
  mergeMessages,
  STATUS_LABELS,
  threadOf,
  type Message,
  type Person,
  type StatusChange,
  type Ticket,
} from './model';
import styles from './Tickets.module.css';

interface Seen {
  /** The ticket read these were last merged from. */
  readonly from: Ticket;
  readonly messages: readonly Message[];
  readonly history: readonly StatusChange[];
  /** Where the next older page starts; `undefined` until one was loaded (the ticket's then). */
  readonly messagesCursor: string | null | undefined;
  readonly historyCursor: string | null | undefined;
}

/**
 * Everything read of the thread so far. Each read of the ticket holds only the newest page, which
 * moves as messages arrive; keeping every entry once seen (messages never change) means an older
 * page loaded earlier never leaves a hole behind a newer read.
 */
function useSeen(ticket: Ticket) {
  const [seen, setSeen] = useState<Seen>(() => ({
    from: ticket,
    messages: ticket.messages,
    history: ticket.history,
    messagesCursor: undefined,
    historyCursor: undefined,
  }));
  if (seen.from !== ticket) {
    setSeen({
      ...seen,
      from: ticket,
      messages: mergeMessages(seen.messages, ticket.messages),
      history: mergeHistory(seen.history, ticket.history),
    });
  }
  return [seen, setSeen] as const;
}

const who = (person: Person) => `${person.username}${person.deleted ? ' (deleted)' : ''}`;

/** The ticket's description, messages and status changes, oldest first, with earlier pages on demand. */
export function Thread({ ticket }: { ticket: Ticket }) {
  const [seen, setSeen] = useSeen(ticket);
  const older = useOlderEntries(ticket.id);
  const messagesCursor =
    seen.messagesCursor === undefined ? ticket.olderMessagesCursor : seen.messagesCursor;
  const historyCursor =
    seen.historyCursor === undefined ? ticket.olderHistoryCursor : seen.historyCursor;
  const hiddenMessages = Math.max(0, ticket.messageCount - seen.messages.length);
  const hiddenChanges = Math.max(0, ticket.historyCount - seen.history.length);
  const { opening, entries } = threadOf(ticket, seen.messages, seen.history);

  const loadOlder = () => {
    older.mutate(
      { messages: messagesCursor, history: historyCursor },
      {
        onSuccess: (page) => {
          setSeen((current) => ({
            ...current,
            messages:
              page.messages === null
                ? current.messages
                : mergeMessages(current.messages, page.messages.messages),
            history:
              page.history === null
                ? current.history
                : mergeHistory(current.history, page.history.history),
            messagesCursor:
              page.messages === null ? messagesCursor : page.messages.olderMessagesCursor,
            historyCursor: page.history === null ? historyCursor : page.history.olderHistoryCursor,
          }));
        },
      },
    );
  };

  return (
    <section aria-label="Thread" className={styles.thread}>
      <ol className={styles.entries}>
        <li>
          <MessageCard author={opening.author} at={opening.at} text={opening.text} opening />
        </li>
        {(messagesCursor !== null || historyCursor !== null) && (
          <li className={styles.earlier}>
            <span className={styles.meta}>{describeHidden(hiddenMessages, hiddenChanges)}</span>
            <button
              type="button"
              className="button secondary"
              disabled={older.isPending}
              onClick={loadOlder}
            >
              Show earlier
            </button>
            {older.isError && <Alert tone="error">{errorMessage(older.error)}</Alert>}
          </li>
        )}
        {entries.map((entry) =>
          entry.kind === 'status' ? (
            <li key={entry.key} className={styles.change}>
              {who(entry.by)} ({entry.by.role}) changed the status from {STATUS_LABELS[entry.from]}{' '}
              to <strong>{STATUS_LABELS[entry.to]}</strong> ·{' '}
              <time dateTime={entry.at}>{formatTime(entry.at)}</time>
            </li>
          ) : (
            <li key={entry.key}>
              <MessageCard author={entry.author} at={entry.at} text={entry.text} />
            </li>
          ),
        )}
      </ol>
    </section>
  );
}

function describeHidden(messages: number, changes: number): string {
  const parts = [
    ...(messages > 0 ? [`${messages} earlier ${messages === 1 ? 'message' : 'messages'}`] : []),
    ...(changes > 0 ? [`${changes} earlier status ${changes === 1 ? 'change' : 'changes'}`] : []),
  ];
  return parts.length === 0 ? 'Earlier entries' : `${parts.join(' and ')} not shown`;
}

/** A message as text (React escapes it; never HTML), its line breaks kept, long words wrapped. */
function MessageCard({
  author,
  at,
  text,
  opening = false,
}: {
  author: Person;
  at: string;
  text: string;
  opening?: boolean;
}) {
  const staff = author.role === 'admin' || author.role === 'support';
  return (
    <article className={`${styles.message} ${staff ? styles.staff : ''}`}>
      <header className={styles.messageHeader}>
        <span className={styles.author}>{who(author)}</span>
        <span className={styles.role}>{author.role}</span>
        <time className={styles.meta} dateTime={at}>
          {opening ? 'opened ' : ''}
          {formatTime(at)}
        </time>
      </header>
      <p className={styles.text}>{text}</p>
    </article>
  );
}
