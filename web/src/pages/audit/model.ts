/**
 * The audit pages' own logic, without React: the filters and the page in the URL, the API's query
 * of them, and an entry in words.
 */
import type { AuditEntry, AuditQuery } from '../../hooks/useAudit';

export type Via = AuditEntry['via'];
export type Outcome = AuditEntry['outcome'];

export const VIAS: readonly Via[] = ['session', 'api-key', 'schedule', 'system', 'cli', 'sftp'];
export const VIA_LABELS: Readonly<Record<Via, string>> = {
  session: 'Signed in',
  'api-key': 'API key',
  schedule: 'Schedule',
  system: 'The panel',
  cli: 'Command line',
  sftp: 'SFTP',
};
export const OUTCOMES: readonly Outcome[] = ['ok', 'failed'];
export const OUTCOME_LABELS: Readonly<Record<Outcome, string>> = { ok: 'Done', failed: 'Failed' };

/** Entries on one page of a list. */
export const AUDIT_PAGE_SIZE = 50;

/**
 * The filters, as typed (`since` and `until` as a `datetime-local` input holds them, in the
 * browser's time zone); '' is no filter.
 */
export interface AuditFilters {
  readonly actor: string;
  readonly server: string;
  readonly action: string;
  readonly via: Via | '';
  readonly outcome: Outcome | '';
  readonly since: string;
  readonly until: string;
}

export interface AuditPlace {
  readonly filters: AuditFilters;
  /** From 1. */
  readonly page: number;
}

export const NO_FILTERS: AuditFilters = {
  actor: '',
  server: '',
  action: '',
  via: '',
  outcome: '',
  since: '',
  until: '',
};

const TEXT_KEYS = ['actor', 'server', 'action', 'since', 'until'] as const;

const isVia = (value: string | null): value is Via =>
  value !== null && (VIAS as readonly string[]).includes(value);
const isOutcome = (value: string | null): value is Outcome =>
  value !== null && (OUTCOMES as readonly string[]).includes(value);

/** The place from the URL's query (`?actor=alice&via=api-key&page=2`); anything else ignored. */
export function auditPlaceFrom(search: URLSearchParams): AuditPlace {
  const text = (key: (typeof TEXT_KEYS)[number]) => (search.get(key) ?? '').trim();
  const via = search.get('via');
  const outcome = search.get('outcome');
  const page = Number(search.get('page') ?? '1');
  return {
    filters: {
      actor: text('actor'),
      server: text('server'),
      action: text('action'),
      via: isVia(via) ? via : '',
      outcome: isOutcome(outcome) ? outcome : '',
      since: text('since'),
      until: text('until'),
    },
    page: Number.isSafeInteger(page) && page >= 1 ? page : 1,
  };
}

/** The URL query of a place: empty filters and page 1 are left out. */
export function auditSearchOf(place: AuditPlace): string {
  const search = new URLSearchParams();
  for (const key of [...TEXT_KEYS, 'via', 'outcome'] as const) {
    const value = place.filters[key].trim();
    if (value !== '') search.set(key, value);
  }
  if (place.page > 1) search.set('page', String(place.page));
  const query = search.toString();
  return query === '' ? '' : `?${query}`;
}

/** A `datetime-local` value (local time) as the API's ISO date-time; `undefined` if not one. */
export function isoOfLocal(value: string): string | undefined {
  if (value.trim() === '') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The API's query of a place: `offset` counts entries, the URL counts pages. */
export function auditQueryOf(place: AuditPlace, size = AUDIT_PAGE_SIZE): AuditQuery {
  const { filters } = place;
  const since = isoOfLocal(filters.since);
  const until = isoOfLocal(filters.until);
  return {
    limit: size,
    offset: (place.page - 1) * size,
    ...(filters.actor === '' ? {} : { actor: filters.actor }),
    ...(filters.server === '' ? {} : { server: filters.server }),
    ...(filters.action === '' ? {} : { action: filters.action }),
    ...(filters.via === '' ? {} : { via: filters.via }),
    ...(filters.outcome === '' ? {} : { outcome: filters.outcome }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
  };
}

/** Whether any filter is set. */
export const isFiltered = (filters: AuditFilters): boolean =>
  Object.values(filters).some((value) => value !== '');

/** Who did it, in words: "alice", "alice with the key deploy", "schedule nightly", "the panel". */
export function describeActor(entry: AuditEntry): string {
  const who = entry.actor ?? (entry.actorId === null ? null : `user #${entry.actorId}`);
  switch (entry.via) {
    case 'session':
      return who ?? 'someone signed out';
    case 'api-key':
      // A server's Activity shows key names to admins only (docs/api.md, Audit).
      return entry.viaName === null
        ? `${who ?? 'someone'} with an API key`
        : `${who ?? 'someone'} with the API key ${entry.viaName}`;
    case 'schedule':
      return `schedule ${entry.viaName ?? '(deleted)'}${who === null ? '' : ` of ${who}`}`;
    case 'system':
      return 'the panel';
    case 'cli':
      return `${who ?? 'someone'} on the command line`;
    case 'sftp':
      return entry.viaName === null
        ? `${who ?? 'someone'} over SFTP`
        : `${who ?? 'someone'} over SFTP with the key ${entry.viaName}`;
  }
}

/** The details as short `key: value` pairs, values of other kinds than text as JSON. */
export function detailPairs(details: Readonly<Record<string, unknown>>): [string, string][] {
  return Object.entries(details).map(([key, value]) => [
    key,
    typeof value === 'string' ? value : JSON.stringify(value),
  ]);
}
