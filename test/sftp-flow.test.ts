/**
 * How much one SFTP session (src/modules/sftp/sftp-session.ts) takes on at once, and how it
 * ends, through ssh2's client over a real SSH connection and files on disk: at most
 * `maxInFlight` requests worked on, no more taken from a client while they wait (its window runs
 * out), no more read for a client that does not take its answers, and a broken or idle session
 * leaving the files as they were.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SFTPWrapper } from 'ssh2';
import type { FileChannel } from '../src/host/host.js';
import { call, connect, startSftp, until, type SftpHarness } from './helpers/sftp.js';

/** Releases what waits on it, all at once. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => opened, open };
}

describe('what one SFTP session holds, and how it ends', { timeout: 120_000 }, () => {
  let sftpServer: SftpHarness;
  let srv: string;
  const statGate = gate();
  const stats = { running: 0, most: 0 };
  const writeGate = gate();

  before(async () => {
    sftpServer = await startSftp({
      alice: { server: 'srv' },
      idle: { server: 'srv', options: { idleMs: 1500 } },
      hoarding: { server: 'srv', options: { maxInFlight: 2 } },
      gated: {
        server: 'srv',
        options: { maxInFlight: 2 },
        files: (files) => ({
          ...files,
          stat: async (segments, follow) => {
            stats.running++;
            stats.most = Math.max(stats.most, stats.running);
            await statGate.wait();
            stats.running--;
            return files.stat(segments, follow);
          },
        }),
      },
      stalled: {
        server: 'srv',
        options: { maxInFlight: 4 },
        files: (files) => ({
          ...files,
          open: async (segments, flags) => {
            const channel = await files.open(segments, flags);
            const slowed: FileChannel = {
              writable: channel.writable,
              read: (offset, length) => channel.read(offset, length),
              write: async (offset, data) => {
                await writeGate.wait();
                await channel.write(offset, data);
              },
              stat: () => channel.stat(),
              setAttributes: (changes) => channel.setAttributes(changes),
              close: () => channel.close(),
              abort: () => channel.abort(),
            };
            return slowed;
          },
        }),
      },
    });
    srv = sftpServer.dir('srv');
    await writeFile(path.join(srv, 'h.txt'), 'h');
  });

  after(async () => {
    statGate.open();
    writeGate.open();
    await sftpServer.close();
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

  it('works on at most maxInFlight requests at once', async () => {
    await as('gated', async (sftp) => {
      const pending = Array.from({ length: 10 }, () =>
        call((cb) => {
          sftp.stat('/h.txt', cb);
        }),
      );
      await until(() => (stats.running === 2 ? true : undefined));
      assert.equal(stats.most, 2);
      statGate.open();
      await Promise.all(pending);
      assert.equal(stats.most, 2);
    });
  });

  it('stops taking requests while maxInFlight wait: the client’s window runs out', async () => {
    const chunk = randomBytes(32 * 1024);
    const count = 200;
    await as('stalled', async (sftp) => {
      const handle = await call<Buffer>((cb) => {
        sftp.open('/stalled.bin', 'w', cb);
      });
      const taken = sftpServer.writesTaken.count;
      const writes = Array.from({ length: count }, (_, i) =>
        call((cb) => {
          sftp.write(handle, chunk, 0, chunk.length, i * chunk.length, cb);
        }),
      );
      // The client may send what it was granted (ssh2 grants 2 MiB), and then nothing more
      // is granted: the server's window of this channel runs out and stays out.
      const server = sftpServer.streams.at(-1) as unknown as { incoming: { window: number } };
      await until(() => (server.incoming.window === 0 ? true : undefined));
      const parsed = sftpServer.writesTaken.count - taken;
      assert.ok(parsed >= 4, `${parsed} writes taken`);
      assert.ok(parsed * chunk.length <= 2 * 1024 * 1024, `${parsed} of ${count} writes taken`);
      writeGate.open();
      await Promise.all(writes);
      await call((cb) => {
        sftp.close(handle, cb);
      });
    });
    assert.equal((await stat(path.join(srv, 'stalled.bin'))).size, count * chunk.length);
  });

  it('reads no more for a client that does not take its answers', async () => {
    const block = 261_120;
    const reads = 40;
    const content = randomBytes(reads * block);
    await writeFile(path.join(srv, 'hoard.bin'), content);
    const { client, sftp } = await connect(sftpServer.port, 'hoarding');
    try {
      const handle = await call<Buffer>((cb) => {
        sftp.open('/hoard.bin', 'r', cb);
      });
      // The bytes of answers the server holds for the client's window, at most.
      const server = sftpServer.streams.at(-1) as unknown as { _buffer: Buffer[] };
      let most = 0;
      const track = (queue: Buffer[]): Buffer[] =>
        new Proxy(queue, {
          set: (target, key, value) => {
            const done = Reflect.set(target, key, value);
            most = Math.max(
              most,
              target.reduce((bytes, packet) => bytes + packet.length, 0),
            );
            return done;
          },
        });
      let queue = track(server._buffer);
      Object.defineProperty(server, '_buffer', {
        get: () => queue,
        set: (value: Buffer[]) => {
          queue = track(value);
        },
      });
      let taken = 0;
      (server as unknown as SFTPWrapper).on('READ', () => taken++);

      // The client stops reading its socket: it grants the server no more window.
      const socket = (client as unknown as { _sock: { pause(): void; resume(): void } })._sock;
      socket.pause();
      const answers = Array.from({ length: reads }, (_, i) =>
        call<number>((cb) => {
          sftp.read(handle, Buffer.alloc(block), 0, block, i * block, cb);
        }),
      );
      await until(() => (taken === reads && queue.length > 0 ? true : undefined));
      socket.resume();
      assert.deepEqual(
        await Promise.all(answers),
        Array.from({ length: reads }, () => block),
      );
      assert.ok(most <= 4 * 262_144, `${most} bytes of answers held for a stalled client`);
    } finally {
      client.end();
    }
  });

  it('leaves the files as they were when a session breaks or idles out', async () => {
    await mkdir(path.join(srv, 'broken'));
    await writeFile(path.join(srv, 'broken/kept.txt'), 'kept');
    const { client, sftp } = await connect(sftpServer.port, 'alice');
    const handle = await call<Buffer>((cb) => {
      sftp.open('/broken/kept.txt', 'w', cb);
    });
    await call((cb) => {
      sftp.write(handle, Buffer.from('lost'), 0, 4, 0, cb);
    });
    const created = await call<Buffer>((cb) => {
      sftp.open('/broken/new.txt', 'w', cb);
    });
    await call((cb) => {
      sftp.write(created, Buffer.from('lost'), 0, 4, 0, cb);
    });
    client.destroy();
    await until(async () =>
      (await namesIn(path.join(srv, 'broken'))).length === 1 ? true : undefined,
    );
    assert.deepEqual(await namesIn(path.join(srv, 'broken')), ['kept.txt']);
    assert.equal(await readFile(path.join(srv, 'broken/kept.txt'), 'utf8'), 'kept');

    const before = sftpServer.activity.count;
    const idle = await connect(sftpServer.port, 'idle');
    const upload = await call<Buffer>((cb) => {
      idle.sftp.open('/broken/kept.txt', 'w', cb);
    });
    await call((cb) => {
      idle.sftp.write(upload, Buffer.from('lost'), 0, 4, 0, cb);
    });
    assert.ok(sftpServer.activity.count >= before + 2, 'every request is activity');
    await new Promise((resolve) => idle.sftp.once('close', resolve));
    idle.client.end();
    await until(async () =>
      (await namesIn(path.join(srv, 'broken'))).length === 1 ? true : undefined,
    );
    assert.equal(await readFile(path.join(srv, 'broken/kept.txt'), 'utf8'), 'kept');
    assert.ok(sftpServer.logged.some((entry) => entry.message.includes('idle')));
  });
});
