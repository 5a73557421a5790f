/**
 * One SFTP session's requests, answered through its `SessionFiles` (session-files.ts, which
 * checks the caller's rights on every call): SFTP v3 as OpenSSH's `sftp`, FileZilla and WinSCP
 * speak it, with the OpenSSH extensions they use (posix-rename, statvfs, fstatvfs, fsync,
 * limits). Paths are the session's: `/` is the server's folder and its working folder, and a
 * `..` that would leave it is refused.
 *
 * Memory stays bounded whatever the client does: at most `maxInFlight` requests are worked on at
 * once, and while as many wait, no more are taken (the channel's window is not refilled, so the
 * client stops sending); a READ is at most `readChunkMax` bytes and waits until the answers
 * before it have gone out to the client; a folder is read in batches, never whole.
 *
 * A file opened for writing is put in place when the client closes it, and the failure of that
 * is the failure of its CLOSE; a session that ends any other way (`close`, a broken connection,
 * the idle timeout) drops every file still open for writing and leaves the files as they were.
 */
import type { Attributes, SFTPWrapper } from 'ssh2';
import { AppError } from '../../errors.js';
import type { SessionFiles, SessionSpace } from './session-files.js';
import { closing, dropHandle, HandleTable } from './sftp-handles.js';
import { HandleOrder, Slots } from './sftp-order.js';
import {
  attributesOf,
  badHandle,
  changesOf,
  channelFlags,
  longnameOf,
  Refusal,
  refusalOf,
  sessionPath,
  shownPath,
  STATUS,
  type ClientAttributes,
} from './sftp-replies.js';
import { readStrings, SftpWire, uint64s } from './sftp-wire.js';

/** Where the session reports what the client must not be told. */
export interface SftpLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface SftpOptions {
  /** Ends the session after this long with no request (none in flight); absent: never. */
  readonly idleMs?: number;
  /** Files and folders one session may hold open (beyond: FAILURE "too many open files"). */
  readonly maxOpenHandles: number;
  /** Requests worked on at once; while as many wait, the client's next ones are not taken. */
  readonly maxInFlight: number;
  /** Most bytes one READ answers (a longer one is answered short, as SFTP allows). */
  readonly readChunkMax: number;
  readonly log: SftpLog;
  /** Called on every request, for the server's own idle timer. */
  readonly onActivity?: () => void;
  /** Entries per READDIR answer (default 100, as OpenSSH's sftp-server). */
  readonly folderBatch?: number;
  /** The name `ls -l` shows as owner and group (default "server"). */
  readonly owner?: string;
}

export const SFTP_DEFAULTS = {
  maxOpenHandles: 64,
  maxInFlight: 64,
  readChunkMax: 256 * 1024,
} as const;

/**
 * Largest SFTP message OpenSSH reads (its SFTP_MAX_MSG_LENGTH) and ssh2's server accepts; READ
 * and WRITE data stay 1 KiB under it, room for the packet's own fields.
 */
const MAX_PACKET = 256 * 1024;
const MAX_DATA = MAX_PACKET - 1024;
const BLOCK = 4096;
const NAME_MAX = 255;

/** The OpenSSH extensions answered here, as the VERSION answer advertises them. */
const EXTENSIONS = [
  ['posix-rename@openssh.com', '1'],
  ['statvfs@openssh.com', '2'],
  ['fstatvfs@openssh.com', '2'],
  ['fsync@openssh.com', '1'],
  ['limits@openssh.com', '1'],
] as const;

/** REALPATH and READLINK answer a name with no attributes (ssh2 sends an empty set). */
const NO_ATTRIBUTES = {} as Attributes;

export interface SftpSession {
  /** Ends the session and its channel: files open for writing are dropped, the others closed. */
  close(): Promise<void>;
}

