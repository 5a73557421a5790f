import { useId, type TextareaHTMLAttributes } from 'react';
import { TEXT_MAX_BYTES, utf8Bytes } from './model';
import styles from './Tickets.module.css';

interface LimitedTextAreaProps extends Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'id'> {
  readonly label: string;
  readonly value: string;
  /** A line under the counter (what a key does). */
  readonly hint?: string;
}

const number = new Intl.NumberFormat();

/**
 * A labelled text area that counts what the API counts, bytes of UTF-8, against its limit, so a
 * long paste is seen to be too long before it is sent. Sending is still allowed: the API's answer
 * is what decides (a panel may have another limit).
 */
export function LimitedTextArea({ label, value, hint, ...textarea }: LimitedTextAreaProps) {
  const id = useId();
  const bytes = utf8Bytes(value);
  const over = bytes - TEXT_MAX_BYTES;
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={id}>
        {label}
      </label>
      <textarea
        id={id}
        className={styles.textarea}
        aria-describedby={`${id}-count${hint === undefined ? '' : ` ${id}-hint`}`}
        value={value}
        {...textarea}
      />
      <p id={`${id}-count`} className={over > 0 ? `${styles.hint} ${styles.over}` : styles.hint}>
        {over > 0
          ? `${number.format(over)} bytes over the limit of ${number.format(TEXT_MAX_BYTES)}: shorten it, or put the rest in a file on the server`
          : `${number.format(bytes)} of ${number.format(TEXT_MAX_BYTES)} bytes (an accented letter counts 2, an emoji 4)`}
      </p>
      {hint !== undefined && (
        <p id={`${id}-hint`} className={styles.hint}>
          {hint}
        </p>
      )}
    </div>
  );
}
