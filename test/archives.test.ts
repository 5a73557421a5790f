/**
 * Archives and bulk operations in the file manager, through the HTTP surface with real files:
 * compress and decompress round trips (zip, tar.gz), hostile archives crafted here byte by byte,
 * each refused with the servers' folders left exactly as they were, and the all-or-nothing checks
 * of bulk delete and move.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import yazl from 'yazl';
import { tarOf, type TarEntry } from './helpers/archives.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, createServer, json, register, type Session } from './helpers/factories.js';

interface ZipEntry {
  name: string;
  body?: Buffer;
  mode?: number;
}

/**
 * A zip made by yazl, then with `renames` applied to its bytes (same length): yazl refuses
 * hostile names, so they are written as harmless ones and swapped in both headers.
 */
async function zipOf(entries: ZipEntry[], renames: [string, string][] = []): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) {
    zip.addBuffer(entry.body ?? Buffer.alloc(0), entry.name, {
      ...(entry.mode === undefined ? {} : { mode: entry.mode }),
    });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  let bytes = Buffer.concat(chunks);
  for (const [from, to] of renames) {
    assert.equal(from.length, to.length);
    let at = bytes.indexOf(from);
    assert.notEqual(at, -1);
    while (at !== -1) {
      bytes.write(to, at, 'latin1');
      at = bytes.indexOf(from, at + 1);
    }
    bytes = Buffer.from(bytes);
  }
  return bytes;
}

