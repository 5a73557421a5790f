/**
 * The file manager under pressure: moves and renames never replace what is at the target (a
 * symlink included, and not when many race for one name), and the panel's temporary names
 * (`.panel-tmp-…`, leftovers removed after every start) can be neither made nor reached by a
 * user.
 */
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { TEMP_PREFIX } from '../src/host/local/storage/atomic.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, createServer, json, register, type Session } from './helpers/factories.js';

const BASE = '/api/servers/world/files';
const BOUNDARY = '----robustness-boundary';

let panel: TestPanel;
let admin: Session;
let member: Session;
let root: string;
let outside: string;

const suite = suiteScope();
before(async () => {
  panel = await startPanel(suite);
  admin = await register(panel, 'admin');
  member = await register(panel, 'member');
  await createServer(panel, admin, 'world');
  const assigned = await panel.app.inject({
    method: 'PUT',
    url: '/api/users/member/servers',
    headers: admin.headers,
    payload: { servers: ['world'] },
  });
  assert.equal(assigned.statusCode, 200, assigned.body);
  root = path.join(panel.config.serversDir, 'world');
  outside = await mkdtemp(path.join(tmpdir(), 'panel-outside-'));
});
after(async () => {
  await rm(outside, { recursive: true, force: true });
});

const send = (options: InjectOptions): Promise<LightMyRequestResponse> =>
  panel.app.inject({ ...options, headers: { ...member.headers, ...options.headers } });
const move = (source: string, destination: string) =>
  send({ method: 'POST', url: `${BASE}/move`, payload: { source, destination } });
const rename = (oldPath: string, newName: string) =>
  send({
    method: 'PUT',
    url: `${BASE}/rename?${new URLSearchParams({ old_path: oldPath, new_name: newName }).toString()}`,
  });

