import { useState, type ReactNode, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { useSecondFactor } from '../../hooks/useAuth';
import styles from './SignInPage.module.css';

/**
 * The second step of a sign-in whose password was right on an account with two-factor sign-in:
 * the code for the API's `challenge`; the session starts once it is accepted. Shared by the
 * sign-in page and the set-password page (whose answer is a login's).
 */
export function SecondFactorStep({
  challenge,
  note,
  onStartOver,
  onSignedIn,
}: {
  challenge: string;
  /** A line above the field, e.g. that the password was set. */
  note?: ReactNode;
  /** "Start over", where there is something to start over (the sign-in form). */
  onStartOver?: () => void;
  /** Once signed in, where the page itself does not move on as the signed-out routes do. */
  onSignedIn?: () => void;
}) {
  const secondFactor = useSecondFactor();
  const [code, setCode] = useState('');
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    secondFactor.mutate({ challenge, code }, { onSuccess: () => onSignedIn?.() });
  };
  return (
    <main className={styles.page}>
      <section className={styles.card} aria-labelledby="sign-in-title">
        <p className={styles.brand}>Game panel</p>
        <h1 id="sign-in-title">Two-factor sign-in</h1>
        {note}
        <form className={styles.form} onSubmit={submit}>
          <Field
            label="Authentication code"
            name="code"
            autoComplete="one-time-code"
            autoCapitalize="none"
            spellCheck={false}
            required
            autoFocus
            value={code}
            onChange={(event) => {
              setCode(event.target.value);
            }}
            hint="The 6 digits your authenticator app shows, or one of your recovery codes"
          />
          {secondFactor.isError && <Alert tone="error">{errorMessage(secondFactor.error)}</Alert>}
          <button type="submit" className="button primary" disabled={secondFactor.isPending}>
            Verify
          </button>
          {onStartOver !== undefined && (
            <button
              type="button"
              className="button"
              onClick={() => {
                secondFactor.reset();
                setCode('');
                onStartOver();
              }}
            >
              Start over
            </button>
          )}
        </form>
      </section>
    </main>
  );
}
