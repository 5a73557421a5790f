/**
 * The only code that touches a server's directory (`DATA_DIR/servers/<name>`).
 *
 * Every user path is first reduced to segments by `userPath` (paths.ts); then it is resolved from
 * a descriptor of the server directory, one segment at a time: each folder is opened relative to
 * its parent's descriptor (`/proc/self/fd/<fd>/<name>`, Linux's openat) with O_NOFOLLOW, so a
 * folder swapped for a symlink mid-way is never followed, and no check can be outrun by a change
 * on disk. Symlinks are read and followed by this code only, and only while their target stays
 * inside the directory. Files are opened with O_NOFOLLOW and O_NONBLOCK (a FIFO never hangs),
 * checked to be regular files, created with O_EXCL, and written to a temporary file in the same
 * folder that is renamed into place when complete.
 *
 * Errors carry the user's own paths only, never the host's.
 */
import { randomBytes } from 'node:crypto';
import { constants, lstatSync, type Stats } from 'node:fs';
import {
  chmod,
  chown,
  lchown,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rmdir,
  symlink,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  isReserved,
  joinSegments,
  linkTarget,
  RESERVED_PREFIX,
  reserved,
} from '../../domain/paths.js';
import { AppError, notFound } from '../../errors.js';
import {
  archiveWriter,
  detectFormat,
  entrySegments,
  invalidArchive,
  MAX_LINK_TARGET_BYTES,
  readArchive,
  type ArchiveFormat,
  type ArchiveLimits,
  type ArchiveWriter,
} from './archive-formats.js';
import {
  at,
  changed,
  errnoOf,
  openFolder,
  sameIdentity,
  shown,
  walkBelow,
  type Identity,
  type Visitor,
} from './tree.js';
import {
  checkBelow,
  checkPaths,
  cursorAt,
  fileDenied,
  type GuardCursor,
  type PathGuard,
} from './guard.js';
import { DiskUsage } from './usage.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * How old the figure of a server's disk use may get before the directory is walked again (the
 * panel's own writes move it meanwhile; the server's writes are seen at the next walk).
 */
const DISK_USAGE_TTL_MS = 10_000;
/** Entries stat'ed between two yields to the event loop while listing a folder. */
const LIST_BATCH = 500;
/**
 * What an upload may hold in memory on its way to the disk (beside the parser's own buffer):
 * gathered while a write is under way, then written in one go.
 */
const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;
/** Symlinks followed while resolving one path before it counts as a loop. */
const MAX_LINK_HOPS = 40;
/**
 * Temporary files of uploads and saves: `<TEMP_PREFIX><run>-<random>`, where `run` is new for
 * every ServerStorage (every start of the panel). Never listed; the ones an earlier run left are
 * removed once the panel serves (`removeLeftovers`).
 */
export const TEMP_PREFIX = RESERVED_PREFIX;
/**
 * The folder, beside the servers' own, where the directory of a server being deleted is renamed
 * in one step before its content is removed in the background. `~` may not appear in a server's
 * name, so no server can ever be called this, and no path a user gives leads into it.
 */
export const TRASH_NAME = '.trash~';
/** The folder beside the servers' where restores unpack, and put the content they replace. */
export const RESTORING_NAME = '.restoring~';

/** Where work done in the background reports what it did and what went wrong: the logger. */
export interface StorageLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}
const SILENT: StorageLog = { info: () => undefined, warn: () => undefined };

/** A user and group to own files, by number. */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}

export type EntryType = 'file' | 'folder' | 'symlink';

/** What a walk packing a folder leaves out, and what it reports. */
export interface PackOptions {
  /** True: leave the entry out (a folder with everything in it). `segments`: from the root. */
  readonly skip?: (segments: readonly string[], folder: boolean) => boolean;
  /** Called once an entry is written: its kind and its bytes (a symlink's: its target). */
  readonly packed?: (kind: EntryType, bytes: number) => void;
}

export interface Entry {
  readonly name: string;
  readonly path: string;
  readonly type: EntryType;
  readonly size: number;
  readonly modified: string;
}

export interface OpenedFile {
  readonly handle: FileHandle;
  readonly name: string;
  readonly size: number;
  readonly modified: Date;
}

/** A resolved place: the open folder that holds `name` (`null`: the folder is the target). */
interface Place {
  readonly dir: FileHandle;
  readonly name: string | null;
  /** Segments of the place inside the server directory, for messages. */
  readonly segments: readonly string[];
  /** lstat of the entry, when it exists. */
  readonly stat: Stats | null;
}

export class ServerStorage {
  /** Whether server folders belong to the servers' own users (the panel runs as root). */
  readonly #chowns: boolean;
  /** Each server's user, as last given to `create` or `ensureOwner`. */
  readonly #owners = new Map<string, FileOwner>();
  private readonly now: () => number;
  readonly #log: StorageLog;
  /** How this run's temporary names begin: what `cleanTemporaryFiles` never removes. */
  readonly #tempPrefix = `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-`;
  /** The trash being emptied, and whether to go round once more (something was added). */
  #emptying: Promise<void> | null = null;
  #trashAgain = false;

