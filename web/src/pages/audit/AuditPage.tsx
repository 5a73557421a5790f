import { useState, type SyntheticEvent } from 'react';
import { useSearchParams } from 'react-router';
import { Alert } from '../../components/Alert';
import { Field, SelectField } from '../../components/Field';
import { Pager } from '../../components/Pager';
import { useAuditLog } from '../../hooks/useAudit';
import { useMe } from '../../hooks/useMe';
import { useServers } from '../../hooks/useServers';
import { useSession } from '../../hooks/useSession';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { AuditList } from './AuditList';
import {
  AUDIT_PAGE_SIZE,
  auditPlaceFrom,
  auditQueryOf,
  auditSearchOf,
  isFiltered,
  NO_FILTERS,
  OUTCOME_LABELS,
  OUTCOMES,
  VIA_LABELS,
  VIAS,
  type AuditFilters,
} from './model';
import styles from './Audit.module.css';

/**
 * The panel's audit log (admins): who did what, how, on which server and with what outcome,
 * newest first, a page at a time. The filters and the page live in the URL, so a reload or a
 * shared link lands on the same entries.
 */
export function AuditPage() {
  useTitle('Audit log');
  const [search, setSearch] = useSearchParams();
  const place = auditPlaceFrom(search);
  const me = useMe();
  const { session } = useSession();
  const isAdmin = (me.data?.role ?? session?.role) === 'admin';
  const log = useAuditLog(auditQueryOf(place));
  const total = log.data?.total;
  const filtered = isFiltered(place.filters);

  return (
    <>
      <div className={page.pageHeader}>
        <h1>Audit log</h1>
        {total !== undefined && (
          <p className={page.muted} role="status">
            {total} {total === 1 ? 'entry' : 'entries'}
            {filtered ? ' matching the filters' : ''}
          </p>
        )}
      </div>
      {!isAdmin && <Alert tone="info">Only an administrator can read the audit log.</Alert>}
      <Filters
        initial={place.filters}
        onApply={(filters) => {
          setSearch(auditSearchOf({ filters, page: 1 }));
        }}
      />
      <section aria-label="Audit entries" aria-busy={log.isFetching}>
        <AuditList
          label="Audit log"
          entries={log.data?.entries}
          isPending={log.isPending}
          error={log.error}
          empty={
            filtered
              ? { title: 'No entries match', text: 'Loosen or clear the filters.' }
              : {
                  title: 'Nothing recorded yet',
                  text: 'Sign-ins, power actions, file changes and other actions appear here.',
                }
          }
        />
      </section>
      {total !== undefined && (
        <Pager
          label="Audit log pages"
          page={place.page}
          total={total}
          size={AUDIT_PAGE_SIZE}
          onPage={(next) => {
            setSearch(auditSearchOf({ ...place, page: next }));
          }}
        />
      )}
    </>
  );
}

function Filters({
  initial,
  onApply,
}: {
  initial: AuditFilters;
  onApply: (filters: AuditFilters) => void;
}) {
  const [filters, setFilters] = useState(initial);
  // Filters from another URL (back, a link) start the form over; applying keeps it, and its focus.
  const shown = auditSearchOf({ filters: initial, page: 1 });
  const [seen, setSeen] = useState(shown);
  if (seen !== shown) {
    setSeen(shown);
    setFilters(initial);
  }
  const servers = useServers();
  const set =
    <K extends keyof AuditFilters>(key: K) =>
    (value: AuditFilters[K]) => {
      setFilters((current) => ({ ...current, [key]: value }));
    };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    onApply(filters);
  };
  const serverOptions = [
    { value: '', label: 'All servers' },
    ...(servers.data ?? []).map((server) => ({ value: server.name, label: server.name })),
    // A server since deleted is still a filter of its entries.
    ...(filters.server !== '' && servers.data?.every((server) => server.name !== filters.server)
      ? [{ value: filters.server, label: filters.server }]
      : []),
  ];

  return (
    <form className={page.card} onSubmit={submit} aria-label="Filters">
      <div className={styles.filters}>
        <Field
          label="Actor"
          name="actor"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          hint="A username"
          value={filters.actor}
          onChange={(event) => {
            set('actor')(event.target.value);
          }}
        />
        <SelectField
          label="Server"
          name="server"
          options={serverOptions}
          value={filters.server}
          onChange={(event) => {
            set('server')(event.target.value);
          }}
        />
        <Field
          label="Action"
          name="action"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          placeholder="e.g. file."
          hint="Exact, or a prefix ending in a dot"
          value={filters.action}
          onChange={(event) => {
            set('action')(event.target.value);
          }}
        />
        <SelectField
          label="Via"
          name="via"
          options={[
            { value: '', label: 'Any way' },
            ...VIAS.map((via) => ({ value: via, label: VIA_LABELS[via] })),
          ]}
          value={filters.via}
          onChange={(event) => {
            const via = VIAS.find((value) => value === event.target.value);
            set('via')(via ?? '');
          }}
        />
        <SelectField
          label="Outcome"
          name="outcome"
          options={[
            { value: '', label: 'Any outcome' },
            ...OUTCOMES.map((outcome) => ({ value: outcome, label: OUTCOME_LABELS[outcome] })),
          ]}
          value={filters.outcome}
          onChange={(event) => {
            const outcome = OUTCOMES.find((value) => value === event.target.value);
            set('outcome')(outcome ?? '');
          }}
        />
        <div className={styles.wide}>
          <Field
            label="Since"
            name="since"
            type="datetime-local"
            value={filters.since}
            onChange={(event) => {
              set('since')(event.target.value);
            }}
          />
        </div>
        <div className={styles.wide}>
          <Field
            label="Until"
            name="until"
            type="datetime-local"
            value={filters.until}
            onChange={(event) => {
              set('until')(event.target.value);
            }}
          />
        </div>
        <div className={styles.filterButtons}>
          <button type="submit" className="button primary">
            Apply filters
          </button>
          <button
            type="button"
            className="button secondary"
            disabled={!isFiltered(filters) && !isFiltered(initial)}
            onClick={() => {
              setFilters(NO_FILTERS);
              onApply(NO_FILTERS);
            }}
          >
            Clear filters
          </button>
        </div>
      </div>
    </form>
  );
}
