/**
 * What an earlier run of the panel left behind (temporary files of uploads and saves a killed
 * panel cut short, folders of deleted servers in the trash) is removed once the panel listens,
 * in the background: start-up never walks the server folders, the panel answers before the
 * removal has even begun, and an upload that starts meanwhile is never harmed.
 *
 * The removal is handed to the test (`AppOverrides.removeLeftovers`), which holds it: nothing
 * here depends on how long anything takes.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { buildApp, type AppOverrides } from '../src/app.js';
import { ServerStorage } from '../src/host/local/storage/server-storage.js';
import { TEMP_PREFIX } from '../src/host/local/storage/atomic.js';
import { TRASH_NAME } from '../src/host/local/storage/trash.js';
import { startPanel, suiteScope, type Panel, type TestPanel } from './helpers/app.js';
import { createServer, eventually, register, type Session } from './helpers/factories.js';

/** An earlier run's temporary file, and one named the way panels named them before runs. */
const EARLIER = `${TEMP_PREFIX}0123456789ab-fedcba9876543210`;
const OLDER = `${TEMP_PREFIX}fedcba9876543210`;
const BOUNDARY = '----leftovers-boundary';

interface LogLine {
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** Every temporary file under `dir`, as paths relative to it. */
async function temporaries(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries
    .map(String)
    .filter((entry) => path.basename(entry).startsWith(TEMP_PREFIX))
    .sort();
}

describe('leftovers of an earlier run', () => {
  let first: TestPanel;
  let admin: Session;
  let root: string;
  let trash: string;

  const suite = suiteScope();
  before(async () => {
    first = await startPanel(suite);
    admin = await register(first, 'admin');
    await createServer(first, admin, 'world');
    // The panel that made the server is gone; the next one starts on what it left.
    await first.app.close();
    root = path.join(first.config.serversDir, 'world');
    trash = path.join(first.config.serversDir, TRASH_NAME);
  });

  /**
   * The next panel on the same data directory and database, logging at info into `lines`; it
   * hands its removal of leftovers to the promise `removal` once it listens, and nobody runs it
   * unless the test does.
   */
  async function nextPanel(overrides: AppOverrides = {}): Promise<{
    app: Panel;
    lines: LogLine[];
    removal: Promise<() => Promise<void>>;
  }> {
    const lines: LogLine[] = [];
    let handOver: (run: () => Promise<void>) => void = () => undefined;
    const removal = new Promise<() => Promise<void>>((resolve) => {
      handOver = resolve;
    });
    const app = await buildApp(
      { ...first.config, logLevel: 'info' },
      {
        logStream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
        removeLeftovers: (run) => {
          handOver(run);
        },
        ...overrides,
      },
    );
    return { app, lines, removal };
  }

  it('answers before it looks at the server folders, then removes what an earlier run left', async () => {
    await writeFile(path.join(root, EARLIER), 'half an upload');
    await mkdir(path.join(root, 'world', 'region'), { recursive: true });
    await writeFile(path.join(root, 'world', 'region', OLDER), 'half a save');
    await writeFile(path.join(root, 'server.properties'), 'kept');
    // An extraction cut short: its folder, with what it had unpacked.
    const extraction = path.join(root, 'world', `${TEMP_PREFIX}0123456789ab-0011223344556677`);
    await mkdir(path.join(extraction, 'unpacked', 'deep'), { recursive: true });
    await writeFile(path.join(extraction, 'unpacked', 'deep', 'file'), 'half an extraction');
    const deleted = path.join(trash, 'old-0123456789abcdef');
    await mkdir(path.join(deleted, 'deep'), { recursive: true });
    await writeFile(path.join(deleted, 'deep', 'level.dat'), 'a deleted server');

    const { app, lines, removal } = await nextPanel();
    try {
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const health = await fetch(`${base}/api/health`);
      assert.equal(health.status, 200);
      const run = await removal;
      // Nothing walked the folders before: every leftover is still there while the panel serves.
      assert.deepEqual(await temporaries(root), [
        EARLIER,
        path.relative(root, extraction),
        path.join('world', 'region', OLDER),
      ]);
      assert.deepEqual(await readdir(trash), ['old-0123456789abcdef']);
      assert.ok(!lines.some((line) => line.msg === 'removed leftover temporary files'));

      await run();
      assert.deepEqual(await temporaries(root), []);
      assert.deepEqual(await readdir(trash), []);
      assert.equal(await readFile(path.join(root, 'server.properties'), 'utf8'), 'kept');
      assert.deepEqual(await readdir(path.join(root, 'world')), ['region']);
      const said = lines.filter((line) => line.msg.startsWith('removed '));
      assert.deepEqual(
        said.map(({ msg, server, removed }) => ({ msg, server, removed })),
        [
          { msg: 'removed leftover temporary files', server: 'world', removed: 3 },
          { msg: 'removed the leftovers of an earlier run', server: undefined, removed: 3 },
        ],
      );
    } finally {
      await app.close();
    }
  });

  it('leaves alone the temporary file of an upload under way while it removes leftovers', async () => {
    await writeFile(path.join(root, EARLIER), 'half an upload');
    const { app, removal } = await nextPanel();
    let request: http.ClientRequest | undefined;
    try {
      const base = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
      const head = Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="map.zip"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
      const halves = [randomBytes(2 * 1024 * 1024), randomBytes(2 * 1024 * 1024)];
      const size = halves[0]!.length + halves[1]!.length;
      const upload = http.request({
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path: '/api/servers/world/files/upload?path=',
        headers: {
          ...admin.headers,
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': String(head.length + size + tail.length),
        },
      });
      request = upload;
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        upload.on('response', (response: http.IncomingMessage) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, body });
          });
        });
        upload.on('error', reject);
      });
      upload.write(head);
      upload.write(halves[0]);
      // The upload's own temporary file, beside the earlier run's.
      const ours = await eventually(async () => {
        const found = (await temporaries(root)).filter((name) => name !== EARLIER);
        return found.length === 1 ? found[0] : undefined;
      }, 'the temporary file of the upload under way');

      const removeLeftovers = await removal;
      await removeLeftovers();
      assert.deepEqual(await temporaries(root), [ours]);

      upload.end(Buffer.concat([halves[1]!, tail]));
      const { status, body } = await answer;
      assert.equal(status, 200, body);
      const stored = await readFile(path.join(root, 'map.zip'));
      assert.equal(
        createHash('sha256').update(stored).digest('hex'),
        createHash('sha256').update(Buffer.concat(halves)).digest('hex'),
      );
      assert.deepEqual(await temporaries(root), []);
    } finally {
      // A failure above leaves the upload open, which the panel would wait for at close.
      request?.destroy();
      await app.close();
    }
  });

  it('removes them by itself once it listens, when nobody holds the removal', async () => {
    await writeFile(path.join(root, EARLIER), 'half an upload');
    const { app, lines } = await nextPanel({ removeLeftovers: undefined });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      await eventually(
        () =>
          lines.some((line) => line.msg === 'removed the leftovers of an earlier run')
            ? true
            : undefined,
        'the removal of leftovers',
      );
      assert.deepEqual(await temporaries(root), []);
    } finally {
      await app.close();
    }
  });

  it('logs what it could not do, goes on with the other servers, and never rejects', async () => {
    await writeFile(path.join(root, EARLIER), 'half an upload');
    const warnings: { details: object; message: string }[] = [];
    const storage = new ServerStorage(first.config.serversDir, {
      log: {
        info: () => undefined,
        warn: (details, message) => warnings.push({ details, message }),
      },
    });
    await storage.removeLeftovers(() => Promise.resolve(['not/a-server', 'world']));
    assert.deepEqual(await temporaries(root), []);
    assert.deepEqual(
      warnings.map(({ details, message }) => ({
        message,
        server: (details as { server?: string }).server,
      })),
      [
        { message: 'could not remove leftover temporary files', server: 'not/a-server' },
        { message: 'removed leftover temporary files', server: 'world' },
      ],
    );

    warnings.length = 0;
    await storage.removeLeftovers(() => Promise.reject(new Error('the database is gone')));
    assert.deepEqual(
      warnings.map(({ message }) => message),
      ['could not list the servers to remove leftover temporary files'],
    );
  });
});
