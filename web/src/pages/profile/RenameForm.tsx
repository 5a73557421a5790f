import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { useRename } from '../../hooks/useProfile';
import page from '../Page.module.css';
import { currentPassword } from './password';
import styles from './ProfilePage.module.css';

/** A new name for the account; the current password is asked again (a token alone may not rename). */
export function RenameForm({ hasPassword }: { hasPassword: boolean }) {
  const rename = useRename();
  const [newUsername, setNewUsername] = useState('');
  const [password, setPassword] = useState('');
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    rename.mutate(
      { newUsername: newUsername.trim(), password: currentPassword(password, hasPassword) },
      {
        onSuccess: () => {
          setNewUsername('');
          setPassword('');
        },
      },
    );
  };
  return (
    <section className={page.card} aria-labelledby="rename-title">
      <h2 id="rename-title">Change username</h2>
      <form className={styles.form} onSubmit={submit}>
        <Field
          label="New username"
          name="new_username"
          required
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          hint="3 to 32 letters, digits, _ . -"
          value={newUsername}
          onChange={(event) => {
            setNewUsername(event.target.value);
          }}
        />
        {hasPassword && (
          <Field
            label="Current password"
            name="password"
            type="password"
            required
            autoComplete="current-password"
            value={password}
            onChange={(event) => {
              setPassword(event.target.value);
            }}
          />
        )}
        {rename.isError && <Alert tone="error">{errorMessage(rename.error)}</Alert>}
        {rename.isSuccess && (
          <Alert tone="success">
            {rename.data.message}: you are now {rename.data.data.username}
          </Alert>
        )}
        <div>
          <button type="submit" className="button primary" disabled={rename.isPending}>
            Change username
          </button>
        </div>
      </form>
    </section>
  );
}
