import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../hooks/useAudit';
import {
  auditPlaceFrom,
  auditQueryOf,
  auditSearchOf,
  describeActor,
  detailPairs,
  isoOfLocal,
  NO_FILTERS,
} from './model';

const entry = (over: Partial<AuditEntry>): AuditEntry => ({
  id: 1,
  at: '2030-01-01T00:00:00.000Z',
  actor: 'alice',
  actorId: 2,
  via: 'session',
  viaName: null,
  address: '127.0.0.1',
  action: 'server.power',
  server: 'survival',
  serverId: 1,
  target: null,
  outcome: 'ok',
  status: 200,
  details: {},
  ...over,
});

describe('the place in the URL', () => {
  it('round-trips filters and page, leaving out the defaults', () => {
    const place = {
      filters: { ...NO_FILTERS, actor: 'alice', via: 'api-key' as const, action: 'file.' },
      page: 3,
    };
    const search = auditSearchOf(place);
    expect(search).toBe('?actor=alice&action=file.&via=api-key&page=3');
    expect(auditPlaceFrom(new URLSearchParams(search))).toEqual(place);
    expect(auditSearchOf({ filters: NO_FILTERS, page: 1 })).toBe('');
  });

  it('ignores what is not a filter value', () => {
    const place = auditPlaceFrom(new URLSearchParams('via=carrier-pigeon&outcome=maybe&page=-2'));
    expect(place).toEqual({ filters: NO_FILTERS, page: 1 });
  });
});

describe('the API query', () => {
  it('counts the offset in entries and sends only the filters set', () => {
    expect(auditQueryOf({ filters: { ...NO_FILTERS, outcome: 'failed' }, page: 2 }, 50)).toEqual({
      limit: 50,
      offset: 50,
      outcome: 'failed',
    });
  });

  it('sends times as ISO date-times of the local time typed', () => {
    const query = auditQueryOf({ filters: { ...NO_FILTERS, since: '2030-05-06T07:08' }, page: 1 });
    expect(query.since).toBe(new Date('2030-05-06T07:08').toISOString());
    expect(isoOfLocal('not a time')).toBeUndefined();
    expect(isoOfLocal('')).toBeUndefined();
  });
});

describe('an entry in words', () => {
  it('names who acted and how', () => {
    expect(describeActor(entry({}))).toBe('alice');
    expect(describeActor(entry({ via: 'api-key', viaName: 'deploy' }))).toBe(
      'alice with the API key deploy',
    );
    // A server's Activity hides the key's name from all but admins.
    expect(describeActor(entry({ via: 'api-key', viaName: null }))).toBe('alice with an API key');
    expect(describeActor(entry({ via: 'schedule', viaName: 'nightly' }))).toBe(
      'schedule nightly of alice',
    );
    expect(describeActor(entry({ via: 'system', actor: null, actorId: null }))).toBe('the panel');
    expect(describeActor(entry({ actor: null, actorId: 7 }))).toBe('user #7');
  });

  it('shows details as text', () => {
    expect(detailPairs({ action: 'start', count: 2, list: ['a'] })).toEqual([
      ['action', 'start'],
      ['count', '2'],
      ['list', '["a"]'],
    ]);
  });
});