  /**
   * `chowns`: servers run as users of their own (the panel runs as root), so each server's
   * folder and everything the panel writes into it belong to that server's user (given to
   * `create` and `ensureOwner`, else the folder's owner); false: everything is the panel's.
   */
  constructor(
    private readonly serversDir: string,
    options: {
      readonly chowns?: boolean;
      readonly now?: () => number;
      readonly log?: StorageLog;
      /** How old a folder's measured size may get before it is walked again (tests shorten it). */
      readonly usageTtlMs?: number;
    } = {},
  ) {
    this.#chowns = options.chowns ?? false;
    this.now = options.now ?? Date.now;
    this.#log = options.log ?? SILENT;
    this.#usage = new DiskUsage({
      measure: (name) => sizeOf(this.directoryOf(name), this.#tempPrefix),
      now: this.now,
      ttlMs: options.usageTtlMs ?? DISK_USAGE_TTL_MS,
      warn: (details, message) => {
        this.#log.warn(details, message);
      },
    });
  }

  /** Bytes in each server's folder, and the quota held against the panel's writes. */
  readonly #usage: DiskUsage;

  directoryOf(name: string): string {
    if (
      name === '' ||
      name === '.' ||
      name === '..' ||
      name === TRASH_NAME ||
      name === RESTORING_NAME ||
      name.includes('/') ||
      name.includes('\0')
    ) {
      throw new Error(`Not a server name: ${JSON.stringify(name)}`);
    }
    return path.join(this.serversDir, name);
  }

  /**
   * Makes the server's directory, given to `owner` (the server's own user; null: the panel's)
   * with mode 0700, so no other server's user can read it; an existing one (files put there
   * beforehand) is kept, and given to `owner` as `ensureOwner` does.
   */
  async create(name: string, owner: FileOwner | null = null): Promise<void> {
    const dir = this.directoryOf(name);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await this.ensureOwner(name, owner);
  }

  /**
   * Before a server starts: its folder and everything in it belong to `owner` (a folder of an
   * earlier panel, or of before servers had users of their own, is re-owned, symlinks as
   * themselves, never followed), and the folder has mode 0700.
   */
  async ensureOwner(name: string, owner: FileOwner | null): Promise<void> {
    const dir = this.directoryOf(name);
    if (this.#chowns && owner) {
      this.#owners.set(name, owner);
      const stat = await lstat(dir);
      if (stat.uid !== owner.uid || stat.gid !== owner.gid) await chownTree(dir, owner);
    }
    await chmod(dir, 0o700);
  }

  /** Who what the panel writes into the server's folder belongs to (see the constructor). */
  #ownerOf(server: string): FileOwner | null {
    if (!this.#chowns) return null;
    const known = this.#owners.get(server);
    if (known) return known;
    const stat = lstatSync(this.directoryOf(server), { throwIfNoEntry: false });
    if (!stat || stat.uid === 0) return null;
    const owner = { uid: stat.uid, gid: stat.gid };
    this.#owners.set(server, owner);
    return owner;
  }

  /**
   * Takes the server's directory away in one step, the first part of deleting the server: it is
   * renamed into the trash (`TRASH_NAME`), so a server made again under that name starts from an
   * empty folder however long removing the old content takes; then `emptyTrash`. Answers its
   * name in the trash, for `restoreDirectory`; null when there is nothing to put back: there was
   * no directory, or it could not be renamed (a mount point) and its content was removed where
   * it is, through descriptors like the trash.
   */
  async discardDirectory(name: string): Promise<string | null> {
    const dir = this.directoryOf(name);
    this.#forgetUsage(name);
    const trash = path.join(this.serversDir, TRASH_NAME);
    await mkdir(trash, { recursive: true, mode: 0o700 });
    const discarded = `${name}-${randomBytes(8).toString('hex')}`;
    try {
      await rename(dir, path.join(trash, discarded));
      return discarded;
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT') return null;
      if (code !== 'EBUSY' && code !== 'EXDEV') throw error;
    }
    const handle = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    await walkBelow(handle, REMOVER, []);
    return null;
  }

  /**
   * Puts back a directory `discardDirectory` took away, when deleting the server failed after
   * all. Never replaces a directory made meanwhile; then, or on any failure, it stays in the
   * trash (logged) and the error is not thrown: the caller is already reporting its own.
   */
  async restoreDirectory(name: string, discarded: string): Promise<void> {
    try {
      await renameFolder(path.join(this.serversDir, TRASH_NAME, discarded), this.directoryOf(name));
    } catch (error) {
      this.#log.warn(
        { err: error, server: name },
        'could not put back the directory of a server that was not deleted',
      );
    }
  }

  /**
   * Removes everything in the trash: the directories of deleted servers, at any depth and holding
   * a few descriptors at most (see `walkBelow`). Never rejects: what cannot be removed is logged
   * and tried again at the next call. A call while it runs makes it go round once more, and all
   * callers share one promise. Run after deleting a server and once at the panel's start.
   */
  emptyTrash(): Promise<void> {
    this.#trashAgain = true;
    this.#emptying ??= (async () => {
      try {
        while (this.#trashAgain) {
          this.#trashAgain = false;
          await this.#emptyTrashOnce();
        }
      } catch (error) {
        this.#log.warn({ err: error }, 'could not empty the trash of deleted servers');
      } finally {
        this.#emptying = null;
      }
    })();
    return this.#emptying;
  }

  async #emptyTrashOnce(): Promise<void> {
    let trash: FileHandle;
    try {
      trash = await open(
        path.join(this.serversDir, TRASH_NAME),
        O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
      );
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return;
      throw error;
    }
    try {
      for (const name of await readdir(at(trash.fd))) {
        try {
          await removeEntry(trash, name, []);
        } catch (error) {
          this.#log.warn(
            { err: error, entry: name },
            "could not remove a deleted server's directory; trying again later",
          );
        }
      }
    } finally {
      await trash.close();
    }
  }

  /** How `writeAtomically` makes its temporary file. */
  #temp(server: string, mode: number): TempFile {
    return { prefix: this.#tempPrefix, mode, owner: this.#ownerOf(server) };
  }

  /** A measured size, or one being measured, belongs to a directory that is gone. */
  #forgetUsage(name: string): void {
    this.#usage.forget(name);
  }

  /**
   * Bytes held by the files and symlinks (as themselves, never followed) under the server's
   * directory; folders' own entries are not counted. Measured by a walk at most 10 s ago,
   * concurrent callers sharing one, and moved by the panel's own writes and deletes since: the
   * same figure the quota of `writeText` and `upload` is held against.
   */
  diskUsage(name: string): Promise<number> {
    return this.#usage.current(name);
  }

  /**
   * Removes the temporary files an earlier run left anywhere in the server's directory (uploads,
   * saves and archives a killed panel cut short) and its temporary folders (extractions); answers
   * how many. This run's own are never touched, so
   * it may run while uploads and saves are under way.
   */
  async cleanTemporaryFiles(server: string): Promise<number> {
    let removed = 0;
    await walkTree(this.directoryOf(server), async (dir, name, stat) => {
      if (!name.startsWith(TEMP_PREFIX)) return true;
      if (name.startsWith(this.#tempPrefix)) return false;
      if (stat.isFile()) {
        const gone = await unlink(at(dir.fd, name)).then(
          () => true,
          () => false,
        );
        if (gone) {
          removed += 1;
          this.#usage.apply(server, -stat.size);
        }
      } else if (stat.isDirectory()) {
        // An extraction cut short: its folder and what it had unpacked.
        const freed = { bytes: 0 };
        const gone = await removeEntry(dir, name, [], freed).then(
          () => true,
          () => false,
        );
        this.#usage.apply(server, -freed.bytes);
        if (gone) removed += 1;
      }
      return false;
    });
    return removed;
  }

  /**
   * Removes what an earlier run of the panel left behind: its temporary files in the folders of
   * the servers `servers` answers (`cleanTemporaryFiles`, one server after the other) and the
   * trash of deleted servers (`emptyTrash`). Run in the background once the panel serves: it
   * never rejects, and a failure (logged) never stops the rest.
   */
  async removeLeftovers(servers: () => Promise<readonly string[]>): Promise<void> {
    const trash = this.emptyTrash();
    let names: readonly string[] = [];
    try {
      names = await servers();
    } catch (error) {
      this.#log.warn(
        { err: error },
        'could not list the servers to remove leftover temporary files',
      );
    }
    let removed = 0;
    for (const server of names) {
      try {
        const count = await this.cleanTemporaryFiles(server);
        if (count > 0)
          this.#log.warn({ server, removed: count }, 'removed leftover temporary files');
        removed += count;
      } catch (error) {
        this.#log.warn({ err: error, server }, 'could not remove leftover temporary files');
      }
    }
    await trash;
    this.#log.info({ servers: names.length, removed }, 'removed the leftovers of an earlier run');
  }

  /** The entries of a folder: folders first, then by name; temporary files are not shown. */
  async list(server: string, segments: readonly string[]): Promise<Entry[]> {
    return this.#withFolder(server, segments, async (dir, folder) => {
      const names = (await readdir(at(dir.fd))).filter((name) => !name.startsWith(TEMP_PREFIX));
      const entries: Entry[] = [];
      // lstat is a few microseconds on a local disk; done synchronously in batches it is many
      // times faster than a thread-pool round trip per entry, and the pauses between batches
      // keep other requests flowing while a folder of 10,000 files is listed.
      for (let start = 0; start < names.length; start += LIST_BATCH) {
        if (start > 0) await new Promise((resolve) => setImmediate(resolve));
        for (const name of names.slice(start, start + LIST_BATCH)) {
          let stat: Stats;
          try {
            stat = lstatSync(at(dir.fd, name));
          } catch {
            continue; // removed meanwhile
          }
          const type: EntryType | null = stat.isSymbolicLink()
            ? 'symlink'
            : stat.isDirectory()
              ? 'folder'
              : stat.isFile()
                ? 'file'
                : null; // FIFOs, sockets and devices are not shown
          if (type === null) continue;
          entries.push({
            name,
            path: joinSegments([...folder, name]),
            type,
            size: type === 'folder' ? 0 : stat.size,
            modified: stat.mtime.toISOString(),
          });
        }
      }
      return entries.sort(
        (a, b) =>
          Number(b.type === 'folder') - Number(a.type === 'folder') ||
          (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
      );
    });
  }

  /**
   * Creates an empty file or a folder named `name` in the folder `parent`. Every method that
   * takes a `guard` refuses what it denies (403 FILE_DENIED, see guard.ts) before changing
   * anything; null: nothing is denied.
   */
  async createEntry(
    server: string,
    parent: readonly string[],
    name: string,
    type: 'file' | 'folder',
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    const owner = this.#ownerOf(server);
    checkPaths(guard, [[...parent, name]], type === 'folder');
    return this.#withFolder(server, parent, async (dir, folder) => {
      const segments = [...folder, name];
      checkPaths(guard, [segments], type === 'folder');
      try {
        if (type === 'folder') {
          await mkdir(at(dir.fd, name), { mode: 0o755 });
          if (owner) await lchown(at(dir.fd, name), owner.uid, owner.gid);
        } else {
          const handle = await open(
            at(dir.fd, name),
            O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW,
            0o644,
          );
          try {
            if (owner) await handle.chown(owner.uid, owner.gid);
          } finally {
            await handle.close();
          }
        }
      } catch (error) {
        throw fsError(error, segments);
      }
      const stat = await statOf(dir, name, segments);
      return {
        name,
        path: joinSegments(segments),
        type,
        size: 0,
        modified: stat.mtime.toISOString(),
      };
    });
  }

  /**
   * Opens a regular file for reading (following symlinks that stay inside). The caller owns the
   * handle and must close it.
   */
  async openFile(
    server: string,
    segments: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<OpenedFile> {
    checkPaths(guard, [segments], false);
    return this.#withPlace(server, segments, true, async (place) => {
      if (place.name === null) throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
      checkPaths(guard, [place.segments], false);
      const handle = await openRegular(place.dir, place.name, place.segments);
      const stat = await handle.stat();
      return { handle, name: place.name, size: stat.size, modified: stat.mtime };
    });
  }

  /** A text file's content: UTF-8 only (else 400), at most `maxBytes` (else 413). */
  async readText(
    server: string,
    segments: readonly string[],
    maxBytes: number,
    guard: PathGuard | null = null,
  ): Promise<string> {
    const file = await this.openFile(server, segments, guard);
    try {
      if (file.size > maxBytes) {
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `The file is larger than ${maxBytes} bytes; download it instead`,
        );
      }
      const buffer = Buffer.alloc(file.size);
      const { bytesRead } = await file.handle.read(buffer, 0, file.size, 0);
      const bytes = buffer.subarray(0, bytesRead);
      if (bytes.includes(0)) throw binary();
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw binary();
      }
    } finally {
      await file.handle.close();
    }
  }

  /**
   * Replaces (or creates) a file's content atomically: a temporary file in the same folder,
   * written, given the old file's mode, flushed, then renamed over it. The folder must exist.
   * Held to `quota` bytes for the whole folder (null: none), counting only the growth (new size
   * − old size): past it, 413 QUOTA_EXCEEDED before anything is written. A save that does not
   * grow the file is never refused.
   */
  async writeText(
    server: string,
    segments: readonly string[],
    content: string,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    checkPaths(guard, [segments], false);
    return this.#withPlace(server, segments, true, async (place) => {
      const name = place.name;
      if (name === null) throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
      if (place.stat?.isDirectory())
        throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
      if (place.stat && !place.stat.isFile()) throw special(place.segments);
      checkPaths(guard, [place.segments], false);
      const mode = place.stat ? place.stat.mode & 0o7777 : 0o644;
      const growth = Buffer.byteLength(content, 'utf8') - (place.stat?.size ?? 0);
      const reservation = await this.#usage.reserve(server, quota);
      try {
        reservation.growTo(growth);
        await writeAtomically(
          place.dir,
          name,
          place.segments,
          this.#temp(server, mode),
          async (handle) => {
            await handle.writeFile(content, 'utf8');
          },
        );
      } catch (error) {
        reservation.release();
        throw error;
      }
      reservation.commit(growth);
      return entryOf(place.segments, await statOf(place.dir, name, place.segments));
    });
  }

  /**
   * Streams `source` into the file `name` in the folder `folder`, replacing an existing file only
   * once the upload is complete. Over `maxBytes`: 413 and nothing is left behind; an aborted
   * source leaves nothing behind either, and the previous file intact. Held to `quota` bytes for
   * the whole folder (null: none): the growth over the replaced file is claimed as the bytes
   * arrive, before they are written, and the first byte past it aborts the upload with 413
   * QUOTA_EXCEEDED, leaving nothing behind.
   */
  async upload(
    server: string,
    folder: readonly string[],
    name: string,
    source: Readable,
    maxBytes: number | null,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    checkPaths(guard, [[...folder, name]], false);
    return this.#withFolder(server, folder, async (dir, folderSegments) => {
      const segments = [...folderSegments, name];
      checkPaths(guard, [segments], false);
      const existing = await lstat(at(dir.fd, name)).catch(() => null);
      if (existing?.isDirectory())
        throw new AppError('NOT_A_FILE', `${shown(segments)} is a folder`);
      if (existing && !existing.isFile() && !existing.isSymbolicLink()) throw special(segments);
      const mode = existing?.isFile() ? existing.mode & 0o7777 : 0o644;
      // What the upload replaces: a file, or a symlink (itself, never its target).
      const replaced = existing?.size ?? 0;
      let written = 0;
      const reservation = await this.#usage.reserve(server, quota);
      const claim = (bytes: number): void => {
        written += bytes;
        reservation.growTo(written - replaced, true);
      };
      let cutShort = false;
      source.once('error', () => {
        cutShort = true;
      });
      await writeAtomically(dir, name, segments, this.#temp(server, mode), async (handle) => {
        // Piped straight into the temporary file: while one write is on its way to the disk,
        // what arrives meanwhile is gathered (up to WRITE_BUFFER_BYTES, then the source waits)
        // and written with the next single writev, so the network and the disk overlap and a
        // gigabyte takes a few thousand writes, not one per socket read.
        if (maxBytes !== null) {
          const limit = maxBytes;
          let written = 0;
          source.on('data', (chunk: Buffer) => {
            written += chunk.length;
            if (written > limit) {
              source.destroy(
                new AppError('PAYLOAD_TOO_LARGE', `Files may be at most ${limit} bytes`),
              );
            }
          });
        }
        await pipeline(source, fileSink(handle, WRITE_BUFFER_BYTES, claim));
        // A parser that stopped at its own limit ends the stream early instead of failing.
        if ((source as { truncated?: boolean }).truncated === true) {
          throw new AppError('PAYLOAD_TOO_LARGE', 'The file is larger than the upload limit');
        }
      }).catch((error: unknown) => {
        reservation.release();
        if (cutShort && !(error instanceof AppError)) {
          throw new AppError('INVALID_UPLOAD', 'The upload ended before the file was complete');
        }
        throw error;
      });
      reservation.commit(written - replaced);
      return entryOf(segments, await statOf(dir, name, segments));
    });
  }

  /** Renames an entry inside its folder (a symlink is renamed, not its target). */
  async renameEntry(
    server: string,
    segments: readonly string[],
    newName: string,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return this.#withPlace(server, segments, false, async (place) => {
      const name = existingName(place);
      const target = [...place.segments.slice(0, -1), newName];
      await guardEntry(guard, place, segments, {
        asked: [...segments.slice(0, -1), newName],
        resolved: target,
      });
      await moveWithoutReplacing(place.dir, name, place.dir, newName, place.segments, target);
      return entryOf(target, await statOf(place.dir, newName, target));
    });
  }

  /**
   * Moves an entry with `mv` meaning: into `destination` when that is an existing folder (a
   * symlink to a folder inside counts), else to that path (its folder must exist). An existing
   * entry at the target, a symlink included: 409 (403 for a symlink that points outside), and it
   * is left as it is; a symlink is never replaced nor written through.
   */
  async move(
    server: string,
    source: readonly string[],
    destination: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return this.#withPlace(server, source, false, async (from) => {
      const name = existingName(from);
      return this.#withPlace(server, destination, true, async (followed) => {
        if (followed.name === null || followed.stat?.isDirectory()) {
          return this.#withFolder(server, destination, async (dir, folder) => {
            const target = [...folder, name];
            await guardEntry(guard, from, source, {
              asked: [...destination, name],
              resolved: target,
            });
            await moveWithoutReplacing(from.dir, name, dir, name, from.segments, target);
            return entryOf(target, await statOf(dir, name, target));
          });
        }
        // A new path: the destination itself, never a place a symlink there points to.
        return this.#withPlace(server, destination, false, async (to) => {
          if (to.name === null || to.stat) throw alreadyExists(to.segments);
          await guardEntry(guard, from, source, { asked: destination, resolved: to.segments });
          await moveWithoutReplacing(from.dir, name, to.dir, to.name, from.segments, to.segments);
          return entryOf(to.segments, await statOf(to.dir, to.name, to.segments));
        });
      });
    });
  }

  /**
   * Deletes a file, a symlink (not its target) or a folder with everything in it; what it frees
   * comes off the server's disk use, also when it stops part-way.
   */
  async deleteEntry(
    server: string,
    segments: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<void> {
    await this.#withPlace(server, segments, false, async (place) => {
      const name = existingName(place);
      await guardEntry(guard, place, segments);
      const freed = { bytes: 0 };
      try {
        await removeEntry(place.dir, name, place.segments, freed);
      } catch (error) {
        throw fsError(error, place.segments);
      } finally {
        this.#usage.apply(server, -freed.bytes);
      }
    });
  }

  /**
   * Deletes several entries: every path is checked first (it exists and is not the server
   * directory: else 404 or 400 and nothing is deleted), then they are deleted in order. A path
   * inside another one of the list goes with it. A failure part-way is thrown with what was
   * deleted before it in its message; what was deleted stays deleted.
   */
  async deleteMany(
    server: string,
    paths: readonly (readonly string[])[],
    guard: PathGuard | null = null,
  ): Promise<string[]> {
    const list = withoutNested(paths);
    for (const segments of list) {
      await this.#withPlace(server, segments, false, async (place) => {
        existingName(place);
        await guardEntry(guard, place, segments);
      });
    }
    const done: string[] = [];
    for (const segments of list) {
      try {
        await this.deleteEntry(server, segments, guard);
      } catch (error) {
        throw partly(error, 'deleted', done);
      }
      done.push(joinSegments(segments));
    }
    return done;
  }

  /**
   * Moves several entries into the existing folder `destination`. Checked first: each exists,
   * none is the server directory, two never share a name, none would land on an existing entry
   * (409) and the destination is not inside one of them (400); then moved in order. A failure
   * part-way is thrown with what was moved before it in its message; what was moved stays.
   */
  async moveMany(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<Entry[]> {
    const folder = await this.#withFolder(server, destination, async (dir, real) => {
      const names = new Set<string>();
      for (const source of sources) {
        await this.#withPlace(server, source, false, async (place) => {
          const name = existingName(place);
          const inside = place.segments.every((segment, i) => real[i] === segment);
          if (inside) {
            throw new AppError(
              'VALIDATION_FAILED',
              `${shown(place.segments)} cannot be moved into itself`,
            );
          }
          if (names.has(name)) {
            throw new AppError('VALIDATION_FAILED', `Two of the paths are named "${name}"`);
          }
          names.add(name);
          if (await lstat(at(dir.fd, name)).catch(() => null)) throw alreadyExists([...real, name]);
          await guardEntry(guard, place, source, {
            asked: [...destination, name],
            resolved: [...real, name],
          });
        });
      }
      return real;
    });
    const moved: Entry[] = [];
    for (const source of sources) {
      try {
        moved.push(await this.move(server, source, folder, guard));
      } catch (error) {
        throw partly(
          error,
          'moved',
          moved.map((entry) => entry.path),
        );
      }
    }
    return moved;
  }

  /**
   * Packs `sources` (files, folders with everything in them, symlinks as symlinks, never
   * followed; FIFOs, sockets and devices skipped) into a new archive at `destination`, each
   * under its own name (the server directory itself: its content). Streamed into a temporary
   * file beside the destination, held to `quota` as it grows (413 QUOTA_EXCEEDED), and linked
   * into place only if nothing is there by then (409 ALREADY_EXISTS); nothing is left on failure.
   */
  async compress(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    format: 'zip' | 'tar.gz',
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    const names = new Set<string>();
    for (const source of sources) {
      await this.#withPlace(server, source, false, async (place) => {
        if (place.name !== null) existingName(place);
        const name = place.name ?? '';
        if (names.has(name)) {
          throw new AppError('VALIDATION_FAILED', `Two of the paths are named "${name}"`);
        }
        names.add(name);
        await guardEntry(guard, place, source);
      });
    }
    return this.#withPlace(server, destination, false, async (to) => {
      if (to.name === null || to.stat) throw alreadyExists(to.segments);
      checkPaths(guard, [destination, to.segments], false);
      const name = to.name;
      const reservation = await this.#usage.reserve(server, quota);
      let written = 0;
      try {
        await writeAtomically(
          to.dir,
          name,
          to.segments,
          this.#temp(server, 0o644),
          async (handle) => {
            const writer = archiveWriter(format);
            const done = pipeline(
              writer.output,
              fileSink(handle, WRITE_BUFFER_BYTES, (bytes) => {
                written += bytes;
                reservation.growTo(written, true);
              }),
            );
            // Adding entries waits for the writing; a failed write must end the adding too.
            const failed = done.then(() => new Promise<never>(() => undefined));
            const add = async (work: Promise<void>): Promise<void> => {
              await Promise.race([work, failed]);
            };
            try {
              for (const source of sources) {
                // Checked again while packing: what appeared since is refused too.
                await this.#withPlace(server, source, false, (place) =>
                  this.#pack(place, writer, add, {}, guard),
                );
              }
              writer.end();
            } catch (error) {
              writer.output.destroy();
              await done.catch(() => undefined);
              throw error;
            }
            await done;
          },
          false,
        );
      } catch (error) {
        reservation.release();
        throw error;
      }
      reservation.commit(written);
      return entryOf(to.segments, await statOf(to.dir, name, to.segments));
    });
  }

  /**
   * Adds one resolved source to an archive being written (see `compress`); an entry `guard`
   * denies stops it (FILE_DENIED).
   */
  async #pack(
    place: Place,
    writer: ArchiveWriter,
    add: (work: Promise<void>) => Promise<void>,
    options: PackOptions = {},
    guard: PathGuard | null = null,
  ): Promise<void> {
    // Where the archive's names start inside the server directory.
    const base = place.name === null ? place.segments : place.segments.slice(0, -1);
    const visit = async (
      dir: FileHandle,
      name: string,
      inArchive: string[],
      above: GuardCursor | null,
    ): Promise<void> => {
      if (isReserved(name)) return; // the panel's temporary files, this archive's own among them
      const stat = await lstat(at(dir.fd, name)).catch(() => null);
      if (!stat) return; // gone meanwhile
      if (options.skip?.(inArchive, stat.isDirectory())) return;
      const cursor = above?.enter(name) ?? null;
      const rule = cursor?.rule(stat.isDirectory()) ?? null;
      if (rule !== null) throw fileDenied([...base, ...inArchive], rule);
      const archived = joinSegments(inArchive);
      if (stat.isSymbolicLink()) {
        const target = await readlink(at(dir.fd, name)).catch(() => null);
        if (target !== null) {
          await add(writer.symlink(archived, target, stat.mtime));
          options.packed?.('symlink', Buffer.byteLength(target));
        }
      } else if (stat.isFile()) {
        const handle = await openRegular(dir, name, inArchive).catch(() => null);
        if (!handle) return;
        try {
          const size = (await handle.stat()).size;
          const body =
            size === 0
              ? Readable.from([])
              : handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
          await add(writer.file(archived, stat.mode & 0o777, stat.mtime, size, body));
          options.packed?.('file', size);
        } finally {
          await handle.close();
        }
      } else if (stat.isDirectory()) {
        await add(writer.folder(archived, stat.mode & 0o777, stat.mtime));
        options.packed?.('folder', 0);
        const folder = await openFolder(dir, name);
        if (!folder) return;
        try {
          for (const child of await readdir(at(folder.fd))) {
            await visit(folder, child, [...inArchive, child], cursor?.live ? cursor : null);
          }
        } finally {
          await folder.close();
        }
      }
    };
    const top = guard && cursorAt(guard, base);
    if (place.name !== null) {
      await visit(place.dir, place.name, [place.name], top);
      return;
    }
    for (const child of await readdir(at(place.dir.fd))) {
      await visit(place.dir, child, [child], top);
    }
  }

  /**
   * Packs the whole server directory into `writer` (a backup), as `compress` packs a folder:
   * symlinks as symlinks, special files and the panel's temporary files left out, and whatever
   * `options.skip` answers true for (an ignored folder with everything in it). `add` waits for
   * each entry's writing (see `compress`).
   */
  async packServer(
    server: string,
    writer: ArchiveWriter,
    add: (work: Promise<void>) => Promise<void>,
    options: PackOptions,
  ): Promise<void> {
    await this.#withPlace(server, [], false, (place) => this.#pack(place, writer, add, options));
  }

  /**
   * Replaces the server's whole directory by the content of an archive (a backup's restore).
   * The archive is unpacked into a new folder beside the server's (`RESTORING_NAME`), with every
   * check of `decompress`; only once all of it is there is the old directory renamed away and
   * the new one renamed into its place, the old one put back if that fails. The old content is
   * removed only after the swap. On any failure the server's directory is as it was and the new
   * folder is removed; a crash between the two renames is undone by `finishRestores` at the next
   * start. The caller makes sure the server does not run meanwhile. `quota`: the most the new
   * content may hold (413 QUOTA_EXCEEDED).
   */
  async replaceFromArchive(
    server: string,
    source: FileHandle,
    limits: ArchiveLimits,
    quota: number | null,
    progress: (written: number) => void,
  ): Promise<void> {
    const target = this.directoryOf(server);
    const restoring = path.join(this.serversDir, RESTORING_NAME);
    await mkdir(restoring, { recursive: true, mode: 0o700 });
    const tag = randomBytes(8).toString('hex');
    const fresh = path.join(restoring, `${server}.new-${tag}`);
    const old = path.join(restoring, `${server}.old-${tag}`);
    await mkdir(fresh, { mode: 0o700 });
    try {
      const owner = this.#ownerOf(server);
      if (owner) await chown(fresh, owner.uid, owner.gid);
      const size = (await source.stat()).size;
      const head = Buffer.alloc(512);
      await source.read(head, 0, 512, 0);
      const format = detectFormat(head);
      const temp = await open(fresh, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      try {
        await this.#unpack(source, format, size, temp, [], limits, 'kept', owner, (written) => {
          if (quota !== null && written > quota) {
            throw new AppError(
              'QUOTA_EXCEEDED',
              `The backup holds more than the server's disk limit of ${quota} bytes; nothing was restored`,
            );
          }
          progress(written);
        });
        await temp.sync().catch(() => undefined);
      } finally {
        await temp.close();
      }
      let hadOld = true;
      try {
        await rename(target, old);
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT') throw error;
        hadOld = false;
      }
      try {
        await rename(fresh, target);
      } catch (error) {
        if (hadOld) await rename(old, target);
        throw error;
      }
      this.#forgetUsage(server);
      if (hadOld) {
        const handle = await open(restoring, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        try {
          await removeEntry(handle, path.basename(old), []);
        } catch (error) {
          this.#log.warn(
            { err: error, server },
            'could not remove the content a restore replaced; removed at the next start',
          );
        } finally {
          await handle.close();
        }
      }
    } finally {
      const handle = await open(restoring, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      try {
        if (await lstat(fresh).catch(() => null))
          await removeEntry(handle, path.basename(fresh), []);
      } catch (error) {
        this.#log.warn(
          { err: error, server },
          'could not remove the folder of a restore that failed; removed at the next start',
        );
      } finally {
        await handle.close();
      }
    }
  }

  /**
   * Before servers start: a restore that an earlier run left between its two renames gets the
   * old directory put back (the server is as it was before the restore), and what restores left
   * (unpacked folders, replaced content) is removed. Never rejects; failures are logged.
   */
  async finishRestores(): Promise<void> {
    const restoring = path.join(this.serversDir, RESTORING_NAME);
    let handle: FileHandle;
    try {
      handle = await open(restoring, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch {
      return;
    }
    try {
      for (const name of await readdir(at(handle.fd))) {
        const old = /^(.+)\.old-[0-9a-f]{16}$/.exec(name);
        try {
          if (
            old?.[1] !== undefined &&
            !(await lstat(this.directoryOf(old[1])).catch(() => null))
          ) {
            await rename(path.join(restoring, name), this.directoryOf(old[1]));
            this.#log.warn(
              { server: old[1] },
              'a restore was cut short between its two renames: the directory from before it is back',
            );
            continue;
          }
          await removeEntry(handle, name, []);
        } catch (error) {
          this.#log.warn({ err: error, entry: name }, 'could not remove what a restore left');
        }
      }
    } finally {
      await handle.close();
    }
  }

  /**
   * Unpacks the archive at `archive` (zip, tar or tar.gz, told by its content) into the existing
   * folder `destination`. Safe by construction: every entry is written below a temporary folder
   * made there, through descriptors, never through a symlink (O_NOFOLLOW at every step, O_EXCL
   * for files); absolute names, `..`, hard links, devices and FIFOs, and symlinks whose target
   * is absolute or leaves the server directory are refused (400 naming the entry), and so is an
   * archive past `limits` (413, or 400 for the compression ratio) or the quota (413). Only when
   * all is unpacked are its top-level entries moved into `destination`, if none of their names
   * is taken there (409, nothing moved). On any failure nothing is left: the temporary folder
   * is removed (a crash leaves it to `cleanTemporaryFiles`). Answers the entries moved in.
   */
  async decompress(
    server: string,
    archive: readonly string[],
    destination: readonly string[],
    limits: ArchiveLimits,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry[]> {
    checkPaths(guard, [archive], false);
    return this.#withPlace(server, archive, true, async (place) => {
      if (place.name === null) throw new AppError('NOT_A_FILE', 'That is a folder, not a file');
      checkPaths(guard, [place.segments], false);
      const source = await openRegular(place.dir, place.name, place.segments);
      try {
        const size = (await source.stat()).size;
        const head = Buffer.alloc(512);
        await source.read(head, 0, 512, 0);
        const format = detectFormat(head);
        return await this.#withFolder(server, destination, (dir, folder) => {
          // Every entry where it would land, before it is written.
          const check = (segments: readonly string[], isFolder: boolean): void => {
            const landing = [
              [...destination, ...segments],
              [...folder, ...segments],
            ];
            try {
              checkPaths(guard, landing, isFolder);
            } catch (error) {
              if (!(error instanceof AppError)) throw error;
              throw new AppError(error.code, `${error.message}; nothing was extracted`);
            }
          };
          return this.#extract(server, source, format, size, dir, folder, limits, quota, check);
        });
      } finally {
        await source.close().catch(() => undefined);
      }
    });
  }

  async #extract(
    server: string,
    source: FileHandle,
    format: ArchiveFormat,
    archiveSize: number,
    dir: FileHandle,
    folder: readonly string[],
    limits: ArchiveLimits,
    quota: number | null,
    check: EntryCheck,
  ): Promise<Entry[]> {
    const tempName = `${this.#tempPrefix}${randomBytes(8).toString('hex')}`;
    try {
      await mkdir(at(dir.fd, tempName), { mode: 0o700 });
    } catch (error) {
      throw fsError(error, folder);
    }
    const reservation = await this.#usage.reserve(server, quota);
    let written = 0;
    try {
      const temp = await open(at(dir.fd, tempName), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      try {
        written = await this.#unpack(
          source,
          format,
          archiveSize,
          temp,
          folder,
          limits,
          'inside',
          this.#ownerOf(server),
          (bytes) => {
            reservation.growTo(bytes, true);
          },
          check,
        );
        // Nothing of it is moved in if one of its names is taken.
        const names = await readdir(at(temp.fd));
        for (const name of names) {
          if (await lstat(at(dir.fd, name)).catch(() => null)) {
            throw alreadyExists([...folder, name]);
          }
        }
        const moved: string[] = [];
        try {
          for (const name of names) {
            await moveWithoutReplacing(temp, name, dir, name, [...folder, name], [...folder, name]);
            moved.push(name);
          }
        } catch (error) {
          // Another write took a name meanwhile: what was moved in goes back, to be removed.
          for (const name of moved) {
            await moveWithoutReplacing(dir, name, temp, name, [], []).catch(() => undefined);
          }
          throw error;
        }
        await dir.sync().catch(() => undefined);
        reservation.commit(written);
        const result: Entry[] = [];
        for (const name of names) {
          const stat = await lstat(at(dir.fd, name)).catch(() => null);
          if (stat) result.push(entryOf([...folder, name], stat));
        }
        return result;
      } finally {
        await temp.close();
      }
    } catch (error) {
      reservation.release();
      throw error;
    } finally {
      await removeEntry(dir, tempName, folder).catch((error: unknown) => {
        this.#log.warn(
          { err: error, server },
          'could not remove the temporary folder of an extraction; removed at the next start',
        );
      });
    }
  }

  /**
   * Unpacks every entry of the archive below the open folder `temp` (see `decompress` for what
   * is refused); `folder`: where `temp`'s content will be, inside the server directory, for the
   * symlink check and messages. Calls `claimed` with the bytes unpacked so far as they grow;
   * answers them at the end. `links`: `inside` refuses symlinks whose target is absolute or leads
   * outside the server directory (an archive a user uploads); `kept` restores every symlink as
   * the link it was (a backup holds what the folder held, SteamCMD's absolute links included).
   * A link is only ever written as a link: nothing is written through one (O_NOFOLLOW at every
   * step), and every reader of the folder refuses to follow one out (`resolve`), so a link
   * pointing out reaches nothing the server's own processes could not reach anyway.
   * Folders get their archived mode with the owner's rwx added; files theirs with rw added.
   * `check` is called with each entry's segments (below `folder`) before it is written, and may
   * refuse it by throwing.
   */
  async #unpack(
    source: FileHandle,
    format: ArchiveFormat,
    archiveSize: number,
    temp: FileHandle,
    folder: readonly string[],
    limits: ArchiveLimits,
    links: 'inside' | 'kept',
    owner: FileOwner | null,
    claimed: (written: number) => void,
    check: EntryCheck = () => undefined,
  ): Promise<number> {
    let written = 0;
    let entries = 0;
    const tooMany = (): AppError =>
      new AppError(
        'PAYLOAD_TOO_LARGE',
        `The archive has more than ${limits.maxEntries} entries; nothing was extracted`,
      );
    await readArchive(
      source,
      format,
      archiveSize,
      async (entry, consumed) => {
        const segments = entrySegments(entry.name);
        if (segments.length === 0) return;
        entries += 1;
        if (entries > limits.maxEntries) throw tooMany();
        check(segments, entry.type === 'folder');
        const label = JSON.stringify(entry.name);
        const refuse = (why: string): AppError =>
          invalidArchive(`Entry ${label} ${why}; nothing was extracted`);
        const tooBig = (): AppError =>
          new AppError(
            'PAYLOAD_TOO_LARGE',
            `The archive unpacks to more than ${limits.maxBytes} bytes (at ${label}); nothing was extracted`,
          );
        const claim = (bytes: number): void => {
          written += bytes;
          // A bomb is hostile (400) before it is merely too big (413).
          if (
            written > limits.ratioFloorBytes &&
            written / Math.max(1, consumed()) > limits.maxRatio
          ) {
            throw refuse(`unpacks to over ${limits.maxRatio} times the archive's size`);
          }
          if (written > limits.maxBytes) throw tooBig();
          claimed(written);
        };
        switch (entry.type) {
          case 'hardlink':
            throw refuse('is a hard link, which is never extracted');
          case 'special':
            throw refuse('is a device, FIFO or other special file, which is never extracted');
          case 'folder': {
            const made = await makeFolders(temp, segments, refuse, owner);
            try {
              if (entry.mode !== null) await made.chmod(entry.mode | 0o700);
            } finally {
              await made.close();
            }
            return;
          }
          case 'symlink': {
            const target = await entry.target();
            if (target === '' || target.includes('\0')) {
              throw refuse('is a symlink with an empty target');
            }
            if (Buffer.byteLength(target) > MAX_LINK_TARGET_BYTES) {
              throw refuse('is a symlink with a target too long');
            }
            if (links === 'inside') {
              if (path.posix.isAbsolute(target)) {
                throw refuse('is a symlink with an absolute target');
              }
              try {
                linkTarget([...folder, ...segments.slice(0, -1)], target, '/');
              } catch {
                throw refuse('is a symlink that points outside the server directory');
              }
            }
            const parent = await makeFolders(temp, segments.slice(0, -1), refuse, owner);
            const name = segments.at(-1) ?? '';
            try {
              await symlink(target, at(parent.fd, name));
              if (owner) await lchown(at(parent.fd, name), owner.uid, owner.gid);
            } catch (error) {
              if (errnoOf(error) === 'EEXIST') throw refuse('appears twice');
              throw fsError(error, folder);
            } finally {
              await parent.close();
            }
            claim(Buffer.byteLength(target));
            return;
          }
          case 'file': {
            if (
              entry.compressedSize !== null &&
              entry.size > limits.ratioFloorBytes &&
              entry.size / Math.max(1, entry.compressedSize) > limits.maxRatio
            ) {
              throw refuse(`unpacks to over ${limits.maxRatio} times its packed size`);
            }
            if (written + entry.size > limits.maxBytes) throw tooBig();
            const parent = await makeFolders(temp, segments.slice(0, -1), refuse, owner);
            const name = segments.at(-1) ?? '';
            const mode = (entry.mode ?? 0o644) | 0o600;
            let handle: FileHandle;
            try {
              handle = await open(
                at(parent.fd, name),
                O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW,
                mode,
              );
            } catch (error) {
              const code = errnoOf(error);
              if (code === 'EEXIST' || code === 'EISDIR') throw refuse('appears twice');
              throw fsError(error, folder);
            } finally {
              await parent.close();
            }
            try {
              if (owner) await handle.chown(owner.uid, owner.gid);
              await handle.chmod(mode);
              await pipeline(
                Readable.from(await entry.body()),
                fileSink(handle, WRITE_BUFFER_BYTES, claim),
              );
            } finally {
              await handle.close();
            }
            return;
          }
        }
      },
      (declared) => {
        if (declared > limits.maxEntries) throw tooMany();
      },
    );
    return written;
  }

  /** Resolves `segments` to a folder and runs `work` with its open descriptor. */
  async #withFolder<T>(
    server: string,
    segments: readonly string[],
    work: (dir: FileHandle, folder: readonly string[]) => Promise<T>,
  ): Promise<T> {
    return this.#withPlace(server, segments, true, async (place) => {
      if (place.name === null) return work(place.dir, place.segments);
      if (!place.stat) throw notFound(`Folder ${shown(place.segments)}`);
      if (!place.stat.isDirectory()) {
        throw new AppError('NOT_A_FOLDER', `${shown(place.segments)} is not a folder`);
      }
      let dir: FileHandle;
      try {
        dir = await open(at(place.dir.fd, place.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        throw fsError(error, place.segments);
      }
      try {
        return await work(dir, place.segments);
      } finally {
        await dir.close();
      }
    });
  }

  /** Resolves `segments` (see {@link resolve}) and runs `work`, closing what was opened. */
  async #withPlace<T>(
    server: string,
    segments: readonly string[],
    followLast: boolean,
    work: (place: Place) => Promise<T>,
  ): Promise<T> {
    const root = this.directoryOf(server);
    let rootReal: string;
    let rootHandle: FileHandle;
    try {
      rootReal = await realpath(root);
      rootHandle = await open(rootReal, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch {
      throw notFound('Server directory');
    }
    try {
      const place = await resolve(rootHandle, rootReal, segments, followLast);
      try {
        return await work(place);
      } finally {
        if (place.dir !== rootHandle) await place.dir.close();
      }
    } finally {
      await rootHandle.close();
    }
  }
}

/**
 * Walks `segments` from the root's descriptor. Every folder on the way is opened relative to the
 * one before with O_DIRECTORY | O_NOFOLLOW; a symlink met on the way (or last, with `followLast`)
 * is read and its target walked again from the root, only while it stays inside. A missing last
 * segment is fine (it may be created); a missing folder on the way is 404.
 */
async function resolve(
  root: FileHandle,
  rootReal: string,
  segments: readonly string[],
  followLast: boolean,
): Promise<Place> {
  let pending = [...segments];
  let done: string[] = [];
  let dir = root;
  let hops = 0;
  const enter = async (next: FileHandle | null) => {
    if (dir !== root) await dir.close();
    dir = next ?? root;
  };
  try {
    while (pending.length > 0) {
      const name = pending[0] ?? '';
      const last = pending.length === 1;
      // The panel's temporary names, reached through a symlink (userPath refuses them as text).
      if (isReserved(name)) throw reserved();
      let stat: Stats | null;
      try {
        stat = await lstat(at(dir.fd, name));
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT') throw fsError(error, [...done, name]);
        if (!last) throw notFound(`Folder ${shown([...done, name])}`);
        stat = null;
      }
      if (stat?.isSymbolicLink() && (!last || followLast)) {
        hops += 1;
        if (hops > MAX_LINK_HOPS) {
          throw new AppError('SYMLINK_LOOP', `Too many symlinks at ${shown([...done, name])}`);
        }
        const target = await readlink(at(dir.fd, name)).catch((error: unknown) => {
          // EINVAL: no longer a symlink since the lstat above; it changed under us.
          if (errnoOf(error) === 'EINVAL') throw changed([...done, name]);
          throw fsError(error, [...done, name]);
        });
        pending = [...linkTarget(done, target, rootReal), ...pending.slice(1)];
        done = [];
        await enter(null);
        continue;
      }
      if (last) return { dir, name, segments: [...done, name], stat };
      if (!stat?.isDirectory()) {
        throw new AppError('NOT_A_FOLDER', `${shown([...done, name])} is not a folder`);
      }
      let next: FileHandle;
      try {
        next = await open(at(dir.fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        throw fsError(error, [...done, name]);
      }
      await enter(next);
      done.push(name);
      pending = pending.slice(1);
    }
    return { dir, name: null, segments: done, stat: null };
  } catch (error) {
    await enter(null);
    throw error;
  }
}

/** The paths of a list, without those inside another one of it (they go with it). */
function withoutNested(paths: readonly (readonly string[])[]): (readonly string[])[] {
  const within = (inner: readonly string[], outer: readonly string[]): boolean =>
    inner.length >= outer.length && outer.every((segment, i) => inner[i] === segment);
  const kept: (readonly string[])[] = [];
  for (const candidate of paths) {
    if (
      paths.some(
        (other) =>
          other !== candidate && other.length < candidate.length && within(candidate, other),
      )
    )
      continue;
    if (kept.some((other) => within(candidate, other) && within(other, candidate))) continue;
    kept.push(candidate);
  }
  return kept;
}

/** A bulk operation that failed part-way: the error, saying what was done before it. */
function partly(error: unknown, verb: string, done: readonly string[]): unknown {
  if (!(error instanceof AppError) || done.length === 0) return error;
  const list = done.map((item) => `"/${item}"`).join(', ');
  return new AppError(error.code, `${error.message} (already ${verb}: ${list})`);
}

/**
 * Opens, from the extraction folder `top`, the folder `segments`, making what is missing (mode
 * 0755, given to `owner`); never through a symlink or a file (400 from `refuse`). The caller
 * closes the answer.
 */
async function makeFolders(
  top: FileHandle,
  segments: readonly string[],
  refuse: (why: string) => AppError,
  owner: FileOwner | null,
): Promise<FileHandle> {
  let dir = await open(at(top.fd), O_RDONLY | O_DIRECTORY);
  try {
    for (const name of segments) {
      let next: FileHandle | null = null;
      for (let attempt = 0; next === null; attempt += 1) {
        try {
          next = await open(at(dir.fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        } catch (error) {
          const code = errnoOf(error);
          if (code === 'ELOOP' || code === 'ENOTDIR') {
            throw refuse('would be written through a symlink or into a file');
          }
          if (code !== 'ENOENT' || attempt > 0) throw error;
          await mkdir(at(dir.fd, name), { mode: 0o755 }).catch((made: unknown) => {
            if (errnoOf(made) !== 'EEXIST') throw made;
          });
          if (owner) await lchown(at(dir.fd, name), owner.uid, owner.gid);
        }
      }
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (error) {
    await dir.close();
    throw error;
  }
}

/** Refuses an archive entry (its segments inside the archive) by throwing. */
type EntryCheck = (segments: readonly string[], folder: boolean) => void;

/**
 * Refuses (FILE_DENIED) an existing entry `guard` denies: at `place` and as `asked`, or where it
 * goes (`to`, for a rename or a move); for a folder, anything inside it, at both places.
 */
async function guardEntry(
  guard: PathGuard | null,
  place: Place,
  asked: readonly string[],
  to?: { readonly asked: readonly string[]; readonly resolved: readonly string[] },
): Promise<void> {
  if (guard === null) return;
  // The server directory itself (packed whole): what is in it.
  if (place.name === null) return checkBelow(guard, place.dir, null, [place.segments]);
  const folder = place.stat?.isDirectory() ?? false;
  checkPaths(guard, [asked, place.segments], folder);
  if (to) checkPaths(guard, [to.asked, to.resolved], folder);
  if (folder) {
    await checkBelow(
      guard,
      place.dir,
      place.name,
      to ? [place.segments, to.resolved] : [place.segments],
    );
  }
}

function existingName(place: Place): string {
  if (place.name === null) {
    throw new AppError('VALIDATION_FAILED', 'The server directory itself cannot be changed');
  }
  if (!place.stat) throw notFound(shown(place.segments));
  return place.name;
}

/** Opens `name` in `dir` for reading if it is a regular file; never follows, never blocks. */
async function openRegular(
  dir: FileHandle,
  name: string,
  segments: readonly string[],
): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(at(dir.fd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw fsError(error, segments);
  }
  const stat = await handle.stat();
  if (stat.isFile()) return handle;
  await handle.close();
  if (stat.isDirectory()) throw new AppError('NOT_A_FILE', `${shown(segments)} is a folder`);
  throw special(segments);
}

/**
 * A Writable into an open file, for `pipeline`: what arrives while a write is under way is
 * gathered, up to `highWaterMark` bytes (then the source waits), and written with one writev.
 * Short writes are continued. It never closes the handle (its owner does, after the last
 * write); Node's own file streams close the descriptor when destroyed, whatever `autoClose`
 * says, and a FileHandle lent to one cannot be closed while the stream lives.
 */
function fileSink(
  handle: FileHandle,
  highWaterMark: number,
  beforeWrite: (bytes: number) => void = () => undefined,
): Writable {
  const writeAll = async (buffers: readonly Buffer[]): Promise<void> => {
    let pending = buffers.filter((buffer) => buffer.length > 0);
    while (pending.length > 0) {
      const { bytesWritten } = await handle.writev(pending);
      if (bytesWritten === 0) throw new Error('the file took no bytes');
      let skipped = bytesWritten;
      const rest: Buffer[] = [];
      for (const buffer of pending) {
        if (skipped >= buffer.length) skipped -= buffer.length;
        else {
          rest.push(skipped > 0 ? buffer.subarray(skipped) : buffer);
          skipped = 0;
        }
      }
      pending = rest;
    }
  };
  /** Each batch is announced to `beforeWrite` first, which may refuse it by throwing. */
  const claimed = async (buffers: readonly Buffer[]): Promise<void> => {
    beforeWrite(buffers.reduce((sum, buffer) => sum + buffer.length, 0));
    await writeAll(buffers);
  };
  const settle = (work: Promise<void>, callback: (error?: Error | null) => void): void => {
    work.then(
      () => {
        callback();
      },
      (error: unknown) => {
        callback(error instanceof Error ? error : new Error(String(error)));
      },
    );
  };
  return new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      settle(claimed([chunk]), callback);
    },
    writev(chunks, callback) {
      settle(claimed(chunks.map(({ chunk }) => chunk as Buffer)), callback);
    },
  });
}

/** A temporary file to be: its name's prefix, and the mode and owner it is given. */
interface TempFile {
  readonly prefix: string;
  readonly mode: number;
  readonly owner: FileOwner | null;
}

/**
 * Writes through a temporary file in `dir`, renamed over `name` once `write` succeeded; with
 * `replace` false, an existing `name` is never replaced (409).
 */
async function writeAtomically(
  dir: FileHandle,
  name: string,
  segments: readonly string[],
  { prefix, mode, owner }: TempFile,
  write: (handle: FileHandle) => Promise<void>,
  replace = true,
): Promise<void> {
  const temp = `${prefix}${randomBytes(8).toString('hex')}`;
  let handle: FileHandle;
  try {
    handle = await open(at(dir.fd, temp), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, mode);
  } catch (error) {
    throw fsError(error, segments);
  }
  try {
    try {
      // The server's, so that the server can change what the panel wrote for it.
      if (owner) await handle.chown(owner.uid, owner.gid);
      await write(handle);
      await handle.chmod(mode); // the umask may have taken bits away
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (replace) await rename(at(dir.fd, temp), at(dir.fd, name));
    else {
      // Never over an entry that appeared meanwhile: link(2) fails with EEXIST.
      await link(at(dir.fd, temp), at(dir.fd, name));
      await unlink(at(dir.fd, temp));
    }
    // The rename itself is only durable once the folder is flushed (a power cut, not a crash).
    await dir.sync();
  } catch (error) {
    await unlink(at(dir.fd, temp)).catch(() => undefined);
    throw fsError(error, segments);
  }
}

/**
 * Moves `fromName` in `fromDir` to `toName` in `toDir`, never replacing an entry there, not even
 * one that appears meanwhile: rename(2) alone would replace a file, a symlink or an empty folder,
 * and Node has no renameat2 with RENAME_NOREPLACE. Files and symlinks move by a hard link, which
 * fails if the target exists (and never follows a symlink), then the source is unlinked; folders
 * by `renameFolder`.
 */
async function moveWithoutReplacing(
  fromDir: FileHandle,
  fromName: string,
  toDir: FileHandle,
  toName: string,
  source: readonly string[],
  target: readonly string[],
): Promise<void> {
  const from = at(fromDir.fd, fromName);
  const to = at(toDir.fd, toName);
  try {
    const stat = await lstat(from);
    if (stat.isDirectory()) {
      await renameFolder(from, to);
    } else {
      await link(from, to);
      await unlink(from);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    switch (errnoOf(error)) {
      case 'EEXIST':
      case 'ENOTEMPTY':
      case 'ENOTDIR': // the claimed target became a file or a symlink meanwhile
        throw alreadyExists(target);
      case 'EINVAL':
        throw new AppError('VALIDATION_FAILED', 'A folder cannot be moved into itself');
      default:
        throw fsError(error, source);
    }
  }
}

/**
 * Renames the folder `from` to `to` only where nothing is: `to` is claimed first with mkdir,
 * which fails with EEXIST if any entry is there, and the folder is renamed over that empty
 * placeholder, which rename(2) replaces. Two moves to one name cannot both claim it. When the
 * rename fails (a folder into itself, the placeholder filled meanwhile…), the placeholder is
 * removed again if it is still the empty folder made here.
 */
async function renameFolder(from: string, to: string): Promise<void> {
  await mkdir(to, { mode: 0o700 });
  let placeholder: Identity | null = null;
  try {
    placeholder = await lstat(to, { bigint: true });
    await rename(from, to);
  } catch (error) {
    const now = await lstat(to, { bigint: true }).catch(() => null);
    if (placeholder && now?.isDirectory() && sameIdentity(now, placeholder)) {
      await rmdir(to).catch(() => undefined);
    }
    throw error;
  }
}

/**
 * Removes `name` in `parent`: a file or a symlink (never followed), or a folder with everything
 * in it, at any depth (`walkBelow`). What a running server adds meanwhile is removed too, for a
 * few rounds; past them: 409 CHANGED_CONCURRENTLY.
 */
async function removeEntry(
  parent: FileHandle,
  name: string,
  segments: readonly string[],
  freed: Freed = { bytes: 0 },
): Promise<void> {
  for (let round = 1; ; round += 1) {
    const stat = await lstat(at(parent.fd, name)).catch(() => null);
    try {
      await unlink(at(parent.fd, name));
      if (stat && !stat.isDirectory()) freed.bytes += stat.size;
      return;
    } catch (error) {
      if (errnoOf(error) !== 'EISDIR') throw error;
    }
    const dir = await openFolder(parent, name);
    if (dir) await walkBelow(dir, remover(freed), segments);
    try {
      await rmdir(at(parent.fd, name));
      return;
    } catch (error) {
      const code = errnoOf(error);
      // ENOTDIR: swapped for a file or a symlink since; the next round unlinks it.
      if (code !== 'ENOTEMPTY' && code !== 'ENOTDIR') throw error;
      if (round === 3) throw changed(segments);
    }
  }
}

/** What a removal freed: the bytes of the files and symlinks it unlinked (as `sizeOf` counts). */
interface Freed {
  bytes: number;
}

/**
 * For `walkBelow`: unlinks files and symlinks as met, adding their sizes to `freed`, and folders
 * once their content is gone.
 */
const remover = (freed: Freed): Visitor => ({
  async enter(dir, name) {
    const stat = await lstat(at(dir.fd, name)).catch(() => null);
    if (stat?.isDirectory()) return true;
    try {
      await unlink(at(dir.fd, name));
      freed.bytes += stat?.size ?? 0;
      return false;
    } catch (error) {
      if (errnoOf(error) === 'EISDIR') return true;
      if (errnoOf(error) === 'ENOENT') return false;
      throw error;
    }
  },
  async leave(dir, name) {
    await rmdir(at(dir.fd, name)).catch((error: unknown) => {
      if (errnoOf(error) !== 'ENOENT') throw error;
    });
  },
});
/** Removes without counting: the whole directory goes, and its figure with it. */
const REMOVER = remover({ bytes: 0 });

function entryOf(segments: readonly string[], stat: Stats): Entry {
  const type: EntryType = stat.isSymbolicLink()
    ? 'symlink'
    : stat.isDirectory()
      ? 'folder'
      : 'file';
  return {
    name: segments.at(-1) ?? '',
    path: joinSegments(segments),
    type,
    size: type === 'folder' ? 0 : stat.size,
    modified: stat.mtime.toISOString(),
  };
}

/** lstat of an entry just written, for the answer; it may already be gone again. */
async function statOf(dir: FileHandle, name: string, segments: readonly string[]): Promise<Stats> {
  try {
    return await lstat(at(dir.fd, name));
  } catch (error) {
    throw fsError(error, segments);
  }
}

const binary = (): AppError =>
  new AppError('BINARY_FILE', 'The file is not UTF-8 text; download it instead');
const special = (segments: readonly string[]): AppError =>
  new AppError(
    'SPECIAL_FILE',
    `${shown(segments)} is not a regular file (a FIFO, socket or device)`,
  );
const alreadyExists = (segments: readonly string[]): AppError =>
  new AppError('ALREADY_EXISTS', `${shown(segments)} already exists`);

/** Turns a file-system error into what the client should hear, naming only the user's path. */
function fsError(error: unknown, segments: readonly string[]): Error {
  if (error instanceof AppError) return error;
  switch (errnoOf(error)) {
    case 'ENOENT':
      return notFound(shown(segments));
    case 'EEXIST':
      return alreadyExists(segments);
    case 'ENOTDIR':
      return new AppError('NOT_A_FOLDER', `A part of ${shown(segments)} is not a folder`);
    case 'EISDIR':
      return new AppError('NOT_A_FILE', `${shown(segments)} is a folder`);
    case 'ELOOP':
      // O_NOFOLLOW met a symlink where a file or folder was just seen: it changed under us.
      return changed(segments);
    case 'ENAMETOOLONG':
      return new AppError('INVALID_PATH', 'That path or name is too long');
    case 'ENOTEMPTY':
      return alreadyExists(segments);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new AppError('FORBIDDEN', `The panel may not change ${shown(segments)}`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new AppError('INSUFFICIENT_STORAGE', 'The disk is full');
    case 'ENXIO':
      return special(segments);
    default:
      // Unexpected: a 500, logged with its details and never shown to the client.
      return error instanceof Error ? error : new Error(String(error));
  }
}

/** Gives `directory` and everything under it (symlinks as themselves) to `owner`. */
async function chownTree(directory: string, owner: FileOwner): Promise<void> {
  await walkTree(directory, (dir, name) =>
    lchown(at(dir.fd, name), owner.uid, owner.gid).catch(() => undefined),
  );
  await lchown(directory, owner.uid, owner.gid);
}

/**
 * Bytes of the files and symlinks under `directory`; folders' own entries are not counted (their
 * size depends on the file system and moves with every name added), nor this run's temporary
 * files and folders (extractions), whose bytes the writes under way have claimed already (usage.ts).
 */
async function sizeOf(directory: string, ownTemporary: string): Promise<number> {
  let total = 0;
  await walkTree(directory, (_dir, name, stat) => {
    // An extraction under way (a temporary folder): its bytes are claimed already.
    if (name.startsWith(ownTemporary)) return Promise.resolve(false);
    if (!stat.isDirectory()) total += stat.size;
    return Promise.resolve();
  });
  return total;
}

/**
 * Visits every entry under `directory` (lstat: symlinks as themselves), through descriptors
 * (`walkBelow`), so a folder swapped for a symlink by a running server is never followed and no
 * depth is too deep. Entries that vanish meanwhile and folders that cannot be read are skipped; a
 * folder moved away under the walk ends it early.
 */
async function walkTree(
  directory: string,
  /** Answers `false` for a folder not to be walked into. */
  visit: (dir: FileHandle, name: string, stat: Stats) => Promise<unknown>,
): Promise<void> {
  let root: FileHandle;
  try {
    root = await open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return;
  }
  const visitor: Visitor = {
    tolerant: true,
    async enter(dir, name) {
      const stat = await lstat(at(dir.fd, name)).catch(() => null);
      if (!stat) return false;
      const into = await visit(dir, name, stat);
      return into !== false && stat.isDirectory();
    },
  };
  await walkBelow(root, visitor, []).catch((error: unknown) => {
    if (!(error instanceof AppError)) throw error;
  });
}
