/**
 * Conformance of ServerHost's file channels (`host.files` as a remote files session, SFTP, uses
 * it; ServerFileChannels in src/host/host.ts): attributes, channels at offsets that write on a
 * private copy put in place at close, folders read in batches, single-entry changes, symlinks and
 * attribute changes, with the containment, deny list and quota of the file manager.
 *
 * Symlinks out are put in a folder the way a server's own files get there without the panel: a
 * backup restored (`backupFiles.replaceFromArchive` keeps every link as it was).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ChannelFlags, NamedStat, ServerHost } from '../../src/host/host.js';
import { compileDenylist } from '../../src/templates/denylist.js';
import { conformance, file, folder, link, rejectsWith, restoreTar } from './suite.js';

const READ: ChannelFlags = {
  read: true,
  write: false,
  append: false,
  create: false,
  truncate: false,
  exclusive: false,
};
const PUT: ChannelFlags = { ...READ, read: false, write: true, create: true, truncate: true };
const RESUME: ChannelFlags = { ...READ, read: false, write: true };

async function entriesOf(
  host: ServerHost,
  server: string,
  segments: readonly string[],
  batch = 100,
): Promise<NamedStat[][]> {
  const batches: NamedStat[][] = [];
  for await (const found of host.files.readFolder(server, segments, batch))
    batches.push([...found]);
  return batches;
}

const namesIn = async (host: ServerHost, server: string, segments: readonly string[] = []) =>
  (await entriesOf(host, server, segments))
    .flat()
    .map((entry) => entry.name)
    .sort();

/** Links out of the folder at every depth, links inside, a dangling link and a loop. */
async function hostile(machine: Parameters<typeof restoreTar>[0], name: string): Promise<void> {
  await machine.addServer(name);
  await restoreTar(machine, name, [
    folder('world'),
    folder('world/deep'),
    file('world/level.dat', 'inside'),
    link('etc', '/etc'),
    link('hostname', '/etc/hostname'),
    link('up', '../..'),
    link('inner', 'world'),
    link('world/root', '..'),
    link('world/deep/escape', '../../../../etc/hostname'),
    link('dangling', 'missing.txt'),
    link('loop', 'loop'),
  ]);
}

const OUT = [
  ['hostname'],
  ['etc', 'hostname'],
  ['up', 'etc', 'hostname'],
  ['world', 'deep', 'escape'],
  ['world', 'root', 'hostname'],
];

