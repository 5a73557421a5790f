import { useState, type SyntheticEvent } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { useProviders, useRegistrationOpen, useSignIn } from '../../hooks/useAuth';
import { useSession } from '../../hooks/useSession';
import { useTitle } from '../../hooks/useTitle';
import { providerLoginHref } from './providerLoginHref';
import { SecondFactorStep } from './SecondFactorStep';
import styles from './SignInPage.module.css';
import { connectionIsUnencrypted } from './unencrypted';

/**
 * Sign in with a username and password, or with a provider; `/register` makes an account. Where
 * registration is closed (`GET /api/auth/registration`), sign-in offers no way to register and
 * `/register` says so instead of showing a form the API would refuse. A page loaded over plain
 * HTTP from another machine says that the password would cross the network in clear.
 */
export function SignInPage({ mode }: { mode: 'login' | 'register' }) {
  const registering = mode === 'register';
  useTitle(registering ? 'Create an account' : 'Sign in');
  const { notice } = useSession();
  const signIn = useSignIn(mode);
  const providers = useProviders();
  const registrationOpen = useRegistrationOpen();
  const closed = registering && registrationOpen === false;
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // The password was right and the account has two-factor sign-in: the code is asked for.
  const challenge =
    signIn.data !== undefined && 'challenge' in signIn.data ? signIn.data.challenge : null;

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    signIn.mutate({ username, password });
  };
  const startOver = () => {
    signIn.reset();
    setPassword('');
  };

  if (challenge !== null) {
    return <SecondFactorStep challenge={challenge} onStartOver={startOver} />;
  }
  const heading = registering ? 'Create an account' : 'Sign in';
  const providerList = providers.data ?? [];

  return (
    <main className={styles.page}>
      <section className={styles.card} aria-labelledby="sign-in-title">
        <p className={styles.brand}>Game panel</p>
        <h1 id="sign-in-title">{heading}</h1>
        {connectionIsUnencrypted(window.location) && (
          <p className={styles.unencrypted} role="alert">
            This connection is not encrypted: your password would cross the network in clear. Ask
            the operator to set up HTTPS (docs/deploy.md).
          </p>
        )}
        {notice !== null && !signIn.isError && <Alert tone="info">{notice}</Alert>}
        {closed && (
          <Alert tone="info">
            Registration is closed on this panel. An administrator can make you an account.
          </Alert>
        )}
        {!closed && (
          <form className={styles.form} onSubmit={submit}>
            <Field
              label="Username"
              name="username"
              autoComplete="username"
              autoCapitalize="none"
              spellCheck={false}
              required
              value={username}
              onChange={(event) => {
                setUsername(event.target.value);
              }}
            />
            <Field
              label="Password"
              name="password"
              type="password"
              autoComplete={registering ? 'new-password' : 'current-password'}
              required
              value={password}
              onChange={(event) => {
                setPassword(event.target.value);
              }}
              {...(registering ? { hint: 'At least 6 characters' } : {})}
            />
            {signIn.isError && <Alert tone="error">{errorMessage(signIn.error)}</Alert>}
            <button type="submit" className="button primary" disabled={signIn.isPending}>
              {registering ? 'Create account' : 'Sign in'}
            </button>
          </form>
        )}
        {providerList.length > 0 && (
          <div className={styles.providers}>
            <p className={styles.or}>or</p>
            {providerList.map((provider) => (
              <a
                key={provider.id}
                className="button secondary"
                href={providerLoginHref(provider.loginUrl, window.location.origin)}
              >
                Sign in with {provider.name}
              </a>
            ))}
          </div>
        )}
        <p className={styles.switch}>
          {registering ? (
            <>
              Have an account? <Link to="/sign-in">Sign in</Link>
            </>
          ) : registrationOpen === true ? (
            <>
              New here? <Link to="/register">Create an account</Link>
            </>
          ) : null}
        </p>
      </section>
    </main>
  );
}
