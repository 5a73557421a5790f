import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import {
  useSetTwoFactorPolicy,
  useTwoFactorPolicy,
  type TwoFactorRole,
} from '../../hooks/useTwoFactor';
import page from '../Page.module.css';
import styles from './UsersPage.module.css';

const ROLES: readonly { role: TwoFactorRole; label: string }[] = [
  { role: 'admin', label: 'Admins' },
  { role: 'support', label: 'Support' },
  { role: 'user', label: 'Users' },
];

/**
 * Which roles must use two-factor sign-in (admins only). Their members with a password can do
 * nothing in the panel but set it up until they have; the panel sends them to it.
 */
export function TwoFactorPolicy({ myTwoFactor }: { myTwoFactor: boolean }) {
  const policy = useTwoFactorPolicy(true);
  const save = useSetTwoFactorPolicy();
  return (
    <section className={page.card} aria-labelledby="two-factor-policy-title">
      <h2 id="two-factor-policy-title">Two-factor sign-in</h2>
      {policy.isPending ? (
        <p className={page.muted} role="status">
          Loading…
        </p>
      ) : policy.isError ? (
        <Alert tone="error">{errorMessage(policy.error)}</Alert>
      ) : (
        <PolicyForm
          // A new key after a save starts the form from what the API answered.
          key={policy.data.join(',')}
          saved={policy.data}
          myTwoFactor={myTwoFactor}
          pending={save.isPending}
          error={save.error}
          done={save.isSuccess}
          onSave={(roles) => {
            save.mutate(roles);
          }}
        />
      )}
    </section>
  );
}

function PolicyForm({
  saved,
  myTwoFactor,
  pending,
  error,
  done,
  onSave,
}: {
  saved: readonly TwoFactorRole[];
  myTwoFactor: boolean;
  pending: boolean;
  error: unknown;
  done: boolean;
  onSave: (roles: TwoFactorRole[]) => void;
}) {
  const [chosen, setChosen] = useState<ReadonlySet<TwoFactorRole>>(new Set(saved));
  const dirty = chosen.size !== saved.length || saved.some((role) => !chosen.has(role));
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    onSave(ROLES.map(({ role }) => role).filter((role) => chosen.has(role)));
  };
  return (
    <form className={styles.policy} onSubmit={submit} aria-labelledby="two-factor-policy-title">
      <fieldset className={styles.policyRoles}>
        <legend>Roles that must use it</legend>
        {ROLES.map(({ role, label }) => (
          <label key={role} className={styles.policyRole}>
            <input
              type="checkbox"
              checked={chosen.has(role)}
              onChange={(event) => {
                const next = new Set(chosen);
                if (event.target.checked) next.add(role);
                else next.delete(role);
                setChosen(next);
              }}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <p className={page.muted}>
        Anyone with such a role and a password who has not set up two-factor sign-in can do nothing
        but set it up, and is sent there at once.
        {!myTwoFactor && chosen.has('admin') && ' That includes you: you have not set it up yet.'}
      </p>
      {error != null && <Alert tone="error">{errorMessage(error)}</Alert>}
      {done && !dirty && <Alert tone="success">Two-factor policy saved</Alert>}
      <div>
        <button type="submit" className="button primary" disabled={!dirty || pending}>
          {pending ? 'Saving…' : 'Save two-factor policy'}
        </button>
      </div>
    </form>
  );
}
