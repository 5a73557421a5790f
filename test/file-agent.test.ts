/**
 * The file agent as a real process (src/host/remote/file-agent.ts, run from its source through
 * tsx), spoken to over its stdin and stdout as the panel speaks to one in a helper container:
 * bad calls are answered and it goes on; a broken frame ends it; a download is held to what its
 * reader takes (the agent's own reads, counted by the kernel in /proc/<pid>/io) and lets go of
 * the file when the reader goes away; an upload cut short, by its source or by the panel going
 * away, leaves nothing behind; at the end of its stdin it lets go of what it held and exits.
 *
 * (The conformance suite, test/host-port/, runs every file operation through agents too.)
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Duplex, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RESERVED_PREFIX } from '../src/domain/paths.js';
import { AppError } from '../src/errors.js';
import { RemoteFiles } from '../src/host/remote/remote-files.js';
import { WireClient } from '../src/host/remote/wire-client.js';
import { eventually } from './helpers/factories.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const MIB = 1024 * 1024;

let serversDir: string;

before(async () => {
  serversDir = path.join(await mkdtemp(path.join(tmpdir(), 'file-agent-')), 'servers');
  await mkdir(path.join(serversDir, 'world'), { recursive: true });
});
after(async () => {
  await rm(path.dirname(serversDir), { recursive: true, force: true });
});

/** An agent on `serversDir`, as a child process; its stdio as the panel's byte stream. */
async function agent(): Promise<{ child: ChildProcess; stream: Duplex; exited: Promise<unknown> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'src/host/remote/file-agent.ts'), serversDir],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const exited = once(child, 'exit').then(([code]: unknown[]) => code);
  await once(child, 'spawn');
  return { child, stream: Duplex.from({ readable: child.stdout, writable: child.stdin }), exited };
}

/** RemoteFiles over one agent process, whose pid the test may watch. */
async function remoteFiles(): Promise<{
  files: RemoteFiles;
  child: ChildProcess;
  exited: Promise<unknown>;
}> {
  const { child, stream, exited } = await agent();
  let given = false;
  const files = new RemoteFiles({
    serversDir,
    connect: () => {
      if (given) return Promise.reject(new Error('one agent per test'));
      given = true;
      return Promise.resolve(stream);
    },
  });
  return { files, child, exited };
}

/** Bytes the process has read through system calls (files and its stdin alike). */
async function bytesRead(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, 'utf8');
  const match = /^rchar: (\d+)$/m.exec(io);
  if (!match?.[1]) throw new Error(`no rchar in /proc/${pid}/io`);
  return Number(match[1]);
}

/** The files the process holds open. */
async function openFiles(pid: number): Promise<string[]> {
  const fds = await readdir(`/proc/${pid}/fd`);
  const targets = await Promise.all(
    fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')),
  );
  return targets;
}

/** Names in the server's folder, the panel's temporary ones included. */
const onDisk = async (): Promise<string[]> =>
  (await readdir(path.join(serversDir, 'world'))).sort();

describe('the file agent process', () => {
  it('answers bad calls and goes on; a broken frame ends it', async () => {
    const { stream, exited } = await agent();
    const client = new WireClient(stream);
    for (const [method, args] of [
      ['format', ['world']],
      ['__proto__', []],
      ['list', ['world', 'not a path']],
      ['list', [42, []]],
      ['upload', ['world', [], 'x', null, null, null]],
      ['channel.read', [999, 0, 10]],
    ] as const) {
      const refused = await client.call(method, args).answer.catch((error: unknown) => error);
      assert.ok(refused instanceof AppError, `${method}: ${String(refused)}`);
      assert.equal(refused.code, 'VALIDATION_FAILED', `${method}: ${refused.message}`);
    }
    assert.deepEqual((await client.call('list', ['world', []]).answer).value, []);

    // The lengths of a frame past the limit: the agent ends the stream and exits.
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32BE(0x7fff_ffff, 0);
    stream.write(prefix);
    assert.equal(await exited, 0);
    const failed = await client
      .call('diskUsage', ['world'])
      .answer.catch((error: unknown) => error);
    assert.ok(failed instanceof AppError && failed.code === 'NODE_UNREACHABLE', String(failed));
  });

  it('reads a download only as its reader takes it, and lets go of the file when it goes', async () => {
    const file = path.join(serversDir, 'world', 'region.mca');
    await writeFile(file, Buffer.alloc(64 * MIB, 7));
    const { files, child, exited } = await remoteFiles();
    const pid = child.pid!;
    const opened = await files.openFile('world', ['region.mca']);
    assert.equal(opened.size, 64 * MIB);
    const start = await bytesRead(pid);
    const download = opened.read();
    let taken = 0;
    for await (const chunk of download) {
      taken += (chunk as Buffer).length;
      if (taken >= 4 * MIB) break; // a slow client: it reads no more for a while
    }
    // The agent may read ahead by what the stream and the wire hold (its file stream's buffer,
    // a window in flight), never the file: it would have read all 64 MiB by now.
    let most = 0;
    for (let i = 0; i < 20; i++) {
      await sleep(50);
      most = Math.max(most, (await bytesRead(pid)) - start);
    }
    assert.ok(most <= taken + 20 * MIB, `the agent read ${most} bytes for ${taken} taken`);
    assert.ok(download.destroyed, 'the loop left the stream destroyed');
    await eventually(
      async () => ((await openFiles(pid)).includes(file) ? undefined : true),
      'the agent to close the file',
    );
    assert.deepEqual(await files.list('world', []).then((entries) => entries.length), 1);
    await files.close();
    assert.equal(await exited, 0);
    await rm(file);
  });

  it('leaves nothing of an upload whose source fails', async () => {
    const { files, exited } = await remoteFiles();
    const source = new Readable({
      read() {
        // Fed below.
      },
    });
    const upload = files.upload('world', [], 'big.bin', source, null);
    source.push(Buffer.alloc(3 * MIB, 1));
    await eventually(
      async () =>
        (await onDisk()).some((name) => name.startsWith(RESERVED_PREFIX)) ? true : undefined,
      'the agent to write its private copy',
    );
    source.destroy(new Error('the client went away'));
    const failed = await upload.catch((error: unknown) => error);
    assert.ok(failed instanceof AppError && failed.code === 'INVALID_UPLOAD', String(failed));
    assert.deepEqual(await onDisk(), []);
    await files.close();
    assert.equal(await exited, 0);
  });

  it('lets go of everything when the panel goes away: an upload, a channel', async () => {
    const { files, exited } = await remoteFiles();
    const channel = await files.openChannel('world', ['notes.txt'], {
      read: false,
      write: true,
      append: false,
      create: true,
      truncate: true,
      exclusive: false,
    });
    await channel.write(0, Buffer.from('half-written'));
    const source = new Readable({
      read() {
        // Never ends.
      },
    });
    const upload = files.upload('world', [], 'big.bin', source, null);
    source.push(Buffer.alloc(MIB, 1));
    await eventually(
      async () =>
        (await onDisk()).filter((name) => name.startsWith(RESERVED_PREFIX)).length === 2
          ? true
          : undefined,
      'the upload and the channel to have their private copies',
    );
    await files.close(); // the stream ends: the helper container is gone
    const failed = await upload.catch((error: unknown) => error);
    assert.ok(failed instanceof AppError && failed.code === 'NODE_UNREACHABLE', String(failed));
    assert.equal(await exited, 0);
    assert.deepEqual(await onDisk(), []);
  });
});
