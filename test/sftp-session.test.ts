/**
 * One SFTP session's requests (src/modules/sftp/sftp-session.ts), driven by ssh2's client over
 * a real SSH connection against files on disk (the local storage): every operation, every
 * refusal and the status code it is answered with, handles and their limit, the extensions.
 * How much a session takes on at once, and how it ends: sftp-flow.test.ts; OpenSSH's own
 * client: sftp-openssh.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import {
  lstat,
  mkdir,
  readdir,
  readFile,
  stat,
  statfs,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SFTPWrapper } from 'ssh2';
import { AppError } from '../src/errors.js';
import type { FileChannel } from '../src/host/host.js';
import { compileDenylist } from '../src/templates/denylist.js';
import { call, connect, failureOf, startSftp, type SftpHarness } from './helpers/sftp.js';

const NO_SUCH_FILE = 2;
const PERMISSION_DENIED = 3;
const FAILURE = 4;
const OP_UNSUPPORTED = 8;

describe('an SFTP session through ssh2’s client', { timeout: 120_000 }, () => {
  let sftpServer: SftpHarness;
  let srv: string;
  const local = mkdtempSync(path.join(tmpdir(), 'panel-sftp-local-'));
  const aborted = { count: 0 };

  before(async () => {
    sftpServer = await startSftp({
      alice: { server: 'srv' },
      reader: { server: 'srv', write: false },
      guarded: { server: 'srv', guard: compileDenylist(['secret.txt']).list },
      quota: { server: 'small', quota: 1024 * 1024 },
      few: { server: 'srv', options: { maxOpenHandles: 2 } },
      short: { server: 'srv', options: { readChunkMax: 1000 } },
      broken: {
        server: 'srv',
        files: (files) => ({
          ...files,
          stat: () => Promise.reject(new Error('EIO reading /var/lib/panel/servers/srv/x')),
          realPath: () => Promise.reject(new AppError('INTERNAL', 'database at 10.0.0.5 down')),
        }),
      },
      // Every file written is refused as it is put in place (the quota, counted at the end).
      committing: {
        server: 'srv',
        files: (files) => ({
          ...files,
          open: async (segments, flags) => {
            const channel = await files.open(segments, flags);
            const refused: FileChannel = {
              writable: channel.writable,
              read: (offset, length) => channel.read(offset, length),
              write: (offset, data) => channel.write(offset, data),
              stat: () => channel.stat(),
              setAttributes: (changes) => channel.setAttributes(changes),
              close: () =>
                Promise.reject(new AppError('QUOTA_EXCEEDED', 'The disk quota would be passed')),
              abort: () => {
                aborted.count++;
                return channel.abort();
              },
            };
            return refused;
          },
        }),
      },
    });
    srv = sftpServer.dir('srv');
  });

  after(async () => {
    await sftpServer.close();
    rmSync(local, { recursive: true, force: true });
  });

  /** Runs `work` with a fresh session of `user`, ended afterwards. */
  async function as<T>(user: string, work: (sftp: SFTPWrapper) => Promise<T>): Promise<T> {
    const { client, sftp } = await connect(sftpServer.port, user);
    try {
      return await work(sftp);
    } finally {
      client.end();
    }
  }

  /** Every name in a host folder, the panel's hidden temporary files included. */
  const namesIn = async (dir: string): Promise<string[]> => (await readdir(dir)).sort();

  it('uploads and downloads files byte for byte; a written file appears whole at CLOSE', async () => {
    const content = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(path.join(local, 'up.bin'), content);
    await mkdir(path.join(srv, 'xfer'));
    await as('alice', async (sftp) => {
      await call((cb) => {
        sftp.fastPut(path.join(local, 'up.bin'), '/xfer/up.bin', cb);
      });
      assert.deepEqual(await readFile(path.join(srv, 'xfer/up.bin')), content);
      await call((cb) => {
        sftp.fastGet('xfer/up.bin', path.join(local, 'down.bin'), cb);
      });
      assert.deepEqual(await readFile(path.join(local, 'down.bin')), content);

      // Until its CLOSE, an upload is nowhere under its name; the old content stays.
      await writeFile(path.join(srv, 'xfer/old.txt'), 'old content');
      const handle = await call<Buffer>((cb) => {
        sftp.open('/xfer/old.txt', 'w', cb);
      });
      assert.equal(handle.length, 16, 'a handle is 16 opaque bytes');
      await call((cb) => {
        sftp.write(handle, Buffer.from('new'), 0, 3, 0, cb);
      });
      assert.equal(await readFile(path.join(srv, 'xfer/old.txt'), 'utf8'), 'old content');
      await call((cb) => {
        sftp.close(handle, cb);
      });
      assert.equal(await readFile(path.join(srv, 'xfer/old.txt'), 'utf8'), 'new');
    });
    assert.deepEqual(await namesIn(path.join(srv, 'xfer')), ['old.txt', 'up.bin']);
  });

  it('reads at offsets with EOF at the end, resumes and appends writes', async () => {
    await mkdir(path.join(srv, 'resume'));
    await writeFile(path.join(srv, 'resume/part.bin'), 'first half|');
    await as('alice', async (sftp) => {
      // Resume: open without truncating, write at the size it has.
      const size = (
        await call<{ size: number }>((cb) => {
          sftp.stat('/resume/part.bin', cb);
        })
      ).size;
      const handle = await call<Buffer>((cb) => {
        sftp.open('/resume/part.bin', 'r+', cb);
      });
      await call((cb) => {
        sftp.write(handle, Buffer.from('second half'), 0, 11, size, cb);
      });
      await call((cb) => {
        sftp.close(handle, cb);
      });
      assert.equal(
        await readFile(path.join(srv, 'resume/part.bin'), 'utf8'),
        'first half|second half',
      );

      const appending = await call<Buffer>((cb) => {
        sftp.open('/resume/part.bin', 'a', cb);
      });
      await call((cb) => {
        sftp.write(appending, Buffer.from('!'), 0, 1, 0, cb);
      });
      await call((cb) => {
        sftp.close(appending, cb);
      });
      assert.equal(
        await readFile(path.join(srv, 'resume/part.bin'), 'utf8'),
        'first half|second half!',
      );

      const reading = await call<Buffer>((cb) => {
        sftp.open('/resume/part.bin', 'r', cb);
      });
      const buffer = Buffer.alloc(6);
      const read = await call<number>((cb) => {
        sftp.read(reading, buffer, 0, 6, 6, cb);
      });
      assert.equal(buffer.subarray(0, read).toString(), 'half|s');
      // ssh2's client turns the EOF status into 0 bytes read.
      const atEnd = await call<number>((cb) => {
        sftp.read(reading, Buffer.alloc(4), 0, 4, 1000, cb);
      });
      assert.equal(atEnd, 0);
      const failed = await failureOf(
        call((cb) => {
          sftp.write(reading, Buffer.from('x'), 0, 1, 0, cb);
        }),
      );
      assert.equal(failed.code, PERMISSION_DENIED, 'a file opened to read is not written');
      await call((cb) => {
        sftp.close(reading, cb);
      });
    });
  });

  it('answers a READ with at most readChunkMax bytes, whatever the client asks', async () => {
    await writeFile(path.join(srv, 'long.bin'), randomBytes(50_000));
    await as('short', async (sftp) => {
      // The client would split what the limits extension told it; ask past them.
      (sftp as unknown as { _maxReadLen: number })._maxReadLen = 1 << 20;
      const handle = await call<Buffer>((cb) => {
        sftp.open('long.bin', 'r', cb);
      });
      const read = await call<number>((cb) => {
        sftp.read(handle, Buffer.alloc(40_000), 0, 40_000, 0, cb);
      });
      assert.equal(read, 1000);
    });
  });

  it('lists a large folder in batches, each entry with attributes and an ls -l line', async () => {
    const big = path.join(srv, 'big');
    await mkdir(big);
    for (let i = 0; i < 250; i++) await writeFile(path.join(big, `file-${i}.txt`), 'x'.repeat(i));
    await mkdir(path.join(big, 'sub'));
    await symlink('file-1.txt', path.join(big, 'link'));
    sftpServer.batches.length = 0;
    const list = await as('alice', (sftp) =>
      call<{ filename: string; longname: string; attrs: { size: number; mode: number } }[]>(
        (cb) => {
          sftp.readdir('/big', cb);
        },
      ),
    );
    assert.equal(list.length, 252);
    assert.deepEqual(sftpServer.batches, [100]);
    const entry = (name: string) => {
      const found = list.find((item) => item.filename === name);
      assert.ok(found, name);
      return found;
    };
    const file = entry('file-7.txt');
    assert.equal(file.attrs.size, 7);
    assert.equal(file.attrs.mode & 0o170000, 0o100000);
    assert.match(
      file.longname,
      /^-rw-r--r-- {4}1 server {3}server {10}7 [A-Z][a-z]{2} [ \d]\d (\d\d:\d\d| \d{4}) file-7\.txt$/,
    );
    assert.match(entry('sub').longname, /^d[rwx-]{9} +2 /);
    assert.equal(entry('sub').attrs.mode & 0o170000, 0o040000);
    assert.equal(entry('link').attrs.mode & 0o170000, 0o120000);
    assert.match(entry('link').longname, /^l/);
  });

  it('stats, changes attributes and refuses owners and modes past 0777', async () => {
    await mkdir(path.join(srv, 'attrs'));
    await writeFile(path.join(srv, 'attrs/a.txt'), 'hello');
    await symlink('a.txt', path.join(srv, 'attrs/to-a'));
    await as('alice', async (sftp) => {
      const followed = await call<{ size: number; mode: number; uid: number; gid: number }>(
        (cb) => {
          sftp.stat('/attrs/to-a', cb);
        },
      );
      assert.equal(followed.size, 5);
      assert.equal(followed.mode & 0o170000, 0o100000);
      assert.deepEqual([followed.uid, followed.gid], [0, 0]);
      const link = await call<{ mode: number }>((cb) => {
        sftp.lstat('/attrs/to-a', cb);
      });
      assert.equal(link.mode & 0o170000, 0o120000);

      await call((cb) => {
        sftp.chmod('/attrs/a.txt', 0o640, cb);
      });
      await call((cb) => {
        sftp.utimes('/attrs/a.txt', 1_000_000_000, 1_100_000_000, cb);
      });
      const changed = await stat(path.join(srv, 'attrs/a.txt'));
      assert.equal(changed.mode & 0o777, 0o640);
      assert.equal(Math.floor(changed.mtimeMs / 1000), 1_100_000_000);

      const handle = await call<Buffer>((cb) => {
        sftp.open('/attrs/a.txt', 'r+', cb);
      });
      await call((cb) => {
        sftp.fsetstat(handle, { size: 2 }, cb);
      });
      const fstat = await call<{ size: number }>((cb) => {
        sftp.fstat(handle, cb);
      });
      assert.equal(fstat.size, 2);
      await call((cb) => {
        sftp.close(handle, cb);
      });
      assert.equal(await readFile(path.join(srv, 'attrs/a.txt'), 'utf8'), 'he');

      const setuid = await failureOf(
        call((cb) => {
          sftp.chmod('/attrs/a.txt', 0o4755, cb);
        }),
      );
      assert.equal(setuid.code, PERMISSION_DENIED, 'MODE_REFUSED');
      const chown = await failureOf(
        call((cb) => {
          sftp.chown('/attrs/a.txt', 1000, 1000, cb);
        }),
      );
      assert.equal(chown.code, PERMISSION_DENIED);
      assert.equal((await stat(path.join(srv, 'attrs/a.txt'))).mode & 0o7777, 0o640);
    });
  });

  it('makes and removes folders and files, renames without and with replacing', async () => {
    await as('alice', async (sftp) => {
      await call((cb) => {
        sftp.mkdir('/tree', cb);
      });
      await call((cb) => {
        sftp.mkdir('tree/inner', cb);
      });
      assert.ok((await stat(path.join(srv, 'tree/inner'))).isDirectory());
      const exists = await failureOf(
        call((cb) => {
          sftp.mkdir('/tree', cb);
        }),
      );
      assert.deepEqual(exists, { code: FAILURE, message: 'already exists' });

      await writeFile(path.join(srv, 'tree/inner/f.txt'), 'f');
      const notEmpty = await failureOf(
        call((cb) => {
          sftp.rmdir('/tree/inner', cb);
        }),
      );
      assert.equal(notEmpty.code, FAILURE);
      assert.ok(!notEmpty.message.includes(srv), 'no host path in a message');

      await writeFile(path.join(srv, 'tree/g.txt'), 'g');
      const taken = await failureOf(
        call((cb) => {
          sftp.rename('/tree/g.txt', '/tree/inner/f.txt', cb);
        }),
      );
      assert.deepEqual(taken, { code: FAILURE, message: 'already exists' });
      assert.equal(await readFile(path.join(srv, 'tree/inner/f.txt'), 'utf8'), 'f');
      await call((cb) => {
        sftp.ext_openssh_rename('/tree/g.txt', '/tree/inner/f.txt', cb);
      });
      assert.equal(await readFile(path.join(srv, 'tree/inner/f.txt'), 'utf8'), 'g');
      await call((cb) => {
        sftp.rename('/tree/inner/f.txt', '/tree/h.txt', cb);
      });

      await call((cb) => {
        sftp.unlink('/tree/h.txt', cb);
      });
      await call((cb) => {
        sftp.rmdir('/tree/inner', cb);
      });
      assert.deepEqual(await namesIn(path.join(srv, 'tree')), []);
      const missing = await failureOf(
        call((cb) => {
          sftp.unlink('/tree/h.txt', cb);
        }),
      );
      assert.equal(missing.code, NO_SUCH_FILE);
      const root = await failureOf(
        call((cb) => {
          sftp.rmdir('/', cb);
        }),
      );
      assert.equal(root.code, PERMISSION_DENIED);
    });
  });

  it('answers REALPATH absolute and normalised, inside the folder only', async () => {
    await mkdir(path.join(srv, 'real/deep'), { recursive: true });
    await symlink('real/deep', path.join(srv, 'shortcut'));
    await as('alice', async (sftp) => {
      const real = (p: string) =>
        call<string>((cb) => {
          sftp.realpath(p, cb);
        });
      assert.equal(await real('.'), '/');
      assert.equal(await real(''), '/');
      assert.equal(await real('real/./deep/../deep'), '/real/deep');
      assert.equal(await real('/shortcut'), '/real/deep');
      assert.equal(await real('/real/not-yet.txt'), '/real/not-yet.txt');
      const above = await failureOf(real('/..'));
      assert.equal(above.code, PERMISSION_DENIED);
      const deeper = await failureOf(real('real/../../etc'));
      assert.equal(deeper.code, PERMISSION_DENIED);
    });
  });

  it('makes and reads symlinks inside the folder, never one that leads out', async () => {
    await mkdir(path.join(srv, 'links'));
    await writeFile(path.join(srv, 'links/target.txt'), 'target');
    await symlink('/etc/passwd', path.join(srv, 'links/out'));
    await as('alice', async (sftp) => {
      await call((cb) => {
        sftp.symlink('target.txt', '/links/rel', cb);
      });
      await call((cb) => {
        sftp.symlink('/links/target.txt', '/links/abs', cb);
      });
      for (const name of ['rel', 'abs']) {
        const read = await call<string>((cb) => {
          sftp.readlink(`/links/${name}`, cb);
        });
        assert.equal(read, '/links/target.txt');
        assert.equal(await readFile(path.join(srv, 'links', name), 'utf8'), 'target');
      }
      const escaping = await failureOf(
        call((cb) => {
          sftp.symlink('../../../../etc/passwd', '/links/escape', cb);
        }),
      );
      assert.equal(escaping.code, PERMISSION_DENIED);
      await assert.rejects(lstat(path.join(srv, 'links/escape')));

      // A link someone made on the disk that leads out: nothing is reached through it.
      for (const attempt of [
        () =>
          call((cb) => {
            sftp.stat('/links/out', cb);
          }),
        () =>
          call((cb) => {
            sftp.open('/links/out', 'r', cb);
          }),
        () =>
          call((cb) => {
            sftp.readlink('/links/out', cb);
          }),
      ]) {
        assert.equal((await failureOf(attempt())).code, PERMISSION_DENIED);
      }
    });
  });

  it('maps every refusal to its status code, with no host path and no stack', async () => {
    await writeFile(path.join(srv, 'secret.txt'), 'secret');
    await writeFile(path.join(srv, 'plain.txt'), 'plain');

    await as('alice', async (sftp) => {
      const missing = await failureOf(
        call((cb) => {
          sftp.stat('/nothing/here', cb);
        }),
      );
      assert.equal(missing.code, NO_SUCH_FILE);
      const outside = await failureOf(
        call((cb) => {
          sftp.open('../outside.txt', 'w', cb);
        }),
      );
      assert.equal(outside.code, PERMISSION_DENIED);
      const reserved = await failureOf(
        call((cb) => {
          sftp.open('/.panel-tmp-x', 'w', cb);
        }),
      );
      assert.equal(reserved.code, PERMISSION_DENIED);
      const folder = await failureOf(
        call((cb) => {
          sftp.open('/', 'r', cb);
        }),
      );
      assert.equal(folder.code, FAILURE, 'NOT_A_FILE');
      assert.ok(!folder.message.includes(srv));
      const exclusive = await failureOf(
        call((cb) => {
          sftp.open('/plain.txt', 'wx', cb);
        }),
      );
      assert.deepEqual(exclusive, { code: FAILURE, message: 'already exists' });
      const notCreated = await failureOf(
        call((cb) => {
          sftp.open('/absent.txt', 'r+', cb);
        }),
      );
      assert.equal(notCreated.code, NO_SUCH_FILE);
      await assert.rejects(lstat(path.join(srv, 'absent.txt')));
    });

    // Putting a written file in place is its CLOSE: that is where a refusal is heard.
    await as('committing', async (sftp) => {
      const handle = await call<Buffer>((cb) => {
        sftp.open('/plain.txt', 'w', cb);
      });
      await call((cb) => {
        sftp.write(handle, Buffer.from('replaced'), 0, 8, 0, cb);
      });
      const refused = await failureOf(
        call((cb) => {
          sftp.close(handle, cb);
        }),
      );
      assert.deepEqual(refused, { code: FAILURE, message: 'disk quota exceeded' });
      assert.equal(aborted.count, 1, 'the channel is dropped');
      assert.equal(await readFile(path.join(srv, 'plain.txt'), 'utf8'), 'plain');
    });

    await as('reader', async (sftp) => {
      assert.equal(
        (
          await call<{ size: number }>((cb) => {
            sftp.stat('/plain.txt', cb);
          })
        ).size,
        5,
        'reads pass',
      );
      // One at a time: a refusal made before its turn would reject with nobody listening.
      for (const attempt of [
        () =>
          call((cb) => {
            sftp.open('/plain.txt', 'w', cb);
          }),
        () =>
          call((cb) => {
            sftp.mkdir('/made', cb);
          }),
        () =>
          call((cb) => {
            sftp.unlink('/plain.txt', cb);
          }),
        () =>
          call((cb) => {
            sftp.rename('/plain.txt', '/moved.txt', cb);
          }),
      ]) {
        assert.equal((await failureOf(attempt())).code, PERMISSION_DENIED, 'FORBIDDEN');
      }
      assert.equal(await readFile(path.join(srv, 'plain.txt'), 'utf8'), 'plain');
    });

    await as('guarded', async (sftp) => {
      const denied = await failureOf(
        call((cb) => {
          sftp.open('/secret.txt', 'r', cb);
        }),
      );
      assert.equal(denied.code, PERMISSION_DENIED, 'FILE_DENIED');
    });

    await as('broken', async (sftp) => {
      const unexpected = await failureOf(
        call((cb) => {
          sftp.stat('/plain.txt', cb);
        }),
      );
      assert.deepEqual(unexpected, { code: FAILURE, message: 'internal error' });
      const internal = await failureOf(
        call((cb) => {
          sftp.realpath('/plain.txt', cb);
        }),
      );
      assert.deepEqual(internal, { code: FAILURE, message: 'internal error' });
    });
    const errors = sftpServer.logged.filter((entry) => entry.message === 'SFTP request failed');
    assert.equal(errors.length, 2, 'the unexpected failures are logged');
  });

  it('refuses writes past the quota and shows the quota as the disk', async () => {
    const small = sftpServer.dir('small');
    await writeFile(path.join(small, 'already.bin'), randomBytes(900 * 1024));
    await as('quota', async (sftp) => {
      const handle = await call<Buffer>((cb) => {
        sftp.open('/big.bin', 'w', cb);
      });
      // One WRITE request (under the 255 KiB the limits extension allows) past the quota.
      const failed = await failureOf(
        call((cb) => {
          sftp.write(handle, randomBytes(200 * 1024), 0, 200 * 1024, 0, cb);
        }),
      );
      assert.deepEqual(failed, { code: FAILURE, message: 'disk quota exceeded' });
      // A refused write spoils the upload: its CLOSE fails too, and nothing is kept (OpenSSH's
      // client closes after a failed write; a half file would otherwise land under the name).
      assert.deepEqual(
        await failureOf(
          call((cb) => {
            sftp.close(handle, cb);
          }),
        ),
        { code: FAILURE, message: 'disk quota exceeded' },
      );

      const space = await call<{
        f_bsize: number;
        f_blocks: number;
        f_bfree: number;
        f_bavail: number;
      }>((cb) => {
        sftp.ext_openssh_statvfs('/', cb);
      });
      assert.equal(space.f_bsize, 4096);
      assert.equal(space.f_blocks, 256, '1 MiB in 4 KiB blocks');
      assert.equal(space.f_bfree, 31, 'what the 900 KiB file leaves, in whole blocks');
      assert.equal(space.f_bavail, 31);
      const reading = await call<Buffer>((cb) => {
        sftp.open('/already.bin', 'r', cb);
      });
      const byHandle = await call<{ f_blocks: number }>((cb) => {
        sftp.ext_openssh_fstatvfs(reading, cb);
      });
      assert.equal(byHandle.f_blocks, 256);
    });
    assert.deepEqual(await namesIn(small), ['already.bin']);

    const unlimited = await as('alice', (sftp) =>
      call<{ f_blocks: number }>((cb) => {
        sftp.ext_openssh_statvfs('/', cb);
      }),
    );
    const disk = await statfs(srv);
    assert.equal(unlimited.f_blocks, Math.floor((disk.blocks * disk.bsize) / 4096));
  });

  it('holds handles to a limit, refuses unknown ones, answers the extensions', async () => {
    await writeFile(path.join(srv, 'h.txt'), 'h');
    await as('few', async (sftp) => {
      const first = await call<Buffer>((cb) => {
        sftp.open('/h.txt', 'r', cb);
      });
      await call<Buffer>((cb) => {
        sftp.opendir('/', cb);
      });
      const third = await failureOf(
        call((cb) => {
          sftp.open('/h.txt', 'r', cb);
        }),
      );
      assert.deepEqual(third, { code: FAILURE, message: 'too many open files' });
      await call((cb) => {
        sftp.ext_openssh_fsync(first, cb);
      });
      await call((cb) => {
        sftp.close(first, cb);
      });
      const again = await call<Buffer>((cb) => {
        sftp.open('/h.txt', 'r', cb);
      });
      assert.notDeepEqual(again, first);
      for (const attempt of [
        () =>
          call((cb) => {
            sftp.read(first, Buffer.alloc(1), 0, 1, 0, cb);
          }),
        () =>
          call((cb) => {
            sftp.close(first, cb);
          }),
        () =>
          call((cb) => {
            sftp.fstat(randomBytes(16), cb);
          }),
      ]) {
        assert.deepEqual(await failureOf(attempt()), { code: FAILURE, message: 'invalid handle' });
      }

      // Not advertised, so the client would not send them: make it.
      const extensions = (sftp as unknown as { _extensions: Record<string, string> })._extensions;
      extensions['hardlink@openssh.com'] = '1';
      extensions['copy-data'] = '1';
      const hardlink = await failureOf(
        call((cb) => {
          sftp.ext_openssh_hardlink('/h.txt', '/h2.txt', cb);
        }),
      );
      assert.equal(hardlink.code, OP_UNSUPPORTED);
      const copy = await failureOf(
        call((cb) => {
          sftp.ext_copy_data(again, 0, 1, again, 1, cb);
        }),
      );
      assert.equal(copy.code, OP_UNSUPPORTED);
      await assert.rejects(lstat(path.join(srv, 'h2.txt')));
    });
  });
});
