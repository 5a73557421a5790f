/**
 * RemoteFiles: the servers' files on a machine the panel does not run on, answered by a file
 * agent (file-agent.ts) over the wire (wire.ts). Every operation of ServerFiles and
 * ServerBackupFiles, and what the supervisor needs of a storage (`create`, `directoryOf`,
 * `diskUsage`), is one call of the agent's, whose storage code (the local one) decides every
 * path; this side only carries values across and reads back what the agent answers, believing
 * nothing that does not fit (values.ts): a broken answer closes the stream (503
 * NODE_UNREACHABLE).
 *
 * `connect(server)` opens the byte stream to an agent serving that server's folder (a helper
 * container's attached stdin and stdout on a node; in tests a child process): one stream per
 * server, opened at its first call, shared by all its calls at once, opened again once it ended.
 */
import path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { Readable, Transform, type Duplex, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, type ErrorCode } from '../../errors.js';
import type {
  ArchiveLimits,
  AttributeChanges,
  ChannelFlags,
  Entry,
  EntryStat,
  FileChannel,
  NamedStat,
  OpenedFile,
  PackOptions,
  PathGuard,
  ServerBackupFiles,
  ServerFiles,
} from '../host.js';
import {
  BadValue,
  changesToWire,
  entry,
  entryStat,
  entryType,
  limitsToWire,
  list,
  segments as segmentsOf,
  text,
  whole,
  type Reader,
} from './values.js';
import { unreachable } from './wire.js';
import {
  believed,
  channelAnswer,
  folderBatches,
  nothing,
  openedAnswer,
  RemoteChannel,
  remoteFile,
} from './remote-handles.js';
import { WireClient, type CallOptions } from './wire-client.js';

/** The codes the storage answers with (src/host/local/storage/); any other is a fault. */
export const FILE_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'VALIDATION_FAILED',
  'INVALID_PATH',
  'INVALID_UPLOAD',
  'INVALID_ARCHIVE',
  'NOT_A_FOLDER',
  'NOT_A_FILE',
  'SPECIAL_FILE',
  'BINARY_FILE',
  'SYMLINK_LOOP',
  'PATH_OUTSIDE',
  'FILE_DENIED',
  'FORBIDDEN',
  'MODE_REFUSED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'FOLDER_NOT_EMPTY',
  'CHANGED_CONCURRENTLY',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'QUOTA_EXCEEDED',
  'INSUFFICIENT_STORAGE',
]);

export interface RemoteFilesOptions {
  /** Opens a byte stream to a file agent that serves `server`'s folder. */
  readonly connect: (server: string) => Promise<Duplex>;
  /** The agent's own servers folder (its argument): `directoryOf` answers paths in it. */
  readonly serversDir: string;
  /** Credit each stream starts with (tests shrink it). */
  readonly window?: number;
  /**
   * Ends a server's stream once no call has been under way and no handle held for this long (a
   * helper container is let go of: docs/nodes.md, "The warm helper"); the next call opens a new
   * one. Not given: a stream is kept until it ends or `close`.
   */
  readonly idleMs?: number;
}

const guardLines = (guard: PathGuard | null | undefined): readonly string[] | null =>
  guard ? guard.patterns : null;

export class RemoteFiles implements ServerFiles, ServerBackupFiles {
  readonly #options: RemoteFilesOptions;
  readonly #clients = new Map<string, Promise<WireClient>>();

  constructor(options: RemoteFilesOptions) {
    this.#options = options;
  }

