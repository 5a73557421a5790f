import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useMe } from '../../hooks/useMe';
import { useServers } from '../../hooks/useServers';
import { useTitle } from '../../hooks/useTitle';
import { useSession } from '../../hooks/useSession';
import page from '../Page.module.css';
import { CreateServerForm } from './CreateServerForm';
import { ServerRow } from './ServerRow';
import styles from './ServersPage.module.css';

/**
 * Every server the caller can reach, its status kept live (the list is asked for again every few
 * seconds); admins also create and delete servers here.
 */
export function ServersPage() {
  useTitle('Servers');
  const servers = useServers();
  const me = useMe();
  const { session } = useSession();
  const isAdmin = (me.data?.role ?? session?.role) === 'admin';

  return (
    <>
      <div className={page.pageHeader}>
        <h1>Servers</h1>
        {servers.data !== undefined && (
          <p className={page.muted}>
            {servers.data.length} {servers.data.length === 1 ? 'server' : 'servers'}
          </p>
        )}
      </div>
      <section aria-label="Server list" aria-busy={servers.isPending}>
        {servers.isPending ? (
          <p className={page.placeholder} role="status">
            Loading servers…
          </p>
        ) : servers.isError ? (
          <Alert tone="error">{errorMessage(servers.error)}</Alert>
        ) : servers.data.length === 0 ? (
          <div className={page.placeholder}>
            <p className={page.emptyTitle}>No servers yet</p>
            <p className={page.muted}>
              {isAdmin
                ? 'Create the first one with the form below.'
                : 'An administrator can give you access to a server.'}
            </p>
          </div>
        ) : (
          <ul className={styles.list}>
            {servers.data.map((server) => (
              <ServerRow key={server.name} server={server} canDelete={isAdmin} />
            ))}
          </ul>
        )}
      </section>
      {isAdmin && <CreateServerForm />}
    </>
  );
}
