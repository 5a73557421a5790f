import { useState } from 'react';
import { Pager } from '../../../components/Pager';
import { useServerAudit } from '../../../hooks/useAudit';
import page from '../../Page.module.css';
import { AuditList } from '../../audit/AuditList';

/** Entries of a server's Activity on one page. */
const SIZE = 20;

/**
 * What was done on this server (power, files, backups, settings, people…), by whom and how,
 * newest first: shown on the Settings tab, to holders of its `settings` permission and admins.
 */
export function Activity({ server }: { server: string }) {
  const [at, setAt] = useState(1);
  const audit = useServerAudit(server, { limit: SIZE, offset: (at - 1) * SIZE });
  return (
    <section className={page.card} aria-labelledby="activity-title" aria-busy={audit.isFetching}>
      <h2 id="activity-title">Activity</h2>
      <p className={page.muted}>
        Who did what on this server, newest first
        {audit.data !== undefined &&
          `: ${audit.data.total} ${audit.data.total === 1 ? 'entry' : 'entries'}`}
        . Addresses and API key names are shown to admins only.
      </p>
      <AuditList
        label="Server activity"
        entries={audit.data?.entries}
        isPending={audit.isPending}
        error={audit.error}
        showServer={false}
        empty={{
          title: 'Nothing recorded yet',
          text: 'Power actions, file changes, backups and settings changes appear here.',
        }}
      />
      {audit.data !== undefined && (
        <Pager
          label="Activity pages"
          page={at}
          total={audit.data.total}
          size={SIZE}
          onPage={setAt}
        />
      )}
    </section>
  );
}