  /** The server's folder as the agent sees it. */
  directoryOf(name: string): string {
    if (name === '' || name === '.' || name === '..' || /[/\0]/.test(name)) {
      throw new Error(`Not a server name: ${JSON.stringify(name)}`);
    }
    return path.posix.join(this.#options.serversDir, name);
  }

  /** Ends every stream; calls under way reject with NODE_UNREACHABLE. */
  async close(): Promise<void> {
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    for (const client of await Promise.allSettled(clients)) {
      if (client.status === 'fulfilled') client.value.close('the panel closed the connection');
    }
  }

  /** Ends the stream of `server`'s agent (a helper then exits); its calls under way reject. */
  async closeServer(server: string): Promise<void> {
    const client = this.#clients.get(server);
    this.#clients.delete(server);
    const opened = await client?.catch(() => null);
    opened?.close('the server was deleted');
  }

  #client(server: string): Promise<WireClient> {
    const known = this.#clients.get(server);
    if (known) return known;
    const opened = this.#open(server);
    this.#clients.set(server, opened);
    const forget = (): void => {
      if (this.#clients.get(server) === opened) this.#clients.delete(server);
    };
    opened.then((client) => {
      client.onClose(forget);
      if (this.#options.idleMs !== undefined)
        this.#endWhenIdle(client, this.#options.idleMs, forget);
    }, forget);
    return opened;
  }

  /** Ends `client` once it has not been busy for `idleMs`; each idle moment starts the wait anew. */
  #endWhenIdle(client: WireClient, idleMs: number, forget: () => void): void {
    let timer: NodeJS.Timeout | undefined;
    const wait = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (client.busy) return;
        forget();
        client.close('the file agent was let go of, idle');
      }, idleMs);
      timer.unref();
    };
    client.onIdle(wait);
    client.onClose(() => {
      clearTimeout(timer);
    });
    // Its first call is made once this is known: the wait is checked when it ends.
    wait();
  }

  async #open(server: string): Promise<WireClient> {
    let stream: Duplex;
    try {
      stream = await this.#options.connect(server);
    } catch (error) {
      throw unreachable(
        `its file agent could not be started (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    return new WireClient(stream, {
      codes: FILE_ERROR_CODES,
      ...(this.#options.window === undefined ? {} : { window: this.#options.window }),
    });
  }

  /** One call of the agent's, its answer read by `read` (a misfit: a broken agent). */
  async #call<T>(
    server: string,
    method: string,
    args: readonly unknown[],
    read: Reader<T>,
    options: CallOptions = {},
  ): Promise<T> {
    const client = await this.#client(server);
    return believed(client, method, read, await client.call(method, args, options).answer);
  }

  // What the supervisor needs of a storage.

  /** Makes the server's folder (kept if it exists), owned by `owner` when the agent may chown. */
  async create(name: string, owner: { uid: number; gid: number } | null = null): Promise<void> {
    await this.#call(name, 'create', [name, owner], nothing);
  }

  diskUsage(server: string): Promise<number> {
    return this.#call(server, 'diskUsage', [server], whole);
  }

  // The file manager.

  list(server: string, segments: readonly string[]): Promise<Entry[]> {
    return this.#call(server, 'list', [server, segments], list(entry, Number.MAX_SAFE_INTEGER));
  }

  createEntry(
    server: string,
    parent: readonly string[],
    name: string,
    type: 'file' | 'folder',
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return this.#call(
      server,
      'createEntry',
      [server, parent, name, type, guardLines(guard)],
      entry,
    );
  }

  async openFile(
    server: string,
    segments: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<OpenedFile> {
    const client = await this.#client(server);
    const answer = await client.call('openFile', [server, segments, guardLines(guard)]).answer;
    const opened = believed(client, 'openFile', openedAnswer, answer);
    return remoteFile(client, opened);
  }

  async readText(
    server: string,
    segments: readonly string[],
    maxBytes: number,
    guard: PathGuard | null = null,
  ): Promise<string> {
    const client = await this.#client(server);
    const call = client.call('readText', [server, segments, maxBytes, guardLines(guard)], {
      output: true,
      outputBytes: maxBytes,
    });
    const [bytes] = await Promise.all([bytesOf(call.output), call.answer]);
    return bytes.toString('utf8');
  }

  writeText(
    server: string,
    segments: readonly string[],
    content: string,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return this.#call(server, 'writeText', [server, segments, quota, guardLines(guard)], entry, {
      input: Readable.from([Buffer.from(content, 'utf8')]),
    });
  }

  async upload(
    server: string,
    folder: readonly string[],
    name: string,
    source: Readable,
    maxBytes: number | null,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    // What the source did wrong (it failed, it passed `maxBytes`, its parser cut it short) is
    // what the caller hears, as from the local storage; the agent drops its copy meanwhile.
    let failure: Error | null = null;
    let received = 0;
    const failed = (error: Error): Error => {
      failure ??= error;
      return error;
    };
    const checked = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        if (maxBytes !== null && received > maxBytes) {
          callback(
            failed(new AppError('PAYLOAD_TOO_LARGE', `Files may be at most ${maxBytes} bytes`)),
          );
          return;
        }
        callback(null, chunk);
      },
      flush(callback) {
        // A parser that stopped at its own limit ends the stream early instead of failing.
        if ((source as { truncated?: boolean }).truncated === true) {
          callback(
            failed(new AppError('PAYLOAD_TOO_LARGE', 'The file is larger than the upload limit')),
          );
          return;
        }
        callback();
      },
    });
    source.once('error', (error) => {
      checked.destroy(failed(error));
    });
    // A call that fails first stops the source, as a pipeline would.
    checked.once('close', () => {
      if (!source.readableEnded) source.destroy();
    });
    source.pipe(checked);
    try {
      return await this.#call(
        server,
        'upload',
        [server, folder, name, maxBytes, quota, guardLines(guard)],
        entry,
        { input: checked },
      );
    } catch (error) {
      const cause = failure as Error | null;
      if (cause === null) throw error;
      if (cause instanceof AppError) throw cause;
      throw new AppError('INVALID_UPLOAD', 'The upload ended before the file was complete');
    }
  }

  renameEntry(
    server: string,
    segments: readonly string[],
    newName: string,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return this.#call(server, 'renameEntry', [server, segments, newName, guardLines(guard)], entry);
  }

  move(
    server: string,
    source: readonly string[],
    destination: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return this.#call(server, 'move', [server, source, destination, guardLines(guard)], entry);
  }

  async deleteEntry(
    server: string,
    segments: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<void> {
    await this.#call(server, 'deleteEntry', [server, segments, guardLines(guard)], nothing);
  }

  deleteMany(
    server: string,
    paths: readonly (readonly string[])[],
    guard: PathGuard | null = null,
  ): Promise<string[]> {
    return this.#call(
      server,
      'deleteMany',
      [server, paths, guardLines(guard)],
      list(text, paths.length),
    );
  }

  moveMany(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<Entry[]> {
    return this.#call(
      server,
      'moveMany',
      [server, sources, destination, guardLines(guard)],
      list(entry, sources.length),
    );
  }

  compress(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    format: 'zip' | 'tar.gz',
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return this.#call(
      server,
      'compress',
      [server, sources, destination, format, quota, guardLines(guard)],
      entry,
    );
  }

  decompress(
    server: string,
    archive: readonly string[],
    destination: readonly string[],
    limits: ArchiveLimits,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry[]> {
    return this.#call(
      server,
      'decompress',
      [server, archive, destination, limitsToWire(limits), quota, guardLines(guard)],
      list(entry, limits.maxEntries),
    );
  }

  // Backups.

  async packServer(server: string, into: Writable, options: PackOptions): Promise<void> {
    const client = await this.#client(server);
    const call = client.call('packServer', [server, options.ignore ?? []], {
      output: true,
      onEvent: (value) => {
        for (const [kind, bytes] of packedEvent(value)) options.packed?.(kind, bytes);
      },
    });
    if (call.output === null) throw new Error('a packing without its stream');
    try {
      await pipeline(call.output, into);
    } catch (error) {
      // `into` failed (the backup's limit, the store), or the agent did: that failure it is.
      call.answer.catch(nothing);
      throw error;
    }
    await call.answer;
  }

  async replaceFromArchive(
    server: string,
    source: FileHandle,
    limits: ArchiveLimits,
    quota: number | null,
    progress: (written: number) => void,
  ): Promise<void> {
    await this.#call(server, 'replaceFromArchive', [server, limitsToWire(limits), quota], nothing, {
      input: fromStart(source),
      onEvent: (value) => {
        const written = (value as { written?: unknown } | null)?.written;
        if (typeof written === 'number' && Number.isSafeInteger(written)) progress(written);
      },
    });
  }

  // A remote files session (SFTP).

  stat(
    server: string,
    segments: readonly string[],
    follow: boolean,
    guard: PathGuard | null = null,
  ): Promise<EntryStat> {
    return this.#call(server, 'stat', [server, segments, follow, guardLines(guard)], entryStat);
  }

  realPath(server: string, segments: readonly string[]): Promise<string[]> {
    return this.#call(server, 'realPath', [server, segments], segmentsOf);
  }

  async openChannel(
    server: string,
    segments: readonly string[],
    flags: ChannelFlags,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<FileChannel> {
    const client = await this.#client(server);
    const answer = await client.call('channel.open', [
      server,
      segments,
      flags,
      quota,
      guardLines(guard),
    ]).answer;
    const opened = believed(client, 'channel.open', channelAnswer, answer);
    return new RemoteChannel(client, opened.handle, opened.writable);
  }

  readFolder(
    server: string,
    segments: readonly string[],
    batch: number,
    guard: PathGuard | null = null,
  ): AsyncIterableIterator<readonly NamedStat[]> {
    return folderBatches(this.#client(server), [server, segments, batch, guardLines(guard)]);
  }

  async makeFolder(server: string, segments: readonly string[], guard: PathGuard | null = null) {
    await this.#call(server, 'makeFolder', [server, segments, guardLines(guard)], nothing);
  }

  async removeFile(server: string, segments: readonly string[], guard: PathGuard | null = null) {
    await this.#call(server, 'removeFile', [server, segments, guardLines(guard)], nothing);
  }

  async removeFolder(server: string, segments: readonly string[], guard: PathGuard | null = null) {
    await this.#call(server, 'removeFolder', [server, segments, guardLines(guard)], nothing);
  }

  async renamePath(
    server: string,
    from: readonly string[],
    to: readonly string[],
    replace: boolean,
    guard: PathGuard | null = null,
  ): Promise<void> {
    await this.#call(server, 'renamePath', [server, from, to, replace, guardLines(guard)], nothing);
  }

  readLink(
    server: string,
    segments: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<string[]> {
    return this.#call(server, 'readLink', [server, segments, guardLines(guard)], segmentsOf);
  }

  async makeLink(
    server: string,
    link: readonly string[],
    target: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<void> {
    await this.#call(server, 'makeLink', [server, link, target, guardLines(guard)], nothing);
  }

  async setAttributes(
    server: string,
    segments: readonly string[],
    changes: AttributeChanges,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<void> {
    await this.#call(
      server,
      'setAttributes',
      [server, segments, changesToWire(changes), quota, guardLines(guard)],
      nothing,
    );
  }
}

/** The entries a packing's event reports: `{ packed: [[kind, bytes], …] }`; a misfit: none. */
function packedEvent(value: unknown): [Entry['type'], number][] {
  try {
    const packed = (value as { packed?: unknown } | null)?.packed;
    return list((item, what) => {
      if (!Array.isArray(item)) throw new BadValue(what, 'a kind and bytes');
      return [entryType(item[0], what), whole(item[1], what)] as [Entry['type'], number];
    }, 100_000)(packed, 'packed');
  } catch {
    return [];
  }
}

/**
 * A file of the panel's read from its start, in fresh buffers; the handle stays the caller's and
 * is never closed here (Node's file streams close a FileHandle when destroyed, or keep it from
 * closing).
 */
function fromStart(handle: FileHandle): Readable {
  let position = 0;
  return new Readable({
    highWaterMark: READ_BYTES,
    read() {
      const buffer = Buffer.allocUnsafe(READ_BYTES);
      handle.read(buffer, 0, READ_BYTES, position).then(
        ({ bytesRead }) => {
          position += bytesRead;
          this.push(bytesRead === 0 ? null : buffer.subarray(0, bytesRead));
        },
        (error: unknown) => {
          this.destroy(error instanceof Error ? error : new Error(String(error)));
        },
      );
    },
  });
}

/** Bytes per read of a panel's archive sent to an agent. */
const READ_BYTES = 256 * 1024;

/** Every byte of `stream`. */
async function bytesOf(stream: Readable | null): Promise<Buffer> {
  if (stream === null) throw new Error('a call without its stream');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
