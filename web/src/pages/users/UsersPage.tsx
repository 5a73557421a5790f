import { useState } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { useMe } from '../../hooks/useMe';
import { useServers } from '../../hooks/useServers';
import { useSession } from '../../hooks/useSession';
import { useTitle } from '../../hooks/useTitle';
import { useUsers } from '../../hooks/useUsers';
import page from '../Page.module.css';
import { AddUser } from './AddUser';
import { TwoFactorPolicy } from './TwoFactorPolicy';
import { UserRow } from './UserRow';
import { filterUsers } from './users';
import styles from './UsersPage.module.css';

/**
 * Every account, with a filter. Admins add accounts, change a user's role and servers, reset
 * their password, turn off their two-factor sign-in and delete accounts;
 * support sees the same list without the controls (and is told why); anyone else gets the
 * API's refusal. Admins also choose which roles must use two-factor sign-in.
 */
export function UsersPage() {
  useTitle('Users');
  const users = useUsers();
  const me = useMe();
  const { session } = useSession();
  const role = me.data?.role ?? session?.role;
  const canEdit = role === 'admin';
  // Only an admin edits, and only an admin's server list is every server.
  const servers = useServers();
  const serverNames = canEdit ? (servers.data ?? []).map((server) => server.name) : [];
  const myName = (me.data?.username ?? session?.username ?? '').toLowerCase();
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [deleted, setDeleted] = useState<string | null>(null);
  const shown = users.data === undefined ? [] : filterUsers(users.data, query);

  return (
    <>
      <div className={page.pageHeader}>
        <h1>Users</h1>
        {users.data !== undefined && (
          <p className={page.muted}>
            {shown.length === users.data.length
              ? `${users.data.length} ${users.data.length === 1 ? 'user' : 'users'}`
              : `${shown.length} of ${users.data.length} users`}
          </p>
        )}
      </div>
      {role === 'support' && (
        <Alert tone="info">
          Support can see every account; only an administrator can change roles and servers or
          delete accounts.
        </Alert>
      )}
      {deleted !== null && <Alert tone="success">{deleted}</Alert>}
      {canEdit && <AddUser />}
      {users.isError ? (
        <Alert tone="error">{errorMessage(users.error)}</Alert>
      ) : (
        <>
          <div className={styles.filter}>
            <Field
              label="Filter"
              type="search"
              hint="By name, role or server"
              autoCapitalize="none"
              spellCheck={false}
              value={query}
              onChange={(event) => {
                setQuery(event.target.value);
              }}
            />
          </div>
          <section aria-label="User list" aria-busy={users.isPending}>
            {users.isPending ? (
              <p className={page.placeholder} role="status">
                Loading users…
              </p>
            ) : shown.length === 0 ? (
              <p className={page.placeholder}>No user matches “{query.trim()}”</p>
            ) : (
              <ul className={styles.list}>
                {shown.map((user) => (
                  <UserRow
                    key={user.username}
                    user={user}
                    servers={serverNames}
                    canEdit={canEdit}
                    isMe={user.username.toLowerCase() === myName}
                    expanded={open === user.username}
                    onToggle={() => {
                      setOpen((current) => (current === user.username ? null : user.username));
                    }}
                    onDeleted={(message) => {
                      setOpen(null);
                      setDeleted(message);
                    }}
                  />
                ))}
              </ul>
            )}
          </section>
        </>
      )}
      {canEdit && <TwoFactorPolicy myTwoFactor={me.data?.twoFactor.enabled === true} />}
    </>
  );
}
