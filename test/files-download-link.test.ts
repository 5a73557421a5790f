/**
 * Download links (`POST …/files/download-link`, then `GET /api/downloads/:id` without a token):
 * the bytes, Range, one use, expiry, and the rights of the link's user checked again when used.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { redactUrl } from '../src/app.js';
import { DownloadLinks } from '../src/modules/files/download-links.js';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { PASSWORD, assertError, bearer, json, setRole, type Session } from './helpers/factories.js';
import { serverRoles } from './helpers/roles.js';

describe('download links', () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;
  let outsider: Session;
  let clock = new Date('2030-01-01T00:00:00Z');
  const bytes = randomBytes(300_000);

  const linkFor = (session: Session, file: string, server = 'world') =>
    panel.app.inject({
      method: 'POST',
      url: `/api/servers/${server}/files/download-link`,
      headers: session.headers,
      payload: { path: file },
    });
  const newLink = async (session: Session, file: string): Promise<string> => {
    const response = await linkFor(session, file);
    assert.equal(response.statusCode, 200, response.body);
    const { url, expiresAt } = json<{ data: { url: string; expiresAt: string } }>(response).data;
    assert.match(url, /^\/api\/downloads\/[A-Za-z0-9_-]{43}$/);
    assert.equal(Date.parse(expiresAt) - clock.getTime(), 60_000);
    rememberSecret(url.slice(url.lastIndexOf('/') + 1));
    return url;
  };
  const grant = async (username: string, servers: string[]) => {
    const response = await panel.app.inject({
      method: 'PUT',
      url: `/api/users/${username}/servers`,
      headers: admin.headers,
      payload: { servers },
    });
    assert.equal(response.statusCode, 200, response.body);
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, {}, { now: () => clock });
    ({ admin, member, outsider } = await serverRoles(panel, { server: 'world' }));
    const root = path.join(panel.config.serversDir, 'world');
    await mkdir(path.join(root, 'world'), { recursive: true });
    await writeFile(path.join(root, 'world', 'level.dat'), bytes);
    await writeFile(path.join(root, 'notes.txt'), 'notes\n');
  });

  it('streams the file once, without a token, as an attachment', async () => {
    const url = await newLink(member, '/world/../world/level.dat');
    const response = await panel.app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 200);
    assert.ok(response.rawPayload.equals(bytes));
    assert.equal(response.headers['content-type'], 'application/octet-stream');
    assert.equal(response.headers['content-length'], String(bytes.length));
    assert.match(
      String(response.headers['content-disposition']),
      /^attachment; filename="level.dat"/,
    );
    assert.equal(response.headers['cache-control'], 'no-store');
    assertError(await panel.app.inject({ method: 'GET', url }), 404, 'NOT_FOUND');
  });

  it('answers one range with 206', async () => {
    const url = await newLink(member, 'world/level.dat');
    const response = await panel.app.inject({
      method: 'GET',
      url,
      headers: { range: 'bytes=1000-1999' },
    });
    assert.equal(response.statusCode, 206);
    assert.equal(response.headers['content-range'], `bytes 1000-1999/${bytes.length}`);
    assert.ok(response.rawPayload.equals(bytes.subarray(1000, 2000)));
  });

  it('dies with the API key it was made with: revoked or expired', async () => {
    const makeKey = async (expiresAt: string | null) => {
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/profile/api-keys',
        headers: member.headers,
        payload: { name: 'links', password: PASSWORD, expiresAt },
      });
      assert.equal(response.statusCode, 200, response.body);
      const { data } = json<{ data: { key: { id: number }; token: string } }>(response);
      rememberSecret(data.token);
      return { id: data.key.id, session: { ...member, headers: bearer(data.token) } };
    };
    const revoked = await makeKey(null);
    const viaKey = await newLink(revoked.session, 'notes.txt');
    const viaSession = await newLink(member, 'notes.txt');
    const revocation = await panel.app.inject({
      method: 'DELETE',
      url: `/api/profile/api-keys/${revoked.id}`,
      headers: member.headers,
    });
    assert.equal(revocation.statusCode, 200, revocation.body);
    assertError(await panel.app.inject({ method: 'GET', url: viaKey }), 403, 'FORBIDDEN');
    assert.equal((await panel.app.inject({ method: 'GET', url: viaSession })).statusCode, 200);

    const expiring = await makeKey(new Date(clock.getTime() + 30_000).toISOString());
    const beforeExpiry = await newLink(expiring.session, 'notes.txt');
    const afterExpiry = await newLink(expiring.session, 'notes.txt');
    assert.equal((await panel.app.inject({ method: 'GET', url: beforeExpiry })).statusCode, 200);
    clock = new Date(clock.getTime() + 31_000);
    // The link itself has 29 s left; its key has none.
    assertError(await panel.app.inject({ method: 'GET', url: afterExpiry }), 403, 'FORBIDDEN');
  });

  it('refuses an expired link with 410, and an unknown one with 404', async () => {
    const url = await newLink(member, 'notes.txt');
    clock = new Date(clock.getTime() + 60_000);
    assertError(await panel.app.inject({ method: 'GET', url }), 410, 'LINK_EXPIRED');
    assertError(await panel.app.inject({ method: 'GET', url }), 404, 'NOT_FOUND');
    assertError(
      await panel.app.inject({ method: 'GET', url: `/api/downloads/${'A'.repeat(43)}` }),
      404,
      'NOT_FOUND',
    );
    // Just before the minute is up, it still works.
    const fresh = await newLink(member, 'notes.txt');
    clock = new Date(clock.getTime() + 59_999);
    assert.equal((await panel.app.inject({ method: 'GET', url: fresh })).body, 'notes\n');
  });

  it('is given only for a file of a server the caller may reach, inside its folder', async () => {
    assertError(await linkFor(outsider, 'notes.txt'), 403, 'FORBIDDEN');
    assertError(await linkFor(member, '../../etc/passwd'), 403, 'PATH_OUTSIDE');
    assertError(await linkFor(member, 'world'), 400, 'NOT_A_FILE');
    assertError(await linkFor(member, 'missing.txt'), 404);
    assertError(await linkFor(member, 'notes.txt', 'nowhere'), 404);
    const anonymous = await panel.app.inject({
      method: 'POST',
      url: '/api/servers/world/files/download-link',
      payload: { path: 'notes.txt' },
    });
    assertError(anonymous, 401);
  });

  it("is bound to its user: another user's token does not change what it serves", async () => {
    const url = await newLink(member, 'notes.txt');
    // The link is the credential: whoever follows it gets the member's file, once, and a token
    // of someone without access changes nothing.
    const response = await panel.app.inject({ method: 'GET', url, headers: outsider.headers });
    assert.equal(response.statusCode, 200);
    assertError(await panel.app.inject({ method: 'GET', url, headers: member.headers }), 404);
  });

  it('checks the rights again when used: access removed, banned, deleted', async () => {
    const removed = await newLink(member, 'notes.txt');
    await grant('member', []);
    assertError(await panel.app.inject({ method: 'GET', url: removed }), 403, 'FORBIDDEN');
    await grant('member', ['world']);

    const banned = await newLink(member, 'notes.txt');
    await setRole(panel, admin, 'member', 'banned');
    assertError(await panel.app.inject({ method: 'GET', url: banned }), 403, 'BANNED');
    await setRole(panel, admin, 'member', 'user');

    const deleted = await newLink(member, 'notes.txt');
    const gone = await panel.app.inject({
      method: 'DELETE',
      url: '/api/users/member',
      headers: admin.headers,
    });
    assert.equal(gone.statusCode, 200, gone.body);
    assertError(await panel.app.inject({ method: 'GET', url: deleted }), 403, 'FORBIDDEN');
  });

  it('keeps the id out of the log', () => {
    assert.equal(redactUrl('/api/downloads/abcdefghijklmnop'), '/api/downloads/[redacted]');
    assert.equal(redactUrl('/api/downloads/abc?x=1'), '/api/downloads/[redacted]');
  });

  it('holds at most `cap` links, forgetting the oldest first', () => {
    const links = new DownloadLinks({ now: () => clock, cap: 2 });
    const target = { userId: 1, server: 'world', path: 'notes.txt' };
    const [first, second, third] = [1, 2, 3].map(() => links.create(target).id);
    assert.equal(links.size, 2);
    assert.equal(links.take(first ?? ''), 'unknown');
    assert.deepEqual(links.take(second ?? ''), {
      ...target,
      expiresAt: new Date(clock.getTime() + 60_000),
    });
    assert.notEqual(links.take(third ?? ''), 'unknown');
  });
});
