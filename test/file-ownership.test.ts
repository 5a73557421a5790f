/**
 * When the panel runs as root, servers run as the server user, and everything the panel writes
 * into a server's folder belongs to that user: a game server can change the file a person
 * uploaded or edited for it (server.properties, a world, a plugin's configuration).
 */
import assert from 'node:assert/strict';
import { lstatSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  createServer,
  eventually,
  register,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

const ROOT = process.getuid?.() === 0;
const BOUNDARY = '----ownership-boundary';

describe(
  'files the panel writes for a server',
  { skip: ROOT ? false : 'the panel is not root here' },
  () => {
    let panel: TestPanel;
    let admin: Session;
    let folder: string;
    const url = (endpoint: string, query: Record<string, string> = {}) =>
      `/api/servers/world/files${endpoint}?${new URLSearchParams(query).toString()}`;

    const suite = suiteScope();
    before(async () => {
      panel = await startPanel(suite);
      admin = await register(panel, 'admin');
      // The server appends a line to every file it is given: it must be allowed to.
      await createServer(panel, admin, 'world', {
        startCommand: `sh -c 'for f in uploaded.txt edited.txt made.txt sub/inner.txt; do echo changed >> "$f" || exit 1; done; exit 0'`,
      });
      folder = path.join(panel.config.serversDir, 'world');
    });

    it('belong to the server user, who can change them', async () => {
      const owner = statSync(folder);
      assert.notEqual(owner.uid, 0, 'the server folder belongs to the server user');
      assert.equal(owner.mode & 0o777, 0o700);

      const body = Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="uploaded.txt"\r\nContent-Type: text/plain\r\n\r\nuploaded\n\r\n--${BOUNDARY}--\r\n`,
      );
      const uploaded = await panel.app.inject({
        method: 'POST',
        url: url('/upload', { path: '/' }),
        headers: { ...admin.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        payload: body,
      });
      assert.equal(uploaded.statusCode, 200, uploaded.body);
      for (const [type, name, where] of [
        ['file', 'edited.txt', '/'],
        ['file', 'made.txt', '/'],
        ['folder', 'sub', '/'],
        ['file', 'inner.txt', '/sub'],
      ] as const) {
        const made = await panel.app.inject({
          method: 'POST',
          url: url('/create'),
          headers: admin.headers,
          payload: { type, name, path: where },
        });
        assert.equal(made.statusCode, 200, made.body);
      }
      const saved = await panel.app.inject({
        method: 'PUT',
        url: url('/content', { path: 'edited.txt' }),
        headers: admin.headers,
        payload: { content: 'edited\n' },
      });
      assert.equal(saved.statusCode, 200, saved.body);

      for (const name of ['uploaded.txt', 'edited.txt', 'made.txt', 'sub', 'sub/inner.txt']) {
        const stat = lstatSync(path.join(folder, name));
        assert.deepEqual([stat.uid, stat.gid], [owner.uid, owner.gid], `${name} is the server's`);
      }

      assert.equal((await serverAction(panel, admin, 'world', 'start')).statusCode, 200);
      const ended = await eventually(async () => {
        const now = await stats(panel, admin, 'world');
        return now.status === 'running' || now.status === 'starting' ? undefined : now;
      }, 'the server to finish');
      assert.equal(ended.lastExit?.code, 0, 'the server could write every file');
      assert.equal(readFileSync(path.join(folder, 'uploaded.txt'), 'utf8'), 'uploaded\nchanged\n');
      assert.equal(readFileSync(path.join(folder, 'edited.txt'), 'utf8'), 'edited\nchanged\n');
    });
  },
);
