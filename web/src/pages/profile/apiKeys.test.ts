import { describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../server/permissions';
import { describePermissions, describeServers, expiryOf, newKeyBody } from './apiKeys';

describe('expiryOf', () => {
  it('is the last moment of the day in the local time zone', () => {
    const iso = expiryOf('2030-12-31');
    expect(iso).not.toBeNull();
    const end = new Date(iso ?? '');
    expect([end.getFullYear(), end.getMonth(), end.getDate()]).toEqual([2030, 11, 31]);
    expect([end.getHours(), end.getMinutes(), end.getSeconds()]).toEqual([23, 59, 59]);
  });

  it('is null without a day or for something else', () => {
    expect(expiryOf('')).toBeNull();
    expect(expiryOf('tomorrow')).toBeNull();
    expect(expiryOf('2030-13-45')).toBeNull();
  });
});

describe('newKeyBody', () => {
  it('leaves out what is "all", so the key follows the account', () => {
    expect(
      newKeyBody({ name: '  deploy ', expires: '', servers: null, permissions: null }, PERMISSIONS),
    ).toEqual({ name: 'deploy' });
  });

  it('sends the expiry, the servers sorted and the permissions in the API order', () => {
    const body = newKeyBody(
      {
        name: 'ci',
        expires: '2030-01-02',
        servers: new Set(['b', 'a']),
        permissions: new Set(['power', 'console.read'] as const),
      },
      PERMISSIONS,
    );
    expect(body.servers).toEqual(['a', 'b']);
    expect(body.permissions).toEqual(['console.read', 'power']);
    expect(body.expiresAt).toBe(expiryOf('2030-01-02'));
  });

  it('sends an empty scope as chosen, which the API then judges', () => {
    expect(
      newKeyBody({ name: 'x', expires: '', servers: new Set(), permissions: null }, PERMISSIONS)
        .servers,
    ).toEqual([]);
  });
});

describe('describing a scope', () => {
  it('says "all" for null and names the rest', () => {
    expect(describeServers(null)).toBe('All your servers');
    expect(describeServers(['a', 'b'])).toBe('a, b');
    expect(describePermissions(null)).toBe('All your permissions');
    expect(describePermissions(['power'])).toBe('power');
  });
});
