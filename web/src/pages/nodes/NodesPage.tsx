import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import cards from '../../components/Cards.module.css';
import { useMe } from '../../hooks/useMe';
import { useNodes } from '../../hooks/useNodes';
import { useSession } from '../../hooks/useSession';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { AddNodeForm } from './AddNodeForm';
import { NodeCard } from './NodeCard';
import styles from './Nodes.module.css';

/**
 * The machines game servers run on (admins; docs/nodes.md): `local`, the panel's own, first,
 * then every node added, each with its health as the panel last heard it (asked for again every
 * few seconds), capacity, servers and maintenance; and the form that adds one.
 */
export function NodesPage() {
  useTitle('Nodes');
  const nodes = useNodes();
  const me = useMe();
  const { session } = useSession();
  const isAdmin = (me.data?.role ?? session?.role) === 'admin';

  return (
    <>
      <div className={page.pageHeader}>
        <h1>Nodes</h1>
        {nodes.data !== undefined && (
          <p className={page.muted}>
            {nodes.data.length} {nodes.data.length === 1 ? 'node' : 'nodes'}
          </p>
        )}
      </div>
      <p className={`${page.muted} ${styles.intro}`}>
        The machines game servers run on. <code>local</code> is the panel&apos;s own machine; every
        other node is a machine whose Docker engine the panel reaches with mutual TLS or SSH. The
        panel asks each one how it is every 15 seconds.
      </p>
      <section aria-label="Node list" aria-busy={nodes.isPending}>
        {nodes.isPending ? (
          <p className={page.placeholder} role="status">
            Loading nodes…
          </p>
        ) : nodes.isError ? (
          <Alert tone="error">{errorMessage(nodes.error)}</Alert>
        ) : (
          <ul className={cards.list}>
            {nodes.data.map((node) => (
              <NodeCard key={node.name} node={node} />
            ))}
          </ul>
        )}
      </section>
      {nodes.data !== undefined && nodes.data.length <= 1 && (
        <div className={page.placeholder}>
          <p className={page.emptyTitle}>No other node yet</p>
          <p>Add a machine with a Docker engine below to run servers on it too.</p>
        </div>
      )}
      {isAdmin && <AddNodeForm />}
    </>
  );
}
