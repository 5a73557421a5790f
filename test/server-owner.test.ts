/**
 * A server's owner and invites that tell nothing (issue 25, point 9; docs/api.md, "A server's
 * owner"): the owner an admin names holds every permission, no sub-user removes or narrows
 * them, only an admin changes them; an invite to an unknown name or to an admin answers exactly
 * as one to an ordinary account, and the People list shows only real grants.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { SERVER_PERMISSIONS } from '../src/domain/policy.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, createServer, json, register, type Session } from './helpers/factories.js';

interface Person {
  username: string;
  role: string;
  permissions: string[];
  owner: boolean;
}

const EVERY = [...SERVER_PERMISSIONS];

describe("a server's owner", () => {
  let panel: TestPanel;
  let admin: Session;
  let alice: Session;
  let bob: Session;
  let carol: Session;

  const call = (
    session: Session,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ) =>
    panel.app.inject({
      method,
      url,
      headers: session.headers,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const people = async (by: Session, server: string) => {
    const response = await call(by, 'GET', `/api/servers/${server}/users`);
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: Person[] }>(response).data;
  };
  const grant = (by: Session, username: string, permissions: string[], server: string) =>
    call(by, 'PUT', `/api/servers/${server}/users/${username}`, { permissions });
  const permissionsOf = async (session: Session, server: string) =>
    json<{ data: { permissions: string[] } }>(
      await call(session, 'GET', `/api/servers/${server}/config`),
    ).data.permissions;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    alice = await register(panel, 'alice');
    bob = await register(panel, 'bob');
    carol = await register(panel, 'carol');
  });

  it('is named at creation, holds every permission and is marked in People', async () => {
    await createServer(panel, admin, 'owned', { owner: 'alice' });
    assert.deepEqual(await permissionsOf(alice, 'owned'), EVERY);
    assert.deepEqual(await people(alice, 'owned'), [
      { username: 'alice', role: 'user', permissions: EVERY, owner: true },
    ]);
    const listed = json<{ data: { name: string; permissions: string[] }[] }>(
      await call(alice, 'GET', '/api/servers'),
    ).data;
    assert.deepEqual(
      listed.map((server) => [server.name, server.permissions]),
      [['owned', EVERY]],
    );

    // Whatever their stored grant says: the owner's rights come from being the owner.
    await panel.db.kysely
      .updateTable('user_servers')
      .set({ permissions: '[]' })
      .where('server_name', '=', 'owned')
      .execute();
    assert.deepEqual(await permissionsOf(alice, 'owned'), EVERY);
    const written = await call(alice, 'PUT', '/api/servers/owned/files/content?path=a.txt', {
      content: 'mine\n',
    });
    assert.equal(written.statusCode, 200, written.body);
  });

  it('cannot be removed or narrowed by a sub-user, even one holding every permission', async () => {
    assert.equal((await grant(alice, 'bob', EVERY, 'owned')).statusCode, 200);
    for (const narrowed of [[], ['users'], EVERY.filter((p) => p !== 'power')]) {
      const refused = await grant(bob, 'alice', narrowed, 'owned');
      assertError(refused, 403, 'OWNER_PROTECTED');
      assert.match(json<{ message: string }>(refused).message, /owns this server/);
    }
    assertError(await grant(bob, 'alice', EVERY, 'owned'), 403, 'OWNER_PROTECTED');
    assertError(
      await call(bob, 'DELETE', '/api/servers/owned/users/alice'),
      403,
      'OWNER_PROTECTED',
    );
    assertError(
      await call(bob, 'DELETE', '/api/servers/owned/users/ALICE'),
      403,
      'OWNER_PROTECTED',
    );
    // …nor can they make themselves the owner.
    assertError(await call(bob, 'PUT', '/api/servers/owned/owner', { owner: 'bob' }), 403);
    assert.deepEqual(await permissionsOf(alice, 'owned'), EVERY);
    assert.equal((await people(admin, 'owned')).find((p) => p.owner)?.username, 'alice');

    // The owner removes the sub-user who tried.
    const removed = await call(alice, 'DELETE', '/api/servers/owned/users/bob');
    assert.equal(removed.statusCode, 200, removed.body);
  });

  it('is changed only by an admin, who cannot narrow them through People', async () => {
    assertError(await grant(admin, 'alice', ['power'], 'owned'), 409, 'CONFLICT');
    const changed = await call(admin, 'PUT', '/api/servers/owned/owner', { owner: 'carol' });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(json<{ data: unknown }>(changed).data, { owner: 'carol' });
    // The new owner holds everything; the previous one lost the server.
    assert.deepEqual(await permissionsOf(carol, 'owned'), EVERY);
    assertError(await call(alice, 'GET', '/api/servers/owned/config'), 403, 'FORBIDDEN');
    assert.deepEqual(await people(admin, 'owned'), [
      { username: 'carol', role: 'user', permissions: EVERY, owner: true },
    ]);

    assertError(await call(admin, 'PUT', '/api/servers/owned/owner', { owner: 'nobody' }), 400);
    assertError(await call(admin, 'PUT', '/api/servers/owned/owner', { owner: 'admin' }), 400);
    assertError(await call(admin, 'PUT', '/api/servers/missing/owner', { owner: 'bob' }), 404);
    assertError(await call(admin, 'PUT', '/api/servers/owned/owner', { owner: 7 }), 400);
    assert.equal((await people(admin, 'owned')).find((p) => p.owner)?.username, 'carol');

    // An admin removing the owner leaves the server without one.
    const removed = await call(admin, 'DELETE', '/api/servers/owned/users/carol');
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual(await people(admin, 'owned'), []);
    assertError(await call(carol, 'GET', '/api/servers/owned/config'), 403, 'FORBIDDEN');
    const none = await call(admin, 'PUT', '/api/servers/owned/owner', { owner: null });
    assert.deepEqual(json<{ data: unknown }>(none).data, { owner: null });
  });

  it("refuses an unknown owner at creation and leaves nothing behind; a deleted owner's server stays", async () => {
    const refused = await call(admin, 'POST', '/api/servers/create', {
      name: 'ghost',
      startCommand: 'true',
      owner: 'nobody',
    });
    assertError(refused, 400, 'VALIDATION_FAILED');
    assertError(await call(admin, 'GET', '/api/servers/ghost/config'), 404);

    await createServer(panel, admin, 'left', { owner: 'bob' });
    const deleted = await call(admin, 'DELETE', '/api/users/bob');
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(await people(admin, 'left'), []);
    const row = await panel.db.kysely
      .selectFrom('servers')
      .select('owner_id')
      .where('name', '=', 'left')
      .executeTakeFirstOrThrow();
    assert.equal(row.owner_id, null);
  });

  it('answers an invite to an unknown name or an admin exactly as one to a known account', async () => {
    await createServer(panel, admin, 'shared', { owner: 'carol' });
    const asked = ['files.read'];
    const answers = await Promise.all(
      ['alice', 'nobody-here', 'admin'].map((name) => grant(carol, name, asked, 'shared')),
    );
    const shapes = answers.map((answer) => {
      const body = json<{ message: string; data: Record<string, unknown> }>(answer);
      return {
        status: answer.statusCode,
        message: body.message,
        keys: Object.keys(body).sort(),
        dataKeys: Object.keys(body.data).sort(),
        permissions: body.data.permissions,
        owner: body.data.owner,
      };
    });
    assert.equal(shapes[0]?.status, 200, answers[0]?.body);
    assert.deepEqual(shapes[1], shapes[0]);
    assert.deepEqual(shapes[2], shapes[0]);
    for (const [index, name] of ['alice', 'nobody-here', 'admin'].entries()) {
      assert.equal(json<{ data: { username: string } }>(answers[index]!).data.username, name);
      assert.doesNotMatch(answers[index]!.body, /role|admin hold|not found/i);
    }
    // Only the real grant is on the server.
    assert.deepEqual(
      (await people(carol, 'shared')).map((person) => person.username),
      ['alice', 'carol'],
    );
    // Removing a name that is not on the server: one answer, whoever it is.
    const gone = await Promise.all(
      ['bob', 'nobody-here', 'admin'].map((name) =>
        call(carol, 'DELETE', `/api/servers/shared/users/${name}`),
      ),
    );
    for (const answer of gone) assertError(answer, 404, 'NOT_FOUND');
    assert.deepEqual(
      gone.map((answer) => json<{ message: string }>(answer).message.replace(/^\S+/, '…')),
      Array(3).fill('… does not have this server'),
    );
  });
});
