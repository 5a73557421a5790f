/**
 * ServerStorage: the only code that touches the servers' directories (`DATA_DIR/servers/<name>`),
 * and the one front of the storage's rooms. It holds the state they share: who owns each
 * server's files, this run's temporary names, the books of disk use (usage.ts) and the trash;
 * each operation hands the room that does it the server's folder (folder.ts) and nothing else.
 *
 * The rooms: resolve.ts (the one containment check every user path goes through), atomic.ts
 * (temporary files renamed into place), moves.ts (never replacing), walk.ts (tree walks and
 * removal), trash.ts (deleted servers and leftovers), entries.ts and content.ts (the file
 * manager), channels.ts, file-channel.ts (with read-channel.ts and write-channel.ts),
 * entry-changes.ts and attributes.ts (a remote files session: SFTP), archives.ts, unpack.ts and
 * ignore-lines.ts (packing and unpacking), restore.ts (a backup's restore), errors.ts (what the
 * client hears), types.ts (what callers see).
 *
 * Errors carry the user's own paths only, never the host's.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { chmod, lstat, mkdir, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
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
} from '../../host.js';
import { DiskUsage } from '../usage.js';
import * as archives from './archives.js';
import * as channels from './channels.js';
import * as entryChanges from './entry-changes.js';
import { openChannel } from './file-channel.js';
import { TEMP_PREFIX } from './atomic.js';
import * as fileContent from './content.js';
import * as entries from './entries.js';
import type { ServerFolder } from './folder.js';
import { ignoreTest } from './ignore-lines.js';
import { withPlace } from './resolve.js';
import * as restore from './restore.js';
import { cleanTemporaryFiles, removeLeftovers, Trash, TRASH_NAME } from './trash.js';
import type { FileOwner, StorageLog } from './types.js';
import { chownTree, sizeOf } from './walk.js';

/**
 * How old the figure of a server's disk use may get before the directory is walked again (the
 * panel's own writes move it meanwhile; the server's writes are seen at the next walk).
 */
const DISK_USAGE_TTL_MS = 10_000;

/** A restore's source, its limits, the quota and where it reports its progress. */
type Restore<Source> = [
  source: Source,
  limits: ArchiveLimits,
  quota: number | null,
  progress: (written: number) => void,
];

const SILENT: StorageLog = { info: () => undefined, warn: () => undefined };

export class ServerStorage implements ServerFiles, ServerBackupFiles {
  readonly #serversDir: string;
  /** Whether server folders belong to the servers' own users (the panel runs as root). */
  readonly #chowns: boolean;
  /** Each server's user, as last given to `create` or `ensureOwner`. */
  readonly #owners = new Map<string, FileOwner>();
  readonly #now: () => number;
  readonly #log: StorageLog;
  /** How this run's temporary names begin: what `cleanTemporaryFiles` never removes. */
  readonly #tempPrefix = `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-`;
  /** Bytes in each server's folder, and the quota held against the panel's writes. */
  readonly #usage: DiskUsage;
  readonly #trash: Trash;

