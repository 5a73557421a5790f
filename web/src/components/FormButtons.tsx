/**
 * The buttons that end a form: its submit button, then Cancel when the form can be left. The
 * submit button is disabled while the form's request runs (and says so, given `pendingSubmit`);
 * their accessible names are their texts, the submit's label and "Cancel".
 */
import type { ReactNode } from 'react';
import cards from './Cards.module.css';

/** A form's submit button and its Cancel, in one row. */
export function FormButtons({
  submit,
  pendingSubmit,
  pending,
  disabled = false,
  submitClassName = 'button primary',
  onCancel,
  lockCancel = false,
  className = cards.buttons,
}: {
  /** The submit button's text, e.g. "Add user". */
  submit: ReactNode;
  /** Its text while the request runs, e.g. "Adding…"; the same text when not given. */
  pendingSubmit?: ReactNode;
  /** The form's request runs: the submit button is disabled. */
  pending: boolean;
  /** The form cannot be sent yet for a reason of its own (a confirmation not typed). */
  disabled?: boolean;
  /** The submit button's classes: a primary button unless a form asks for another. */
  submitClassName?: string;
  /** What Cancel does; without it there is no Cancel. */
  onCancel?: () => void;
  /** Cancel is disabled too while the request runs. */
  lockCancel?: boolean;
  /** The row's class: the cards' button row unless a page lays its buttons out otherwise. */
  className?: string | undefined;
}) {
  return (
    <div className={className}>
      <button type="submit" className={submitClassName} disabled={disabled || pending}>
        {pending && pendingSubmit !== undefined ? pendingSubmit : submit}
      </button>
      {onCancel !== undefined && (
        <button
          type="button"
          className="button secondary"
          disabled={lockCancel && pending}
          onClick={onCancel}
        >
          Cancel
        </button>
      )}
    </div>
  );
}