/** A multipart upload of one file named `filename` into `folder`. */
function upload(folder: string, filename: string): InjectOptions {
  return {
    method: 'POST',
    url: `${BASE}/upload?path=${encodeURIComponent(folder)}`,
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\nuploaded\r\n--${BOUNDARY}--\r\n`,
    ),
  };
}

/** Every entry under `dir`, recursively, with its type; symlinks with their target. */
async function snapshot(dir: string): Promise<string[]> {
  const result: string[] = [];
  for (const entry of (await readdir(dir, { recursive: true })).map(String).sort()) {
    const full = path.join(dir, entry);
    const stat = await lstat(full);
    result.push(
      stat.isSymbolicLink()
        ? `${entry} -> ${await readlink(full)}`
        : `${entry} ${stat.isDirectory() ? 'folder' : `file ${stat.size}`}`,
    );
  }
  return result;
}

/** Empties the server's folder and fills it with `build`. */
async function fresh(build: () => Promise<void>): Promise<void> {
  for (const entry of await readdir(root)) await rm(path.join(root, entry), { recursive: true });
  await build();
}

describe("the panel's temporary names", () => {
  const TMP = `${TEMP_PREFIX}left-by-a-crash`;

  it('are refused in every path and name a user gives, with 400 and nothing changed', async () => {
    await fresh(async () => {
      await mkdir(path.join(root, 'sub'));
      await writeFile(path.join(root, 'file.txt'), 'file');
      // What a killed panel leaves: a temporary file, inside a folder and at the root.
      await writeFile(path.join(root, TMP), 'partial');
      await writeFile(path.join(root, 'sub', TMP), 'partial');
      // A symlink (made by a server, say) whose target is a temporary name.
      await symlink(TMP, path.join(root, 'to-temp'));
      await symlink(`sub/${TMP}`, path.join(root, 'to-deep-temp'));
      await symlink(`${TEMP_PREFIX}new`, path.join(root, 'to-new-temp'));
    });
    const before = await snapshot(root);
    const q = encodeURIComponent;
    const paths = [
      TMP,
      `sub/${TMP}`,
      `/${TMP}`,
      `${TMP}/x`,
      `sub/${TMP}/..`,
      `${TEMP_PREFIX}new`,
      `sub\\${TEMP_PREFIX}new`,
      TEMP_PREFIX,
      // Reached through a symlink
      'to-temp',
      'to-deep-temp',
      'to-new-temp',
    ];
    const requests: [string, InjectOptions][] = [];
    for (const where of paths) {
      requests.push(
        ['list', { method: 'GET', url: `${BASE}?path=${q(where)}` }],
        ['read', { method: 'GET', url: `${BASE}/content?path=${q(where)}` }],
        ['download', { method: 'GET', url: `${BASE}/download?path=${q(where)}` }],
        [
          'save',
          { method: 'PUT', url: `${BASE}/content?path=${q(where)}`, payload: { content: 'x' } },
        ],
        [
          'create file in',
          {
            method: 'POST',
            url: `${BASE}/create`,
            payload: { type: 'file', name: 'new.txt', path: where },
          },
        ],
        [
          'create folder in',
          {
            method: 'POST',
            url: `${BASE}/create`,
            payload: { type: 'folder', name: 'new', path: where },
          },
        ],
        ['upload into', upload(where, 'up.txt')],
        [
          'move to',
          {
            method: 'POST',
            url: `${BASE}/move`,
            payload: { source: 'file.txt', destination: where },
          },
        ],
      );
      // A symlink itself may be renamed, moved or deleted: it is not the temporary file.
      if (!where.startsWith('to-')) {
        requests.push(
          ['delete', { method: 'DELETE', url: `${BASE}?path=${q(where)}` }],
          [
            'rename from',
            {
              method: 'PUT',
              url: `${BASE}/rename?old_path=${q(where)}&new_name=renamed`,
            },
          ],
          [
            'move from',
            { method: 'POST', url: `${BASE}/move`, payload: { source: where, destination: 'sub' } },
          ],
        );
      }
    }
    for (const name of [TMP, `${TEMP_PREFIX}new`, TEMP_PREFIX]) {
      requests.push(
        [
          'rename to',
          { method: 'PUT', url: `${BASE}/rename?old_path=file.txt&new_name=${q(name)}` },
        ],
        [
          'create named',
          { method: 'POST', url: `${BASE}/create`, payload: { type: 'file', name, path: '' } },
        ],
        [
          'create folder named',
          { method: 'POST', url: `${BASE}/create`, payload: { type: 'folder', name, path: 'sub' } },
        ],
        ['upload named', upload('', name)],
        ['upload named with a path', upload('sub', `a/b/${name}`)],
      );
    }
    for (const [what, options] of requests) {
      const response = await send(options);
      const label = `${what} ${JSON.stringify(options.url)} ${JSON.stringify(options.payload ?? '')}`;
      assert.equal(response.statusCode, 400, `${label}: ${response.body}`);
      const body = json<{ code: string; message: string }>(response);
      assert.equal(body.code, 'INVALID_PATH', label);
      assert.match(body.message, /reserved for the panel/, label);
    }
    assert.deepEqual(await snapshot(root), before, 'nothing changed on disk');
  });

  it('do not stop ordinary names that merely contain them', async () => {
    await fresh(() => writeFile(path.join(root, 'file.txt'), 'file'));
    const name = `x${TEMP_PREFIX}y`;
    const saved = await send({
      method: 'PUT',
      url: `${BASE}/content?path=${encodeURIComponent(name)}`,
      payload: { content: 'fine' },
    });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal((await rename(name, 'panel-tmp-y')).statusCode, 200);
  });
});

describe('moving or renaming onto an existing symlink', () => {
  /** The symlinks at the target and what each answers to a move onto it. */
  const LINKS = {
    'link-file': { target: 'target.txt', move: 'ALREADY_EXISTS' },
    'link-dangling': { target: 'missing.txt', move: 'ALREADY_EXISTS' },
    'link-loop': { target: 'link-loop', move: 'SYMLINK_LOOP' },
    'link-out': { target: '<outside>/victim.txt', move: 'PATH_OUTSIDE' },
    'link-out-missing': { target: '<outside>/created.txt', move: 'PATH_OUTSIDE' },
    'link-out-dir': { target: '<outside>', move: 'PATH_OUTSIDE' },
  } as const;

  const build = async () => {
    await writeFile(path.join(root, 'target.txt'), 'target');
    await writeFile(path.join(root, 'a.txt'), 'a');
    await mkdir(path.join(root, 'folder'));
    await writeFile(path.join(root, 'folder', 'inner.txt'), 'inner');
    await mkdir(path.join(root, 'empty'));
    await mkdir(path.join(root, 'into'));
    await symlink('into', path.join(root, 'link-into'));
    for (const [name, { target }] of Object.entries(LINKS)) {
      await symlink(target.replace('<outside>', outside), path.join(root, name));
    }
  };

  it('answers 409 (403 when it points outside) and leaves the symlink and the source as they were', async () => {
    await writeFile(path.join(outside, 'victim.txt'), 'victim');
    await fresh(build);
    const outsideBefore = await snapshot(outside);
    const before = await snapshot(root);
    for (const source of ['a.txt', 'folder', 'empty']) {
      for (const [link, { move: code }] of Object.entries(LINKS)) {
        assertError(
          await move(source, link),
          code === 'ALREADY_EXISTS' ? 409 : code === 'PATH_OUTSIDE' ? 403 : 400,
          code,
        );
        assertError(await rename(source, link), 409, 'ALREADY_EXISTS');
      }
    }
    assert.deepEqual(await snapshot(root), before);
    assert.deepEqual(await snapshot(outside), outsideBefore);
  });

  it('moves into the folder a symlink inside points to, as mv does', async () => {
    await fresh(build);
    const moved = await move('a.txt', 'link-into');
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(json<{ data: { path: string } }>(moved).data.path, 'into/a.txt');
    assert.equal(await readlink(path.join(root, 'link-into')), 'into');
  });
});

describe('moves racing for the same names', () => {
  const COUNT = 120;

  /** Every folder under the server's directory. */
  const folders = async (): Promise<number> =>
    (await snapshot(root)).filter((entry) => entry.endsWith(' folder')).length;
  const tally = (responses: LightMyRequestResponse[]): Record<number, number> => {
    const counts: Record<number, number> = {};
    for (const response of responses)
      counts[response.statusCode] = (counts[response.statusCode] ?? 0) + 1;
    return counts;
  };

  it(`never loses one of ${COUNT} folders moved at once to equal and distinct targets`, async () => {
    await fresh(async () => {
      await mkdir(path.join(root, 'into'));
      for (let index = 0; index < COUNT; index += 1) {
        // Empty folders: the ones rename(2) replaces without a word.
        await mkdir(path.join(root, `source-${index}`, 'same'), { recursive: true });
      }
    });
    const before = await folders();
    const requests = Array.from({ length: COUNT }, (_, index) => {
      switch (index % 3) {
        case 0: // all to one new path
          return move(`source-${index}/same`, 'one-name');
        case 1: // into one folder, all under the same name
          return move(`source-${index}/same`, 'into');
        default: // each to a path of its own
          return move(`source-${index}/same`, `distinct-${index}`);
      }
    });
    const responses = await Promise.all(requests);
    assert.deepEqual(await folders(), before, 'as many folders as before');
    const byKind = (kind: number) => tally(responses.filter((_, index) => index % 3 === kind));
    const third = COUNT / 3;
    // The first to arrive makes `one-name`; one more may then move into it, as mv would.
    const toOne = byKind(0);
    const won = Number(toOne[200]);
    assert.ok(won === 1 || won === 2, JSON.stringify(toOne));
    assert.deepEqual(toOne, { 200: won, 409: third - won });
    assert.deepEqual(byKind(1), { 200: 1, 409: third - 1 });
    assert.deepEqual(byKind(2), { 200: third });
    assert.deepEqual(await readdir(path.join(root, 'into')), ['same']);
  });

  it(`never loses one of ${COUNT} folders or files renamed at once to one name`, async () => {
    await fresh(async () => {
      for (let index = 0; index < COUNT; index += 1) {
        if (index % 2 === 0) await mkdir(path.join(root, `entry-${index}`));
        else await writeFile(path.join(root, `entry-${index}`), String(index));
      }
    });
    const before = await snapshot(root);
    const responses = await Promise.all(
      Array.from({ length: COUNT }, (_, index) => rename(`entry-${index}`, 'winner')),
    );
    assert.deepEqual(tally(responses), { 200: 1, 409: COUNT - 1 });
    const after = await snapshot(root);
    assert.equal(after.length, before.length, 'as many entries as before');
    assert.ok(after.some((entry) => entry.startsWith('winner ')));
  });
});
