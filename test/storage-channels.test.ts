/**
 * The local storage as a remote files session (SFTP) uses it (ServerFileChannels,
 * src/host/host.ts): a real ServerStorage on real folders, owned by a server user of its own
 * (the test runs as root, as the panel does when servers have users of their own).
 *
 * Beside the servers' folder lies a folder of bait files and `s2`, a sibling server; symlinks
 * out of a server lead there, and after every attack they must be as they were. Each test works
 * in a server of its own, so the books of disk use it reads are its own; they are measured once
 * and then only moved by the panel's writes (a long TTL), so a wrong book is never hidden by a
 * walk.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  realpath,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ChannelFlags, NamedStat } from '../src/host/host.js';
import { TEMP_PREFIX } from '../src/host/local/storage/atomic.js';
import { ServerStorage } from '../src/host/local/storage/server-storage.js';
import { AppError, type ErrorCode } from '../src/errors.js';
import { compileDenylist } from '../src/templates/denylist.js';

const OWNER = { uid: 4242, gid: 4343 };
const BAIT = 'BAIT: must never be read or changed\n';
const SIBLING = 'S2 SECRET\n';

const READ: ChannelFlags = {
  read: true,
  write: false,
  append: false,
  create: false,
  truncate: false,
  exclusive: false,
};
/** What `put` opens a file with: write, create, truncate. */
const PUT: ChannelFlags = { ...READ, read: false, write: true, create: true, truncate: true };
/** What a resumed upload opens a file with: write, keep the content. */
const RESUME: ChannelFlags = { ...READ, read: false, write: true };

let base: string;
let outside: string;
let sibling: string;
let storage: ServerStorage;

