/**
 * Conformance of ServerHost's files (`host.files`): the file manager's operations inside a
 * server's folder, and its containment: a path made by `userPath` (src/domain/paths.ts) never
 * reaches past the folder, through `..`, an absolute path, a symlink pointing out (as the last
 * segment or as a parent), a symlink loop; writes are atomic and creations exclusive under races.
 *
 * Symlinks are put in a folder the way a server's own files get there without the panel: a
 * backup restored (`backupFiles.replaceFromArchive` keeps every link as it was).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { userPath } from '../../src/domain/paths.js';
import {
  body,
  bytesOf,
  conformance,
  file,
  folder,
  link,
  rejectsWith,
  restoreTar,
} from './suite.js';

conformance('host files', (machine) => {
  it('creates, lists, writes, reads, renames, moves and deletes entries', async () => {
    const { host } = machine();
    await machine().addServer('files');
    assert.deepEqual(await host.files.list('files', []), []);
    const world = await host.files.createEntry('files', [], 'world', 'folder');
    assert.deepEqual([world.name, world.path, world.type], ['world', 'world', 'folder']);
    await host.files.createEntry('files', [], 'notes.txt', 'file');
    await rejectsWith(host.files.createEntry('files', [], 'world', 'folder'), 'ALREADY_EXISTS');

    const written = await host.files.writeText('files', ['world', 'level.dat'], 'level one');
    assert.deepEqual([written.path, written.type, written.size], ['world/level.dat', 'file', 9]);
    assert.equal(await host.files.readText('files', ['world', 'level.dat'], 1024), 'level one');
    await host.files.writeText('files', ['world', 'level.dat'], 'level two');
    assert.equal(await host.files.readText('files', ['world', 'level.dat'], 1024), 'level two');
    await rejectsWith(host.files.readText('files', ['world', 'level.dat'], 4), 'PAYLOAD_TOO_LARGE');
    await rejectsWith(host.files.readText('files', ['world'], 1024), 'NOT_A_FILE');
    await rejectsWith(host.files.readText('files', ['missing.txt'], 1024), 'NOT_FOUND');
    await rejectsWith(host.files.writeText('files', ['nowhere', 'a.txt'], 'x'), 'NOT_FOUND');

    const uploaded = await host.files.upload(
      'files',
      ['world'],
      'blob.bin',
      body('\0\x01binary'),
      null,
    );
    assert.equal(uploaded.size, 8);
    await rejectsWith(host.files.readText('files', ['world', 'blob.bin'], 1024), 'BINARY_FILE');
    const opened = await host.files.openFile('files', ['world', 'blob.bin']);
    assert.equal(opened.size, 8);
    assert.equal(opened.name, 'blob.bin');
    assert.deepEqual(await bytesOf(opened.read()), Buffer.from('\0\x01binary'));
    await opened.close();
    const part = await host.files.openFile('files', ['world', 'blob.bin']);
    assert.deepEqual(await bytesOf(part.read({ start: 2, end: 4 })), Buffer.from('bin'));
    // A file opened and never read is let go of.
    await (await host.files.openFile('files', ['world', 'blob.bin'])).close();
    await host.files.createEntry('files', ['world'], 'empty.txt', 'file');
    const empty = await host.files.openFile('files', ['world', 'empty.txt']);
    assert.equal(empty.size, 0);
    assert.deepEqual(await bytesOf(empty.read()), Buffer.alloc(0));

    // Folders first, then by name.
    const listed = await host.files.list('files', []);
    assert.deepEqual(
      listed.map((entry) => [entry.name, entry.type]),
      [
        ['world', 'folder'],
        ['notes.txt', 'file'],
      ],
    );
    assert.ok(listed.every((entry) => !Number.isNaN(Date.parse(entry.modified))));

    const renamed = await host.files.renameEntry('files', ['notes.txt'], 'readme.txt');
    assert.equal(renamed.path, 'readme.txt');
    await rejectsWith(host.files.renameEntry('files', ['readme.txt'], 'world'), 'ALREADY_EXISTS');
    const moved = await host.files.move('files', ['readme.txt'], ['world']);
    assert.equal(moved.path, 'world/readme.txt');
    const movedTo = await host.files.move('files', ['world', 'readme.txt'], ['top.txt']);
    assert.equal(movedTo.path, 'top.txt');

    await host.files.createEntry('files', [], 'archive', 'folder');
    const many = await host.files.moveMany(
      'files',
      [['top.txt'], ['world', 'blob.bin']],
      ['archive'],
    );
    assert.deepEqual(many.map((entry) => entry.path).sort(), [
      'archive/blob.bin',
      'archive/top.txt',
    ]);
    await rejectsWith(
      host.files.moveMany('files', [['archive']], ['archive']),
      'VALIDATION_FAILED',
    );

    const deleted = await host.files.deleteMany('files', [['archive', 'top.txt'], ['archive']]);
    assert.ok(deleted.length >= 1);
    await host.files.deleteEntry('files', ['world']);
    assert.deepEqual(await host.files.list('files', []), []);
    await rejectsWith(host.files.deleteEntry('files', ['world']), 'NOT_FOUND');
    await rejectsWith(host.files.deleteMany('files', [[]]), 'VALIDATION_FAILED');
  });

  it('holds writes and uploads to their limits and quota, leaving nothing behind', async () => {
    const { host } = machine();
    await machine().addServer('limited');
    await host.files.writeText('limited', ['a.txt'], 'x'.repeat(600), 1000);
    await rejectsWith(
      host.files.writeText('limited', ['b.txt'], 'x'.repeat(600), 1000),
      'QUOTA_EXCEEDED',
    );
    // A save that does not grow the file is never refused.
    await host.files.writeText('limited', ['a.txt'], 'y'.repeat(600), 100);
    await rejectsWith(
      host.files.upload('limited', [], 'big.bin', body('z'.repeat(2000)), 1000),
      'PAYLOAD_TOO_LARGE',
    );
    await rejectsWith(
      host.files.upload('limited', [], 'big.bin', body('z'.repeat(2000)), null, 1000),
      'QUOTA_EXCEEDED',
    );
    assert.deepEqual(
      (await host.files.list('limited', [])).map((entry) => entry.name),
      ['a.txt'],
    );
    assert.equal(await host.files.readText('limited', ['a.txt'], 1024), 'y'.repeat(600));
  });

  it('measures the disk a folder uses, moved by writes and deletes', async () => {
    const { host } = machine();
    await machine().addServer('measured');
    assert.equal(await host.files.diskUsage('measured'), 0);
    await host.files.writeText('measured', ['a.txt'], 'x'.repeat(1000));
    await host.files.createEntry('measured', [], 'sub', 'folder');
    await host.files.upload('measured', ['sub'], 'b.bin', body('y'.repeat(500)), null);
    assert.equal(await host.files.diskUsage('measured'), 1500);
    await host.files.deleteEntry('measured', ['a.txt']);
    assert.equal(await host.files.diskUsage('measured'), 500);
    assert.equal(await host.backupFiles.diskUsage('measured'), 500);
  });

  it('never reaches past the folder: .., absolute paths, symlinks out, symlinked parents', async () => {
    const { host } = machine();
    await machine().addServer('jail');
    await machine().addServer('neighbour');
    await host.files.writeText('neighbour', ['secret.txt'], 'the neighbour’s secret');
    await restoreTar(machine(), 'jail', [
      folder('world'),
      file('world/level.dat', 'inside'),
      link('etc', '/etc'),
      link('hostname', '/etc/hostname'),
      link('up', '../..'),
      link('neighbour', '../neighbour'),
      link('loop', 'loop'),
      link('inner', 'world'),
      link('world/root', '..'),
      link('world/escape', '../../neighbour/secret.txt'),
    ]);
    const names = (await host.files.list('jail', [])).map((entry) => [entry.name, entry.type]);
    assert.ok(
      names.some(([name, type]) => name === 'etc' && type === 'symlink'),
      JSON.stringify(names),
    );

    // `..` and absolute paths: the segments userPath makes stay inside, or are refused.
    assert.deepEqual(userPath('/world/../world/level.dat'), ['world', 'level.dat']);
    assert.equal(
      await host.files.readText('jail', userPath('/world/../world/level.dat'), 1024),
      'inside',
    );
    assert.throws(() => userPath('../neighbour/secret.txt'), { code: 'PATH_OUTSIDE' });
    // An absolute path starts at the folder, never at the machine's root.
    assert.equal(
      await host.files.readText('neighbour', userPath('/secret.txt'), 1024),
      'the neighbour’s secret',
    );
    await rejectsWith(host.files.readText('jail', userPath('/etc/hostname'), 1024), 'PATH_OUTSIDE');

    // Links inside are followed, as the last segment and as parents.
    assert.equal(await host.files.readText('jail', ['inner', 'level.dat'], 1024), 'inside');
    assert.equal(
      await host.files.readText('jail', ['world', 'root', 'world', 'level.dat'], 1024),
      'inside',
    );

    // Links out are refused, whatever the operation.
    const out = [
      ['etc', 'hostname'],
      ['hostname'],
      ['up', 'etc', 'hostname'],
      ['neighbour', 'secret.txt'],
      ['world', 'escape'],
    ];
    for (const segments of out) {
      await rejectsWith(host.files.readText('jail', segments, 1024), 'PATH_OUTSIDE');
      await rejectsWith(host.files.openFile('jail', segments), 'PATH_OUTSIDE');
      await rejectsWith(host.files.writeText('jail', segments, 'written'), 'PATH_OUTSIDE');
    }
    for (const folderSegments of [['etc'], ['up'], ['neighbour'], ['world', 'root', 'up']]) {
      await rejectsWith(host.files.list('jail', folderSegments), 'PATH_OUTSIDE');
      await rejectsWith(
        host.files.createEntry('jail', folderSegments, 'planted', 'file'),
        'PATH_OUTSIDE',
      );
      await rejectsWith(
        host.files.upload('jail', folderSegments, 'planted', body('x'), null),
        'PATH_OUTSIDE',
      );
      await rejectsWith(
        host.files.move('jail', ['world', 'level.dat'], [...folderSegments, 'level.dat']),
        'PATH_OUTSIDE',
      );
    }
    await rejectsWith(host.files.readText('jail', ['loop'], 1024), 'SYMLINK_LOOP');
    await rejectsWith(
      host.files.decompress('jail', ['etc', 'hostname'], [], {
        maxBytes: 1e6,
        maxEntries: 10,
        maxRatio: 100,
        ratioFloorBytes: 0,
      }),
      'PATH_OUTSIDE',
    );
    await rejectsWith(
      host.files.compress('jail', [['neighbour', 'secret.txt']], ['stolen.zip'], 'zip'),
      'PATH_OUTSIDE',
    );

    // The neighbour's file is untouched, and nothing was planted there.
    assert.equal(
      await host.files.readText('neighbour', ['secret.txt'], 1024),
      'the neighbour’s secret',
    );
    assert.deepEqual(
      (await host.files.list('neighbour', [])).map((entry) => entry.name),
      ['secret.txt'],
    );

    // A link itself can be renamed and deleted: the link goes, never its target.
    await host.files.renameEntry('jail', ['neighbour'], 'next-door');
    await host.files.deleteEntry('jail', ['next-door']);
    await host.files.deleteEntry('jail', ['world', 'escape']);
    assert.equal(
      await host.files.readText('neighbour', ['secret.txt'], 1024),
      'the neighbour’s secret',
    );
  });

  it('keeps writes atomic and creations exclusive when they race', async () => {
    const { host } = machine();
    await machine().addServer('racy');
    const contents = Array.from({ length: 12 }, (_, i) => String(i).repeat(20_000));
    await Promise.all(
      contents.map((content) => host.files.writeText('racy', ['save.dat'], content)),
    );
    const saved = await host.files.readText('racy', ['save.dat'], 1024 * 1024);
    assert.ok(contents.includes(saved), 'the file holds one whole write, never a mix');

    const created = await Promise.allSettled(
      Array.from({ length: 8 }, () => host.files.createEntry('racy', [], 'once', 'folder')),
    );
    assert.equal(created.filter((result) => result.status === 'fulfilled').length, 1);
    for (const result of created) {
      if (result.status === 'rejected')
        assert.equal((result.reason as { code?: string }).code, 'ALREADY_EXISTS');
    }
    // No temporary file is left or shown.
    assert.deepEqual(
      (await host.files.list('racy', [])).map((entry) => entry.name),
      ['once', 'save.dat'],
    );
  });

  it('holds segments that did not come from userPath inside the folder too', async () => {
    const { host } = machine();
    await machine().addServer('raw');
    await machine().addServer('beside');
    await host.files.writeText('beside', ['secret.txt'], 'beside');
    for (const segments of [
      ['..', 'beside', 'secret.txt'],
      ['sub', '..', '..', 'beside', 'secret.txt'],
      ['.', '..', 'beside', 'secret.txt'],
      ['../beside/secret.txt'],
    ]) {
      await rejectsWith(host.files.readText('raw', segments, 1024), 'PATH_OUTSIDE');
    }
    await rejectsWith(host.files.createEntry('raw', ['..'], 'made', 'file'), 'PATH_OUTSIDE');
    await rejectsWith(host.files.writeText('raw', ['..', 'beside', 'x'], 'x'), 'PATH_OUTSIDE');
    assert.deepEqual(
      (await host.files.list('beside', [])).map((entry) => entry.name),
      ['secret.txt'],
    );
  });
});
