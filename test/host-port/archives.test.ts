/**
 * Conformance of ServerHost's archives and backups: `files.compress` and `files.decompress`
 * (round trips in both formats, an existing destination, every entry that would land outside the
 * folder, the limits and the quota, nothing left behind on a refusal), and `backupFiles`: a
 * server packed whole (symlinks as symlinks, skipped folders left out, each entry reported) and
 * its folder replaced from an archive in one step, or not at all.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { Parser, type ReadEntry } from 'tar';
import type { PackOptions, ServerBackupFiles, ServerFiles } from '../../src/host/host.js';
import { tarOf, type TarEntry } from '../helpers/archives.js';
import {
  ANY_ARCHIVE,
  conformance,
  file,
  folder,
  link,
  rejectsWith,
  restoreArchive,
  restoreTar,
  staged,
} from './suite.js';

/** A packed entry as the archive holds it. */
interface PackedEntry {
  readonly type: string;
  readonly body?: Buffer;
  readonly linkpath?: string;
}

/** Packs a server through the port and reads the .tar.gz back: its bytes and its entries. */
async function packed(
  files: ServerBackupFiles,
  server: string,
  options: PackOptions = {},
): Promise<{ archive: Buffer; entries: Map<string, PackedEntry> }> {
  const chunks: Buffer[] = [];
  const into = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  await files.packServer(server, into, options);
  const archive = Buffer.concat(chunks);
  assert.deepEqual([...archive.subarray(0, 2)], [0x1f, 0x8b], 'a gzip stream');
  const entries = new Map<string, PackedEntry>();
  const parser = new Parser();
  parser.on('entry', (entry: ReadEntry) => {
    const parts: Buffer[] = [];
    entry.on('data', (chunk: Buffer) => parts.push(chunk));
    entry.on('end', () => {
      entries.set(entry.path, {
        type: entry.type,
        ...(entry.type === 'File' ? { body: Buffer.concat(parts) } : {}),
        ...(entry.linkpath ? { linkpath: entry.linkpath } : {}),
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
    parser.end(archive);
  });
  return { archive, entries };
}

/** The names in a folder of the server, sorted. */
const names = async (files: ServerFiles, server: string, segments: string[] = []) =>
  (await files.list(server, segments)).map((entry) => entry.name).sort();

conformance('host archives', (machine) => {
  it('packs files and folders in both formats, and unpacks them back', async () => {
    const { host } = machine();
    await machine().addServer('packer');
    await host.files.createEntry('packer', [], 'world', 'folder');
    await host.files.writeText('packer', ['world', 'level.dat'], 'level');
    await host.files.writeText('packer', ['server.properties'], 'motd=hi');
    for (const format of ['zip', 'tar.gz'] as const) {
      const archive = `pack.${format}`;
      const made = await host.files.compress(
        'packer',
        [['world'], ['server.properties']],
        [archive],
        format,
      );
      assert.equal(made.path, archive);
      assert.ok(made.size > 0);
      await rejectsWith(
        host.files.compress('packer', [['world']], [archive], format),
        'ALREADY_EXISTS',
      );
      const into = `out-${format.replace('.', '-')}`;
      await host.files.createEntry('packer', [], into, 'folder');
      const unpacked = await host.files.decompress('packer', [archive], [into], ANY_ARCHIVE);
      assert.deepEqual(unpacked.map((entry) => entry.name).sort(), ['server.properties', 'world']);
      assert.equal(await host.files.readText('packer', [into, 'world', 'level.dat'], 99), 'level');
      assert.equal(await host.files.readText('packer', [into, 'server.properties'], 99), 'motd=hi');
      // Names taken where it would land: nothing is moved in.
      await rejectsWith(
        host.files.decompress('packer', [archive], [into], ANY_ARCHIVE),
        'ALREADY_EXISTS',
      );
      assert.deepEqual(await names(host.files, 'packer', [into]), ['server.properties', 'world']);
    }
  });

  it('refuses archives whose entries would land outside the folder, leaving nothing', async () => {
    const { host } = machine();
    const hostile: [string, TarEntry[]][] = [
      ['dot-dot', [file('ok.txt', 'ok'), file('../escaped.txt', 'out')]],
      ['nested-dot-dot', [file('a/../../escaped.txt', 'out')]],
      ['absolute', [file('/tmp/escaped.txt', 'out')]],
      ['link-absolute', [link('etc', '/etc')]],
      ['link-up', [folder('a'), link('a/up', '../../..')]],
      ['through-link', [link('inner', '.'), file('inner/x.txt', 'x')]],
      ['hard-link', [file('a.txt', 'a'), { path: 'b.txt', type: 'Link', linkpath: '/etc/passwd' }]],
      ['fifo', [{ path: 'pipe', type: 'FIFO' }]],
    ];
    for (const [name, entries] of hostile) {
      const archive = await staged(machine(), `${name}.tar`, tarOf(entries));
      // The archive is unpacked inside the staging server's own folder.
      const before = await names(host.files, 'staging');
      await assert.rejects(
        host.files.decompress('staging', archive, [], ANY_ARCHIVE),
        (error: Error & { code?: string }) => {
          assert.ok(
            error.code === 'INVALID_ARCHIVE' || error.code === 'PATH_OUTSIDE',
            `${name}: ${error.message}`,
          );
          return true;
        },
      );
      assert.deepEqual(await names(host.files, 'staging'), before, `${name} left something`);
      await host.files.deleteEntry('staging', archive);
    }
  });

  it('holds an unpacking to its limits and the quota', async () => {
    const { host } = machine();
    await machine().addServer('bounded');
    const entries = [file('a.txt', 'a'.repeat(3000)), file('b.txt', 'b'), file('c.txt', 'c')];
    const archive = await staged(machine(), 'three.tar', tarOf(entries));
    const limited = (limits: Partial<typeof ANY_ARCHIVE>) => ({ ...ANY_ARCHIVE, ...limits });
    const before = await names(host.files, 'staging');
    await rejectsWith(
      host.files.decompress('staging', archive, [], limited({ maxEntries: 2 })),
      'PAYLOAD_TOO_LARGE',
    );
    await rejectsWith(
      host.files.decompress('staging', archive, [], limited({ maxBytes: 1000 })),
      'PAYLOAD_TOO_LARGE',
    );
    await rejectsWith(
      host.files.decompress('staging', archive, [], ANY_ARCHIVE, 1000),
      'QUOTA_EXCEEDED',
    );
    assert.deepEqual(await names(host.files, 'staging'), before);
    // A compression ratio past the limit: a zip bomb.
    await host.files.writeText('bounded', ['zeros.txt'], '0'.repeat(200_000));
    await host.files.compress('bounded', [['zeros.txt']], ['zeros.tar.gz'], 'tar.gz');
    await host.files.deleteEntry('bounded', ['zeros.txt']);
    await rejectsWith(
      host.files.decompress('bounded', ['zeros.tar.gz'], [], limited({ maxRatio: 10 })),
      'INVALID_ARCHIVE',
    );
    assert.deepEqual(await names(host.files, 'bounded'), ['zeros.tar.gz']);
    await host.files.decompress('bounded', ['zeros.tar.gz'], [], ANY_ARCHIVE);
    assert.equal((await host.files.readText('bounded', ['zeros.txt'], 300_000)).length, 200_000);
  });
});

conformance('host backups', (machine) => {
  it('packs a whole server: symlinks as symlinks, skipped folders left out', async () => {
    const { host } = machine();
    await machine().addServer('packed');
    await restoreTar(machine(), 'packed', [
      folder('world'),
      file('world/level.dat', 'level'),
      folder('cache'),
      file('cache/junk.bin', 'junk'),
      file('server.properties', 'motd=hi'),
      link('latest', 'world/level.dat'),
      link('steam', '/opt/steam'),
    ]);
    const reported: [string, number][] = [];
    const { entries: byPath } = await packed(host.backupFiles, 'packed', {
      ignore: ['# gitignore lines, as a backup gives them', '/cache/'],
      packed: (kind, bytes) => reported.push([kind, bytes]),
    });
    assert.deepEqual([...byPath.keys()].sort(), [
      'latest',
      'server.properties',
      'steam',
      'world/',
      'world/level.dat',
    ]);
    assert.equal(byPath.get('world/level.dat')?.body?.toString(), 'level');
    assert.equal(byPath.get('steam')?.linkpath, '/opt/steam');
    assert.equal(byPath.get('latest')?.linkpath, 'world/level.dat');
    assert.equal(reported.length, 5);
    assert.deepEqual(
      reported
        .filter(([kind]) => kind === 'file')
        .map(([, bytes]) => bytes)
        .sort(),
      [5, 7],
    );
  });

  it('replaces a server from an archive whole, or leaves it as it was', async () => {
    const { host } = machine();
    await machine().addServer('source');
    await machine().addServer('target');
    await host.files.createEntry('source', [], 'world', 'folder');
    await host.files.writeText('source', ['world', 'level.dat'], 'new level');
    await host.files.writeText('target', ['old.txt'], 'old');
    const { archive } = await packed(host.backupFiles, 'source');

    // Past its limits or the quota: refused, the folder as it was.
    await rejectsWith(
      restoreArchive(machine(), 'target', archive, { ...ANY_ARCHIVE, maxEntries: 1 }),
      'PAYLOAD_TOO_LARGE',
    );
    await rejectsWith(
      restoreArchive(machine(), 'target', archive, ANY_ARCHIVE, 4),
      'QUOTA_EXCEEDED',
    );
    await rejectsWith(
      restoreArchive(machine(), 'target', tarOf([file('ok.txt', 'ok'), file('../x', 'x')])),
      'INVALID_ARCHIVE',
    );
    assert.deepEqual(await names(host.files, 'target'), ['old.txt']);
    assert.equal(await host.backupFiles.readText('target', ['old.txt'], 99), 'old');

    const progress = await restoreArchive(machine(), 'target', archive);
    assert.deepEqual(await names(host.files, 'target'), ['world']);
    assert.equal(await host.files.readText('target', ['world', 'level.dat'], 99), 'new level');
    assert.ok(progress.length > 0 && progress.at(-1) === 9, `progress ${progress.join(' ')}`);
    assert.equal(await host.backupFiles.diskUsage('target'), 9);
  });
});
