/**
 * Per-server permissions through the HTTP surface: what one permission lets a user do and what
 * it does not, the people of a server managed by an admin and by a holder of `users` (never
 * beyond their own permissions), the admin's server lists keeping permissions, and the console
 * socket following a permission taken away. Every (role, permission, route) triple is in
 * access-matrix.test.ts; this checks the rules around it.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  json,
  register,
  serverAction,
  setRole,
  type Session,
} from './helpers/factories.js';

interface Person {
  username: string;
  role: string;
  permissions: string[];
}

describe('per-server permissions', () => {
  let panel: TestPanel;
  let admin: Session;
  let reader: Session;
  let owner: Session;
  let friend: Session;

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

  const grant = (by: Session, username: string, permissions: string[], server = 'world') =>
    call(by, 'PUT', `/api/servers/${server}/users/${username}`, { permissions });

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    reader = await register(panel, 'reader');
    owner = await register(panel, 'owner');
    friend = await register(panel, 'friend');
    await createServer(panel, admin, 'world');
    await createServer(panel, admin, 'other');
    const written = await call(admin, 'PUT', '/api/servers/world/files/content?path=a.txt', {
      content: 'hello\n',
    });
    assert.equal(written.statusCode, 200, written.body);
  });

  it('lets a holder of files.read see the server and read files, and nothing more', async () => {
    const granted = await grant(admin, 'reader', ['files.read']);
    assert.equal(granted.statusCode, 200, granted.body);
    assert.deepEqual(json<{ data: Person }>(granted).data, {
      username: 'reader',
      permissions: ['files.read'],
      owner: false,
    });

    const list = json<{ data: { name: string; permissions: string[] }[] }>(
      await call(reader, 'GET', '/api/servers'),
    ).data;
    assert.deepEqual(list, [expectServer('world', ['files.read'], list)]);
    const config = await call(reader, 'GET', '/api/servers/world/config');
    assert.equal(config.statusCode, 200, config.body);
    assert.deepEqual(json<{ data: { permissions: string[] } }>(config).data.permissions, [
      'files.read',
    ]);
    assert.equal((await call(reader, 'GET', '/api/servers/world/stats')).statusCode, 200);
    const read = await call(reader, 'GET', '/api/servers/world/files/content?path=a.txt');
    assert.equal(read.statusCode, 200, read.body);

    const write = await call(reader, 'PUT', '/api/servers/world/files/content?path=a.txt', {
      content: 'changed\n',
    });
    assertError(write, 403, 'FORBIDDEN');
    assert.match(json<{ message: string }>(write).message, /files\.write/);
    assertError(await serverAction(panel, reader, 'world', 'start'), 403, 'FORBIDDEN');
    assertError(await call(reader, 'GET', '/api/servers/world/backups'), 403, 'FORBIDDEN');
    assertError(await call(reader, 'GET', '/api/servers/world/users'), 403, 'FORBIDDEN');
    // Another server stays out of reach altogether.
    const elsewhere = await call(reader, 'GET', '/api/servers/other/config');
    assertError(elsewhere, 403, 'FORBIDDEN');
    assert.match(json<{ message: string }>(elsewhere).message, /no access/);
    // An admin sees every permission on every server.
    const adminConfig = json<{ data: { permissions: string[] } }>(
      await call(admin, 'GET', '/api/servers/other/config'),
    ).data;
    assert.equal(adminConfig.permissions.length, 12);
  });

  it('lets a holder of users invite others, never beyond their own permissions', async () => {
    assert.equal((await grant(admin, 'owner', ['users', 'files.read', 'power'])).statusCode, 200);

    const invited = await grant(owner, 'friend', ['files.read']);
    assert.equal(invited.statusCode, 200, invited.body);
    const people = json<{ data: Person[] }>(
      await call(owner, 'GET', '/api/servers/world/users'),
    ).data;
    assert.deepEqual(
      people.map((person) => [person.username, person.permissions]),
      [
        ['friend', ['files.read']],
        ['owner', ['power', 'files.read', 'users']],
        ['reader', ['files.read']],
      ],
    );

    // Granting what they do not hold, to anyone: refused, naming it.
    const beyond = await grant(owner, 'friend', ['files.read', 'files.write']);
    assertError(beyond, 403, 'FORBIDDEN');
    assert.match(json<{ message: string }>(beyond).message, /files\.write/);
    // Someone who holds more than they do is not theirs to change or remove.
    assert.equal((await grant(admin, 'friend', ['files.read', 'backups.create'])).statusCode, 200);
    assertError(await grant(owner, 'friend', []), 403, 'FORBIDDEN');
    assertError(await call(owner, 'DELETE', '/api/servers/world/users/friend'), 403, 'FORBIDDEN');
    assert.equal((await grant(admin, 'friend', ['files.read'])).statusCode, 200);
    const removed = await call(owner, 'DELETE', '/api/servers/world/users/friend');
    assert.equal(removed.statusCode, 200, removed.body);
    assertError(await call(friend, 'GET', '/api/servers/world/config'), 403, 'FORBIDDEN');
    assertError(await call(owner, 'DELETE', '/api/servers/world/users/friend'), 404, 'NOT_FOUND');

    // Not on a server where they lack users; unknown servers and permissions refused (admins
    // and unknown names: see "answers an invite the same…" in server-owner.test.ts).
    assertError(await grant(owner, 'friend', [], 'other'), 403, 'FORBIDDEN');
    assertError(await grant(admin, 'friend', [], 'missing'), 404, 'NOT_FOUND');
    assertError(await grant(admin, 'friend', ['root']), 400, 'VALIDATION_FAILED');
    assertError(await grant(admin, 'friend', ['power', 'power']), 400, 'VALIDATION_FAILED');
  });

  it("keeps the permissions of servers an admin's list keeps, and gives new ones every one", async () => {
    const put = await call(admin, 'PUT', '/api/users/reader/servers', {
      servers: ['world', 'other'],
    });
    assert.equal(put.statusCode, 200, put.body);
    const list = json<{ data: { name: string; permissions: string[] }[] }>(
      await call(reader, 'GET', '/api/servers'),
    ).data;
    assert.deepEqual(
      Object.fromEntries(list.map((server) => [server.name, server.permissions.length])),
      { other: 12, world: 1 },
    );
    const cleared = await call(admin, 'PUT', '/api/users/reader/servers', { servers: ['other'] });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assertError(await call(reader, 'GET', '/api/servers/world/config'), 403, 'FORBIDDEN');
  });

  it('applies to support members as to users, and never to the banned', async () => {
    const helper = await register(panel, 'helper');
    await setRole(panel, admin, 'helper', 'support');
    assert.equal((await grant(admin, 'helper', ['power'])).statusCode, 200);
    assertError(await call(helper, 'GET', '/api/servers/world/files'), 403, 'FORBIDDEN');
    const banned = await register(panel, 'banned');
    assert.equal((await grant(admin, 'banned', ['files.read'])).statusCode, 200);
    await setRole(panel, admin, 'banned', 'banned');
    assertError(await call(banned, 'GET', '/api/servers/world/files'), 403, 'BANNED');
  });

  it('lets the console socket read with console.read, type only with console.write', async () => {
    const watcher = await register(panel, 'watcher');
    assert.equal((await grant(admin, 'watcher', ['console.read'])).statusCode, 200);
    const base = await panel.listen();
    const socket = new WebSocket(`${base.replace('http', 'ws')}/ws/servers/world/console`, {
      headers: watcher.headers,
    });
    const frames: { type: string; code?: string }[] = [];
    let closed: number | null = null;
    socket.on('message', (data: Buffer) => {
      frames.push(JSON.parse(data.toString()) as { type: string; code?: string });
    });
    socket.on('close', (code) => {
      closed = code;
    });
    await once(socket, 'open');
    await eventually(() => (frames.length > 0 ? true : undefined), 'the history');
    socket.send(JSON.stringify({ type: 'command', command: 'say hi' }));
    const refused = await eventually(
      () => frames.find((frame) => frame.type === 'error'),
      'the refusal of the command',
    );
    assert.equal(refused.code, 'FORBIDDEN');
    assertError(
      await call(watcher, 'POST', '/api/servers/world/command', { command: 'say hi' }),
      403,
      'FORBIDDEN',
    );
    // Taking console.read away closes the socket at once.
    assert.equal((await grant(admin, 'watcher', ['files.read'])).statusCode, 200);
    await eventually(() => closed ?? undefined, 'the socket to close');
    assert.equal(closed, 4403);

    // Without console.read, the socket is refused before the upgrade.
    const refusedSocket = new WebSocket(`${base.replace('http', 'ws')}/ws/servers/world/console`, {
      headers: watcher.headers,
    });
    const [, response] = (await once(refusedSocket, 'unexpected-response')) as [
      unknown,
      { statusCode: number },
    ];
    assert.equal(response.statusCode, 403);
    refusedSocket.on('error', () => undefined);
    refusedSocket.terminate();
  });
});

/** The list entry of `name`, as the caller should see it. */
function expectServer(
  name: string,
  permissions: string[],
  list: { name: string; permissions: string[] }[],
) {
  const found = list.find((server) => server.name === name);
  assert.ok(found, `${name} is not in the list`);
  assert.deepEqual(found.permissions, permissions);
  return found;
}
