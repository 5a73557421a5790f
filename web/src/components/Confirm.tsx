import type { ReactNode } from 'react';
import { errorMessage } from '../api/errors';
import { Alert } from './Alert';
import styles from './Confirm.module.css';

/**
 * An irreversible action asked for in place: what it does, the API's refusal when there was one,
 * then the action and Cancel (both disabled while it runs).
 */
export function Confirm({
  label,
  children,
  action,
  pendingAction,
  pending,
  error,
  autoFocus = false,
  onConfirm,
  onCancel,
}: {
  /** The group's accessible name: the question, e.g. "Delete survival?". */
  label: string;
  children: ReactNode;
  /** The action button's text, e.g. "Delete server". */
  action: string;
  /** Its text while the action runs, e.g. "Deleting…". */
  pendingAction?: string;
  pending: boolean;
  error?: unknown;
  autoFocus?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <div className={styles.confirm} role="group" aria-label={label}>
      <p>{children}</p>
      {error != null && <Alert tone="error">{errorMessage(error)}</Alert>}
      <div className={styles.buttons}>
        <button
          type="button"
          className={`button ${styles.danger}`}
          autoFocus={autoFocus}
          disabled={pending}
          onClick={onConfirm}
        >
          {pending && pendingAction !== undefined ? pendingAction : action}
        </button>
        <button type="button" className="button secondary" disabled={pending} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
