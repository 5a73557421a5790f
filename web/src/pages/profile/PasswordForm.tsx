import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { useApiKeys } from '../../hooks/useApiKeys';
import { useChangePassword } from '../../hooks/useProfile';
import page from '../Page.module.css';
import { confirmationProblem, currentPassword } from './password';
import styles from './ProfilePage.module.css';

const EMPTY = { current: '', next: '', confirmation: '' };

/**
 * A new password (or a first one, for an account made by an OpenID Connect sign-in). The API
 * answers a fresh token, which the session takes at once: every other browser signed in as this
 * account is sent back to sign-in on its next request, this one is not. The account's API keys
 * are revoked with it unless the person unticks "Also revoke my N API keys".
 */
export function PasswordForm({
  hasPassword,
  providers,
}: {
  hasPassword: boolean;
  providers: readonly string[];
}) {
  const change = useChangePassword();
  const [form, setForm] = useState(EMPTY);
  const [problem, setProblem] = useState<string | null>(null);
  const keys = useApiKeys();
  const keyCount = keys.data?.length ?? 0;
  const [revokeKeys, setRevokeKeys] = useState(true);
  const set = (key: keyof typeof EMPTY) => (event: { target: { value: string } }) => {
    setForm((current) => ({ ...current, [key]: event.target.value }));
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    change.reset();
    const mismatch = confirmationProblem(form.next, form.confirmation);
    setProblem(mismatch);
    if (mismatch !== null) return;
    change.mutate(
      {
        oldPassword: currentPassword(form.current, hasPassword),
        newPassword: form.next,
        // With no key listed there is nothing to keep: the API's default revokes any made since.
        revokeApiKeys: keyCount === 0 || revokeKeys,
      },
      {
        onSuccess: () => {
          setForm(EMPTY);
        },
      },
    );
  };
  const title = hasPassword ? 'Change password' : 'Set a password';
  return (
    <section className={page.card} aria-labelledby="password-title">
      <h2 id="password-title">{title}</h2>
      {!hasPassword && (
        <p className={page.muted}>
          This account signs in with {providers.length > 0 ? providers.join(', ') : 'a provider'}{' '}
          and has no password yet. With one, you can also sign in with your username.
        </p>
      )}
      <form className={styles.form} onSubmit={submit}>
        {hasPassword && (
          <Field
            label="Current password"
            name="old_password"
            type="password"
            required
            autoComplete="current-password"
            value={form.current}
            onChange={set('current')}
          />
        )}
        <Field
          label="New password"
          name="new_password"
          type="password"
          required
          autoComplete="new-password"
          value={form.next}
          onChange={set('next')}
        />
        <Field
          label="Confirm new password"
          name="confirmation"
          type="password"
          required
          autoComplete="new-password"
          value={form.confirmation}
          onChange={set('confirmation')}
        />
        {keyCount > 0 && (
          <label className={styles.checkbox}>
            <input
              type="checkbox"
              name="revokeApiKeys"
              checked={revokeKeys}
              onChange={(event) => {
                setRevokeKeys(event.target.checked);
              }}
            />
            Also revoke my {keyCount} API {keyCount === 1 ? 'key' : 'keys'}
          </label>
        )}
        {problem !== null && <Alert tone="error">{problem}</Alert>}
        {change.isError && <Alert tone="error">{errorMessage(change.error)}</Alert>}
        {change.isSuccess && (
          <Alert tone="success">
            {change.data.message}. This browser stays signed in; others must sign in again.
            {change.data.data.revokedApiKeys > 0 &&
              ` ${change.data.data.revokedApiKeys === 1 ? 'One API key was' : `${change.data.data.revokedApiKeys} API keys were`} revoked.`}
          </Alert>
        )}
        <div>
          <button type="submit" className="button primary" disabled={change.isPending}>
            {hasPassword ? 'Change password' : 'Set password'}
          </button>
        </div>
      </form>
    </section>
  );
}
