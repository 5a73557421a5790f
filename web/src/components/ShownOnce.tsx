import { useState, type ReactNode } from 'react';
import { Alert } from './Alert';
import styles from './ShownOnce.module.css';

/**
 * A secret the API shows this once (an API key's token, a webhook's signing secret, a one-time
 * set-password link): the value, selectable as a whole, Copy, the note that it will not be shown
 * again, and "Done" to hide it.
 */
export function ShownOnce({
  label,
  value,
  children,
  doneLabel = 'Done, I have stored it',
  onDone,
}: {
  /** The group's accessible name and heading, e.g. "Your new API key". */
  label: string;
  value: string;
  /** What the value is for, after "you won't see it again". */
  children?: ReactNode;
  /** The text of the button that hides it. */
  doneLabel?: string;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  return (
    <div className={styles.once} role="group" aria-label={label}>
      <h3 className={styles.title}>{label}</h3>
      <Alert tone="info">
        <strong>Copy it now: you won&apos;t see it again.</strong> The panel keeps only a hash of
        it. {children}
      </Alert>
      <code className={styles.value} aria-label={`${label}: value`}>
        {value}
      </code>
      <div className={styles.buttons}>
        <button
          type="button"
          className="button secondary"
          onClick={() => {
            navigator.clipboard.writeText(value).then(
              () => {
                setCopied('yes');
              },
              () => {
                setCopied('no');
              },
            );
          }}
        >
          Copy
        </button>
        <button type="button" className="button primary" onClick={onDone}>
          {doneLabel}
        </button>
      </div>
      {copied === 'yes' && <Alert tone="success">Copied to the clipboard</Alert>}
      {copied === 'no' && (
        <Alert tone="error">The browser did not allow copying; select the text instead</Alert>
      )}
    </div>
  );
}