conformance('host file channels', (machine) => {
  it('answers attributes and real paths, following only links that stay inside', async () => {
    const { host } = machine();
    await hostile(machine(), 'attrs');
    const level = await host.files.stat('attrs', ['world', 'level.dat'], true);
    assert.equal(level.type, 'file');
    assert.equal(level.size, 6);
    assert.ok(level.mode > 0 && level.mode <= 0o7777);
    assert.ok(level.modified instanceof Date && level.accessed instanceof Date);
    assert.equal((await host.files.stat('attrs', [], true)).type, 'folder');
    assert.equal((await host.files.stat('attrs', ['inner'], false)).type, 'symlink');
    assert.equal((await host.files.stat('attrs', ['inner'], true)).type, 'folder');
    await rejectsWith(host.files.stat('attrs', ['dangling'], true), 'NOT_FOUND');
    await rejectsWith(host.files.stat('attrs', ['missing'], false), 'NOT_FOUND');
    await rejectsWith(host.files.stat('attrs', ['loop'], true), 'SYMLINK_LOOP');
    for (const segments of OUT) {
      await rejectsWith(host.files.stat('attrs', segments, true), 'PATH_OUTSIDE');
      await rejectsWith(host.files.realPath('attrs', segments), 'PATH_OUTSIDE');
    }
    // A link out is shown as the link it is.
    for (const segments of [['etc'], ['hostname'], ['up'], ['world', 'deep', 'escape']]) {
      assert.equal((await host.files.stat('attrs', segments, false)).type, 'symlink');
    }
    await rejectsWith(host.files.stat('attrs', ['..', 'attrs'], false), 'PATH_OUTSIDE');

    assert.deepEqual(await host.files.realPath('attrs', ['inner', 'level.dat']), [
      'world',
      'level.dat',
    ]);
    assert.deepEqual(await host.files.realPath('attrs', ['world', 'root']), []);
    assert.deepEqual(await host.files.realPath('attrs', ['inner', 'new.txt']), [
      'world',
      'new.txt',
    ]);
    await rejectsWith(host.files.realPath('attrs', ['nowhere', 'x']), 'NOT_FOUND');
  });

  it('reads folders in batches, links as links, refusing folders that lead out', async () => {
    const { host } = machine();
    await hostile(machine(), 'listing');
    for (let i = 0; i < 25; i += 1) {
      await host.files.writeText('listing', ['world', 'deep', `f${i}.txt`], String(i));
    }
    const batches = await entriesOf(host, 'listing', ['world', 'deep'], 10);
    assert.deepEqual(
      batches.map((batch) => batch.length <= 10),
      batches.map(() => true),
    );
    assert.equal(batches.flat().length, 26);
    const top = (await entriesOf(host, 'listing', [], 4)).flat();
    assert.equal(top.find((entry) => entry.name === 'etc')?.type, 'symlink');
    assert.equal(top.find((entry) => entry.name === 'world')?.type, 'folder');
    assert.deepEqual(await namesIn(host, 'listing', ['inner']), ['deep', 'level.dat', 'root']);
    for (const segments of [['etc'], ['up'], ['world', 'root', 'up'], ['..']]) {
      await rejectsWith(entriesOf(host, 'listing', segments), 'PATH_OUTSIDE');
    }
    await rejectsWith(entriesOf(host, 'listing', ['missing']), 'NOT_FOUND');
    await rejectsWith(entriesOf(host, 'listing', ['world', 'level.dat']), 'NOT_A_FOLDER');
  });

  it('writes on a private copy that takes the name only at close', async () => {
    const { host } = machine();
    await machine().addServer('writes');
    const channel = await host.files.openChannel('writes', ['world.zip'], PUT);
    assert.equal(channel.writable, true);
    await channel.write(0, Buffer.from('hello'));
    await channel.write(5, Buffer.from(' world'));
    await rejectsWith(host.files.stat('writes', ['world.zip'], true), 'NOT_FOUND');
    assert.deepEqual(await namesIn(host, 'writes'), []);
    assert.deepEqual(await host.files.list('writes', []), []);
    assert.deepEqual(await channel.read(0, 64), Buffer.from('hello world'));
    assert.equal((await channel.stat()).size, 11);
    const entry = await channel.close();
    assert.deepEqual(entry && [entry.path, entry.type, entry.size], ['world.zip', 'file', 11]);
    assert.equal(await host.files.readText('writes', ['world.zip'], 1024), 'hello world');
    assert.equal(await host.files.diskUsage('writes'), 11);

    // Resumed: opened without truncating, written at its size.
    const resumed = await host.files.openChannel('writes', ['world.zip'], RESUME);
    await resumed.write((await resumed.stat()).size, Buffer.from('!'));
    await resumed.close();
    assert.equal(await host.files.readText('writes', ['world.zip'], 1024), 'hello world!');

    // Aborted: the file is as it was, and nothing is left.
    const aborted = await host.files.openChannel('writes', ['world.zip'], PUT);
    await aborted.write(0, Buffer.from('gone'));
    assert.equal(await host.files.readText('writes', ['world.zip'], 1024), 'hello world!');
    await aborted.abort();
    assert.equal(await host.files.readText('writes', ['world.zip'], 1024), 'hello world!');
    assert.deepEqual(await namesIn(host, 'writes'), ['world.zip']);
    assert.equal(await host.files.diskUsage('writes'), 12);

    // Appended, whatever the offsets say; holes past the end.
    const appending = await host.files.openChannel('writes', ['world.zip'], {
      ...RESUME,
      append: true,
    });
    await appending.write(0, Buffer.from('+'));
    await appending.write(3, Buffer.from('+'));
    await appending.close();
    assert.equal(await host.files.readText('writes', ['world.zip'], 1024), 'hello world!++');
    const sparse = await host.files.openChannel('writes', ['sparse.bin'], PUT);
    await sparse.write(4, Buffer.from('x'));
    await sparse.close();
    const reading = await host.files.openChannel('writes', ['sparse.bin'], READ);
    assert.deepEqual(await reading.read(0, 10), Buffer.from('\0\0\0\0x'));
    assert.deepEqual(await reading.read(5, 10), Buffer.alloc(0));
    await rejectsWith(reading.write(0, Buffer.from('x')), 'VALIDATION_FAILED');
    assert.equal(await reading.close(), null);
  });

  it('opens regular files inside only, as the flags say', async () => {
    const { host } = machine();
    await hostile(machine(), 'opening');
    for (const flags of [READ, PUT, RESUME]) {
      for (const segments of OUT) {
        await rejectsWith(host.files.openChannel('opening', segments, flags), 'PATH_OUTSIDE');
      }
      await rejectsWith(host.files.openChannel('opening', ['etc', 'x'], flags), 'PATH_OUTSIDE');
      await rejectsWith(host.files.openChannel('opening', ['world'], flags), 'NOT_A_FILE');
      await rejectsWith(host.files.openChannel('opening', ['loop'], flags), 'SYMLINK_LOOP');
    }
    await rejectsWith(host.files.openChannel('opening', ['missing'], READ), 'NOT_FOUND');
    await rejectsWith(host.files.openChannel('opening', ['missing'], RESUME), 'NOT_FOUND');
    await rejectsWith(
      host.files.openChannel('opening', ['world', 'level.dat'], { ...PUT, exclusive: true }),
      'ALREADY_EXISTS',
    );
    // Through a link inside: the file it leads to is written, the link stays.
    const channel = await host.files.openChannel('opening', ['inner', 'level.dat'], PUT);
    await channel.write(0, Buffer.from('rewritten'));
    assert.equal((await channel.close())?.path, 'world/level.dat');
    assert.equal(await host.files.readText('opening', ['world', 'level.dat'], 1024), 'rewritten');
    assert.equal((await host.files.stat('opening', ['inner'], false)).type, 'symlink');
  });

  it('holds channel writes to the quota: refused, nothing written, never put in place', async () => {
    const { host } = machine();
    await machine().addServer('quota');
    await host.files.writeText('quota', ['old.bin'], 'x'.repeat(500));
    const channel = await host.files.openChannel('quota', ['new.bin'], PUT, 600);
    await channel.write(0, Buffer.alloc(60));
    await rejectsWith(channel.write(60, Buffer.alloc(60)), 'QUOTA_EXCEEDED');
    assert.equal((await channel.stat()).size, 60);
    await rejectsWith(channel.close(), 'QUOTA_EXCEEDED');
    assert.deepEqual(await namesIn(host, 'quota'), ['old.bin']);
    assert.equal(await host.files.diskUsage('quota'), 500);
    const fits = await host.files.openChannel('quota', ['new.bin'], PUT, 600);
    await fits.write(0, Buffer.alloc(100));
    await fits.close();
    assert.equal(await host.files.diskUsage('quota'), 600);
    await rejectsWith(
      host.files.setAttributes('quota', ['old.bin'], { size: 501 }, 600),
      'QUOTA_EXCEEDED',
    );
    await host.files.setAttributes('quota', ['old.bin'], { size: 100 }, 600);
    assert.equal(await host.files.diskUsage('quota'), 200);
  });

  it('makes and removes folders and files, one entry at a time', async () => {
    const { host } = machine();
    await hostile(machine(), 'single');
    await host.files.makeFolder('single', ['world', 'region']);
    assert.equal((await host.files.stat('single', ['world', 'region'], false)).type, 'folder');
    await rejectsWith(host.files.makeFolder('single', ['world', 'region']), 'ALREADY_EXISTS');
    await rejectsWith(host.files.makeFolder('single', ['nowhere', 'x']), 'NOT_FOUND');
    await rejectsWith(host.files.makeFolder('single', ['etc', 'planted']), 'PATH_OUTSIDE');
    await host.files.writeText('single', ['world', 'region', 'r.mca'], 'r');
    await rejectsWith(host.files.removeFolder('single', ['world', 'region']), 'FOLDER_NOT_EMPTY');
    await rejectsWith(host.files.removeFile('single', ['world', 'region']), 'NOT_A_FILE');
    await rejectsWith(
      host.files.removeFolder('single', ['world', 'region', 'r.mca']),
      'NOT_A_FOLDER',
    );
    await host.files.removeFile('single', ['world', 'region', 'r.mca']);
    await host.files.removeFolder('single', ['world', 'region']);
    await rejectsWith(host.files.removeFile('single', ['world', 'region']), 'NOT_FOUND');
    // Links go as themselves, whatever they lead to.
    await host.files.removeFile('single', ['hostname']);
    await host.files.removeFile('single', ['inner']);
    assert.equal(await host.files.readText('single', ['world', 'level.dat'], 1024), 'inside');
    await rejectsWith(host.files.removeFolder('single', ['etc']), 'NOT_A_FOLDER');
    await rejectsWith(host.files.removeFile('single', ['etc', 'hostname']), 'PATH_OUTSIDE');
  });

  it('renames anywhere inside, replacing a file only when asked, never through a link out', async () => {
    const { host } = machine();
    await hostile(machine(), 'renames');
    await host.files.writeText('renames', ['a.txt'], 'aaaa');
    await host.files.writeText('renames', ['b.txt'], 'bbbbbbbb');
    await rejectsWith(
      host.files.renamePath('renames', ['a.txt'], ['b.txt'], false),
      'ALREADY_EXISTS',
    );
    await host.files.renamePath('renames', ['a.txt'], ['b.txt'], true);
    assert.equal(await host.files.readText('renames', ['b.txt'], 1024), 'aaaa');
    await host.files.renamePath('renames', ['b.txt'], ['inner', 'deep', 'b.txt'], false);
    assert.equal(await host.files.readText('renames', ['world', 'deep', 'b.txt'], 1024), 'aaaa');
    await host.files.makeFolder('renames', ['other']);
    await rejectsWith(
      host.files.renamePath('renames', ['world', 'deep', 'b.txt'], ['other'], true),
      'ALREADY_EXISTS',
    );
    await rejectsWith(
      host.files.renamePath('renames', ['world'], ['other'], true),
      'ALREADY_EXISTS',
    );
    await host.files.renamePath('renames', ['other'], ['world', 'other'], false);
    for (const to of [
      ['etc', 'b.txt'],
      ['up', 'b.txt'],
      ['world', 'root', 'etc', 'b.txt'],
    ]) {
      await rejectsWith(
        host.files.renamePath('renames', ['world', 'deep', 'b.txt'], to, true),
        'PATH_OUTSIDE',
      );
    }
    await rejectsWith(
      host.files.renamePath('renames', ['etc', 'hostname'], ['stolen'], false),
      'PATH_OUTSIDE',
    );
    // Onto a link out: the link itself is replaced, never what it points to.
    await host.files.renamePath('renames', ['world', 'deep', 'b.txt'], ['hostname'], true);
    assert.equal((await host.files.stat('renames', ['hostname'], false)).type, 'file');
    assert.equal(await host.files.readText('renames', ['hostname'], 1024), 'aaaa');
  });

  it('reads and makes links as paths from the root; links are kept inside', async () => {
    const { host } = machine();
    await hostile(machine(), 'links');
    assert.deepEqual(await host.files.readLink('links', ['inner']), ['world']);
    assert.deepEqual(await host.files.readLink('links', ['world', 'root']), []);
    for (const segments of [['etc'], ['hostname'], ['up'], ['world', 'deep', 'escape']]) {
      await rejectsWith(host.files.readLink('links', segments), 'PATH_OUTSIDE');
    }
    await rejectsWith(host.files.readLink('links', ['world']), 'VALIDATION_FAILED');
    await host.files.makeLink('links', ['world', 'deep', 'level'], ['world', 'level.dat']);
    assert.deepEqual(await host.files.readLink('links', ['world', 'deep', 'level']), [
      'world',
      'level.dat',
    ]);
    assert.equal(await host.files.readText('links', ['world', 'deep', 'level'], 1024), 'inside');
    // Stored relative to its folder: moved along with it, it still leads to the same place.
    await host.files.renamePath('links', ['world'], ['moved'], false);
    assert.deepEqual(await host.files.readLink('links', ['moved', 'deep', 'level']), [
      'moved',
      'level.dat',
    ]);
    assert.equal(await host.files.readText('links', ['moved', 'deep', 'level'], 1024), 'inside');
    await host.files.makeLink('links', ['later'], ['plugins', 'later.jar']);
    assert.deepEqual(await host.files.readLink('links', ['later']), ['plugins', 'later.jar']);
    await rejectsWith(host.files.makeLink('links', ['x'], ['..', 'etc']), 'PATH_OUTSIDE');
    await rejectsWith(host.files.makeLink('links', ['etc', 'x'], ['moved']), 'PATH_OUTSIDE');
    await rejectsWith(host.files.makeLink('links', ['later'], ['moved']), 'ALREADY_EXISTS');
  });

  it('changes modes within 0777, times and sizes, following links inside only', async () => {
    const { host } = machine();
    await hostile(machine(), 'chmod');
    await host.files.setAttributes('chmod', ['inner', 'level.dat'], { mode: 0o600 });
    assert.equal((await host.files.stat('chmod', ['world', 'level.dat'], true)).mode, 0o600);
    for (const mode of [0o4755, 0o2755, 0o1777, 0o100644]) {
      await rejectsWith(
        host.files.setAttributes('chmod', ['world', 'level.dat'], { mode }),
        'MODE_REFUSED',
      );
    }
    assert.equal((await host.files.stat('chmod', ['world', 'level.dat'], true)).mode, 0o600);
    const when = new Date('2021-03-04T05:06:07.000Z');
    await host.files.setAttributes('chmod', ['world', 'level.dat'], { modified: when, size: 3 });
    const changed = await host.files.stat('chmod', ['world', 'level.dat'], true);
    assert.equal(changed.modified.getTime(), when.getTime());
    assert.equal(changed.size, 3);
    for (const segments of OUT) {
      await rejectsWith(
        host.files.setAttributes('chmod', segments, { mode: 0o777 }),
        'PATH_OUTSIDE',
      );
    }
    await rejectsWith(host.files.setAttributes('chmod', ['world'], { size: 0 }), 'NOT_A_FILE');
    await rejectsWith(host.files.setAttributes('chmod', ['missing'], { mode: 0o600 }), 'NOT_FOUND');
  });

  it('holds every operation to the deny list, as written and as resolved', async () => {
    const { host } = machine();
    await machine().addServer('denied');
    await restoreTar(machine(), 'denied', [
      file('server.cfg', 'secret'),
      file('notes.txt', 'notes'),
      folder('private'),
      file('private/key', 'key'),
      link('alias', 'server.cfg'),
    ]);
    const guard = compileDenylist(['*.cfg', 'private/']).list;
    const files = host.files;
    await rejectsWith(files.stat('denied', ['alias'], true, guard), 'FILE_DENIED');
    await rejectsWith(files.openChannel('denied', ['alias'], READ, null, guard), 'FILE_DENIED');
    await rejectsWith(files.openChannel('denied', ['x.cfg'], PUT, null, guard), 'FILE_DENIED');
    await rejectsWith(
      (async () => {
        for await (const batch of files.readFolder('denied', ['private'], 10, guard)) {
          assert.fail(`read ${batch.length} denied entries`);
        }
      })(),
      'FILE_DENIED',
    );
    await rejectsWith(files.removeFile('denied', ['server.cfg'], guard), 'FILE_DENIED');
    await rejectsWith(files.makeFolder('denied', ['private'], guard), 'FILE_DENIED');
    await rejectsWith(
      files.renamePath('denied', ['notes.txt'], ['notes.cfg'], false, guard),
      'FILE_DENIED',
    );
    await rejectsWith(
      files.setAttributes('denied', ['server.cfg'], { mode: 0o600 }, null, guard),
      'FILE_DENIED',
    );
    await rejectsWith(files.makeLink('denied', ['link.cfg'], ['notes.txt'], guard), 'FILE_DENIED');
    // The listing shows denied entries, as the file manager's does.
    assert.deepEqual(await namesIn(host, 'denied'), [
      'alias',
      'notes.txt',
      'private',
      'server.cfg',
    ]);
    assert.equal(await files.readText('denied', ['server.cfg'], 1024), 'secret');
  });
});
