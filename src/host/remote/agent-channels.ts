/**
 * The file agent's methods for a remote files session (SFTP; ServerFileChannels in
 * src/host/host.ts): attributes, channels at offsets and folders read in batches, each held as a
 * handle of the stream's session (agent-session.ts), and single-entry changes, all answered by
 * the local storage itself.
 */
import type { PathGuard } from '../host.js';
import type { ServerStorage } from '../local/storage/server-storage.js';
import { done, method, quota, serverOf, type AgentSession } from './agent-session.js';
import {
  attributeChanges,
  BadValue,
  channelFlags,
  flag,
  namedStatToWire,
  segments,
  statToWire,
  whole,
} from './values.js';
import type { Method } from './wire-server.js';

/** The most entries a folder's batch may hold. */
const MAX_BATCH = 1000;

export function channelMethods(storage: ServerStorage, session: AgentSession): [string, Method][] {
  /** A change to one entry: (server, path, guard), answering nothing. */
  const change = (
    run: (server: string, path: string[], denied: PathGuard | null) => Promise<void>,
  ): Method =>
    method((a) =>
      run(serverOf(a), segments(a[1], 'path'), session.guard(a[2], 'guard')).then(done),
    );

  return [
    [
      'stat',
      method(async (a) =>
        statToWire(
          await storage.stat(
            serverOf(a),
            segments(a[1], 'path'),
            flag(a[2], 'follow'),
            session.guard(a[3], 'guard'),
          ),
        ),
      ),
    ],
    ['realPath', method((a) => storage.realPath(serverOf(a), segments(a[1], 'path')))],
    [
      'channel.open',
      method(async (a) => {
        const channel = await storage.openChannel(
          serverOf(a),
          segments(a[1], 'path'),
          channelFlags(a[2], 'flags'),
          quota(a[3], 'quota'),
          session.guard(a[4], 'guard'),
        );
        try {
          return { handle: session.hold({ kind: 'channel', channel }), writable: channel.writable };
        } catch (error) {
          await channel.abort();
          throw error;
        }
      }),
    ],
    [
      'channel.read',
      method((a) =>
        session.heldAs(a[0], 'channel').channel.read(whole(a[1], 'offset'), whole(a[2], 'length')),
      ),
    ],
    [
      'channel.write',
      method((a, call) => {
        // Called as it arrives, before anything is awaited: writes take their places in order.
        const { channel } = session.heldAs(a[0], 'channel');
        if (call.body === null) throw new BadValue('data', 'bytes');
        return channel.write(whole(a[1], 'offset'), call.body).then(done);
      }),
    ],
    [
      'channel.stat',
      method(async (a) => statToWire(await session.heldAs(a[0], 'channel').channel.stat())),
    ],
    [
      'channel.setAttributes',
      method((a) =>
        session
          .heldAs(a[0], 'channel')
          .channel.setAttributes(attributeChanges(a[1], 'changes'))
          .then(done),
      ),
    ],
    [
      'channel.close',
      method(async (a) => {
        const { channel } = session.heldAs(a[0], 'channel');
        try {
          return await channel.close();
        } finally {
          session.drop(a[0]);
        }
      }),
    ],
    [
      'channel.abort',
      method(async (a) => {
        const item = session.drop(a[0]);
        if (item?.kind === 'channel') await item.channel.abort();
        return null;
      }),
    ],
    [
      'folder.open',
      method((a) => {
        const batch = whole(a[2], 'batch');
        if (batch < 1 || batch > MAX_BATCH) throw new BadValue('batch', `1 to ${MAX_BATCH}`);
        const folder = storage.readFolder(
          serverOf(a),
          segments(a[1], 'path'),
          batch,
          session.guard(a[3], 'guard'),
        );
        return Promise.resolve({ handle: session.hold({ kind: 'folder', folder }) });
      }),
    ],
    [
      'folder.next',
      method(async (a) => {
        const { folder } = session.heldAs(a[0], 'folder');
        try {
          const next = await folder.next();
          if (next.done === true) session.drop(a[0]);
          return next.done === true
            ? { done: true }
            : { done: false, value: next.value.map(namedStatToWire) };
        } catch (error) {
          session.drop(a[0]);
          throw error;
        }
      }),
    ],
    [
      'folder.return',
      method(async (a) => {
        const item = session.drop(a[0]);
        if (item?.kind === 'folder') await item.folder.return?.();
        return null;
      }),
    ],
    ['makeFolder', change((server, path, denied) => storage.makeFolder(server, path, denied))],
    ['removeFile', change((server, path, denied) => storage.removeFile(server, path, denied))],
    ['removeFolder', change((server, path, denied) => storage.removeFolder(server, path, denied))],
    [
      'renamePath',
      method((a) =>
        storage
          .renamePath(
            serverOf(a),
            segments(a[1], 'from'),
            segments(a[2], 'to'),
            flag(a[3], 'replace'),
            session.guard(a[4], 'guard'),
          )
          .then(done),
      ),
    ],
    [
      'readLink',
      method((a) =>
        storage.readLink(serverOf(a), segments(a[1], 'path'), session.guard(a[2], 'guard')),
      ),
    ],
    [
      'makeLink',
      method((a) =>
        storage
          .makeLink(
            serverOf(a),
            segments(a[1], 'link'),
            segments(a[2], 'target'),
            session.guard(a[3], 'guard'),
          )
          .then(done),
      ),
    ],
    [
      'setAttributes',
      method((a) =>
        storage
          .setAttributes(
            serverOf(a),
            segments(a[1], 'path'),
            attributeChanges(a[2], 'changes'),
            quota(a[3], 'quota'),
            session.guard(a[4], 'guard'),
          )
          .then(done),
      ),
    ],
  ];
}
