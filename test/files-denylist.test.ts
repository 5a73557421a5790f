/**
 * A template's `file_denylist` in the file manager (docs/templates.md, "File deny list"): every
 * file route that reads or changes a file refuses a denied one with 403 FILE_DENIED naming the
 * path and the rule, for a sub-user and for the server's owner alike, and leaves the folder as
 * it was; an admin is never refused. The table of cases is compared with the routes the panel
 * registered, so a file route added without a case fails here. Symlinks lead nowhere denied,
 * archives neither pack nor unpack a denied file, and a download link is checked when used.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import yazl from 'yazl';
import { tarOf } from './helpers/archives.js';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  bearer,
  gameServerCommand,
  json,
  PASSWORD,
  register,
  type Session,
} from './helpers/factories.js';

const DENYLIST = ['PalServer.sh', 'config/*.cfg', '!config/public.cfg', 'secrets/', '/top.txt'];

const BOUNDARY = '----denylist-test-boundary';

/** A multipart body with one file named `filename`. */
function multipart(filename: string, content: string): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    Buffer.from(content),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

async function zipOf(entries: { name: string; body: string }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) zip.addBuffer(Buffer.from(entry.body), entry.name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Every entry under `dir`: its type, and its content's hash or its link's target. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })).map(String).sort()) {
    const full = path.join(dir, name);
    const stat = await lstat(full);
    result[name] = stat.isSymbolicLink()
      ? `link ${await readlink(full)}`
      : stat.isDirectory()
        ? 'folder'
        : createHash('sha256')
            .update(await readFile(full))
            .digest('hex');
  }
  return result;
}

/** One request that the deny list must refuse, and the rule it must name. */
interface Case {
  readonly label: string;
  readonly run: (session: Session) => Promise<LightMyRequestResponse>;
  /** The rule named in the refusal (a pattern when several may be met first). */
  readonly rule: string | RegExp;
  /** The path named in the refusal, when the case pins it. */
  readonly path?: string;
}

