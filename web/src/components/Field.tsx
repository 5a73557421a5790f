import {
  useId,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from 'react';
import styles from './Field.module.css';

interface FieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> {
  /** The visible label, which is also the field's accessible name. */
  readonly label: string;
  /** A line under the field (format, whether it is optional). */
  readonly hint?: string;
  /** What is wrong with the value (the API's word on it), shown under the field. */
  readonly error?: string | undefined;
  /** Shown on the input's right, in its row: a unit, or a select of units. */
  readonly after?: ReactNode;
}

/**
 * What a field's control needs to be described by its hint and its error, and those two lines:
 * one id for the control, `aria-describedby` naming whichever lines are shown, and
 * `aria-invalid` while there is an error.
 */
function useDescription(hint: string | undefined, error: string | undefined) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint === undefined ? null : hintId, error === undefined ? null : errorId]
    .filter((part) => part !== null)
    .join(' ');
  return {
    control: {
      id,
      'aria-describedby': describedBy === '' ? undefined : describedBy,
      'aria-invalid': error === undefined ? undefined : true,
    },
    notes: (
      <>
        {error !== undefined && (
          <p id={errorId} className={styles.error}>
            {error}
          </p>
        )}
        {hint !== undefined && (
          <p id={hintId} className={styles.hint}>
            {hint}
          </p>
        )}
      </>
    ),
  } as const;
}

/** A labelled text field: every field of the UI has its `<label>`. */
export function Field({ label, hint, error, after, ...input }: FieldProps) {
  const { control, notes } = useDescription(hint, error);
  const field = <input className={styles.input} {...control} {...input} />;
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={control.id}>
        {label}
      </label>
      {after === undefined ? (
        field
      ) : (
        <div className={styles.row}>
          {field}
          {after}
        </div>
      )}
      {notes}
    </div>
  );
}

interface SelectFieldProps extends Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id'> {
  readonly label: string;
  readonly hint?: string;
  readonly error?: string | undefined;
  readonly options: readonly { readonly value: string; readonly label: string }[];
}

/** A labelled select, shown and described like `Field`. */
export function SelectField({ label, hint, error, options, ...select }: SelectFieldProps) {
  const { control, notes } = useDescription(hint, error);
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={control.id}>
        {label}
      </label>
      <select className={styles.input} {...control} {...select}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {notes}
    </div>
  );
}

interface TextAreaFieldProps extends Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'id'> {
  readonly label: string;
  readonly hint?: string;
  readonly error?: string | undefined;
}

/** A labelled text area (one item per line, say), shown and described like `Field`. */
export function TextAreaField({ label, hint, error, ...textarea }: TextAreaFieldProps) {
  const { control, notes } = useDescription(hint, error);
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={control.id}>
        {label}
      </label>
      <textarea className={`${styles.input} ${styles.textarea}`} {...control} {...textarea} />
      {notes}
    </div>
  );
}

/** A unit after a field's input: a select of units named by `label`, or plain text. */
export function Unit({
  label,
  value,
  units,
  onChange,
}: {
  label: string;
  value: string;
  units?: readonly string[] | undefined;
  onChange?: ((unit: string) => void) | undefined;
}) {
  if (units === undefined || onChange === undefined) {
    return <span className={styles.unitText}>{value}</span>;
  }
  return (
    <select
      aria-label={label}
      className={`${styles.input} ${styles.unit}`}
      value={value}
      onChange={(event) => {
        onChange(event.target.value);
      }}
    >
      {units.map((unit) => (
        <option key={unit}>{unit}</option>
      ))}
    </select>
  );
}
