import { useState, type KeyboardEvent, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useReply } from '../../hooks/useTickets';
import { LimitedTextArea } from './LimitedTextArea';
import type { Ticket } from './model';
import page from '../Page.module.css';
import styles from './Tickets.module.css';

/**
 * "Reply" and "Send" (Ctrl+Enter or ⌘+Enter sends). On a closed ticket the box stays: the API
 * refuses the message and its answer is shown, saying how to reopen it.
 */
export function ReplyBox({ ticket, isStaff }: { ticket: Ticket; isStaff: boolean }) {
  const reply = useReply(ticket.id);
  const [text, setText] = useState('');

  // Sent as typed, even empty: the API's message says what is wrong.
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    reply.mutate(text, {
      onSuccess: () => {
        setText('');
      },
    });
  };

  const sendOnCtrlEnter = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey)) return;
    event.preventDefault();
    event.currentTarget.form?.requestSubmit();
  };

  return (
    <section className={page.card} aria-label="Reply to the ticket">
      {ticket.status === 'closed' && (
        <Alert tone="info">
          {isStaff
            ? 'This ticket is closed: set another status to reopen it before replying.'
            : 'This ticket is closed: support has to reopen it before a reply is accepted.'}
        </Alert>
      )}
      <form className={styles.form} onSubmit={submit}>
        <LimitedTextArea
          label="Reply"
          name="text"
          rows={4}
          value={text}
          hint="Ctrl+Enter sends. Line breaks are kept."
          onChange={(event) => {
            setText(event.target.value);
          }}
          onKeyDown={sendOnCtrlEnter}
        />
        {reply.isError && <Alert tone="error">{errorMessage(reply.error)}</Alert>}
        <div>
          <button type="submit" className="button primary" disabled={reply.isPending}>
            Send
          </button>
        </div>
      </form>
    </section>
  );
}
