import { useState } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Confirm } from '../../../components/Confirm';
import { useGrant, useRemovePerson, type Person } from '../../../hooks/useServerPeople';
import { mayManage, PERMISSIONS, samePermissions, type Permission } from '../permissions';
import cards from '../../../components/Cards.module.css';
import styles from './People.module.css';
import { PermissionBoxes } from './PermissionBoxes';

/**
 * One person with the server: their permissions as checkboxes, Save, and Remove (asked first).
 * An admin and the server's owner hold everything and are not changed here (only an admin names
 * another owner); someone holding a permission the caller lacks is shown but not changed either
 * (the API would refuse it).
 */
export function PersonRow({
  server,
  person,
  held,
}: {
  server: string;
  person: Person;
  held: ReadonlySet<Permission>;
}) {
  const grant = useGrant(server);
  const remove = useRemovePerson(server);
  const saved = new Set<Permission>(person.permissions);
  const [chosen, setChosen] = useState<ReadonlySet<Permission>>(saved);
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState(false);
  const isAdmin = person.role === 'admin';
  const isOwner = person.owner;
  const manageable = !isAdmin && !isOwner && mayManage(held, person.permissions);
  const dirty = !samePermissions(chosen, saved);

  return (
    <li className={cards.row} aria-label={person.username}>
      <div className={cards.head}>
        <h3 className={cards.name}>{person.username}</h3>
        {isOwner && <span className={styles.role}>owner</span>}
        <span className={styles.role}>{person.role}</span>
        <span className={styles.count}>
          {isAdmin || isOwner
            ? 'every permission'
            : `${person.permissions.length} of ${PERMISSIONS.length} permissions`}
        </span>
      </div>
      {isAdmin ? (
        <p className={styles.note}>An admin holds every permission on every server.</p>
      ) : isOwner ? (
        <p className={styles.note}>
          {person.username} owns this server and holds every permission on it. Only an admin can
          name another owner.
        </p>
      ) : (
        <>
          <PermissionBoxes
            who={person.username}
            legend={`Permissions of ${person.username}`}
            chosen={chosen}
            grantable={manageable ? held : new Set()}
            disabled={grant.isPending}
            onChange={(next) => {
              setDone(false);
              grant.reset();
              setChosen(next);
            }}
          />
          {!manageable && (
            <p className={styles.note}>
              {person.username} holds permissions you don&apos;t: only an admin, or someone holding
              all of them, can change or remove them.
            </p>
          )}
          {grant.isError && <Alert tone="error">{errorMessage(grant.error)}</Alert>}
          {done && !dirty && <Alert tone="success">Permissions of {person.username} saved</Alert>}
          {manageable && !confirming && (
            <div className={cards.buttons}>
              <button
                type="button"
                className="button primary"
                disabled={!dirty || grant.isPending}
                onClick={() => {
                  grant.mutate(
                    { username: person.username, permissions: [...chosen] },
                    {
                      onSuccess: () => {
                        setDone(true);
                      },
                    },
                  );
                }}
              >
                {grant.isPending ? 'Saving…' : `Save ${person.username}`}
              </button>
              {dirty && (
                <button
                  type="button"
                  className="button secondary"
                  onClick={() => {
                    grant.reset();
                    setChosen(saved);
                  }}
                >
                  Undo changes
                </button>
              )}
              <button
                type="button"
                className={`button secondary ${styles.dangerText}`}
                onClick={() => {
                  remove.reset();
                  setConfirming(true);
                }}
              >
                Remove {person.username}
              </button>
            </div>
          )}
          {confirming && (
            <Confirm
              label={`Remove ${person.username}?`}
              action="Remove"
              pendingAction="Removing…"
              pending={remove.isPending}
              error={remove.error}
              autoFocus
              onConfirm={() => {
                remove.mutate(person.username);
              }}
              onCancel={() => {
                setConfirming(false);
              }}
            >
              Take <strong>{server}</strong> out of {person.username}&apos;s list? They lose every
              permission on it at once.
            </Confirm>
          )}
        </>
      )}
    </li>
  );
}