/**
 * Answers every request of `stream` (ssh2's SFTP server object, as `accept()` gives it; call
 * this at once, before the client's first packet, so that the extensions are advertised). The
 * session ends itself when the client ends the channel, the connection breaks or it idles out;
 * `close` ends it from outside (a sign-in revoked). Throws when `stream` is not the ssh2 object
 * this code was written for (sftp-wire.ts): the caller ends that session.
 */
export function serveSftp(
  stream: SFTPWrapper,
  files: SessionFiles,
  options: SftpOptions,
): SftpSession {
  return new SftpProtocol({ stream, files, options });
}

export interface SftpProtocolDeps {
  readonly stream: SFTPWrapper;
  readonly files: SessionFiles;
  readonly options: SftpOptions;
}

class SftpProtocol implements SftpSession {
  readonly #stream: SFTPWrapper;
  readonly #files: SessionFiles;
  readonly #options: SftpOptions;
  readonly #log: SftpLog;
  readonly #wire: SftpWire;
  readonly #slots: Slots;
  readonly #readMax: number;
  readonly #handles: HandleTable;
  /** Requests taken and not yet answered. */
  #pending = 0;
  #closing: Promise<void> | null = null;
  /** The client has sent its last request (the channel's end of input). */
  #ended = false;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(deps: SftpProtocolDeps) {
    this.#stream = deps.stream;
    this.#files = deps.files;
    this.#options = deps.options;
    this.#log = deps.options.log;
    this.#wire = new SftpWire(deps.stream);
    this.#slots = new Slots(deps.options.maxInFlight);
    this.#handles = new HandleTable(deps.options.maxOpenHandles);
    this.#readMax = Math.max(1, Math.min(deps.options.readChunkMax, MAX_DATA));
    if (!this.#wire.advertise(EXTENSIONS)) {
      this.#log.warn({}, 'SFTP session served after its start: no extensions advertised');
    }
    this.#listen();
    this.#settled();
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    clearTimeout(this.#idleTimer);
    this.#wire.close();
    // Requests that come now are not answered: the client is told the channel is closed.
    this.#stream.end();
    const handles = this.#handles.close();
    // Each after the request on it now running; those still waiting find the session closed.
    await Promise.all(handles.map((handle) => handle.order.run(false, () => dropHandle(handle))));
  }

  #listen(): void {
    const s = this.#stream;
    s.on('error', (error: unknown) => {
      this.#log.warn({ err: error }, 'SFTP session failed');
      void this.close();
    });
    s.on('close', () => void this.close());
    // The client sends no more requests: answer those under way, then close the channel, as
    // OpenSSH's sftp-server exits at the end of its input (the client waits for that).
    s.on('end', () => {
      this.#ended = true;
      this.#settled();
    });

