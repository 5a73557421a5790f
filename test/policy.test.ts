/**
 * The access policy as a table: every role against every action, with and without the server
 * in the user's list. The HTTP surface is held to it by access-matrix.test.ts; this pins the rule
 * itself, so that a change to it shows here as a changed row.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { can, type Action } from '../src/domain/policy.js';
import { ROLES, type Role } from '../src/domain/user.js';

type Row = Readonly<Record<Role, boolean>>;

/** For each action: may each role do it, on a server that is not in their list? */
const ON_ANOTHER: Readonly<Record<Action, Row>> = {
  'account.use': { admin: true, support: true, user: true, banned: false },
  'users.list': { admin: true, support: true, user: false, banned: false },
  'users.manage': { admin: true, support: false, user: false, banned: false },
  'users.read-stats': { admin: true, support: true, user: false, banned: false },
  'servers.list-all': { admin: true, support: false, user: false, banned: false },
  'servers.create': { admin: true, support: false, user: false, banned: false },
  'templates.manage': { admin: true, support: false, user: false, banned: false },
  'servers.delete': { admin: true, support: false, user: false, banned: false },
  'server.use': { admin: true, support: false, user: false, banned: false },
  'server.configure-host': { admin: true, support: false, user: false, banned: false },
  'tickets.manage': { admin: true, support: true, user: false, banned: false },
};

/** The same, on a server in their list: only using it changes, and never for the banned. */
const ON_THEIR_OWN: Readonly<Record<Action, Row>> = {
  ...ON_ANOTHER,
  'server.use': { admin: true, support: true, user: true, banned: false },
};

describe('the access policy', () => {
  for (const [action, row] of Object.entries(ON_ANOTHER) as [Action, Row][]) {
    it(`${action}: ${ROLES.filter((role) => row[role]).join(', ') || 'nobody'}`, () => {
      for (const role of ROLES) {
        assert.equal(can({ role }, action, { assigned: false }), row[role], `${role} elsewhere`);
        assert.equal(
          can({ role }, action, { assigned: true }),
          ON_THEIR_OWN[action][role],
          `${role} on their own server`,
        );
      }
    });
  }

  it('without a server, server.use is an admin’s only', () => {
    assert.deepEqual(
      ROLES.filter((role) => can({ role }, 'server.use')),
      ['admin'],
    );
  });
});