async function rejectsWith(work: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof AppError, `expected an AppError ${code}, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

/** A fresh server of the test's own; answers its name and its directory. */
async function server(): Promise<{ name: string; dir: string }> {
  const name = `s-${randomBytes(4).toString('hex')}`;
  await storage.create(name, OWNER);
  return { name, dir: storage.directoryOf(name) };
}

/**
 * Every entry under `dir` whose name is one of the panel's temporary names. (Walked by hand:
 * Node 20's recursive readdir follows symlinks to folders, and these folders hold loops.)
 */
async function temporaries(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const shownName = `${prefix}${entry.name}`;
    if (entry.name.startsWith(TEMP_PREFIX)) found.push(shownName);
    if (entry.isDirectory()) {
      found.push(...(await temporaries(path.join(dir, entry.name), `${shownName}/`)));
    }
  }
  return found;
}

/** Everything outside the server under test, with its content: it must never change. */
async function untouched(): Promise<void> {
  assert.equal(await readFile(path.join(outside, 'bait.txt'), 'utf8'), BAIT);
  assert.equal((await stat(path.join(outside, 'bait.txt'))).mode & 0o7777, 0o644);
  assert.deepEqual((await readdir(outside)).sort(), ['bait.txt', 'folder']);
  assert.deepEqual(await readdir(path.join(outside, 'folder')), []);
  assert.equal(await readFile(path.join(sibling, 'secret.txt'), 'utf8'), SIBLING);
  assert.deepEqual(await readdir(sibling), ['secret.txt']);
}

async function collect(batches: AsyncIterable<readonly NamedStat[]>): Promise<NamedStat[][]> {
  const all: NamedStat[][] = [];
  for await (const batch of batches) all.push([...batch]);
  return all;
}

const names = (batches: readonly (readonly NamedStat[])[]): string[] =>
  batches.flat().map((entry) => entry.name);

before(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'storage-channels-'));
  outside = path.join(base, 'outside');
  await mkdir(path.join(outside, 'folder'), { recursive: true });
  await writeFile(path.join(outside, 'bait.txt'), BAIT, { mode: 0o644 });
  await chmod(path.join(outside, 'bait.txt'), 0o644);
  const serversDir = path.join(base, 'servers');
  await mkdir(serversDir);
  storage = new ServerStorage(serversDir, { chowns: true, usageTtlMs: 3_600_000 });
  await storage.create('s2', OWNER);
  sibling = storage.directoryOf('s2');
  await writeFile(path.join(sibling, 'secret.txt'), SIBLING);
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

/**
 * A server's folder with links of every kind: inside (`inner` → world, `world/root` → ..), out
 * (`etc` → the bait folder, `bait` → the bait file, `up` → ../.., `next` → the sibling,
 * `world/deep/escape` → three levels up and into the sibling), dangling, a loop, a FIFO and a
 * temporary file of the panel's.
 */
async function hostile(): Promise<{ name: string; dir: string; temp: string }> {
  const made = await server();
  const { dir } = made;
  await mkdir(path.join(dir, 'world', 'deep'), { recursive: true });
  await writeFile(path.join(dir, 'world', 'level.dat'), 'inside');
  await symlink('world', path.join(dir, 'inner'));
  await symlink('..', path.join(dir, 'world', 'root'));
  await symlink(outside, path.join(dir, 'etc'));
  await symlink(path.join(outside, 'bait.txt'), path.join(dir, 'bait'));
  await symlink('../..', path.join(dir, 'up'));
  await symlink('../s2', path.join(dir, 'next'));
  await symlink('../../../s2/secret.txt', path.join(dir, 'world', 'deep', 'escape'));
  await symlink('missing.txt', path.join(dir, 'dangling'));
  await symlink('loop', path.join(dir, 'loop'));
  execFileSync('mkfifo', [path.join(dir, 'fifo')]);
  const temp = `${TEMP_PREFIX}0123456789ab-0011223344556677`;
  await writeFile(path.join(dir, temp), 'temporary');
  await symlink(temp, path.join(dir, 'to-temp'));
  return { ...made, temp };
}

/** Paths whose resolution leaves the folder, at every depth. */
const OUT_FILES = [
  ['bait'],
  ['etc', 'bait.txt'],
  ['up', 'outside', 'bait.txt'],
  ['next', 'secret.txt'],
  ['world', 'deep', 'escape'],
  ['world', 'root', 'next', 'secret.txt'],
  ['inner', 'root', 'up', 's2', 'secret.txt'],
];

describe('stat and realPath', () => {
  it('tells files, folders, symlinks and special files apart, with their attributes', async () => {
    const { name, dir } = await hostile();
    await chmod(path.join(dir, 'world', 'level.dat'), 0o640);
    const when = new Date('2024-05-06T07:08:09.000Z');
    await utimes(path.join(dir, 'world', 'level.dat'), when, when);
    const file = await storage.stat(name, ['world', 'level.dat'], true);
    assert.deepEqual(file, { type: 'file', size: 6, mode: 0o640, accessed: when, modified: when });
    assert.equal((await storage.stat(name, ['world'], true)).type, 'folder');
    assert.equal((await storage.stat(name, [], true)).type, 'folder');
    assert.equal((await storage.stat(name, [], true)).mode, 0o700);
    const linkItself = await storage.stat(name, ['inner'], false);
    assert.equal(linkItself.type, 'symlink');
    assert.equal(linkItself.size, 'world'.length);
    assert.equal((await storage.stat(name, ['inner'], true)).type, 'folder');
    assert.equal((await storage.stat(name, ['inner', 'level.dat'], false)).type, 'file');
    assert.equal((await storage.stat(name, ['fifo'], false)).type, 'other');
    assert.equal((await storage.stat(name, ['fifo'], true)).type, 'other');
    await rejectsWith(storage.stat(name, ['missing'], false), 'NOT_FOUND');
    await rejectsWith(storage.stat(name, ['dangling'], true), 'NOT_FOUND');
    assert.equal((await storage.stat(name, ['dangling'], false)).type, 'symlink');
    await rejectsWith(storage.stat(name, ['loop'], true), 'SYMLINK_LOOP');
  });

  it('refuses links out when following, shows them as links when not', async () => {
    const { name, temp } = await hostile();
    for (const segments of OUT_FILES) {
      await rejectsWith(storage.stat(name, segments, true), 'PATH_OUTSIDE');
      await rejectsWith(storage.realPath(name, segments), 'PATH_OUTSIDE');
    }
    for (const segments of [['bait'], ['etc'], ['up'], ['next'], ['world', 'deep', 'escape']]) {
      assert.equal((await storage.stat(name, segments, false)).type, 'symlink');
    }
    // A parent that leads out is refused even without following the last segment.
    await rejectsWith(storage.stat(name, ['etc', 'bait.txt'], false), 'PATH_OUTSIDE');
    for (const segments of [['..', 's2'], ['world', '..', '..', 's2'], ['.'], ['a/b'], ['']]) {
      await rejectsWith(storage.stat(name, segments, false), 'PATH_OUTSIDE');
    }
    // The panel's temporary files: never reachable, by their name or through a link.
    await rejectsWith(storage.stat(name, [temp], false), 'INVALID_PATH');
    await rejectsWith(storage.stat(name, ['to-temp'], true), 'INVALID_PATH');
    await rejectsWith(storage.realPath(name, ['to-temp']), 'INVALID_PATH');
    await untouched();
  });

  it('resolves real paths through links inside; a missing last segment is fine', async () => {
    const { name } = await hostile();
    assert.deepEqual(await storage.realPath(name, []), []);
    assert.deepEqual(await storage.realPath(name, ['inner', 'level.dat']), ['world', 'level.dat']);
    assert.deepEqual(await storage.realPath(name, ['world', 'root']), []);
    assert.deepEqual(await storage.realPath(name, ['world', 'root', 'inner', 'new.txt']), [
      'world',
      'new.txt',
    ]);
    assert.deepEqual(await storage.realPath(name, ['dangling']), ['missing.txt']);
    await rejectsWith(storage.realPath(name, ['nowhere', 'new.txt']), 'NOT_FOUND');
    await rejectsWith(storage.realPath(name, ['world', 'level.dat', 'x']), 'NOT_A_FOLDER');
  });

  it('refuses what the deny list denies, as written and as resolved', async () => {
    const { name, dir } = await server();
    await mkdir(path.join(dir, 'private'));
    await writeFile(path.join(dir, 'secret.cfg'), 'x');
    await symlink('secret.cfg', path.join(dir, 'alias'));
    const guard = compileDenylist(['secret.cfg', 'private/']).list;
    await rejectsWith(storage.stat(name, ['secret.cfg'], true, guard), 'FILE_DENIED');
    await rejectsWith(storage.stat(name, ['alias'], true, guard), 'FILE_DENIED');
    await rejectsWith(storage.stat(name, ['private'], true, guard), 'FILE_DENIED');
    assert.equal((await storage.stat(name, ['alias'], false, guard)).type, 'symlink');
    assert.equal((await storage.stat(name, ['secret.cfg'], true)).type, 'file');
  });
});

describe('readFolder', () => {
  it('reads a folder of 10,000 entries in batches, as they are asked for', async () => {
    const { name, dir } = await server();
    await mkdir(path.join(dir, 'big'));
    const made: string[] = [];
    for (let i = 0; i < 10_000; i += 1) made.push(`f${String(i).padStart(5, '0')}`);
    for (let i = 0; i < made.length; i += 500) {
      await Promise.all(
        made.slice(i, i + 500).map((file) => writeFile(path.join(dir, 'big', file), 'x')),
      );
    }
    const batches = await collect(storage.readFolder(name, ['big'], 100));
    assert.ok(batches.every((batch) => batch.length > 0 && batch.length <= 100));
    assert.equal(batches.length, 100);
    assert.deepEqual(names(batches).sort(), made);
    assert.ok(batches.flat().every((entry) => entry.type === 'file' && entry.size === 1));

    // Read as asked: what is removed once the first batch is answered is never answered.
    const reading = storage.readFolder(name, ['big'], 50);
    const first = await reading.next();
    assert.ok(first.done !== true);
    assert.equal(first.value.length, 50);
    await rm(path.join(dir, 'big'), { recursive: true });
    await mkdir(path.join(dir, 'big'));
    let rest = 0;
    for (let next = await reading.next(); next.done !== true; next = await reading.next()) {
      rest += next.value.length;
    }
    assert.ok(rest < 1000, `${rest} entries were read after the folder was emptied`);
  });

  it('shows links as links and special files as other, hides temporary files', async () => {
    const { name, temp } = await hostile();
    const entries = (await collect(storage.readFolder(name, [], 3))).flat();
    const byName = new Map(entries.map((entry) => [entry.name, entry]));
    assert.ok(!byName.has(temp), 'a temporary file is listed');
    assert.deepEqual([...byName.keys()].sort(), [
      'bait',
      'dangling',
      'etc',
      'fifo',
      'inner',
      'loop',
      'next',
      'to-temp',
      'up',
      'world',
    ]);
    assert.equal(byName.get('etc')?.type, 'symlink');
    assert.equal(byName.get('fifo')?.type, 'other');
    assert.equal(byName.get('world')?.type, 'folder');
    assert.equal(byName.get('world')?.mode, 0o755);
    // A folder through a link inside is read; one whose link leads out is refused.
    assert.ok(names(await collect(storage.readFolder(name, ['inner'], 10))).includes('level.dat'));
    for (const folder of [['etc'], ['up'], ['next'], ['world', 'root', 'up'], ['..']]) {
      await rejectsWith(collect(storage.readFolder(name, folder, 10)), 'PATH_OUTSIDE');
    }
    await rejectsWith(collect(storage.readFolder(name, ['missing'], 10)), 'NOT_FOUND');
    await rejectsWith(
      collect(storage.readFolder(name, ['world', 'level.dat'], 10)),
      'NOT_A_FOLDER',
    );
    await rejectsWith(collect(storage.readFolder(name, ['world'], 0)), 'VALIDATION_FAILED');
    await untouched();
  });

  it('refuses a denied folder, lists denied entries as the file manager does', async () => {
    const { name, dir } = await server();
    await mkdir(path.join(dir, 'private'));
    await writeFile(path.join(dir, 'private', 'a'), 'a');
    await writeFile(path.join(dir, 'secret.cfg'), 'x');
    const guard = compileDenylist(['secret.cfg', 'private/']).list;
    await rejectsWith(collect(storage.readFolder(name, ['private'], 10, guard)), 'FILE_DENIED');
    assert.deepEqual(names(await collect(storage.readFolder(name, [], 10, guard))).sort(), [
      'private',
      'secret.cfg',
    ]);
  });
});

describe('single-entry changes', () => {
  it('makes folders owned by the server, refuses what is in the way', async () => {
    const { name, dir } = await hostile();
    await storage.makeFolder(name, ['world', 'region']);
    const made = await lstat(path.join(dir, 'world', 'region'));
    assert.ok(made.isDirectory());
    assert.deepEqual([made.uid, made.gid, made.mode & 0o7777], [OWNER.uid, OWNER.gid, 0o755]);
    // Through a link inside, the folder is made where it leads.
    await storage.makeFolder(name, ['inner', 'nether']);
    assert.ok((await lstat(path.join(dir, 'world', 'nether'))).isDirectory());
    await rejectsWith(storage.makeFolder(name, ['world', 'region']), 'ALREADY_EXISTS');
    await rejectsWith(storage.makeFolder(name, ['dangling']), 'ALREADY_EXISTS');
    await rejectsWith(storage.makeFolder(name, []), 'ALREADY_EXISTS');
    await rejectsWith(storage.makeFolder(name, ['nowhere', 'x']), 'NOT_FOUND');
    await rejectsWith(storage.makeFolder(name, ['etc', 'planted']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeFolder(name, ['up', 'planted']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeFolder(name, ['..', 'planted']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeFolder(name, [`${TEMP_PREFIX}x`]), 'INVALID_PATH');
    const guard = compileDenylist(['private/']).list;
    await rejectsWith(storage.makeFolder(name, ['private'], guard), 'FILE_DENIED');
    await untouched();
  });

  it('removes files and links as themselves, never folders; the books follow', async () => {
    const { name, dir } = await hostile();
    await writeFile(path.join(dir, 'world', 'big.bin'), Buffer.alloc(5000));
    const before = await storage.diskUsage(name);
    await storage.removeFile(name, ['world', 'big.bin']);
    assert.equal(await storage.diskUsage(name), before - 5000);
    // Links, inside or out, go; what they point to stays.
    await storage.removeFile(name, ['bait']);
    await storage.removeFile(name, ['next']);
    await storage.removeFile(name, ['inner']);
    await storage.removeFile(name, ['fifo']);
    assert.equal(await readFile(path.join(dir, 'world', 'level.dat'), 'utf8'), 'inside');
    await rejectsWith(storage.removeFile(name, ['world']), 'NOT_A_FILE');
    await rejectsWith(storage.removeFile(name, []), 'NOT_A_FILE');
    await rejectsWith(storage.removeFile(name, ['world', 'big.bin']), 'NOT_FOUND');
    await rejectsWith(storage.removeFile(name, ['etc', 'bait.txt']), 'PATH_OUTSIDE');
    await rejectsWith(storage.removeFile(name, ['up', 's2', 'secret.txt']), 'PATH_OUTSIDE');
    await writeFile(path.join(dir, 'secret.cfg'), 'x');
    await rejectsWith(
      storage.removeFile(name, ['secret.cfg'], compileDenylist(['*.cfg']).list),
      'FILE_DENIED',
    );
    await untouched();
  });

  it('removes empty folders only', async () => {
    const { name, dir } = await hostile();
    await mkdir(path.join(dir, 'empty'));
    await storage.removeFolder(name, ['empty']);
    assert.equal(await lstat(path.join(dir, 'empty')).catch(() => null), null);
    await rejectsWith(storage.removeFolder(name, ['world']), 'FOLDER_NOT_EMPTY');
    await rejectsWith(storage.removeFolder(name, ['world', 'level.dat']), 'NOT_A_FOLDER');
    // A link to a folder is not a folder: it stays, and so does its target.
    await rejectsWith(storage.removeFolder(name, ['inner']), 'NOT_A_FOLDER');
    await rejectsWith(storage.removeFolder(name, ['etc']), 'NOT_A_FOLDER');
    await rejectsWith(storage.removeFolder(name, ['etc', 'folder']), 'PATH_OUTSIDE');
    await rejectsWith(storage.removeFolder(name, ['missing']), 'NOT_FOUND');
    await rejectsWith(storage.removeFolder(name, []), 'VALIDATION_FAILED');
    assert.ok((await lstat(path.join(dir, 'inner'))).isSymbolicLink());
    await untouched();
  });

  it('renames anywhere in the folder, replacing a file only when asked', async () => {
    const { name, dir } = await hostile();
    await writeFile(path.join(dir, 'a.txt'), 'aaaa');
    await writeFile(path.join(dir, 'b.txt'), 'bbbbbbbbbb');
    const before = await storage.diskUsage(name);
    await rejectsWith(storage.renamePath(name, ['a.txt'], ['b.txt'], false), 'ALREADY_EXISTS');
    assert.equal(await readFile(path.join(dir, 'b.txt'), 'utf8'), 'bbbbbbbbbb');
    assert.equal(await readFile(path.join(dir, 'a.txt'), 'utf8'), 'aaaa');
    await storage.renamePath(name, ['a.txt'], ['b.txt'], true);
    assert.equal(await readFile(path.join(dir, 'b.txt'), 'utf8'), 'aaaa');
    assert.equal(await lstat(path.join(dir, 'a.txt')).catch(() => null), null);
    assert.equal(await storage.diskUsage(name), before - 10);

    // Across folders, through a link inside; folders too.
    await storage.renamePath(name, ['b.txt'], ['inner', 'deep', 'b.txt'], false);
    assert.equal(await readFile(path.join(dir, 'world', 'deep', 'b.txt'), 'utf8'), 'aaaa');
    await storage.renamePath(name, ['world', 'deep'], ['deeper'], false);
    assert.ok((await lstat(path.join(dir, 'deeper', 'escape'))).isSymbolicLink());
    // A folder is never replaced, nor replaces anything.
    await mkdir(path.join(dir, 'other'));
    await rejectsWith(storage.renamePath(name, ['deeper'], ['other'], true), 'ALREADY_EXISTS');
    await rejectsWith(
      storage.renamePath(name, ['deeper', 'b.txt'], ['other'], true),
      'ALREADY_EXISTS',
    );
    await rejectsWith(
      storage.renamePath(name, ['deeper'], ['world', 'level.dat'], true),
      'ALREADY_EXISTS',
    );
    await rejectsWith(
      storage.renamePath(name, ['world'], ['world', 'inside'], false),
      'VALIDATION_FAILED',
    );
    await rejectsWith(storage.renamePath(name, ['missing'], ['x'], true), 'NOT_FOUND');
    await rejectsWith(storage.renamePath(name, [], ['x'], true), 'VALIDATION_FAILED');
    await rejectsWith(storage.renamePath(name, ['other'], [], true), 'ALREADY_EXISTS');
    assert.equal(await storage.diskUsage(name), before - 10);
  });

  it('never renames into, out of or through a link that leads out', async () => {
    const { name, dir } = await hostile();
    await writeFile(path.join(dir, 'payload.txt'), 'ATTACK');
    for (const to of [
      ['etc', 'payload.txt'],
      ['etc', 'bait.txt'],
      ['up', 'outside', 'payload.txt'],
      ['next', 'secret.txt'],
      ['world', 'root', 'next', 'payload.txt'],
      ['..', 's2', 'secret.txt'],
    ]) {
      for (const replace of [false, true]) {
        await rejectsWith(storage.renamePath(name, ['payload.txt'], to, replace), 'PATH_OUTSIDE');
      }
    }
    for (const from of [
      ['etc', 'bait.txt'],
      ['next', 'secret.txt'],
      ['up', 's2'],
    ]) {
      await rejectsWith(storage.renamePath(name, from, ['stolen'], true), 'PATH_OUTSIDE');
    }
    // Onto a link out: the link itself is what is there (409), or what is replaced; never its target.
    await rejectsWith(storage.renamePath(name, ['payload.txt'], ['bait'], false), 'ALREADY_EXISTS');
    await storage.renamePath(name, ['payload.txt'], ['bait'], true);
    assert.equal(await readFile(path.join(dir, 'bait'), 'utf8'), 'ATTACK');
    assert.ok((await lstat(path.join(dir, 'bait'))).isFile());
    // A link out moved elsewhere is still a link, still refused when followed.
    await storage.renamePath(name, ['etc'], ['world', 'etc'], false);
    assert.ok((await lstat(path.join(dir, 'world', 'etc'))).isSymbolicLink());
    await rejectsWith(storage.stat(name, ['world', 'etc'], true), 'PATH_OUTSIDE');
    await rejectsWith(
      storage.renamePath(name, ['world'], [`${TEMP_PREFIX}x`], true),
      'INVALID_PATH',
    );
    await untouched();
  });

  it('holds renames to the deny list at both places, and inside a folder moved', async () => {
    const { name, dir } = await server();
    await mkdir(path.join(dir, 'plugins', 'conf'), { recursive: true });
    await writeFile(path.join(dir, 'plugins', 'conf', 'secret.cfg'), 'x');
    await writeFile(path.join(dir, 'notes.txt'), 'x');
    const guard = compileDenylist(['secret.cfg', '/locked/']).list;
    await rejectsWith(storage.renamePath(name, ['plugins'], ['mods'], false, guard), 'FILE_DENIED');
    await rejectsWith(
      storage.renamePath(name, ['notes.txt'], ['secret.cfg'], true, guard),
      'FILE_DENIED',
    );
    await mkdir(path.join(dir, 'folder'));
    await rejectsWith(
      storage.renamePath(name, ['folder'], ['locked'], false, guard),
      'FILE_DENIED',
    );
    assert.deepEqual((await readdir(dir)).sort(), ['folder', 'notes.txt', 'plugins']);
    await storage.renamePath(name, ['notes.txt'], ['readme.txt'], false, guard);
  });

  it('reads links as paths from the root, refuses those that lead out', async () => {
    const { name, dir, temp } = await hostile();
    assert.deepEqual(await storage.readLink(name, ['inner']), ['world']);
    assert.deepEqual(await storage.readLink(name, ['world', 'root']), []);
    assert.deepEqual(await storage.readLink(name, ['dangling']), ['missing.txt']);
    await symlink(path.join(await realpath(dir), 'world', 'level.dat'), path.join(dir, 'abs'));
    assert.deepEqual(await storage.readLink(name, ['abs']), ['world', 'level.dat']);
    assert.deepEqual(await storage.readLink(name, ['inner', 'root']), []);
    for (const segments of [['etc'], ['bait'], ['up'], ['next'], ['world', 'deep', 'escape']]) {
      await rejectsWith(storage.readLink(name, segments), 'PATH_OUTSIDE');
    }
    await rejectsWith(storage.readLink(name, ['etc', 'folder']), 'PATH_OUTSIDE');
    await rejectsWith(storage.readLink(name, ['to-temp']), 'INVALID_PATH');
    await rejectsWith(storage.readLink(name, [temp]), 'INVALID_PATH');
    await rejectsWith(storage.readLink(name, ['world']), 'VALIDATION_FAILED');
    await rejectsWith(storage.readLink(name, []), 'VALIDATION_FAILED');
    await rejectsWith(storage.readLink(name, ['missing']), 'NOT_FOUND');
  });

  it('makes links stored relative to their folder, owned by the server', async () => {
    const { name, dir } = await hostile();
    await storage.makeLink(name, ['world', 'deep', 'level'], ['world', 'level.dat']);
    const made = path.join(dir, 'world', 'deep', 'level');
    assert.equal(await readlink(made), '../level.dat');
    const stats = await lstat(made);
    assert.deepEqual([stats.uid, stats.gid], [OWNER.uid, OWNER.gid]);
    assert.deepEqual(await storage.readLink(name, ['world', 'deep', 'level']), [
      'world',
      'level.dat',
    ]);
    assert.equal((await storage.stat(name, ['world', 'deep', 'level'], true)).size, 6);
    // The target need not exist; a link in a folder reached through a link is stored where it is.
    await storage.makeLink(name, ['inner', 'later'], ['plugins', 'later.jar']);
    assert.equal(await readlink(path.join(dir, 'world', 'later')), '../plugins/later.jar');
    await storage.makeLink(name, ['top'], []);
    assert.equal(await readlink(path.join(dir, 'top')), '.');
    const before = await storage.diskUsage(name);
    await storage.makeLink(name, ['here'], ['world']);
    assert.equal(await storage.diskUsage(name), before + 'world'.length);

    // Nothing leads out, whatever the target or where the link is asked to go.
    await rejectsWith(storage.makeLink(name, ['x'], ['..', 's2']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeLink(name, ['x'], ['/etc/passwd']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeLink(name, ['x'], ['a/../../s2']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeLink(name, ['x'], [`${TEMP_PREFIX}x`]), 'INVALID_PATH');
    await rejectsWith(storage.makeLink(name, ['etc', 'planted'], ['world']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeLink(name, ['up', 'planted'], ['world']), 'PATH_OUTSIDE');
    await rejectsWith(storage.makeLink(name, ['bait'], ['world']), 'ALREADY_EXISTS');
    await rejectsWith(storage.makeLink(name, ['nowhere', 'x'], ['world']), 'NOT_FOUND');
    await rejectsWith(
      storage.makeLink(name, ['secret.cfg'], ['world'], compileDenylist(['*.cfg']).list),
      'FILE_DENIED',
    );
    await untouched();
  });
});

describe('setAttributes', () => {
  it('changes mode, times and size, following links inside only', async () => {
    const { name, dir } = await hostile();
    const level = path.join(dir, 'world', 'level.dat');
    await storage.setAttributes(name, ['inner', 'level.dat'], { mode: 0o600 });
    assert.equal((await stat(level)).mode & 0o7777, 0o600);
    await storage.setAttributes(name, ['world'], { mode: 0o750 });
    assert.equal((await stat(path.join(dir, 'world'))).mode & 0o7777, 0o750);
    const when = new Date('2023-01-02T03:04:05.000Z');
    await storage.setAttributes(name, ['world', 'level.dat'], { accessed: when, modified: when });
    assert.equal((await stat(level)).mtime.getTime(), when.getTime());
    assert.equal((await stat(level)).atime.getTime(), when.getTime());
    // The size first, then the times: a cut file keeps the time it is given.
    await storage.setAttributes(name, ['world', 'level.dat'], { size: 3, modified: when });
    assert.equal(await readFile(level, 'utf8'), 'ins');
    assert.equal((await stat(level)).mtime.getTime(), when.getTime());
    await storage.setAttributes(name, ['world', 'level.dat'], { size: 10 });
    assert.deepEqual(await readFile(level), Buffer.from('ins\0\0\0\0\0\0\0'));

    for (const segments of OUT_FILES) {
      for (const changes of [{ mode: 0o777 }, { size: 0 }, { modified: when }]) {
        await rejectsWith(storage.setAttributes(name, segments, changes), 'PATH_OUTSIDE');
      }
    }
    await rejectsWith(storage.setAttributes(name, ['etc'], { mode: 0o777 }), 'PATH_OUTSIDE');
    await rejectsWith(storage.setAttributes(name, ['fifo'], { mode: 0o600 }), 'SPECIAL_FILE');
    await rejectsWith(storage.setAttributes(name, ['world'], { size: 0 }), 'NOT_A_FILE');
    await rejectsWith(storage.setAttributes(name, [], { mode: 0o777 }), 'VALIDATION_FAILED');
    await rejectsWith(storage.setAttributes(name, ['dangling'], { mode: 0o600 }), 'NOT_FOUND');
    await rejectsWith(storage.setAttributes(name, ['world'], { size: -1 }), 'VALIDATION_FAILED');
    await rejectsWith(
      storage.setAttributes(name, ['world'], { modified: new Date(Number.NaN) }),
      'VALIDATION_FAILED',
    );
    assert.equal((await stat(dir)).mode & 0o7777, 0o700);
    await untouched();
  });

  it('refuses every mode past 0777, changing nothing', async () => {
    const { name, dir } = await server();
    await writeFile(path.join(dir, 'run.sh'), '#!/bin/sh\n', { mode: 0o644 });
    await chmod(path.join(dir, 'run.sh'), 0o644);
    for (const mode of [0o4755, 0o2755, 0o1777, 0o100644, 0o7777, -1, 1.5]) {
      await rejectsWith(storage.setAttributes(name, ['run.sh'], { mode, size: 0 }), 'MODE_REFUSED');
    }
    assert.equal((await stat(path.join(dir, 'run.sh'))).mode & 0o7777, 0o644);
    assert.equal(await readFile(path.join(dir, 'run.sh'), 'utf8'), '#!/bin/sh\n');
  });

  it('counts a file grown against the quota, and frees what a cut gives back', async () => {
    const { name, dir } = await server();
    await writeFile(path.join(dir, 'a.bin'), Buffer.alloc(1000));
    const before = await storage.diskUsage(name);
    await rejectsWith(
      storage.setAttributes(name, ['a.bin'], { size: 1200 }, before + 100),
      'QUOTA_EXCEEDED',
    );
    assert.equal((await stat(path.join(dir, 'a.bin'))).size, 1000);
    await storage.setAttributes(name, ['a.bin'], { size: 1100 }, before + 100);
    assert.equal(await storage.diskUsage(name), before + 100);
    await storage.setAttributes(name, ['a.bin'], { size: 100 }, before + 100);
    assert.equal(await storage.diskUsage(name), before - 900);
  });
});

describe('file channels', () => {
  it('reads a file at offsets, through links inside; never more than 1 MiB at once', async () => {
    const { name, dir } = await hostile();
    const content = randomBytes(3 * 1024 * 1024);
    await writeFile(path.join(dir, 'world', 'blob.bin'), content);
    const channel = await storage.openChannel(name, ['inner', 'blob.bin'], READ);
    assert.equal(channel.writable, false);
    assert.deepEqual(await channel.read(10, 20), content.subarray(10, 30));
    const big = await channel.read(0, 10 * 1024 * 1024);
    assert.equal(big.length, 1024 * 1024);
    assert.deepEqual(big, content.subarray(0, 1024 * 1024));
    assert.deepEqual(await channel.read(content.length - 5, 100), content.subarray(-5));
    assert.equal((await channel.read(content.length, 100)).length, 0);
    assert.equal((await channel.stat()).size, content.length);
    await rejectsWith(channel.write(0, Buffer.from('x')), 'VALIDATION_FAILED');
    await rejectsWith(channel.read(-1, 10), 'VALIDATION_FAILED');
    await rejectsWith(channel.setAttributes({ size: 0 }), 'VALIDATION_FAILED');
    await channel.setAttributes({ mode: 0o600 });
    assert.equal((await stat(path.join(dir, 'world', 'blob.bin'))).mode & 0o7777, 0o600);
    assert.equal(await channel.close(), null);
    await rejectsWith(channel.read(0, 10), 'VALIDATION_FAILED');
    await channel.abort();
    assert.deepEqual(await readFile(path.join(dir, 'world', 'blob.bin')), content);
  });

  it('refuses to open what is not a regular file inside the folder', async () => {
    const { name, dir, temp } = await hostile();
    for (const flags of [READ, PUT, RESUME]) {
      for (const segments of OUT_FILES) {
        await rejectsWith(storage.openChannel(name, segments, flags), 'PATH_OUTSIDE');
      }
      await rejectsWith(storage.openChannel(name, ['etc', 'new.txt'], flags), 'PATH_OUTSIDE');
      await rejectsWith(
        storage.openChannel(name, ['..', 's2', 'secret.txt'], flags),
        'PATH_OUTSIDE',
      );
      await rejectsWith(storage.openChannel(name, ['world'], flags), 'NOT_A_FILE');
      await rejectsWith(storage.openChannel(name, [], flags), 'NOT_A_FILE');
      await rejectsWith(storage.openChannel(name, ['fifo'], flags), 'SPECIAL_FILE');
      await rejectsWith(storage.openChannel(name, ['loop'], flags), 'SYMLINK_LOOP');
      await rejectsWith(storage.openChannel(name, [temp], flags), 'INVALID_PATH');
      await rejectsWith(storage.openChannel(name, ['to-temp'], flags), 'INVALID_PATH');
    }
    await rejectsWith(storage.openChannel(name, ['missing.txt'], READ), 'NOT_FOUND');
    await rejectsWith(storage.openChannel(name, ['missing.txt'], RESUME), 'NOT_FOUND');
    await rejectsWith(
      storage.openChannel(name, ['missing.txt'], { ...READ, create: true }),
      'NOT_FOUND',
    );
    await rejectsWith(
      storage.openChannel(name, ['world', 'level.dat'], { ...PUT, exclusive: true }),
      'ALREADY_EXISTS',
    );
    const guard = compileDenylist(['*.cfg']).list;
    await writeFile(path.join(dir, 'server.cfg'), 'x');
    await symlink('server.cfg', path.join(dir, 'cfg-link'));
    for (const flags of [READ, PUT]) {
      await rejectsWith(
        storage.openChannel(name, ['server.cfg'], flags, null, guard),
        'FILE_DENIED',
      );
      await rejectsWith(storage.openChannel(name, ['cfg-link'], flags, null, guard), 'FILE_DENIED');
      await rejectsWith(storage.openChannel(name, ['new.cfg'], flags, null, guard), 'FILE_DENIED');
    }
    assert.deepEqual(await temporaries(dir), [temp]);
    await untouched();
  });

  it('writes a new file on a copy that takes its name only at close', async () => {
    const { name, dir } = await server();
    const before = await storage.diskUsage(name);
    const channel = await storage.openChannel(name, ['world.zip'], PUT);
    assert.equal(channel.writable, true);
    await channel.write(0, Buffer.from('hello'));
    await channel.write(5, Buffer.from(' world'));
    // Nobody sees the file under its name yet, nor the copy.
    await rejectsWith(storage.stat(name, ['world.zip'], true), 'NOT_FOUND');
    assert.deepEqual(names(await collect(storage.readFolder(name, [], 10))), []);
    assert.deepEqual(await storage.list(name, []), []);
    assert.equal((await temporaries(dir)).length, 1);
    assert.deepEqual(await channel.read(0, 100), Buffer.from('hello world'));
    assert.equal((await channel.stat()).size, 11);
    const entry = await channel.close();
    assert.deepEqual(entry && [entry.name, entry.path, entry.type, entry.size], [
      'world.zip',
      'world.zip',
      'file',
      11,
    ]);
    const written = await lstat(path.join(dir, 'world.zip'));
    assert.deepEqual(
      [written.uid, written.gid, written.mode & 0o7777],
      [OWNER.uid, OWNER.gid, 0o644],
    );
    assert.equal(await readFile(path.join(dir, 'world.zip'), 'utf8'), 'hello world');
    assert.deepEqual(await temporaries(dir), []);
    assert.equal(await storage.diskUsage(name), before + 11);
    await rejectsWith(channel.write(0, Buffer.from('late')), 'VALIDATION_FAILED');
    await rejectsWith(channel.close(), 'VALIDATION_FAILED');
  });

  it('keeps the old content under the name until close; abort leaves it and nothing else', async () => {
    const { name, dir } = await server();
    const file = path.join(dir, 'save.dat');
    await writeFile(file, 'old content');
    await chmod(file, 0o640);
    const before = await storage.diskUsage(name);
    const channel = await storage.openChannel(name, ['save.dat'], RESUME);
    await channel.write(0, Buffer.from('NEW'));
    await channel.write(11, Buffer.from(' and more'));
    assert.equal(await readFile(file, 'utf8'), 'old content');
    assert.deepEqual(await channel.read(0, 100), Buffer.from('NEW content and more'));
    assert.equal((await channel.stat()).mode, 0o640);
    await channel.abort();
    await channel.abort();
    assert.equal(await readFile(file, 'utf8'), 'old content');
    assert.deepEqual(await temporaries(dir), []);
    assert.equal(await storage.diskUsage(name), before);
    await rejectsWith(channel.read(0, 1), 'VALIDATION_FAILED');
  });

  it('resumes an upload: open without truncating, write at the old size, close', async () => {
    const { name, dir } = await server();
    const first = randomBytes(300_000);
    const second = randomBytes(200_000);
    const upload = await storage.openChannel(name, ['world.tar'], PUT);
    await upload.write(0, first);
    await upload.close();
    await chmod(path.join(dir, 'world.tar'), 0o600);
    const before = await storage.diskUsage(name);

    const resumed = await storage.openChannel(name, ['world.tar'], RESUME);
    const size = (await resumed.stat()).size;
    assert.equal(size, first.length);
    await resumed.write(size, second);
    const entry = await resumed.close();
    assert.equal(entry?.size, first.length + second.length);
    assert.deepEqual(await readFile(path.join(dir, 'world.tar')), Buffer.concat([first, second]));
    const written = await lstat(path.join(dir, 'world.tar'));
    assert.deepEqual([written.mode & 0o7777, written.uid], [0o600, OWNER.uid]);
    assert.equal(await storage.diskUsage(name), before + second.length);
  });

  it('truncates, appends, leaves holes, and places writes sent without waiting', async () => {
    const { name, dir } = await server();
    await writeFile(path.join(dir, 'log.txt'), 'x'.repeat(1000));
    const before = await storage.diskUsage(name);
    const truncated = await storage.openChannel(name, ['log.txt'], PUT);
    assert.equal((await truncated.stat()).size, 0);
    await truncated.write(0, Buffer.from('short'));
    await truncated.close();
    assert.equal(await readFile(path.join(dir, 'log.txt'), 'utf8'), 'short');
    assert.equal(await storage.diskUsage(name), before - 995);

    const appending = await storage.openChannel(name, ['log.txt'], { ...RESUME, append: true });
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => appending.write(0, Buffer.from(`[${i}]`))),
    );
    await appending.close();
    const expected = `short${Array.from({ length: 50 }, (_, i) => `[${i}]`).join('')}`;
    assert.equal(await readFile(path.join(dir, 'log.txt'), 'utf8'), expected);

    const chunks = Array.from({ length: 64 }, () => randomBytes(32 * 1024));
    const pipelined = await storage.openChannel(name, ['pipelined.bin'], PUT);
    // All sent at once, answered in any order; close waits for them.
    const writes = chunks.map((chunk, i) => pipelined.write(i * chunk.length, chunk));
    const closing = pipelined.close();
    await Promise.all(writes);
    await closing;
    assert.deepEqual(await readFile(path.join(dir, 'pipelined.bin')), Buffer.concat(chunks));

    const sparse = await storage.openChannel(name, ['sparse.bin'], PUT);
    await sparse.write(1024 * 1024, Buffer.from('end'));
    await sparse.close();
    const holed = await readFile(path.join(dir, 'sparse.bin'));
    assert.equal(holed.length, 1024 * 1024 + 3);
    assert.ok(holed.subarray(0, 1024 * 1024).every((byte) => byte === 0));
  });

  it('refuses a write past the quota, writing nothing, and never puts the copy in place', async () => {
    const { name, dir } = await server();
    await writeFile(path.join(dir, 'old.bin'), Buffer.alloc(500, 1));
    const before = await storage.diskUsage(name);
    const quota = before + 100;

    const grown = await storage.openChannel(name, ['new.bin'], PUT, quota);
    await grown.write(0, Buffer.alloc(60, 2));
    await rejectsWith(grown.write(60, Buffer.alloc(60, 3)), 'QUOTA_EXCEEDED');
    assert.equal((await grown.stat()).size, 60, 'the refused write wrote nothing');
    // The copy lacks what the client meant: close drops it and says why.
    await rejectsWith(grown.close(), 'QUOTA_EXCEEDED');
    assert.equal(await lstat(path.join(dir, 'new.bin')).catch(() => null), null);
    assert.deepEqual(await temporaries(dir), []);
    assert.equal(await storage.diskUsage(name), before);

    const aborted = await storage.openChannel(name, ['new.bin'], PUT, quota);
    await aborted.write(0, Buffer.alloc(90, 2));
    await rejectsWith(aborted.setAttributes({ size: 200 }), 'QUOTA_EXCEEDED');
    await aborted.abort();
    assert.deepEqual(await temporaries(dir), []);
    assert.equal(await storage.diskUsage(name), before);

    // Rewriting what is there grows nothing: never refused, even with no room left.
    const rewrite = await storage.openChannel(name, ['old.bin'], RESUME, before);
    await rewrite.write(0, Buffer.alloc(500, 7));
    await rejectsWith(rewrite.write(500, Buffer.from('x')), 'QUOTA_EXCEEDED');
    await rejectsWith(rewrite.close(), 'QUOTA_EXCEEDED');
    assert.deepEqual(await readFile(path.join(dir, 'old.bin')), Buffer.alloc(500, 1));
    const again = await storage.openChannel(name, ['old.bin'], RESUME, before);
    await again.write(0, Buffer.alloc(500, 7));
    await again.close();
    assert.deepEqual(await readFile(path.join(dir, 'old.bin')), Buffer.alloc(500, 7));

    // A truncated file may grow back to the size it had, and only past it is counted.
    const cut = await storage.openChannel(name, ['old.bin'], PUT, before + 10);
    await cut.write(0, Buffer.alloc(510, 8));
    await rejectsWith(cut.write(510, Buffer.from('x')), 'QUOTA_EXCEEDED');
    await cut.abort();
    const within = await storage.openChannel(name, ['within.bin'], PUT, quota);
    await within.write(0, Buffer.alloc(100));
    await within.close();
    assert.equal(await storage.diskUsage(name), before + 100);
    assert.deepEqual(await temporaries(dir), []);
  });

  it('writes through a link inside to the file it leads to; the link stays', async () => {
    const { name, dir } = await hostile();
    const channel = await storage.openChannel(name, ['inner', 'level.dat'], PUT);
    await channel.write(0, Buffer.from('rewritten'));
    const entry = await channel.close();
    assert.equal(entry?.path, 'world/level.dat');
    assert.equal(await readFile(path.join(dir, 'world', 'level.dat'), 'utf8'), 'rewritten');
    await symlink('world/level.dat', path.join(dir, 'level-link'));
    const viaLink = await storage.openChannel(name, ['level-link'], RESUME);
    await viaLink.write(9, Buffer.from('!'));
    await viaLink.close();
    assert.ok((await lstat(path.join(dir, 'level-link'))).isSymbolicLink());
    assert.equal(await readFile(path.join(dir, 'world', 'level.dat'), 'utf8'), 'rewritten!');
    await untouched();
  });

  it('exclusive: never replaces a file that appeared while writing', async () => {
    const { name, dir } = await server();
    const channel = await storage.openChannel(name, ['once.txt'], { ...PUT, exclusive: true });
    await channel.write(0, Buffer.from('mine'));
    await writeFile(path.join(dir, 'once.txt'), 'theirs');
    await rejectsWith(channel.close(), 'ALREADY_EXISTS');
    assert.equal(await readFile(path.join(dir, 'once.txt'), 'utf8'), 'theirs');
    assert.deepEqual(await temporaries(dir), []);
    const fresh = await storage.openChannel(name, ['fresh.txt'], { ...PUT, exclusive: true });
    await fresh.write(0, Buffer.from('made'));
    await fresh.close();
    assert.equal(await readFile(path.join(dir, 'fresh.txt'), 'utf8'), 'made');
    assert.equal((await lstat(path.join(dir, 'fresh.txt'))).nlink, 1);
  });

  it('two channels on one file: the last closed wins, the books stay right', async () => {
    const { name, dir } = await server();
    await writeFile(path.join(dir, 'shared.txt'), 'start');
    const before = await storage.diskUsage(name);
    const first = await storage.openChannel(name, ['shared.txt'], PUT);
    const second = await storage.openChannel(name, ['shared.txt'], PUT);
    await first.write(0, Buffer.from('first, longer'));
    await second.write(0, Buffer.from('second'));
    await first.close();
    await second.close();
    assert.equal(await readFile(path.join(dir, 'shared.txt'), 'utf8'), 'second');
    assert.equal(await storage.diskUsage(name), before + 'second'.length - 'start'.length);
    assert.deepEqual(await temporaries(dir), []);
  });

  it("changes the copy's mode and times, kept once it is in place", async () => {
    const { name, dir } = await server();
    const channel = await storage.openChannel(name, ['run.sh'], PUT);
    await channel.write(0, Buffer.from('#!/bin/sh\n'));
    const when = new Date('2022-02-02T02:02:02.000Z');
    await channel.setAttributes({ mode: 0o750, modified: when, accessed: when });
    await rejectsWith(channel.setAttributes({ mode: 0o4750 }), 'MODE_REFUSED');
    assert.equal((await channel.stat()).mode, 0o750);
    await channel.close();
    const written = await stat(path.join(dir, 'run.sh'));
    assert.equal(written.mode & 0o7777, 0o750);
    assert.equal(written.mtime.getTime(), when.getTime());
  });

  it('a file that became a folder meanwhile is not replaced', async () => {
    const { name, dir } = await server();
    const channel = await storage.openChannel(name, ['slot'], PUT);
    await channel.write(0, Buffer.from('x'));
    await mkdir(path.join(dir, 'slot'));
    await rejectsWith(channel.close(), 'NOT_A_FILE');
    assert.ok((await lstat(path.join(dir, 'slot'))).isDirectory());
    assert.deepEqual(await temporaries(dir), []);
  });

  it('a hard link to a file outside is written as a copy, never through', async () => {
    const { name, dir } = await server();
    // A server's own user could link a file of its own from elsewhere on the same disk.
    const foreign = path.join(outside, 'folder', 'linked.txt');
    await writeFile(foreign, 'foreign');
    try {
      await link(foreign, path.join(dir, 'linked.txt'));
      const channel = await storage.openChannel(name, ['linked.txt'], RESUME);
      await channel.write(0, Buffer.from('FOREIGN'));
      await channel.close();
      assert.equal(await readFile(foreign, 'utf8'), 'foreign');
      assert.equal(await readFile(path.join(dir, 'linked.txt'), 'utf8'), 'FOREIGN');
    } finally {
      await rm(foreign);
    }
  });
});