    s.on('OPEN', (id: number, path: string, pflags: number) => {
      this.#take(id, null, () => this.#open(id, path, pflags));
    });
    s.on('CLOSE', (id: number, handle: Buffer) => {
      this.#take(id, handle, () => this.#close(id, handle));
    });
    s.on('READ', (id: number, handle: Buffer, offset: number, length: number) => {
      this.#take(id, handle, () => this.#read(id, handle, offset, length), true);
    });
    s.on('WRITE', (id: number, handle: Buffer, offset: number, data: Buffer) => {
      this.#take(id, handle, () => this.#write(id, handle, offset, data));
    });
    s.on('FSTAT', (id: number, handle: Buffer) => {
      this.#take(id, handle, () => this.#fstat(id, handle));
    });
    s.on('FSETSTAT', (id: number, handle: Buffer, attrs: ClientAttributes) => {
      this.#take(id, handle, () => this.#fsetstat(id, handle, attrs));
    });
    s.on('OPENDIR', (id: number, path: string) => {
      this.#take(id, null, () => this.#openFolder(id, path));
    });
    s.on('READDIR', (id: number, handle: Buffer) => {
      this.#take(id, handle, () => this.#readFolder(id, handle));
    });
    s.on('STAT', (id: number, path: string) => {
      this.#take(id, null, () => this.#stat(id, path, true));
    });
    s.on('LSTAT', (id: number, path: string) => {
      this.#take(id, null, () => this.#stat(id, path, false));
    });
    s.on('SETSTAT', (id: number, path: string, attrs: ClientAttributes) => {
      this.#take(id, null, async () => {
        const changes = changesOf(attrs);
        await this.#files.setAttributes(sessionPath(path), changes);
        this.#ok(id);
      });
    });
    s.on('MKDIR', (id: number, path: string) => {
      this.#take(id, null, async () => {
        await this.#files.makeFolder(this.#entryPath(path));
        this.#ok(id);
      });
    });
    s.on('RMDIR', (id: number, path: string) => {
      this.#take(id, null, async () => {
        await this.#files.removeFolder(this.#entryPath(path));
        this.#ok(id);
      });
    });
    s.on('REMOVE', (id: number, path: string) => {
      this.#take(id, null, async () => {
        await this.#files.removeFile(this.#entryPath(path));
        this.#ok(id);
      });
    });
    // SFTP v3's RENAME never replaces what is at the new path.
    s.on('RENAME', (id: number, from: string, to: string) => {
      this.#take(id, null, () => this.#rename(id, from, to, false));
    });
    s.on('REALPATH', (id: number, path: string) => {
      this.#take(id, null, () => this.#realPath(id, path));
    });
    s.on('READLINK', (id: number, path: string) => {
      this.#take(id, null, async () => {
        this.#path(id, await this.#files.readLink(sessionPath(path)));
      });
    });
    // ssh2 has already put OpenSSH's reversed arguments back in the draft's order (link, then
    // target), whatever its typings call them.
    s.on('SYMLINK', (id: number, linkPath: string, targetPath: string) => {
      this.#take(id, null, () => this.#symlink(id, linkPath, targetPath));
    });
    s.on('EXTENDED', (id: number, name: string, data: Buffer | undefined) => {
      this.#take(id, null, () => this.#extended(id, name, data));
    });
  }

  /**
   * Takes one request: `work` runs when a slot is free and, for a request on a handle, after
   * those before it on that handle (`shared`: a read, beside other reads); it answers success
   * itself, and what it throws is answered here.
   */
  #take(id: number, handle: Buffer | null, work: () => Promise<void>, shared = false): void {
    if (this.#closing !== null) return;
    this.#pending++;
    this.#wire.pause(this.#pending >= this.#options.maxInFlight);
    clearTimeout(this.#idleTimer);
    this.#options.onActivity?.();

    const run = (): Promise<void> =>
      this.#slots.run(async () => {
        if (this.#closing !== null) throw closing();
        await work();
      });
    let done: Promise<void>;
    if (handle === null) {
      done = run();
    } else {
      const entry = this.#handles.find(handle);
      done = entry === undefined ? Promise.reject(badHandle()) : entry.order.run(shared, run);
    }
    done
      .catch((error: unknown) => {
        this.#fail(id, error);
      })
      .finally(() => {
        this.#pending--;
        this.#wire.pause(this.#pending >= this.#options.maxInFlight);
        this.#settled();
      });
  }

  #fail(id: number, error: unknown): void {
    const refusal = refusalOf(error);
    if (refusal !== null) {
      this.#stream.status(id, refusal.status, refusal.message);
      return;
    }
    this.#log.error({ err: error }, 'SFTP request failed');
    this.#stream.status(id, STATUS.FAILURE, 'internal error');
  }

  /** Nothing in flight: the session ends if the client is done, else the idle timer runs. */
  #settled(): void {
    if (this.#pending > 0 || this.#closing !== null) return;
    if (this.#ended) {
      void this.close();
      return;
    }
    const idleMs = this.#options.idleMs;
    if (idleMs === undefined) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      this.#log.warn({ idleMs }, 'SFTP session idle: ended');
      void this.close();
    }, idleMs);
    this.#idleTimer.unref();
  }

  #ok(id: number): void {
    this.#stream.status(id, STATUS.OK);
  }

  /** A single path as a NAME answer (REALPATH, READLINK). */
  #path(id: number, segments: readonly string[]): void {
    const path = shownPath(segments);
    this.#stream.name(id, [{ filename: path, longname: path, attrs: NO_ATTRIBUTES }]);
  }

  /** A path a request changes the entry at: never the server's folder itself. */
  #entryPath(path: string): string[] {
    const segments = sessionPath(path);
    if (segments.length === 0) {
      throw new Refusal(STATUS.PERMISSION_DENIED, "the server's folder itself cannot be changed");
    }
    return segments;
  }

  async #open(id: number, path: string, pflags: number): Promise<void> {
    const segments = sessionPath(path);
    const key = await this.#handles.add(async () => ({
      kind: 'file',
      order: new HandleOrder(),
      segments,
      channel: await this.#files.open(segments, channelFlags(pflags)),
    }));
    this.#stream.handle(id, key);
  }

  async #close(id: number, handle: Buffer): Promise<void> {
    const entry = this.#handles.remove(handle);
    if (entry.kind === 'folder') {
      await entry.entries.return?.();
    } else {
      try {
        await entry.channel.close();
      } catch (error) {
        await entry.channel.abort();
        throw error;
      }
    }
    this.#ok(id);
  }

  async #read(id: number, handle: Buffer, offset: number, length: number): Promise<void> {
    const { channel } = this.#handles.file(handle);
    // A client that does not take its answers gets no more read for it.
    await this.#wire.room();
    const data = await channel.read(offset, Math.min(length, this.#readMax));
    if (data.length === 0) this.#stream.status(id, STATUS.EOF);
    else this.#stream.data(id, data);
  }

  async #write(id: number, handle: Buffer, offset: number, data: Buffer): Promise<void> {
    const { channel } = this.#handles.file(handle);
    if (!channel.writable) {
      throw new Refusal(STATUS.PERMISSION_DENIED, 'the file was not opened for writing');
    }
    await channel.write(offset, data);
    this.#ok(id);
  }

  async #fstat(id: number, handle: Buffer): Promise<void> {
    const entry = this.#handles.get(handle);
    const stat =
      entry.kind === 'file'
        ? await entry.channel.stat()
        : await this.#files.stat(entry.segments, true);
    this.#stream.attrs(id, attributesOf(stat));
  }

  async #fsetstat(id: number, handle: Buffer, attrs: ClientAttributes): Promise<void> {
    const entry = this.#handles.get(handle);
    const changes = changesOf(attrs);
    if (entry.kind === 'file') await entry.channel.setAttributes(changes);
    else await this.#files.setAttributes(entry.segments, changes);
    this.#ok(id);
  }

  async #openFolder(id: number, path: string): Promise<void> {
    const segments = sessionPath(path);
    const key = await this.#handles.add(async () => {
      const entries = await this.#files.readFolder(segments, this.#options.folderBatch ?? 100);
      try {
        const first = await entries.next();
        return { kind: 'folder', order: new HandleOrder(), segments, entries, first };
      } catch (error) {
        await entries.return?.().catch(() => undefined);
        throw error;
      }
    });
    this.#stream.handle(id, key);
  }

  async #readFolder(id: number, handle: Buffer): Promise<void> {
    const entry = this.#handles.folder(handle);
    const owner = this.#options.owner ?? 'server';
    for (;;) {
      const batch = entry.first ?? (await entry.entries.next());
      entry.first = undefined;
      if (batch.done === true) {
        this.#stream.status(id, STATUS.EOF);
        return;
      }
      // An empty NAME answer reads as the end to OpenSSH: wait for entries or the real end.
      if (batch.value.length === 0) continue;
      const now = Date.now();
      this.#stream.name(
        id,
        batch.value.map((stat) => ({
          filename: stat.name,
          longname: longnameOf(stat.name, stat, owner, now),
          attrs: attributesOf(stat),
        })),
      );
      return;
    }
  }

  async #stat(id: number, path: string, follow: boolean): Promise<void> {
    const stat = await this.#files.stat(sessionPath(path), follow);
    this.#stream.attrs(id, attributesOf(stat));
  }

  async #rename(id: number, from: string, to: string, replace: boolean): Promise<void> {
    await this.#files.rename(this.#entryPath(from), this.#entryPath(to), replace);
    this.#ok(id);
  }

  /**
   * Where a path leads, absolute and normalised, through symlinks. A path that does not exist
   * (yet) is answered as written, normalised: clients ask for the name of a file to upload.
   */
  async #realPath(id: number, path: string): Promise<void> {
    const segments = sessionPath(path);
    let real: readonly string[];
    try {
      real = await this.#files.realPath(segments);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
      real = segments;
    }
    this.#path(id, real);
  }

  /**
   * A symlink at `linkPath` to `targetPath`: an absolute target is from the session's root, a
   * relative one from the link's folder, as the link will read it. One leading out is refused.
   */
  async #symlink(id: number, linkPath: string, targetPath: string): Promise<void> {
    const link = this.#entryPath(linkPath);
    if (targetPath === '') throw new Refusal(STATUS.FAILURE, 'a link needs a target');
    const target = targetPath.startsWith('/')
      ? sessionPath(targetPath)
      : sessionPath(`${shownPath(link.slice(0, -1))}/${targetPath}`);
    await this.#files.makeLink(link, target);
    this.#ok(id);
  }

  async #extended(id: number, name: string, data: Buffer | undefined): Promise<void> {
    const strings = (count: number): Buffer[] => {
      const found = readStrings(data, count);
      if (found === null) throw new Refusal(STATUS.BAD_MESSAGE, `malformed ${name} request`);
      return found;
    };
    switch (name) {
      case 'posix-rename@openssh.com': {
        const [from, to] = strings(2);
        await this.#rename(id, String(from), String(to), true);
        return;
      }
      case 'statvfs@openssh.com': {
        const [path] = strings(1);
        sessionPath(String(path));
        this.#wire.extendedReply(id, statvfsOf(await this.#files.space()));
        return;
      }
      case 'fstatvfs@openssh.com': {
        const [handle] = strings(1);
        if (handle === undefined) throw badHandle();
        this.#handles.get(handle);
        this.#wire.extendedReply(id, statvfsOf(await this.#files.space()));
        return;
      }
      case 'fsync@openssh.com': {
        // The file is put in place, whole, at its CLOSE; until then there is nothing to sync.
        const [handle] = strings(1);
        if (handle === undefined) throw badHandle();
        this.#handles.file(handle);
        this.#ok(id);
        return;
      }
      case 'limits@openssh.com':
        this.#wire.extendedReply(
          id,
          uint64s([MAX_PACKET, this.#readMax, MAX_DATA, this.#options.maxOpenHandles]),
        );
        return;
      default:
        // hardlink@openssh.com among them: a hard link would be a second name the quota and the
        // deny list do not see.
        this.#stream.status(id, STATUS.OP_UNSUPPORTED, `${name} is not supported`);
    }
  }
}

/**
 * statvfs@openssh.com's answer: the quota shown as the disk when there is one (its free part
 * never more than the disk's own), else the disk itself; in 4 KiB blocks, no inode figures.
 */
function statvfsOf(space: SessionSpace): Buffer {
  const total = space.limitBytes ?? space.diskTotalBytes;
  const free =
    space.limitBytes === null
      ? space.diskFreeBytes
      : Math.min(Math.max(0, space.limitBytes - space.usedBytes), space.diskFreeBytes);
  const blocks = Math.floor(total / BLOCK);
  const freeBlocks = Math.floor(free / BLOCK);
  return uint64s([BLOCK, BLOCK, blocks, freeBlocks, freeBlocks, 0, 0, 0, 0, 0, NAME_MAX]);
}