/** Every entry under `dir`: type, and content hash or link target. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })).map(String).sort()) {
    const full = path.join(dir, name);
    const stat = await lstat(full);
    result[name] = stat.isSymbolicLink()
      ? `link ${await readlink(full)}`
      : stat.isDirectory()
        ? 'folder'
        : `file ${createHash('sha256')
            .update(await readFile(full))
            .digest('hex')}`;
  }
  return result;
}

const MIB = 1024 * 1024;

describe('archives and bulk operations', () => {
  let panel: TestPanel;
  let admin: Session;
  let servers: string;
  let root: string;

  const post = (endpoint: string, payload: Record<string, unknown>, server = 'world') =>
    panel.app.inject({
      method: 'POST',
      url: `/api/servers/${server}/files/${endpoint}`,
      headers: admin.headers,
      payload,
    });

  /** Refused with `status` and `code`, every server's folder left exactly as it was. */
  const refused = async (
    endpoint: string,
    payload: Record<string, unknown>,
    status: number,
    code: string,
    server = 'world',
  ): Promise<string> => {
    const before = await snapshot(servers);
    const response = await post(endpoint, payload, server);
    assertError(response, status, code);
    assert.deepEqual(await snapshot(servers), before);
    return json<{ message: string }>(response).message;
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, {
      ARCHIVE_MAX_BYTES: String(16 * MIB),
      ARCHIVE_MAX_ENTRIES: '50',
    });
    admin = await register(panel, 'admin');
    await createServer(panel, admin, 'world');
    await createServer(panel, admin, 'small', { limits: { diskBytes: 300_000 } });
    servers = panel.config.serversDir;
    root = path.join(servers, 'world');
    await mkdir(path.join(root, 'data/nested/deep'), { recursive: true });
    await mkdir(path.join(root, 'data/empty'));
    await writeFile(path.join(root, 'data/nested/deep/random.bin'), randomBytes(200_000));
    await writeFile(path.join(root, 'data/with space ü 文字.txt'), 'unicode name\n');
    await writeFile(path.join(root, 'data/zero'), '');
    await symlink('nested/deep', path.join(root, 'data/link'));
    await writeFile(path.join(root, 'top.txt'), 'top\n');
  });

  for (const format of ['zip', 'tar.gz'] as const) {
    it(`packs and unpacks a tree byte for byte (${format})`, async () => {
      const archive = `out.${format}`;
      const packed = await post('compress', {
        paths: ['data', '/top.txt'],
        destination: archive,
        format,
      });
      assert.equal(packed.statusCode, 200, packed.body);
      assert.equal(json<{ data: { path: string } }>(packed).data.path, archive);
      const target = `unpacked-${format}`;
      await mkdir(path.join(root, target));
      const unpacked = await post('decompress', { path: archive, destination: target });
      assert.equal(unpacked.statusCode, 200, unpacked.body);
      const names = json<{ data: { name: string }[] }>(unpacked).data.map((entry) => entry.name);
      assert.deepEqual(names.sort(), ['data', 'top.txt']);
      assert.deepEqual(
        await snapshot(path.join(root, target, 'data')),
        await snapshot(path.join(root, 'data')),
      );
      assert.equal(await readFile(path.join(root, target, 'top.txt'), 'utf8'), 'top\n');
      // What the panel (root, here) unpacks belongs to whoever the servers run as, as the
      // server's folder does: the game can change and delete it.
      const owner = await lstat(root);
      for (const name of ['data', 'data/nested/deep/random.bin', 'data/link', 'top.txt']) {
        const entry = await lstat(path.join(root, target, name));
        assert.deepEqual([entry.uid, entry.gid], [owner.uid, owner.gid], name);
      }
      // Told by content, not by name; a name already there: 409 and nothing moved in.
      await writeFile(
        path.join(root, `renamed-${format}.bin`),
        await readFile(path.join(root, archive)),
      );
      await refused(
        'decompress',
        { path: `renamed-${format}.bin`, destination: target },
        409,
        'ALREADY_EXISTS',
      );
    });
  }

  it('refuses to compress over an existing file, and a missing source', async () => {
    await refused(
      'compress',
      { paths: ['data'], destination: 'top.txt', format: 'zip' },
      409,
      'ALREADY_EXISTS',
    );
    await refused(
      'compress',
      { paths: ['missing'], destination: 'x.zip', format: 'zip' },
      404,
      'NOT_FOUND',
    );
    await refused(
      'compress',
      { paths: ['data'], destination: '../x.zip', format: 'zip' },
      403,
      'PATH_OUTSIDE',
    );
  });

  it('refuses what is not a supported archive', async () => {
    await writeFile(path.join(root, 'plain.zip'), 'just text, named like a zip\n'.repeat(30));
    await writeFile(
      path.join(root, 'x.tar.xz'),
      Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0]), Buffer.alloc(600)]),
    );
    await refused('decompress', { path: 'plain.zip', destination: '' }, 400, 'INVALID_ARCHIVE');
    const message = await refused(
      'decompress',
      { path: 'x.tar.xz', destination: '' },
      400,
      'INVALID_ARCHIVE',
    );
    assert.match(message, /xz/);
  });

  describe('hostile archives: refused, nothing written anywhere', () => {
    const file = (name: string, body = 'x'): TarEntry => ({
      path: name,
      type: 'File',
      body: Buffer.from(body),
    });
    const cases: [string, () => Buffer | Promise<Buffer>, number, RegExp][] = [
      [
        'zip ../evil',
        () =>
          zipOf(
            [
              { name: 'ok.txt', body: Buffer.from('a') },
              { name: 'xx/evil', body: Buffer.from('b') },
            ],
            [['xx/evil', '../evil']],
          ),
        400,
        /evil/,
      ],
      [
        'zip /abs',
        () => zipOf([{ name: 'xabs', body: Buffer.from('b') }], [['xabs', '/abs']]),
        400,
        /abs/,
      ],
      [
        'zip symlink to ../../..',
        () => zipOf([{ name: 'link', body: Buffer.from('../../..'), mode: 0o120777 }]),
        400,
        /link/,
      ],
      ['zip device', () => zipOf([{ name: 'dev', mode: 0o020644 }]), 400, /dev/],
      ['zip bomb', () => zipOf([{ name: 'zeros', body: Buffer.alloc(12 * MIB) }]), 400, /zeros/],
      [
        'zip with too many entries',
        () => zipOf(Array.from({ length: 60 }, (_, i) => ({ name: `f${i}` }))),
        413,
        /50/,
      ],
      ['tar ../evil', () => tarOf([file('ok.txt'), file('../evil')]), 400, /evil/],
      ['tar /abs', () => tarOf([file('/abs')]), 400, /abs/],
      ['tar nested ..', () => tarOf([file('a/../../b')]), 400, /a\/\.\.\/\.\.\/b/],
      [
        'tar symlink to /etc',
        () => tarOf([{ path: 'etc', type: 'SymbolicLink', linkpath: '/etc' }]),
        400,
        /etc/,
      ],
      [
        'tar symlink to ../../',
        () => tarOf([{ path: 'up', type: 'SymbolicLink', linkpath: '../../' }]),
        400,
        /up/,
      ],
      [
        'tar hard link out',
        () => tarOf([{ path: 'passwd', type: 'Link', linkpath: '/etc/passwd' }]),
        400,
        /passwd/,
      ],
      [
        'tar hard link in',
        () => tarOf([file('a'), { path: 'b', type: 'Link', linkpath: 'a' }]),
        400,
        /hard link/,
      ],
      [
        'tar character device',
        () => tarOf([{ path: 'null', type: 'CharacterDevice', devmaj: 1, devmin: 3 }]),
        400,
        /null/,
      ],
      ['tar FIFO', () => tarOf([{ path: 'pipe', type: 'FIFO' }]), 400, /pipe/],
      [
        'tar write through its own symlink',
        () =>
          tarOf([
            { path: 'sub', type: 'Directory' },
            { path: 'l', type: 'SymbolicLink', linkpath: 'sub' },
            file('l/x'),
          ]),
        400,
        /l\/x/,
      ],
      ['tar duplicate file', () => tarOf([file('twice'), file('twice')]), 400, /twice/],
      [
        'tar.gz bomb',
        () => gzipSync(tarOf([{ path: 'zeros', type: 'File', body: Buffer.alloc(12 * MIB) }])),
        400,
        /zeros/,
      ],
      [
        'tar too big',
        () => tarOf([{ path: 'big', type: 'File', body: randomBytes(17 * MIB) }]),
        413,
        /big/,
      ],
      [
        'tar with too many entries',
        () => tarOf(Array.from({ length: 60 }, (_, i) => file(`f${i}`))),
        413,
        /50/,
      ],
    ];
    for (const [label, make, status, named] of cases) {
      it(label, async () => {
        await mkdir(path.join(root, 'dest'), { recursive: true });
        const name = `hostile-${label.replace(/[^a-z0-9]+/gi, '-')}`;
        await writeFile(path.join(root, name), await make());
        const message = await refused(
          'decompress',
          { path: name, destination: 'dest' },
          status,
          status === 400 ? 'INVALID_ARCHIVE' : 'PAYLOAD_TOO_LARGE',
        );
        assert.match(message, named);
      });
    }
  });

  it('holds extraction and compression to the disk quota, leaving nothing', async () => {
    const small = path.join(servers, 'small');
    await writeFile(
      path.join(small, 'big.tar'),
      tarOf([{ path: 'big', type: 'File', body: randomBytes(100_000) }]),
    );
    // The archive (~100 KB) and the filler (150 KB) fit in 300,000 bytes; another 100 KB does not.
    await writeFile(path.join(small, 'filler'), randomBytes(150_000));
    await refused(
      'decompress',
      { path: 'big.tar', destination: '' },
      413,
      'QUOTA_EXCEEDED',
      'small',
    );
    await refused(
      'compress',
      { paths: ['big.tar', 'filler'], destination: 'all.zip', format: 'zip' },
      413,
      'QUOTA_EXCEEDED',
      'small',
    );
  });

  it('deletes and moves several paths, all checked before anything is done', async () => {
    await mkdir(path.join(root, 'bulk/into'), { recursive: true });
    for (const name of ['a', 'b', 'c']) await writeFile(path.join(root, 'bulk', name), name);
    await refused('delete', { paths: ['bulk/a', 'bulk/missing'] }, 404, 'NOT_FOUND');
    await refused('delete', { paths: ['bulk/a', '/'] }, 400, 'VALIDATION_FAILED');
    await refused(
      'move-many',
      { paths: ['bulk/a', 'bulk/missing'], destination: 'bulk/into' },
      404,
      'NOT_FOUND',
    );
    await refused(
      'move-many',
      { paths: ['bulk/a', '../x'], destination: 'bulk/into' },
      403,
      'PATH_OUTSIDE',
    );
    await writeFile(path.join(root, 'bulk/into/b'), 'taken');
    await refused(
      'move-many',
      { paths: ['bulk/a', 'bulk/b'], destination: 'bulk/into' },
      409,
      'ALREADY_EXISTS',
    );
    await refused(
      'move-many',
      { paths: ['bulk'], destination: 'bulk/into' },
      400,
      'VALIDATION_FAILED',
    );

    const moved = await post('move-many', {
      paths: ['bulk/a', 'bulk/c'],
      destination: 'bulk/into',
    });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual(
      json<{ data: { path: string }[] }>(moved).data.map((entry) => entry.path),
      ['bulk/into/a', 'bulk/into/c'],
    );
    assert.deepEqual((await readdir(path.join(root, 'bulk'))).sort(), ['b', 'into']);

    const deleted = await post('delete', { paths: ['bulk/into', 'bulk/into/a', 'bulk/b'] });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(json<{ data: { paths: string[] } }>(deleted).data.paths, [
      'bulk/into',
      'bulk/b',
    ]);
    assert.deepEqual(await readdir(path.join(root, 'bulk')), []);
  });
});
