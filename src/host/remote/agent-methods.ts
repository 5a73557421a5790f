/**
 * What the file agent answers: the explicit table of methods (wire-server.ts dispatches from it;
 * a name not in it is refused) over the local storage itself (src/host/local/storage/), so the
 * same code decides every path on a node as on the panel's machine: containment, the deny list,
 * atomic writes, the quota, archives. Here: what the supervisor needs, the file manager and
 * backups; agent-channels.ts: a remote files session (SFTP). Each method reads its arguments
 * (values.ts, agent-session.ts) before the storage sees them.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../errors.js';
import type { EntryType } from '../host.js';
import type { ServerStorage } from '../local/storage/server-storage.js';
import { channelMethods } from './agent-channels.js';
import {
  AgentSession,
  batched,
  done,
  inputOf,
  method,
  outputOf,
  quota,
  serverOf,
} from './agent-session.js';
import {
  archiveLimits,
  BadValue,
  list,
  nullable,
  segments,
  text,
  whole,
  type Reader,
} from './values.js';
import type { Method, MethodTable } from './wire-server.js';

/** The most of a text file `writeText` takes (MAX_EDIT_BYTES cannot be set higher). */
const MAX_TEXT_BYTES = 1024 ** 3;
/** The most progress events a packing sends in one. */
const PACKED_PER_EVENT = 500;

const owner: Reader<{ uid: number; gid: number } | null> = (value, what) => {
  if (value === null) return null;
  const { uid, gid } = (value ?? {}) as { uid?: unknown; gid?: unknown };
  return { uid: whole(uid, `${what}.uid`), gid: whole(gid, `${what}.gid`) };
};
const kind: Reader<'file' | 'folder'> = (value, what) => {
  if (value !== 'file' && value !== 'folder') throw new BadValue(what, 'file or folder');
  return value;
};
const paths = list(segments, 10_000);

