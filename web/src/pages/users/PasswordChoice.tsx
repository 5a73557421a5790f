import { useId } from 'react';
import { Field } from '../../components/Field';
import type { PasswordChoice as Choice, PasswordDraft, Problems } from './accounts';
import styles from './UsersPage.module.css';

/**
 * The password half of Add user and Reset password: a one-time link the admin hands over (the
 * default: the admin never learns the password), or a password typed now, twice.
 */
export function PasswordChoice({
  legend,
  linkLabel,
  linkHint,
  passwordLabel,
  draft,
  problems,
  onChange,
}: {
  legend: string;
  linkLabel: string;
  /** What the link does, under its choice. */
  linkHint: string;
  passwordLabel: string;
  draft: PasswordDraft;
  problems: Problems<'password' | 'confirmation'>;
  onChange: (draft: PasswordDraft) => void;
}) {
  const name = useId();
  const option = (choice: Choice, label: string, hint: string) => (
    <div className={styles.choice}>
      <input
        id={`${name}-${choice}`}
        type="radio"
        name={name}
        value={choice}
        checked={draft.choice === choice}
        aria-describedby={`${name}-${choice}-hint`}
        onChange={() => {
          onChange({ ...draft, choice });
        }}
      />
      <span>
        <label htmlFor={`${name}-${choice}`}>{label}</label>
        <span id={`${name}-${choice}-hint`} className={styles.choiceHint}>
          {hint}
        </span>
      </span>
    </div>
  );
  return (
    <fieldset className={styles.fieldset}>
      <legend className={styles.label}>{legend}</legend>
      {option('link', linkLabel, linkHint)}
      {option('password', passwordLabel, 'You choose it and tell them')}
      {draft.choice === 'password' && (
        <div className={styles.passwords}>
          <Field
            label="Password"
            type="password"
            autoComplete="new-password"
            hint="At least 6 characters"
            error={problems.password}
            value={draft.password}
            onChange={(event) => {
              onChange({ ...draft, password: event.target.value });
            }}
          />
          <Field
            label="Confirm password"
            type="password"
            autoComplete="new-password"
            error={problems.confirmation}
            value={draft.confirmation}
            onChange={(event) => {
              onChange({ ...draft, confirmation: event.target.value });
            }}
          />
        </div>
      )}
    </fieldset>
  );
}
