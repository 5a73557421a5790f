import { useEffect, useId, useRef, useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import {
  useDeleteUser,
  useSetRole,
  useSetUserServers,
  type Role,
  type User,
} from '../../hooks/useUsers';
import { SignInControls } from './SignInControls';
import { ROLES, sameServers, withServer } from './users';
import styles from './UsersPage.module.css';

interface UserEditorProps {
  readonly id: string;
  readonly user: User;
  readonly servers: readonly string[];
  readonly isMe: boolean;
  readonly onDeleted: (message: string) => void;
}

/**
 * An admin's controls for one account: its role, the servers it may reach, its password and
 * two-factor sign-in (`SignInControls`), and deleting it.
 * Each change is sent on its own button and shows the API's answer, refusals included (the
 * last admin cannot be demoted or deleted: the API says so).
 */
export function UserEditor({ id, user, servers, isMe, onDeleted }: UserEditorProps) {
  return (
    <div id={id} className={styles.editor}>
      <RoleForm user={user} isMe={isMe} />
      <ServersForm user={user} servers={servers} />
      <SignInControls user={user} isMe={isMe} />
      <DeleteUser user={user} isMe={isMe} onDeleted={onDeleted} />
    </div>
  );
}

function RoleForm({ user, isMe }: { user: User; isMe: boolean }) {
  const setRole = useSetRole(user.username);
  const [role, setDraft] = useState<Role>(user.role);
  const selectId = useId();
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setRole.mutate(role);
  };
  return (
    <form className={styles.part} onSubmit={submit}>
      <div className={styles.inline}>
        <div className={styles.selectField}>
          <label htmlFor={selectId} className={styles.label}>
            Role
          </label>
          <select
            id={selectId}
            className={styles.select}
            value={role}
            onChange={(event) => {
              setRole.reset();
              setDraft(event.target.value as Role);
            }}
          >
            {ROLES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </div>
        <button
          type="submit"
          className="button primary"
          disabled={role === user.role || setRole.isPending}
        >
          Save role
        </button>
      </div>
      {isMe && role !== user.role && role !== 'admin' && (
        <p className={styles.hint}>This is your own account: you will lose the admin pages.</p>
      )}
      {setRole.isError && <Alert tone="error">{errorMessage(setRole.error)}</Alert>}
      {setRole.isSuccess && (
        <Alert tone="success">
          {setRole.data.message}: {setRole.data.data.username} is now {setRole.data.data.role}
        </Alert>
      )}
    </form>
  );
}

function ServersForm({ user, servers }: { user: User; servers: readonly string[] }) {
  const setServers = useSetUserServers(user.username);
  const [selected, setSelected] = useState<string[]>(user.servers);
  // Servers assigned but no longer listed still show, so they can be taken away.
  const choices = [...new Set([...servers, ...user.servers])].sort((a, b) => a.localeCompare(b));
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setServers.mutate(selected);
  };
  return (
    <form className={styles.part} onSubmit={submit}>
      <fieldset className={styles.fieldset}>
        <legend className={styles.label}>Servers</legend>
        {user.role === 'admin' && (
          <p className={styles.hint}>
            An admin reaches every server; this list counts once the role changes.
          </p>
        )}
        {choices.length === 0 ? (
          <p className={styles.hint}>No servers exist yet.</p>
        ) : (
          <ul className={styles.checks}>
            {choices.map((name) => (
              <li key={name}>
                <label className={styles.check}>
                  <input
                    type="checkbox"
                    checked={selected.includes(name)}
                    onChange={(event) => {
                      setServers.reset();
                      setSelected((current) => withServer(current, name, event.target.checked));
                    }}
                  />
                  <span>{name}</span>
                </label>
              </li>
            ))}
          </ul>
        )}
      </fieldset>
      <div>
        <button
          type="submit"
          className="button primary"
          disabled={sameServers(selected, user.servers) || setServers.isPending}
        >
          Save servers
        </button>
      </div>
      {setServers.isError && <Alert tone="error">{errorMessage(setServers.error)}</Alert>}
      {setServers.isSuccess && (
        <Alert tone="success">
          {setServers.data.message}:{' '}
          {setServers.data.data.servers.length === 0
            ? 'no servers'
            : setServers.data.data.servers.join(', ')}
        </Alert>
      )}
    </form>
  );
}

function DeleteUser({
  user,
  isMe,
  onDeleted,
}: {
  user: User;
  isMe: boolean;
  onDeleted: (message: string) => void;
}) {
  const remove = useDeleteUser(user.username);
  const [confirming, setConfirming] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const deleteRef = useRef<HTMLButtonElement>(null);
  const questionId = useId();
  const opened = useRef(false);
  useEffect(() => {
    // The confirmation takes the focus, on its safe answer; closing it gives it back.
    if (confirming) {
      opened.current = true;
      cancelRef.current?.focus();
    } else if (opened.current) {
      opened.current = false;
      deleteRef.current?.focus();
    }
  }, [confirming]);

  if (!confirming) {
    return (
      <div className={styles.part}>
        <div>
          <button
            ref={deleteRef}
            type="button"
            className={`button ${styles.danger}`}
            onClick={() => {
              setConfirming(true);
            }}
          >
            Delete user
          </button>
        </div>
      </div>
    );
  }
  return (
    <div role="group" aria-labelledby={questionId} className={`${styles.part} ${styles.confirm}`}>
      <p id={questionId} className={styles.question}>
        Delete {user.username}?
      </p>
      <p className={styles.hint}>
        {isMe ? 'This is your own account: you will be signed out. ' : ''}
        The account can no longer sign in and its name becomes free; its tickets and messages stay.
      </p>
      {remove.isError && <Alert tone="error">{errorMessage(remove.error)}</Alert>}
      <div className={styles.buttons}>
        <button
          type="button"
          className={`button ${styles.danger}`}
          disabled={remove.isPending}
          onClick={() => {
            // Not mutate's own callbacks: the list fetched again without this user unmounts
            // the row before they would run; the promise still settles.
            remove.mutateAsync().then(
              (answer) => {
                onDeleted(`${answer.message}: ${answer.data.username}`);
              },
              () => undefined, // shown from remove.error while the row is still there
            );
          }}
        >
          Delete
        </button>
        <button
          ref={cancelRef}
          type="button"
          className="button secondary"
          onClick={() => {
            remove.reset();
            setConfirming(false);
          }}
        >
          Cancel
        </button>
      </div>
    </div>
  );
}