describe("the template's file deny list in the file manager", () => {
  let panel: TestPanel;
  let admin: Session;
  let owner: Session;
  let member: Session;
  let template = '';
  let root = '';
  let tarBad: Buffer;
  let tarFolder: Buffer;
  let zipBad: Buffer;

  const call = (
    session: Session,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: Record<string, unknown>,
  ) =>
    panel.app.inject({
      method,
      url,
      headers: session.headers,
      ...(payload === undefined ? {} : { payload }),
    });
  const files = (endpoint: string, query: Record<string, string> = {}) =>
    `/api/servers/pal/files${endpoint}?${new URLSearchParams(query).toString()}`;
  const upload = (session: Session, folder: string, filename: string) =>
    panel.app.inject({
      method: 'POST',
      url: files('/upload', { path: folder }),
      headers: {
        ...session.headers,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      },
      payload: multipart(filename, 'uploaded\n'),
    });
  /** Makes a link to `free-link` (allowed), points it at PalServer.sh, then uses the link. */
  const linkRetargeted = async (session: Session) => {
    const made = await call(session, 'POST', files('/download-link'), { path: 'free-link' });
    assert.equal(made.statusCode, 200, made.body);
    await unlink(path.join(root, 'free-link'));
    await symlink('PalServer.sh', path.join(root, 'free-link'));
    try {
      return await panel.app.inject({ url: json<{ data: { url: string } }>(made).data.url });
    } finally {
      await unlink(path.join(root, 'free-link'));
      await symlink('free.txt', path.join(root, 'free-link'));
    }
  };

  /** The server's folder as every case starts from. */
  const seed = async () => {
    await rm(root, { recursive: true, force: true });
    const put = async (name: string, content: string | Buffer) => {
      await mkdir(path.dirname(path.join(root, name)), { recursive: true });
      await writeFile(path.join(root, name), content);
    };
    await put('PalServer.sh', '#!/bin/sh\nexec ./Pal\n');
    await put('free.txt', 'free\n');
    await put('top.txt', 'top\n');
    await put('sub/top.txt', 'not the top one\n');
    await put('config/secret.cfg', 'password=hunter2\n');
    await put('config/public.cfg', 'motd=hello\n');
    await put('config/notes.txt', 'notes\n');
    await put('secrets/key.txt', 'key\n');
    await put('bin/PalServer.sh', '#!/bin/sh\n');
    await put('bin/run.txt', 'run\n');
    await put('world/level.dat', 'level\n');
    await put('bad.tar', tarBad);
    await put('badfolder.tar', tarFolder);
    await put('bad.zip', zipBad);
    await put('secrets/ok.tar', tarOf([{ path: 'ok.txt', type: 'File', body: Buffer.from('ok') }]));
    await mkdir(path.join(root, 'drop'));
    await symlink('PalServer.sh', path.join(root, 'link.sh'));
    await symlink('config', path.join(root, 'cfglink'));
    await symlink('free.txt', path.join(root, 'free-link'));
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    owner = await register(panel, 'owner');
    member = await register(panel, 'member');
    const imported = await panel.app.inject({
      method: 'POST',
      url: '/api/templates/import',
      headers: { ...admin.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({
        meta: { version: 'PTDL_v2' },
        name: 'Palworld-like',
        author: 'tests@example.com',
        docker_images: { Debian: 'example/debian:12' },
        file_denylist: [...DENYLIST, '[z-a]'],
        startup: gameServerCommand(),
        config: { files: '{}', startup: '{}', logs: '{}', stop: '^C' },
        variables: [],
      }),
    });
    assert.equal(imported.statusCode, 200, imported.body);
    const body = json<{ data: { id: string; fileDenylist: string[]; warnings: string[] } }>(
      imported,
    ).data;
    template = body.id;
    assert.deepEqual(body.fileDenylist, DENYLIST);
    assert.ok(
      body.warnings.includes(
        'file_denylist[5] ("[z-a]"): dropped: cannot be compiled (invalid character class range: `z-a`)',
      ),
      body.warnings.join('\n'),
    );
    const created = await call(admin, 'POST', '/api/servers/create', {
      name: 'pal',
      template,
      owner: 'owner',
    });
    assert.equal(created.statusCode, 200, created.body);
    const granted = await call(admin, 'PUT', '/api/servers/pal/users/member', {
      permissions: ['files.read', 'files.write'],
    });
    assert.equal(granted.statusCode, 200, granted.body);
    root = path.join(panel.config.serversDir, 'pal');
    tarBad = tarOf([
      { path: 'x/', type: 'Directory' },
      { path: 'x/PalServer.sh', type: 'File', body: Buffer.from('#!/bin/sh\n') },
    ]);
    tarFolder = tarOf([
      { path: 'data/', type: 'Directory' },
      { path: 'data/secrets/', type: 'Directory' },
    ]);
    zipBad = await zipOf([{ name: 'deep/a/PalServer.sh', body: 'x' }]);
  });

  /** Every file route that reads or changes a file, by its key as registered, with its cases. */
  const CASES: Readonly<Record<string, readonly Case[]>> = {
    'GET /api/servers/:server/files/download': [
      {
        label: 'a denied file',
        run: (s) => call(s, 'GET', files('/download', { path: 'PalServer.sh' })),
        rule: 'PalServer.sh',
        path: 'PalServer.sh',
      },
      {
        label: 'a symlink to one',
        run: (s) => call(s, 'GET', files('/download', { path: 'link.sh' })),
        rule: 'PalServer.sh',
      },
      {
        label: 'through a symlink to its folder',
        run: (s) => call(s, 'GET', files('/download', { path: 'cfglink/secret.cfg' })),
        rule: 'config/*.cfg',
        path: 'config/secret.cfg',
      },
      {
        label: 'in a denied folder',
        run: (s) => call(s, 'GET', files('/download', { path: 'secrets/key.txt' })),
        rule: 'secrets/',
      },
    ],
    'POST /api/servers/:server/files/download-link': [
      {
        label: 'a link to a denied file',
        run: (s) => call(s, 'POST', files('/download-link'), { path: 'PalServer.sh' }),
        rule: 'PalServer.sh',
      },
    ],
    'GET /api/downloads/:id': [
      {
        label: 'a link whose symlink now points at a denied file',
        run: linkRetargeted,
        rule: 'PalServer.sh',
      },
    ],
    'GET /api/servers/:server/files/content': [
      {
        label: 'the editor opening a denied file',
        run: (s) => call(s, 'GET', files('/content', { path: 'config/secret.cfg' })),
        rule: 'config/*.cfg',
      },
      {
        label: 'an anchored rule at the top',
        run: (s) => call(s, 'GET', files('/content', { path: 'top.txt' })),
        rule: '/top.txt',
      },
    ],
    'PUT /api/servers/:server/files/content': [
      {
        label: 'the editor saving a denied file',
        run: (s) =>
          call(s, 'PUT', files('/content', { path: 'config/secret.cfg' }), { content: 'x' }),
        rule: 'config/*.cfg',
      },
      {
        label: 'saving through a symlink to one',
        run: (s) => call(s, 'PUT', files('/content', { path: 'link.sh' }), { content: 'x' }),
        rule: 'PalServer.sh',
      },
      {
        label: 'saving a new file at a denied path',
        run: (s) => call(s, 'PUT', files('/content', { path: 'config/new.cfg' }), { content: 'x' }),
        rule: 'config/*.cfg',
      },
    ],
    'POST /api/servers/:server/files/create': [
      {
        label: 'an empty file at a denied path',
        run: (s) =>
          call(s, 'POST', files('/create'), { path: 'config', name: 'x.cfg', type: 'file' }),
        rule: 'config/*.cfg',
      },
      {
        label: 'a folder a folders-only rule denies',
        run: (s) =>
          call(s, 'POST', files('/create'), { path: 'world', name: 'secrets', type: 'folder' }),
        rule: 'secrets/',
      },
    ],
    'POST /api/servers/:server/files/upload': [
      {
        label: 'an upload over a denied file',
        run: (s) => upload(s, 'config', 'secret.cfg'),
        rule: 'config/*.cfg',
      },
      {
        label: 'an upload of a denied name in another folder',
        run: (s) => upload(s, 'world', 'PalServer.sh'),
        rule: 'PalServer.sh',
      },
    ],
    'PUT /api/servers/:server/files/rename': [
      {
        label: 'renaming a denied file',
        run: (s) =>
          call(s, 'PUT', files('/rename', { old_path: 'PalServer.sh', new_name: 'x.sh' })),
        rule: 'PalServer.sh',
      },
      {
        label: 'renaming a file to a denied name',
        run: (s) =>
          call(
            s,
            'PUT',
            files('/rename', { old_path: 'world/level.dat', new_name: 'PalServer.sh' }),
          ),
        rule: 'PalServer.sh',
        path: 'world/PalServer.sh',
      },
      {
        label: 'renaming a folder that holds a denied file',
        run: (s) => call(s, 'PUT', files('/rename', { old_path: 'bin', new_name: 'bin2' })),
        rule: 'PalServer.sh',
        path: 'bin/PalServer.sh',
      },
    ],
    'POST /api/servers/:server/files/move': [
      {
        label: 'moving a denied file',
        run: (s) =>
          call(s, 'POST', files('/move'), { source: 'config/secret.cfg', destination: 'world' }),
        rule: 'config/*.cfg',
      },
      {
        label: 'moving a file into a denied folder',
        run: (s) => call(s, 'POST', files('/move'), { source: 'free.txt', destination: 'secrets' }),
        rule: 'secrets/',
        path: 'secrets/free.txt',
      },
      {
        label: 'moving a folder that holds a denied file',
        run: (s) => call(s, 'POST', files('/move'), { source: 'bin', destination: 'world' }),
        rule: 'PalServer.sh',
      },
    ],
    'DELETE /api/servers/:server/files': [
      {
        label: 'deleting a denied file',
        run: (s) => call(s, 'DELETE', files('', { path: 'PalServer.sh' })),
        rule: 'PalServer.sh',
      },
      {
        label: 'deleting a folder that holds one',
        run: (s) => call(s, 'DELETE', files('', { path: 'config' })),
        rule: 'config/*.cfg',
        path: 'config/secret.cfg',
      },
    ],
    'POST /api/servers/:server/files/move-many': [
      {
        label: 'moving an allowed and a denied file: neither moves',
        run: (s) =>
          call(s, 'POST', files('/move-many'), {
            paths: ['free.txt', 'PalServer.sh'],
            destination: 'world',
          }),
        rule: 'PalServer.sh',
      },
    ],
    'POST /api/servers/:server/files/delete': [
      {
        label: 'deleting an allowed file and a folder holding a denied one: neither goes',
        run: (s) => call(s, 'POST', files('/delete'), { paths: ['free.txt', 'bin'] }),
        rule: 'PalServer.sh',
      },
    ],
    'POST /api/servers/:server/files/compress': [
      {
        label: 'packing a folder that holds a denied file',
        run: (s) =>
          call(s, 'POST', files('/compress'), {
            paths: ['bin'],
            destination: 'bin.zip',
            format: 'zip',
          }),
        rule: 'PalServer.sh',
        path: 'bin/PalServer.sh',
      },
      {
        label: 'packing the whole folder',
        run: (s) =>
          call(s, 'POST', files('/compress'), {
            paths: ['/'],
            destination: 'all.tar.gz',
            format: 'tar.gz',
          }),
        rule: /^(PalServer\.sh|config\/\*\.cfg|secrets\/|\/top\.txt)$/,
      },
      {
        label: 'an archive written at a denied path',
        run: (s) =>
          call(s, 'POST', files('/compress'), {
            paths: ['free.txt'],
            destination: 'secrets/a.zip',
            format: 'zip',
          }),
        rule: 'secrets/',
      },
    ],
    'POST /api/servers/:server/files/decompress': [
      {
        label: 'a tar entry landing on a denied path',
        run: (s) => call(s, 'POST', files('/decompress'), { path: 'bad.tar', destination: 'drop' }),
        rule: 'PalServer.sh',
        path: 'drop/x/PalServer.sh',
      },
      {
        label: 'a tar folder a folders-only rule denies',
        run: (s) =>
          call(s, 'POST', files('/decompress'), { path: 'badfolder.tar', destination: 'drop' }),
        rule: 'secrets/',
        path: 'drop/data/secrets',
      },
      {
        label: 'a zip entry landing on a denied path',
        run: (s) => call(s, 'POST', files('/decompress'), { path: 'bad.zip', destination: 'drop' }),
        rule: 'PalServer.sh',
        path: 'drop/deep/a/PalServer.sh',
      },
      {
        label: 'an archive that is itself denied',
        run: (s) =>
          call(s, 'POST', files('/decompress'), { path: 'secrets/ok.tar', destination: 'drop' }),
        rule: 'secrets/',
      },
    ],
  };

  /** What a listing does: it shows everything, as Wings does. */
  const LISTING = 'GET /api/servers/:server/files';

  it('has a case for every file route that reads or changes a file', () => {
    const routes = panel.app.registeredRoutes
      .filter((route) => route.method !== 'HEAD')
      .map((route) => `${route.method} ${route.url}`)
      .filter((key) => / \/api\/(servers\/:server\/files|downloads\/)/.test(key));
    assert.deepEqual(routes.sort(), [...Object.keys(CASES), LISTING].sort());
  });

  for (const [route, cases] of Object.entries(CASES)) {
    describe(route, () => {
      for (const { label, run, rule, path: named } of cases) {
        it(`${label}: 403 for a sub-user and the owner, nothing changed; an admin may`, async () => {
          await seed();
          const before = await snapshot(root);
          for (const session of [member, owner]) {
            const response = await run(session);
            assertError(response, 403, 'FILE_DENIED');
            const { message } = json<{ message: string }>(response);
            const said =
              /^(.+) is protected by the template's rule "(.+)"(; nothing was extracted)?$/.exec(
                message,
              );
            assert.ok(said, message);
            if (typeof rule === 'string') assert.equal(said[2], rule, message);
            else assert.match(said[2] ?? '', rule, message);
            if (named !== undefined) assert.equal(said[1], named, message);
            assert.deepEqual(await snapshot(root), before, `${session.username}: nothing changed`);
          }
          const response = await run(admin);
          assert.ok(response.statusCode < 300, `admin: ${response.statusCode} ${response.body}`);
        });
      }
    });
  }

  it('lists denied entries as any other, and allows what no rule denies', async () => {
    await seed();
    const listed = json<{ data: { name: string }[] }>(await call(member, 'GET', files(''))).data;
    for (const name of ['PalServer.sh', 'top.txt', 'config', 'secrets', 'link.sh']) {
      assert.ok(
        listed.some((entry) => entry.name === name),
        name,
      );
    }
    const inside = json<{ data: { name: string }[] }>(
      await call(member, 'GET', files('', { path: 'secrets' })),
    ).data;
    assert.deepEqual(
      inside.map((entry) => entry.name),
      ['ok.tar', 'key.txt'].sort(),
    );
    const read = async (file: string) => {
      const response = await call(member, 'GET', files('/content', { path: file }));
      assert.equal(response.statusCode, 200, `${file}: ${response.body}`);
      return json<{ data: { content: string } }>(response).data.content;
    };
    // `!config/public.cfg` allows it again; `/top.txt` is the top one only.
    assert.equal(await read('config/public.cfg'), 'motd=hello\n');
    assert.equal(await read('sub/top.txt'), 'not the top one\n');
    assert.equal(await read('config/notes.txt'), 'notes\n');
    // A symlink to a denied file is not the file: deleting the link leaves the file.
    assert.equal((await call(member, 'DELETE', files('', { path: 'link.sh' }))).statusCode, 200);
    assert.equal(
      await readFile(path.join(root, 'PalServer.sh'), 'utf8'),
      '#!/bin/sh\nexec ./Pal\n',
    );
    // A folder without a denied file moves, packs and unpacks.
    const packed = await call(member, 'POST', files('/compress'), {
      paths: ['world'],
      destination: 'world.zip',
      format: 'zip',
    });
    assert.equal(packed.statusCode, 200, packed.body);
    const unpacked = await call(member, 'POST', files('/decompress'), {
      path: 'world.zip',
      destination: 'drop',
    });
    assert.equal(unpacked.statusCode, 200, unpacked.body);
    assert.equal(await readFile(path.join(root, 'drop/world/level.dat'), 'utf8'), 'level\n');
  });

  it('says in words which file and which rule', async () => {
    await seed();
    const response = await call(member, 'GET', files('/content', { path: 'config/secret.cfg' }));
    assertError(response, 403, 'FILE_DENIED');
    assert.equal(
      json<{ message: string }>(response).message,
      `config/secret.cfg is protected by the template's rule "config/*.cfg"`,
    );
  });

  it("binds an admin's API key narrowed to permissions, not one that is not", async () => {
    await seed();
    const key = async (body: Record<string, unknown>) => {
      const made = await call(admin, 'POST', '/api/profile/api-keys', {
        password: PASSWORD,
        name: `key ${Object.keys(body).join(' ')}`,
        ...body,
      });
      assert.equal(made.statusCode, 200, made.body);
      const { token } = json<{ data: { token: string } }>(made).data;
      rememberSecret(token);
      return { ...admin, headers: bearer(token) };
    };
    const narrowed = await key({ permissions: ['files.read', 'files.write'] });
    const whole = await key({ servers: ['pal'] });
    const get = (session: Session) =>
      call(session, 'GET', files('/content', { path: 'PalServer.sh' }));
    assertError(await get(narrowed), 403, 'FILE_DENIED');
    assert.equal((await get(whole)).statusCode, 200);
  });

  it('shows the list on the template; a template stored before the list was kept has none', async () => {
    const shown = await call(admin, 'GET', `/api/templates/${template}`);
    assert.deepEqual(json<{ data: { fileDenylist: string[] } }>(shown).data.fileDenylist, DENYLIST);

    await seed();
    const row = await panel.db.kysely
      .selectFrom('templates')
      .select('definition')
      .where('id', '=', template)
      .executeTakeFirstOrThrow();
    const { fileDenylist, ...older } = JSON.parse(row.definition) as Record<string, unknown>;
    assert.deepEqual(fileDenylist, DENYLIST);
    await panel.db.kysely
      .updateTable('templates')
      .set({ definition: JSON.stringify(older) })
      .where('id', '=', template)
      .execute();
    const again = await call(admin, 'GET', `/api/templates/${template}`);
    assert.deepEqual(json<{ data: { fileDenylist: string[] } }>(again).data.fileDenylist, []);
    const read = await call(member, 'GET', files('/content', { path: 'PalServer.sh' }));
    assert.equal(read.statusCode, 200, read.body);
  });
});
