import { describe, expect, it } from 'vitest';
import {
  filterUsers,
  formatWhen,
  sameServers,
  serversSummary,
  signInSummary,
  withServer,
} from './users';

const users = [
  { username: 'Admin', role: 'admin', servers: [] },
  { username: 'player', role: 'user', servers: ['survival'] },
  { username: 'helper', role: 'support', servers: ['creative', 'survival'] },
] as const;

describe('filterUsers', () => {
  it('keeps everyone for an empty query', () => {
    expect(filterUsers(users, '  ')).toEqual(users);
  });

  it('matches names, roles and servers, in any letter case', () => {
    expect(filterUsers(users, 'ADM').map((u) => u.username)).toEqual(['Admin']);
    expect(filterUsers(users, 'support').map((u) => u.username)).toEqual(['helper']);
    expect(filterUsers(users, 'surv').map((u) => u.username)).toEqual(['player', 'helper']);
  });

  it('needs every word to match', () => {
    expect(filterUsers(users, 'surv creative').map((u) => u.username)).toEqual(['helper']);
    expect(filterUsers(users, 'player creative')).toEqual([]);
  });
});

describe('withServer', () => {
  it('adds a server once, sorted', () => {
    expect(withServer(['survival'], 'creative', true)).toEqual(['creative', 'survival']);
    expect(withServer(['survival'], 'survival', true)).toEqual(['survival']);
  });

  it('removes a server', () => {
    expect(withServer(['creative', 'survival'], 'creative', false)).toEqual(['survival']);
    expect(withServer([], 'creative', false)).toEqual([]);
  });
});

describe('sameServers', () => {
  it('ignores the order', () => {
    expect(sameServers(['a', 'b'], ['b', 'a'])).toBe(true);
    expect(sameServers(['a'], ['a', 'b'])).toBe(false);
    expect(sameServers(['a', 'c'], ['a', 'b'])).toBe(false);
    expect(sameServers([], [])).toBe(true);
  });
});

describe('serversSummary', () => {
  it('says what the user can reach', () => {
    expect(serversSummary({ role: 'admin', servers: [] })).toBe('Every server (admin)');
    expect(serversSummary({ role: 'user', servers: [] })).toBe('No servers');
    expect(serversSummary({ role: 'support', servers: ['a', 'b'] })).toBe('a, b');
  });
});

describe('formatWhen', () => {
  const utc = new Intl.DateTimeFormat('en-GB', {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'UTC',
  });

  it('formats an API date, and says Never for null', () => {
    expect(formatWhen('2025-03-04T05:06:07.000Z', utc)).toBe('4 Mar 2025, 05:06');
    expect(formatWhen(null, utc)).toBe('Never');
  });

  it('shows what it cannot read as it is', () => {
    expect(formatWhen('soon', utc)).toBe('soon');
  });
});

describe('signInSummary', () => {
  const user = (hasPassword: boolean, providers: string[], twoFactor: boolean) => ({
    signIn: { hasPassword, providers },
    twoFactor,
  });

  it('names the ways in, then two-factor', () => {
    expect(signInSummary(user(true, [], false))).toBe('Password');
    expect(signInSummary(user(true, ['Google'], true))).toBe('Password, Google + two-factor');
    expect(signInSummary(user(false, ['Google'], false))).toBe('Google');
  });

  it('says when an account has no way in yet (its link is not used)', () => {
    expect(signInSummary(user(false, [], false))).toBe('No password yet');
  });
});