/** The file agent's methods for one stream over `storage`, and how to let go of its handles. */
export function agentMethods(storage: ServerStorage): {
  readonly methods: MethodTable;
  release(): Promise<void>;
} {
  const session = new AgentSession();
  const table: [string, Method][] = [
    // What the supervisor needs of the storage.
    ['create', method((a) => storage.create(serverOf(a), owner(a[1], 'owner')).then(done))],
    ['diskUsage', method((a) => storage.diskUsage(serverOf(a)))],

    // The file manager.
    ['list', method((a) => storage.list(serverOf(a), segments(a[1], 'path')))],
    [
      'createEntry',
      method((a) =>
        storage.createEntry(
          serverOf(a),
          segments(a[1], 'parent'),
          text(a[2], 'name'),
          kind(a[3], 'type'),
          session.guard(a[4], 'guard'),
        ),
      ),
    ],
    [
      'openFile',
      method(async (a) => {
        const file = await storage.openFile(
          serverOf(a),
          segments(a[1], 'path'),
          session.guard(a[2], 'guard'),
        );
        try {
          const handle = session.hold({ kind: 'file', file });
          return { handle, name: file.name, size: file.size, modified: file.modified.getTime() };
        } catch (error) {
          await file.close();
          throw error;
        }
      }),
    ],
    [
      'file.read',
      method(
        async (a, call) => {
          const item = session.heldAs(a[0], 'file');
          session.drop(a[0]);
          const range =
            a[1] === null ? undefined : { start: whole(a[1], 'start'), end: whole(a[2], 'end') };
          // The stream owns the file now and closes it at its end, or when the panel cancels.
          await pipeline(chunksOf(item.file.read(range)), outputOf(call));
        },
        { output: true },
      ),
    ],
    [
      'file.close',
      method(async (a) => {
        const item = session.drop(a[0]);
        if (item?.kind === 'file') await item.file.close();
        return null;
      }),
    ],
    [
      'readText',
      method(
        async (a, call) => {
          const content = await storage.readText(
            serverOf(a),
            segments(a[1], 'path'),
            whole(a[2], 'maxBytes'),
            session.guard(a[3], 'guard'),
          );
          outputOf(call).end(Buffer.from(content, 'utf8'));
          return null;
        },
        { output: true },
      ),
    ],
    [
      'writeText',
      method(
        async (a, call) => {
          const server = serverOf(a);
          const path = segments(a[1], 'path');
          const limit = quota(a[2], 'quota');
          const denied = session.guard(a[3], 'guard');
          const content = await textOf(inputOf(call));
          return storage.writeText(server, path, content, limit, denied);
        },
        { input: true },
      ),
    ],
    [
      'upload',
      method(
        (a, call) =>
          storage.upload(
            serverOf(a),
            segments(a[1], 'folder'),
            text(a[2], 'name'),
            inputOf(call),
            nullable(whole)(a[3], 'maxBytes'),
            quota(a[4], 'quota'),
            session.guard(a[5], 'guard'),
          ),
        { input: true },
      ),
    ],
    [
      'renameEntry',
      method((a) =>
        storage.renameEntry(
          serverOf(a),
          segments(a[1], 'path'),
          text(a[2], 'newName'),
          session.guard(a[3], 'guard'),
        ),
      ),
    ],
    [
      'move',
      method((a) =>
        storage.move(
          serverOf(a),
          segments(a[1], 'source'),
          segments(a[2], 'destination'),
          session.guard(a[3], 'guard'),
        ),
      ),
    ],
    [
      'deleteEntry',
      method((a) =>
        storage
          .deleteEntry(serverOf(a), segments(a[1], 'path'), session.guard(a[2], 'guard'))
          .then(done),
      ),
    ],
    [
      'deleteMany',
      method((a) =>
        storage.deleteMany(serverOf(a), paths(a[1], 'paths'), session.guard(a[2], 'guard')),
      ),
    ],
    [
      'moveMany',
      method((a) =>
        storage.moveMany(
          serverOf(a),
          paths(a[1], 'sources'),
          segments(a[2], 'destination'),
          session.guard(a[3], 'guard'),
        ),
      ),
    ],
    [
      'compress',
      method((a) => {
        const format = a[3];
        if (format !== 'zip' && format !== 'tar.gz') throw new BadValue('format', 'zip or tar.gz');
        return storage.compress(
          serverOf(a),
          paths(a[1], 'sources'),
          segments(a[2], 'destination'),
          format,
          quota(a[4], 'quota'),
          session.guard(a[5], 'guard'),
        );
      }),
    ],
    [
      'decompress',
      method((a) =>
        storage.decompress(
          serverOf(a),
          segments(a[1], 'archive'),
          segments(a[2], 'destination'),
          archiveLimits(a[3], 'limits'),
          quota(a[4], 'quota'),
          session.guard(a[5], 'guard'),
        ),
      ),
    ],

    // Backups.
    [
      'packServer',
      method(
        async (a, call) => {
          const server = serverOf(a);
          const ignore = list(text, 100_000)(a[1], 'ignore');
          const events = batched<[EntryType, number]>(call, PACKED_PER_EVENT, (packed) => ({
            packed,
          }));
          try {
            await storage.packServer(server, outputOf(call), {
              ignore,
              packed: (entryKind, bytes) => {
                events.add([entryKind, bytes]);
              },
            });
          } finally {
            events.flush();
          }
          return null;
        },
        { output: true },
      ),
    ],
    [
      'replaceFromArchive',
      method(
        async (a, call) => {
          const server = serverOf(a);
          const limits = archiveLimits(a[1], 'limits');
          const limit = quota(a[2], 'quota');
          // Only the latest progress matters: one event per turn at most.
          const events = batched<number>(call, Number.POSITIVE_INFINITY, (written) => ({
            written: written.at(-1),
          }));
          try {
            await storage.replaceFromStream(server, inputOf(call), limits, limit, (written) => {
              events.add(written);
            });
          } finally {
            events.flush();
          }
          return null;
        },
        { input: true },
      ),
    ],
  ];
  return {
    methods: new Map([...table, ...channelMethods(storage, session)]),
    release: () => session.release(),
  };
}

/**
 * A file's bytes as fresh buffers, never one the file's stream reuses: what crosses the wire
 * may still be held by the byte stream after it was taken (see FrameWriter).
 */
async function* chunksOf(stream: Readable): AsyncGenerator<Buffer> {
  for await (const chunk of stream) yield chunk as Buffer;
}

/** The whole input as UTF-8 text, at most MAX_TEXT_BYTES. */
async function textOf(input: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of input) {
    bytes += (chunk as Buffer).length;
    if (bytes > MAX_TEXT_BYTES) {
      throw new AppError('PAYLOAD_TOO_LARGE', `A text may be at most ${MAX_TEXT_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
