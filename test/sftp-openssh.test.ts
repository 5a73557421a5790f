/**
 * The SFTP protocol (src/modules/sftp/sftp-session.ts) as OpenSSH's own `sftp` client speaks
 * it, in batch mode against the real SSH server of test/helpers/sftp.ts: uploads and downloads
 * compared byte for byte, a resumed upload, folder trees both ways, `ls -l`, renames over a
 * file (posix-rename), symlinks, chmod, `df` showing the quota, and the refusals it prints for
 * paths that leave the folder and for a caller who may only read.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openssh, startSftp, type SftpHarness } from './helpers/sftp.js';

const QUOTA = 64 * 1024 * 1024;

describe('an SFTP session through OpenSSH’s sftp', { timeout: 120_000 }, () => {
  let sftpServer: SftpHarness;
  let srv: string;
  const local = mkdtempSync(path.join(tmpdir(), 'panel-sftp-openssh-'));

  before(async () => {
    sftpServer = await startSftp({
      alice: { server: 'srv', quota: QUOTA },
      reader: { server: 'srv', write: false },
    });
    srv = sftpServer.dir('srv');
  });

  after(async () => {
    await sftpServer.close();
    rmSync(local, { recursive: true, force: true });
  });

  const run = (user: string, commands: readonly string[]) =>
    openssh(sftpServer.port, user, commands, local);

  it('puts, gets and resumes files byte for byte', async () => {
    const content = randomBytes(8 * 1024 * 1024 + 123);
    await writeFile(path.join(local, 'world.bin'), content);
    // An interrupted upload: the first part is there already.
    await mkdir(path.join(srv, 'resume'));
    await writeFile(path.join(srv, 'resume/world.bin'), content.subarray(0, 3_000_001));

    const result = await run('alice', [
      'put world.bin',
      'get world.bin fetched.bin',
      'cd resume',
      'reput world.bin',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(await readFile(path.join(srv, 'world.bin')), content);
    assert.deepEqual(await readFile(path.join(local, 'fetched.bin')), content);
    assert.deepEqual(await readFile(path.join(srv, 'resume/world.bin')), content);
    assert.deepEqual((await readdir(path.join(srv, 'resume'))).sort(), ['world.bin']);
  });

  it('puts and gets a folder tree recursively', async () => {
    const tree = path.join(local, 'tree');
    await mkdir(path.join(tree, 'a/b'), { recursive: true });
    await writeFile(path.join(tree, 'top.txt'), 'top');
    await writeFile(path.join(tree, 'a/b/deep.bin'), randomBytes(70_000));

    const result = await run('alice', ['put -r tree', 'get -r tree tree-back']);
    assert.equal(result.code, 0, result.stderr);
    for (const file of ['top.txt', 'a/b/deep.bin']) {
      const original = await readFile(path.join(tree, file));
      assert.deepEqual(await readFile(path.join(srv, 'tree', file)), original);
      assert.deepEqual(await readFile(path.join(local, 'tree-back', file)), original);
    }
  });

  it('lists, makes, renames, links, changes modes and shows the quota as the disk', async () => {
    await mkdir(path.join(srv, 'ops'));
    await writeFile(path.join(srv, 'ops/one.txt'), 'one');
    await writeFile(path.join(srv, 'ops/two.txt'), 'two!');
    const result = await run('alice', [
      'cd ops',
      'mkdir made',
      'rename one.txt made/one.txt',
      // OpenSSH renames with posix-rename@openssh.com when offered: the file is replaced.
      'rename two.txt made/one.txt',
      'ln -s one.txt made/link',
      'chmod 600 made/one.txt',
      'mkdir gone',
      'rmdir gone',
      'ls -l made',
      'df',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const made = path.join(srv, 'ops/made');
    assert.equal(await readFile(path.join(made, 'one.txt'), 'utf8'), 'two!');
    assert.equal((await stat(path.join(made, 'one.txt'))).mode & 0o777, 0o600);
    assert.equal(await readlink(path.join(made, 'link')), 'one.txt');
    assert.deepEqual((await readdir(path.join(srv, 'ops'))).sort(), ['made']);

    const date = String.raw`[A-Z][a-z]{2} [ \d]\d (\d\d:\d\d| \d{4})`;
    assert.match(
      result.stdout,
      new RegExp(`^-rw------- +1 server +server +4 ${date} one\\.txt\\r?$`, 'm'),
    );
    assert.match(
      result.stdout,
      new RegExp(`^lrwxrwxrwx +1 server +server +7 ${date} link\\r?$`, 'm'),
    );

    // df: 1 KiB blocks; the quota is the size, what the folder holds is used.
    const figures = /Size +Used +Avail.*\n\s*(\d+)\s+(\d+)\s+(\d+)/.exec(result.stdout);
    assert.ok(figures, result.stdout);
    assert.equal(Number(figures[1]), QUOTA / 1024);
    assert.ok(Number(figures[2]) > 8 * 1024, 'the 8 MiB uploaded earlier are used');
    assert.equal(Number(figures[2]) + Number(figures[3]), QUOTA / 1024);
  });

  it('shows every refusal and changes nothing: paths out, links out, missing, existing', async () => {
    await writeFile(path.join(local, 'small.txt'), 'small');
    await mkdir(path.join(srv, 'refuse/full'), { recursive: true });
    await writeFile(path.join(srv, 'refuse/full/x'), 'x');
    const result = await run('alice', [
      'cd refuse',
      '-get ../../../etc/passwd stolen',
      '-cd /..',
      '-put small.txt ../../escaped.txt',
      '-ln -s ../../../etc out',
      '-ln full/x hard',
      '-rmdir full',
      '-rm nothing',
      '-mkdir full',
      '-put small.txt /.panel-tmp-x',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const shown = result.stderr;
    assert.match(shown, /File "\/refuse\/\.\.\/\.\.\/\.\.\/etc\/passwd" not found/);
    assert.match(shown, /realpath \/\.\.: That path leads outside the server directory/);
    assert.match(shown, /dest open "\/refuse\/\.\.\/\.\.\/escaped\.txt": Permission denied/);
    assert.match(shown, /remote symlink .*"\/refuse\/out": Permission denied/);
    assert.match(shown, /Server does not support hardlink@openssh\.com extension/);
    assert.match(shown, /remote rmdir "\/refuse\/full": Failure/);
    assert.match(shown, /remote delete \/refuse\/nothing: No such file or directory/);
    assert.match(shown, /remote mkdir "\/refuse\/full": Failure/);
    assert.match(shown, /dest open "\/\.panel-tmp-x": Permission denied/);
    assert.ok(!shown.includes(srv), 'no host path shown');

    await assert.rejects(lstat(path.join(local, 'stolen')));
    await assert.rejects(lstat(path.join(path.dirname(srv), 'escaped.txt')));
    assert.deepEqual((await readdir(path.join(srv, 'refuse'))).sort(), ['full']);
    assert.deepEqual(await readdir(path.join(srv, 'refuse/full')), ['x']);
  });

  it('lets a caller who may only read get files, and refuses every change', async () => {
    await writeFile(path.join(srv, 'readable.txt'), 'readable');
    await writeFile(path.join(local, 'upload.txt'), 'upload');
    const result = await run('reader', [
      'get readable.txt got.txt',
      '-put upload.txt',
      '-mkdir nope',
      '-rm readable.txt',
      '-chmod 600 readable.txt',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await readFile(path.join(local, 'got.txt'), 'utf8'), 'readable');
    assert.match(result.stderr, /dest open "\/upload\.txt": Permission denied/);
    assert.match(result.stderr, /remote mkdir "\/nope": Permission denied/);
    assert.match(result.stderr, /remote delete \/readable\.txt: Permission denied/);
    assert.match(result.stderr, /remote setstat "\/readable\.txt": Permission denied/);
    await assert.rejects(lstat(path.join(srv, 'upload.txt')));
    assert.equal((await stat(path.join(srv, 'readable.txt'))).mode & 0o777, 0o644);
  });
});