  /**
   * `chowns`: servers run as users of their own (the panel runs as root), so each server's
   * folder and everything the panel writes into it belong to that server's user (given to
   * `create` and `ensureOwner`, else the folder's owner); false: everything is the panel's.
   */
  constructor(
    serversDir: string,
    options: {
      readonly chowns?: boolean;
      readonly now?: () => number;
      readonly log?: StorageLog;
      /** How old a folder's measured size may get before it is walked again (tests shorten it). */
      readonly usageTtlMs?: number;
    } = {},
  ) {
    this.#serversDir = serversDir;
    this.#chowns = options.chowns ?? false;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? SILENT;
    this.#usage = new DiskUsage({
      measure: (name) => sizeOf(this.directoryOf(name), this.#tempPrefix),
      now: this.#now,
      ttlMs: options.usageTtlMs ?? DISK_USAGE_TTL_MS,
      warn: (details, message) => {
        this.#log.warn(details, message);
      },
    });
    this.#trash = new Trash(serversDir, this.#log);
  }

  directoryOf(name: string): string {
    if (
      name === '' ||
      name === '.' ||
      name === '..' ||
      name === TRASH_NAME ||
      name === restore.RESTORING_NAME ||
      name.includes('/') ||
      name.includes('\0')
    ) {
      throw new Error(`Not a server name: ${JSON.stringify(name)}`);
    }
    return path.join(this.#serversDir, name);
  }

  /** The server's folder as the rooms see it; nothing is asked of the disk until they do. */
  #folder(server: string): ServerFolder {
    return {
      server,
      directory: () => this.directoryOf(server),
      owner: () => this.#ownerOf(server),
      tempPrefix: this.#tempPrefix,
      reserve: (quota) => this.#usage.reserve(server, quota),
      apply: (delta) => {
        this.#usage.apply(server, delta);
      },
      forget: () => {
        this.#usage.forget(server);
      },
      log: this.#log,
    };
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
   * name in the trash, for `restoreDirectory`; null when there is nothing to put back (see
   * `Trash.discard`).
   */
  async discardDirectory(name: string): Promise<string | null> {
    return this.#trash.discard(this.#folder(name));
  }

  /**
   * Puts back a directory `discardDirectory` took away, when deleting the server failed after
   * all. Never replaces a directory made meanwhile; then, or on any failure, it stays in the
   * trash (logged) and the error is not thrown: the caller is already reporting its own.
   */
  async restoreDirectory(name: string, discarded: string): Promise<void> {
    await this.#trash.restore(this.#folder(name), discarded);
  }

  /**
   * Removes everything in the trash: the directories of deleted servers. Never rejects; a call
   * while it runs makes it go round once more, and all callers share one promise (see
   * `Trash.empty`). Run after deleting a server and once at the panel's start.
   */
  emptyTrash(): Promise<void> {
    return this.#trash.empty();
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
   * Removes the temporary files and folders an earlier run left anywhere in the server's
   * directory; answers how many. This run's own are never touched, so it may run while uploads
   * and saves are under way.
   */
  async cleanTemporaryFiles(server: string): Promise<number> {
    return cleanTemporaryFiles(this.#folder(server));
  }

  /**
   * Removes what an earlier run of the panel left behind: its temporary files in the folders of
   * the servers `servers` answers (`cleanTemporaryFiles`, one server after the other) and the
   * trash of deleted servers (`emptyTrash`). Run in the background once the panel serves: it
   * never rejects, and a failure (logged) never stops the rest.
   */
  async removeLeftovers(servers: () => Promise<readonly string[]>): Promise<void> {
    await removeLeftovers(
      servers,
      () => this.emptyTrash(),
      (server) => this.cleanTemporaryFiles(server),
      this.#log,
    );
  }

  // A remote files session (SFTP): channels.ts, file-channel.ts, entry-changes.ts. Containment,
  // `guard` and `quota` as below.

  stat(
    server: string,
    segments: readonly string[],
    follow: boolean,
    guard: PathGuard | null = null,
  ): Promise<EntryStat> {
    return channels.stat(this.#folder(server), segments, follow, guard);
  }

  realPath(server: string, segments: readonly string[]): Promise<string[]> {
    return channels.realPath(this.#folder(server), segments);
  }

  openChannel(
    server: string,
    segments: readonly string[],
    flags: ChannelFlags,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<FileChannel> {
    return openChannel(this.#folder(server), segments, flags, quota, guard);
  }

  readFolder(
    server: string,
    segments: readonly string[],
    batch: number,
    guard: PathGuard | null = null,
  ): AsyncIterableIterator<readonly NamedStat[]> {
    return channels.readFolder(this.#folder(server), segments, batch, guard);
  }

  makeFolder(server: string, segments: readonly string[], guard: PathGuard | null = null) {
    return entryChanges.makeFolder(this.#folder(server), segments, guard);
  }

  removeFile(server: string, segments: readonly string[], guard: PathGuard | null = null) {
    return entryChanges.removeFile(this.#folder(server), segments, guard);
  }

  removeFolder(server: string, segments: readonly string[], guard: PathGuard | null = null) {
    return entryChanges.removeFolder(this.#folder(server), segments, guard);
  }

  renamePath(
    server: string,
    from: readonly string[],
    to: readonly string[],
    replace: boolean,
    guard: PathGuard | null = null,
  ): Promise<void> {
    return entryChanges.renamePath(this.#folder(server), from, to, replace, guard);
  }

  readLink(server: string, segments: readonly string[], guard: PathGuard | null = null) {
    return entryChanges.readLink(this.#folder(server), segments, guard);
  }

  makeLink(
    server: string,
    link: readonly string[],
    target: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<void> {
    return entryChanges.makeLink(this.#folder(server), link, target, guard);
  }

  setAttributes(
    server: string,
    segments: readonly string[],
    changes: AttributeChanges,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<void> {
    return channels.setAttributes(this.#folder(server), segments, changes, quota, guard);
  }

  // The file manager (entries.ts, content.ts, archives.ts). Every method that takes a `guard`
  // refuses what it denies (403 FILE_DENIED, see guard.ts) before changing anything; null:
  // nothing is denied. `quota`: bytes the whole folder may hold (413 QUOTA_EXCEEDED); null: none.

  /** The entries of a folder: folders first, then by name; temporary files are not shown. */
  list(server: string, segments: readonly string[]): Promise<Entry[]> {
    return entries.list(this.#folder(server), segments);
  }

  /** Creates an empty file or a folder named `name` in the folder `parent`. */
  createEntry(
    server: string,
    parent: readonly string[],
    name: string,
    type: 'file' | 'folder',
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return entries.createEntry(this.#folder(server), parent, name, type, guard);
  }

  /** Opens a regular file for reading; the caller reads it once or closes it. */
  openFile(
    server: string,
    segments: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<OpenedFile> {
    return fileContent.openFile(this.#folder(server), segments, guard);
  }

  /** A text file's content: UTF-8 only (else 400), at most `maxBytes` (else 413). */
  readText(
    server: string,
    segments: readonly string[],
    maxBytes: number,
    guard: PathGuard | null = null,
  ): Promise<string> {
    return fileContent.readText(this.#folder(server), segments, maxBytes, guard);
  }

  /** Replaces (or creates) a file's content atomically, held to `quota` by its growth. */
  writeText(
    server: string,
    segments: readonly string[],
    content: string,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return fileContent.writeText(this.#folder(server), segments, content, quota, guard);
  }

  /** Streams `source` into the file `name` in `folder`, replacing a file only once complete. */
  upload(
    server: string,
    folder: readonly string[],
    name: string,
    source: Readable,
    maxBytes: number | null,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return fileContent.upload(this.#folder(server), folder, name, source, maxBytes, quota, guard);
  }

  /** Renames an entry inside its folder (a symlink is renamed, not its target). */
  renameEntry(
    server: string,
    segments: readonly string[],
    newName: string,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return entries.renameEntry(this.#folder(server), segments, newName, guard);
  }

  /** Moves an entry with `mv` meaning, never replacing what is at the target. */
  move(
    server: string,
    source: readonly string[],
    destination: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return entries.move(this.#folder(server), source, destination, guard);
  }

  /** Deletes a file, a symlink (not its target) or a folder with everything in it. */
  deleteEntry(
    server: string,
    segments: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<void> {
    return entries.deleteEntry(this.#folder(server), segments, guard);
  }

  /** Deletes several entries, all checked first; answers the paths deleted. */
  deleteMany(
    server: string,
    paths: readonly (readonly string[])[],
    guard: PathGuard | null = null,
  ): Promise<string[]> {
    return entries.deleteMany(this.#folder(server), paths, guard);
  }

  /** Moves several entries into the existing folder `destination`, all checked first. */
  moveMany(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    guard: PathGuard | null = null,
  ): Promise<Entry[]> {
    return entries.moveMany(this.#folder(server), sources, destination, guard);
  }

  /** Packs `sources` into a new archive at `destination`; nothing is left on failure. */
  compress(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    format: 'zip' | 'tar.gz',
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry> {
    return archives.compress(this.#folder(server), sources, destination, format, quota, guard);
  }

  /** Unpacks the archive at `archive` into the folder `destination`, all or nothing. */
  decompress(
    server: string,
    archive: readonly string[],
    destination: readonly string[],
    limits: ArchiveLimits,
    quota: number | null = null,
    guard: PathGuard | null = null,
  ): Promise<Entry[]> {
    return archives.decompress(this.#folder(server), archive, destination, limits, quota, guard);
  }

  /**
   * Packs the whole server directory as a .tar.gz into `into` (a backup), as `compress` packs a
   * folder: symlinks as symlinks, special files and the panel's temporary files left out, and
   * whatever `options.ignore` ignores (an ignored folder with everything in it; ignore-lines.ts).
   */
  async packServer(server: string, into: Writable, options: PackOptions): Promise<void> {
    const skip = ignoreTest(options.ignore ?? []);
    await archives.writeArchive('tar.gz', into, (writer, add) =>
      withPlace(this.#folder(server), [], false, (place) =>
        archives.pack(place, writer, add, { skip, packed: options.packed }),
      ),
    );
  }

  /**
   * Replaces the server's whole directory by the content of an archive (a backup's restore), all
   * or nothing (see restore.ts). The caller makes sure the server does not run meanwhile.
   * `quota`: the most the new content may hold (413 QUOTA_EXCEEDED).
   */
  replaceFromArchive(server: string, ...rest: Restore<FileHandle>): Promise<void> {
    return restore.replaceFromArchive(this.#serversDir, this.#folder(server), ...rest);
  }

  /**
   * `replaceFromArchive` for an archive that arrives as a stream (a file agent on another
   * machine is sent it): written whole beside the servers' folders first (restore.ts).
   */
  replaceFromStream(server: string, ...rest: Restore<Readable>): Promise<void> {
    return restore.replaceFromStream(this.#serversDir, this.#folder(server), ...rest);
  }

  /**
   * Before servers start: a restore an earlier run left between its two renames is undone, and
   * what restores left is removed. Never rejects; failures are logged.
   */
  finishRestores(): Promise<void> {
    return restore.finishRestores(this.#serversDir, (name) => this.directoryOf(name), this.#log);
  }
}
