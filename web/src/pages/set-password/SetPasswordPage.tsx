import { useEffect, useState, type ReactNode, type SyntheticEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { useSession } from '../../hooks/useSession';
import { useLinkCheck, useSetPasswordWithLink } from '../../hooks/useSetPassword';
import { useTitle } from '../../hooks/useTitle';
import { hasProblems, passwordProblems, readableDetail, type Problems } from '../users/accounts';
import { formatWhen } from '../users/users';
import { SecondFactorStep } from '../sign-in/SecondFactorStep';
import styles from '../sign-in/SignInPage.module.css';
import { forgetFragment, linkTokenFrom } from './link';

/** What to do without a link: an admin makes a new one. */
const ASK_AGAIN = 'Ask an admin of this panel for a new link; each link works once, for 24 hours.';
/** Beside the API's word on a link it refused, which already says to ask an admin. */
const ONCE =
  'Each link works once, for 24 hours. If you set your password with it already, sign in.';

/**
 * `/set-password#token=…`: the page of the one-time link an admin made (a new account, or a
 * password reset). It reads the token from the fragment and removes it from the address bar,
 * checks the link (whose it is), asks for the password twice, then signs the person in with the
 * answer as the sign-in page does (the code first, for an account with two-factor sign-in).
 * Reached signed in or not: setting the password signs this browser in as the link's account.
 */
export function SetPasswordPage() {
  useTitle('Set a password');
  // Read during the first render, before the effect below removes it; the token then lives
  // only in this state and in the two requests' bodies.
  const [token] = useState(() => linkTokenFrom(window.location.hash));
  useEffect(() => {
    forgetFragment(window);
  }, []);
  const setPassword = useSetPasswordWithLink();
  const answer = setPassword.data;
  const check = useLinkCheck(answer === undefined ? token : null);
  const navigate = useNavigate();

  // Signed in: on to the panel. Looked at before the check, which no longer matters once used.
  useEffect(() => {
    if (answer !== undefined && 'access_token' in answer) {
      void navigate('/servers', { replace: true });
    }
  }, [answer, navigate]);
  if (answer !== undefined) {
    if ('challenge' in answer) {
      return (
        <SecondFactorStep
          challenge={answer.challenge}
          onSignedIn={() => {
            void navigate('/servers', { replace: true });
          }}
          note={
            <Alert tone="success">
              Your password is set. This account also signs in with a code: enter it to go on.
            </Alert>
          }
        />
      );
    }
    return (
      <Card title="Password set">
        <p role="status">Signed in; opening the panel…</p>
      </Card>
    );
  }

  if (token === null) {
    return (
      <Card title="No link to use">
        <Alert tone="error">
          This address holds no set-password link. Open the link you were given exactly as it was
          sent (a reload of this page forgets it, for your safety).
        </Alert>
        <p className={styles.switch}>{ASK_AGAIN}</p>
        <SignInLink />
      </Card>
    );
  }
  if (check.isPending) {
    return (
      <Card title="Set a password">
        <p role="status" className={styles.switch}>
          Checking the link…
        </p>
      </Card>
    );
  }
  if (check.isError) {
    const unusable = check.error instanceof ApiError && check.error.code === 'INVALID_LINK';
    return (
      <Card title={unusable ? 'This link cannot be used' : 'Set a password'}>
        <Alert tone="error">{errorMessage(check.error)}</Alert>
        {unusable ? (
          <p className={styles.switch}>{ONCE}</p>
        ) : (
          <button
            type="button"
            className="button secondary"
            onClick={() => {
              void check.refetch();
            }}
          >
            Try again
          </button>
        )}
        <SignInLink />
      </Card>
    );
  }
  return (
    <PasswordStep
      username={check.data.username}
      expiresAt={check.data.expiresAt}
      pending={setPassword.isPending}
      error={setPassword.error}
      onSubmit={(password) => {
        setPassword.mutate({ token, password });
      }}
    />
  );
}

function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className={styles.page}>
      <section className={styles.card} aria-labelledby="set-password-title">
        <p className={styles.brand}>Game panel</p>
        <h1 id="set-password-title">{title}</h1>
        {children}
      </section>
    </main>
  );
}

function SignInLink() {
  return (
    <p className={styles.switch}>
      Have a password already? <Link to="/sign-in">Sign in</Link>
    </p>
  );
}

function PasswordStep({
  username,
  expiresAt,
  pending,
  error,
  onSubmit,
}: {
  username: string;
  expiresAt: string;
  pending: boolean;
  error: Error | null;
  onSubmit: (password: string) => void;
}) {
  const { session } = useSession();
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [problems, setProblems] = useState<Problems<'password' | 'confirmation'>>({});
  const refusal = error instanceof ApiError ? error : null;
  const apiPassword = refusal?.details.find((detail) => detail.path === 'body/password');
  const passwordError =
    problems.password ??
    (apiPassword === undefined ? undefined : readableDetail('password', apiPassword.message));
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const found = passwordProblems({ choice: 'password', password, confirmation });
    setProblems(found);
    if (!hasProblems(found)) onSubmit(password);
  };
  const elsewhere = session !== null && session.username.toLowerCase() !== username.toLowerCase();
  return (
    <Card title={`Set a password for ${username}`}>
      <p className={styles.switch}>
        This link works once, until {formatWhen(expiresAt)}. You are signed in as soon as the
        password is set.
      </p>
      {elsewhere && (
        <Alert tone="info">
          This browser is signed in as {session.username}; setting this password signs it in as{' '}
          {username} instead.
        </Alert>
      )}
      <form className={styles.form} onSubmit={submit} noValidate>
        {/* Lets a password manager store the new password under the right name. */}
        <input
          type="text"
          name="username"
          autoComplete="username"
          value={username}
          readOnly
          hidden
        />
        <Field
          label="New password"
          name="new_password"
          type="password"
          autoComplete="new-password"
          required
          autoFocus
          hint="At least 6 characters"
          error={passwordError}
          value={password}
          onChange={(event) => {
            setPassword(event.target.value);
          }}
        />
        <Field
          label="Confirm new password"
          name="confirmation"
          type="password"
          autoComplete="new-password"
          required
          error={problems.confirmation}
          value={confirmation}
          onChange={(event) => {
            setConfirmation(event.target.value);
          }}
        />
        {error !== null && apiPassword === undefined && (
          <Alert tone="error">{errorMessage(error)}</Alert>
        )}
        <button type="submit" className="button primary" disabled={pending}>
          {pending ? 'Setting the password…' : 'Set password and sign in'}
        </button>
      </form>
      {refusal?.code === 'INVALID_LINK' && <p className={styles.switch}>{ONCE}</p>}
    </Card>
  );
}
