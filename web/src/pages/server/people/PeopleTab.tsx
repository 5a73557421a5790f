import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field } from '../../../components/Field';
import { useMe } from '../../../hooks/useMe';
import { useGrant, useServerPeople } from '../../../hooks/useServerPeople';
import page from '../../Page.module.css';
import { useServerOutlet } from '../outlet';
import { PERMISSIONS, type Permission } from '../permissions';
import cards from '../../../components/Cards.module.css';
import styles from './People.module.css';
import { PermissionBoxes } from './PermissionBoxes';
import { PersonRow } from './PersonRow';

/** What a new person gets unless the inviter chooses otherwise: watching and the files. */
const SUGGESTED: readonly Permission[] = ['console.read', 'files.read'];

/**
 * The server's People tab: who has the server and what each may do, and an invitation by
 * username. A non-admin grants only what they hold themselves (docs/api.md).
 */
export default function PeopleTab() {
  const { name, permissions } = useServerOutlet();
  const held = permissions ?? new Set<Permission>();
  const isAdmin = useMe().data?.role === 'admin';
  const people = useServerPeople(name);
  const invite = useGrant(name);
  const [username, setUsername] = useState('');
  const [chosen, setChosen] = useState<ReadonlySet<Permission>>(
    new Set(SUGGESTED.filter((permission) => held.has(permission))),
  );
  const [invited, setInvited] = useState<string | null>(null);
  const missing = PERMISSIONS.filter((permission) => !held.has(permission));

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setInvited(null);
    invite.mutate(
      { username: username.trim(), permissions: PERMISSIONS.filter((p) => chosen.has(p)) },
      {
        onSuccess: (person) => {
          setInvited(person.username);
          setUsername('');
        },
      },
    );
  };

  return (
    <div className={cards.tab}>
      <section className={page.card} aria-labelledby="people-title">
        <h2 id="people-title">People</h2>
        <p className={page.muted}>
          Everyone with this server in their list, and what each may do on it.
          {!isAdmin && missing.length > 0 && (
            <> You can grant only the permissions you hold yourself; the others are greyed out.</>
          )}
        </p>
        {people.isPending ? (
          <p className={page.placeholder} role="status">
            Loading people…
          </p>
        ) : people.isError ? (
          <Alert tone="error">{errorMessage(people.error)}</Alert>
        ) : people.data.length === 0 ? (
          <div className={page.placeholder}>
            <p className={page.emptyTitle}>Nobody has this server yet</p>
            <p>Invite someone below by their username.</p>
          </div>
        ) : (
          <ul className={cards.list} aria-label="People">
            {people.data.map((person) => (
              <PersonRow key={person.username} server={name} person={person} held={held} />
            ))}
          </ul>
        )}
      </section>

      <section className={page.card} aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <form className={styles.form} onSubmit={submit} aria-labelledby="invite-title">
          <Field
            label="Username"
            name="username"
            required
            autoCapitalize="none"
            spellCheck={false}
            autoComplete="off"
            hint="They must have an account on this panel already; they appear above once added"
            value={username}
            onChange={(event) => {
              setUsername(event.target.value);
            }}
          />
          <PermissionBoxes
            who="Invite"
            legend="Their permissions"
            chosen={chosen}
            grantable={held}
            disabled={invite.isPending}
            onChange={setChosen}
          />
          {invite.isError && <Alert tone="error">{errorMessage(invite.error)}</Alert>}
          {invited !== null && (
            <Alert tone="success">
              Invitation for {invited} done: if that account exists, it now has this server and is
              listed above.
            </Alert>
          )}
          <div className={cards.buttons}>
            <button type="submit" className="button primary" disabled={invite.isPending}>
              {invite.isPending ? 'Inviting…' : 'Invite'}
            </button>
          </div>
        </form>
      </section>
    </div>
  );
}
