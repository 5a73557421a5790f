/**
 * The people the tests of one server keep meeting, made through the API as a person would: the
 * panel's admin (its first account), a member the admin has given the server to with
 * `PUT /api/users/:name/servers`, and an outsider with no access to it. The names are the test's
 * own (its assertions name them); the order is always admin, member, outsider, then the server.
 * A test that needs a server owner names it at creation (`createServer(…, { owner })`).
 */
import assert from 'node:assert/strict';
import type { TestPanel } from './app.js';
import { createServer, register, type Session } from './factories.js';

export interface ServerRoles {
  readonly admin: Session;
  readonly member: Session;
  readonly outsider: Session;
}

export interface ServerRoleNames {
  /** The server made and given to the member. */
  readonly server: string;
  readonly admin?: string;
  readonly member?: string;
  readonly outsider?: string;
}

/** Registers the three people and makes `server`, the member's; asserts each step worked. */
export async function serverRoles(panel: TestPanel, names: ServerRoleNames): Promise<ServerRoles> {
  const admin = await register(panel, names.admin ?? 'admin');
  const member = await register(panel, names.member ?? 'member');
  const outsider = await register(panel, names.outsider ?? 'outsider');
  await createServer(panel, admin, names.server);
  const granted = await panel.app.inject({
    method: 'PUT',
    url: `/api/users/${member.username}/servers`,
    headers: admin.headers,
    payload: { servers: [names.server] },
  });
  assert.equal(granted.statusCode, 200, granted.body);
  return { admin, member, outsider };
}
