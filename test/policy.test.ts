/**
 * The access policy as a table: every role against every action, with and without the server
 * in the user's list, and on it with each permission alone. The HTTP surface is held to it by
 * access-matrix.test.ts; this pins the rule itself, so that a change to it shows here as a
 * changed row.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  can,
  SERVER_PERMISSIONS,
  type Action,
  type ServerAction,
  type ServerPermission,
} from '../src/domain/policy.js';
import { ROLES, type Role } from '../src/domain/user.js';

type Row = Readonly<Record<Role, boolean>>;

const ADMIN_ONLY: Row = { admin: true, support: false, user: false, banned: false };
const SERVER_ACTIONS: readonly ServerAction[] = [
  'server.view',
  'server.backups.view',
  ...SERVER_PERMISSIONS.map((permission) => `server.${permission}` as const),
];

/** For each action: may each role do it, on a server that is not in their list? */
const ON_ANOTHER: Readonly<Record<Action, Row>> = {
  'account.use': { admin: true, support: true, user: true, banned: false },
  'users.list': { admin: true, support: true, user: false, banned: false },
  'users.manage': ADMIN_ONLY,
  'users.read-stats': { admin: true, support: true, user: false, banned: false },
  'servers.list-all': ADMIN_ONLY,
  'servers.create': ADMIN_ONLY,
  'templates.manage': ADMIN_ONLY,
  'audit.read': ADMIN_ONLY,
  'webhooks.manage': ADMIN_ONLY,
  'nodes.manage': ADMIN_ONLY,
  'panel.settings': ADMIN_ONLY,
  'servers.delete': ADMIN_ONLY,
  'server.configure-host': ADMIN_ONLY,
  'tickets.manage': { admin: true, support: true, user: false, banned: false },
  ...(Object.fromEntries(SERVER_ACTIONS.map((action) => [action, ADMIN_ONLY])) as Record<
    ServerAction,
    Row
  >),
};

const HOLDERS: Row = { admin: true, support: true, user: true, banned: false };

