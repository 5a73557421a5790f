import type { ReactNode } from 'react';
import { Alert } from '../../components/Alert';
import page from '../Page.module.css';
import { useServerOutlet } from './outlet';
import type { Permission } from './permissions';

/**
 * A tab shown only to whoever holds `permission` (or any one of a list) on the server; anyone
 * else (a pasted link, a bookmark) reads why instead of a page whose every request would be
 * refused.
 */
export function Allowed({
  permission,
  title,
  what,
  children,
}: {
  permission: Permission | readonly Permission[];
  /** The tab's heading, e.g. "Files". */
  title: string;
  /** What the permission lets one do, after "You don't have permission to", e.g. "see its files". */
  what: string;
  children: ReactNode;
}) {
  const { permissions } = useServerOutlet();
  if (permissions === null) {
    return (
      <p className={page.muted} role="status">
        Loading…
      </p>
    );
  }
  const any: readonly Permission[] = typeof permission === 'string' ? [permission] : permission;
  if (any.some((each) => permissions.has(each))) return children;
  return (
    <section className={page.card} aria-labelledby="denied-title">
      <h2 id="denied-title">{title}</h2>
      <Alert tone="info">
        You don&apos;t have permission to {what} on this server. Ask its owner or an admin for{' '}
        {any.length === 1 ? 'the ' : 'one of the '}
        {any.map((each, index) => (
          <span key={each}>
            {index > 0 && ', '}
            <code>{each}</code>
          </span>
        ))}{' '}
        {any.length === 1 ? 'permission' : 'permissions'}.
      </Alert>
    </section>
  );
}
