import { useId, useState, type SyntheticEvent } from 'react';
import styles from './Console.module.css';

/** Finds text in the console: Enter or "Next" goes to the next match, "Previous" back. */
export function FindBox({
  onFind,
  disabled,
}: {
  /** Selects and shows a match; false when there is none. */
  onFind: (text: string, direction: 'next' | 'previous') => boolean;
  disabled: boolean;
}) {
  const id = useId();
  const [text, setText] = useState('');
  const [missing, setMissing] = useState(false);
  const find = (direction: 'next' | 'previous') => {
    if (text === '') return;
    setMissing(!onFind(text, direction));
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    find('next');
  };
  return (
    <form role="search" className={styles.findBox} onSubmit={submit}>
      <label htmlFor={id} className={styles.findLabel}>
        Find
      </label>
      <input
        id={id}
        type="search"
        className={styles.findInput}
        autoComplete="off"
        spellCheck={false}
        value={text}
        onChange={(event) => {
          setText(event.target.value);
          setMissing(false);
        }}
      />
      <button
        type="button"
        className={`button secondary ${styles.small}`}
        disabled={disabled}
        onClick={() => {
          find('previous');
        }}
      >
        Previous
      </button>
      <button type="submit" className={`button secondary ${styles.small}`} disabled={disabled}>
        Next
      </button>
      <p className={styles.findResult} role="status">
        {missing ? 'No match' : ''}
      </p>
    </form>
  );
}