describe('the access policy', () => {
  for (const [action, row] of Object.entries(ON_ANOTHER) as [Action, Row][]) {
    it(`${action}: ${ROLES.filter((role) => row[role]).join(', ') || 'nobody'}`, () => {
      for (const role of ROLES) {
        assert.equal(can({ role }, action, { permissions: null }), row[role], `${role} elsewhere`);
      }
    });
  }

  it('on a server in their list, every server action is theirs with every permission', () => {
    const all = { permissions: new Set(SERVER_PERMISSIONS) };
    for (const action of SERVER_ACTIONS) {
      for (const role of ROLES) {
        assert.equal(can({ role }, action, all), HOLDERS[role], `${role}: ${action}`);
      }
    }
    // Actions that are not about one server do not change with a server's permissions.
    for (const role of ROLES) {
      assert.equal(can({ role }, 'server.configure-host', all), role === 'admin');
    }
  });

  it('with one permission, only seeing the server and that one action', () => {
    for (const held of SERVER_PERMISSIONS) {
      const grant = { permissions: new Set<ServerPermission>([held]) };
      for (const action of SERVER_ACTIONS) {
        const expected =
          action === 'server.view' ||
          action === `server.${held}` ||
          // Any backups permission shows the backups.
          (action === 'server.backups.view' && held.startsWith('backups.'));
        for (const role of ROLES) {
          assert.equal(
            can({ role }, action, grant),
            role === 'admin' || (role !== 'banned' && expected),
            `${role} holding ${held}: ${action}`,
          );
        }
      }
    }
    // No permission at all: the server is seen, nothing more.
    const none = { permissions: new Set<ServerPermission>() };
    assert.deepEqual(
      SERVER_ACTIONS.filter((action) => can({ role: 'user' }, action, none)),
      ['server.view'],
    );
  });

  it('backups are four permissions, as Pterodactyl splits them; none is another', () => {
    assert.deepEqual(
      SERVER_PERMISSIONS.filter((p) => p.startsWith('backups')),
      ['backups.create', 'backups.download', 'backups.restore', 'backups.delete'],
    );
    assert.ok(!(SERVER_PERMISSIONS as readonly string[]).includes('backups'));
    const create = { permissions: new Set<ServerPermission>(['backups.create']) };
    assert.deepEqual(
      SERVER_ACTIONS.filter((action) => can({ role: 'user' }, action, create)),
      ['server.view', 'server.backups.view', 'server.backups.create'],
    );
    // A key carrying one backups permission sees the backups; one carrying none does not.
    const key = (permissions: ServerPermission[]) => ({
      id: 1,
      name: 'k',
      servers: null,
      permissions: new Set(permissions),
      expiresAt: null,
    });
    const all = { permissions: null, server: 'alpha' };
    assert.equal(
      can({ role: 'admin', key: key(['backups.delete']) }, 'server.backups.view', all),
      true,
    );
    assert.equal(
      can({ role: 'admin', key: key(['files.read']) }, 'server.backups.view', all),
      false,
    );
  });

  it('without a server, the server actions are an admin’s only', () => {
    for (const action of SERVER_ACTIONS) {
      assert.deepEqual(
        ROLES.filter((role) => can({ role }, action)),
        ['admin'],
      );
    }
  });

  it('a request made with an API key does at most what its key and its owner both allow', () => {
    const all = { permissions: null, server: 'alpha' };
    const key = (servers: string[] | null, permissions: ServerPermission[] | null) => ({
      id: 1,
      name: 'k',
      expiresAt: null,
      servers: servers === null ? null : new Set(servers),
      permissions: permissions === null ? null : new Set(permissions),
    });
    const ACTIONS = Object.keys(ON_ANOTHER) as Action[];
    // An unlimited key is its owner.
    for (const role of ROLES) {
      for (const action of ACTIONS) {
        assert.equal(
          can({ role, key: key(null, null) }, action, all),
          can({ role }, action, all),
          `${role}: ${action}`,
        );
      }
    }
    // A permission list: outside servers, only the account; on servers, only the list.
    const power = { role: 'admin' as const, key: key(null, ['power']) };
    assert.deepEqual(
      ACTIONS.filter((action) => can(power, action, all)),
      ['account.use', 'server.view', 'server.power'],
    );
    // A server list: other servers are out of reach whatever the owner holds there.
    const scoped = { role: 'admin' as const, key: key(['alpha'], null) };
    assert.equal(can(scoped, 'server.files.write', all), true);
    assert.equal(can(scoped, 'server.view', { permissions: null, server: 'beta' }), false);
    assert.equal(can(scoped, 'server.view', { permissions: null }), false);
    // ...and outside servers, an admin's key with a server list (even an empty one) only reads
    // the account; on its servers, it configures the host, on others and unnamed ones not.
    for (const servers of [['alpha'], []]) {
      const narrowed = { role: 'admin' as const, key: key(servers, null) };
      assert.deepEqual(
        ACTIONS.filter((action) => !action.startsWith('server.') && can(narrowed, action, all)),
        ['account.use'],
        `servers ${JSON.stringify(servers)}`,
      );
      const beta = { permissions: null, server: 'beta' };
      assert.equal(can(narrowed, 'server.configure-host', beta), false);
      assert.equal(can(narrowed, 'server.configure-host'), false);
      assert.equal(can(narrowed, 'server.configure-host', all), servers.length === 1);
    }
    assert.equal(can(power, 'server.configure-host', all), false);
    // Never more than the owner holds.
    const user = { role: 'user' as const, key: key(null, ['power', 'files.write']) };
    const grant = { permissions: new Set<ServerPermission>(['power']), server: 'alpha' };
    assert.equal(can(user, 'server.power', grant), true);
    assert.equal(can(user, 'server.files.write', grant), false);
    assert.equal(can({ role: 'banned', key: key(null, null) }, 'account.use'), false);
  });
});
