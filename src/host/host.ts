/**
 * ServerHost: everything one machine does for its game servers, behind one port. Its
 * implementation owns the supervisor (lifecycle, crash handling, automatic restarts), the
 * console (history, batches, input), the storage of the servers' folders and the runtimes that
 * run them (a sandboxed process, a container).
 *
 * The host knows servers by name and their recorded configuration, never users or roles: who
 * may do what is decided before a call reaches it (src/domain/policy.ts, in the servers
 * service, the only module that holds a ServerHost). Another machine, later, is another
 * implementation of this port.
 */
import type { FeatureNotice } from '../domain/features.js';
import type { NodeConnection, ProbeAnswer } from '../domain/node.js';
import type { RegistryAuth } from '../domain/registry.js';
import type { InstallState, ServerRecord, ServerStatus } from '../domain/server.js';
import type { TemplateDefinition } from '../domain/template.js';
import type { FileHandle } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';

/** One line of a server's console history. */
export interface ConsoleLine {
  readonly line: string;
  /** ISO-8601 time the line was complete. */
  readonly ts: string;
}

/**
 * What a console listener hears: batches of lines, status changes and lines nobody will see.
 * `Status`: the server's statuses (an install's console has its own).
 */
export type ConsoleEvent<Status extends string = ServerStatus> =
  /** Lines in order; `ts` is when the last of them arrived. */
  | { readonly type: 'log'; readonly lines: readonly string[]; readonly ts: string }
  | { readonly type: 'status'; readonly status: Status }
  /** Lines the server printed that nobody will see, where they would have been. */
  | { readonly type: 'skipped'; readonly lines: number }
  /** A line of an egg feature's showed up in the output (src/domain/features.ts). */
  | ({ readonly type: 'notice' } & FeatureNotice);

/** What a server's processes use now. */
export interface Usage {
  /** CPU use of the whole process tree since the previous reading; 100 is one full core. */
  readonly cpuPercent: number;
  /** Resident memory of the whole process tree. */
  readonly memoryBytes: number;
  /** Processes and threads of the server, as its pids limit counts them (or its processes). */
  readonly pids: number;
}

/** How the last process of a server ended, since the host started. */
export interface LastExit {
  readonly code: number | null;
  readonly signal: string | null;
  /** The kernel ended the server for passing its memory limit. */
  readonly outOfMemory: boolean;
  /** A stop ended it the way the stop asks (see RecordedExit.cleanStop). */
  readonly cleanStop: boolean;
  readonly at: Date;
}

export interface ServerState {
  readonly status: ServerStatus;
  readonly pid: number | null;
  readonly startedAt: Date | null;
  readonly lastExit: LastExit | null;
}

/** One server's console: what it printed lately, and what it prints from now on. */
export interface ServerConsole {
  history(): readonly ConsoleLine[];
  /** Calls `listener` with every batch of lines and status change until unsubscribed. */
  subscribe(listener: (event: ConsoleEvent) => void): () => void;
  /**
   * Calls `onMatch` once, when a line of the server's own (never one of the panel's) contains
   * one of `patterns` or matches one written `regex:…`, until the answered function is called.
   * Patterns run off the panel's main thread, each batch of lines within a time limit
   * (docs/security.md, "Patterns").
   */
  watch(patterns: readonly string[], onMatch: () => void): () => void;
  /**
   * The notices of the template's features raised since the server's last start or install (its
   * EULA line, a Java version error…; src/domain/features.ts), in order: subscribers hear each
   * one as a `notice` event when it is raised.
   */
  notices(): readonly FeatureNotice[];
}

export type EntryType = 'file' | 'folder' | 'symlink';

/** An entry of a server's folder, as the file manager shows it. */
export interface Entry {
  readonly name: string;
  /** From the server's root, `/`-separated. */
  readonly path: string;
  readonly type: EntryType;
  readonly size: number;
  /** ISO-8601. */
  readonly modified: string;
}

/** A byte range of a file: `start` to `end`, both included. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * A regular file opened for reading. The caller owns it: it either reads it once (`read`: the
 * stream lets go of the file when it ends, fails or is destroyed) or closes it (`close`, also
 * harmless after `read`). Nothing of the machine it is on leaks through, so a file on another
 * machine streams the same way.
 */
export interface OpenedFile {
  readonly name: string;
  readonly size: number;
  readonly modified: Date;
  /**
   * The file's bytes, all of them or `range` (within the file: the caller checks it against
   * `size`). A stream that is destroyed before its end stops the reading at once.
   */
  read(range?: ByteRange): Readable;
  /** Lets go of the file without reading it; never rejects. */
  close(): Promise<void>;
}

/** What one extraction may unpack; past them the archive is refused and nothing is kept. */
export interface ArchiveLimits {
  /** Bytes of all entries together (413). */
  readonly maxBytes: number;
  /** Entries, folders and symlinks included (413). */
  readonly maxEntries: number;
  /** Unpacked bytes per archive byte (400: a zip bomb), checked once past `ratioFloorBytes`. */
  readonly maxRatio: number;
  readonly ratioFloorBytes: number;
}

/** A place in a folder as a deny list sees it (src/templates/denylist.ts builds them). */
export interface GuardCursor {
  enter(name: string): GuardCursor;
  /** The rule that denies this path itself (a folder when `folder`), or null. */
  rule(folder: boolean): string | null;
  /** False when no rule can deny anything below this path. */
  readonly live: boolean;
}

/**
 * What a caller may not touch in a server's folder (its template's file deny list). The files
 * refuse every path it denies, as written and as it resolves through symlinks, and everything
 * inside a folder renamed, moved, deleted, packed or unpacked: 403 FILE_DENIED naming the path
 * and the rule, before anything is changed.
 */
export interface PathGuard {
  /**
   * The lines it was compiled from (gitignore lines, src/templates/denylist.ts): what crosses to
   * a machine that decides paths itself, which compiles them again with the same code.
   */
  readonly patterns: readonly string[];
  root(): GuardCursor;
  /** The rule that denies `segments` or one of the folders on the way, or null. */
  ruleFor(segments: readonly string[], folder: boolean): string | null;
}

/** What packing a whole server leaves out, and what it reports. */
export interface PackOptions {
  /**
   * Gitignore lines (a backup's patterns and the server's ignore file, in that order): what
   * they ignore, from the folder's top, is left out (a folder with everything in it). Data, not
   * a callback, so that it crosses to another machine.
   */
  readonly ignore?: readonly string[];
  /**
   * Called once an entry is written: its kind and its bytes (a symlink's: its target). From
   * another machine these come as progress events, in order, all of them before the packing's
   * promise settles.
   */
  readonly packed?: (kind: EntryType, bytes: number) => void;
}

/** What `stat` tells of an entry: what an SFTP client's attributes carry. */
export interface EntryStat {
  /** `other`: a socket, a device, a FIFO (shown, never opened). */
  readonly type: EntryType | 'other';
  /** Bytes (a symlink's: its target's length, as lstat says; a folder's: as the disk says). */
  readonly size: number;
  /** The permission bits only (`0o7777` at most). */
  readonly mode: number;
  readonly accessed: Date;
  readonly modified: Date;
}

/** An entry of a folder being read, with its attributes (lstat: a symlink is a symlink). */
export interface NamedStat extends EntryStat {
  readonly name: string;
}

/** How a file channel is opened (SFTP's open flags). */
export interface ChannelFlags {
  readonly read: boolean;
  /** False: the channel reads the file itself, and nothing else. */
  readonly write: boolean;
  /** Every write goes to the end of the file, whatever its offset. */
  readonly append: boolean;
  /** Create the file when it does not exist, with `write` (else 404). */
  readonly create: boolean;
  /** Start from an empty file. */
  readonly truncate: boolean;
  /**
   * Refuse when the file exists (409 ALREADY_EXISTS), at open, and at close: a file that
   * appeared meanwhile is never replaced.
   */
  readonly exclusive: boolean;
}

/** What `setAttributes` may change; what is left out stays. */
export interface AttributeChanges {
  /**
   * Permission bits; only `0o777` may be set (anything else, a file type's bits included: 403
   * MODE_REFUSED, nothing changed).
   */
  readonly mode?: number;
  readonly accessed?: Date;
  readonly modified?: Date;
  /** Cuts or extends a regular file to this many bytes (counted against the quota). */
  readonly size?: number;
}

/**
 * A file opened by a session that reads and writes at offsets (SFTP). A channel opened for
 * writing works on a private copy in the same folder (empty when truncated or new, else a copy
 * of the file): `close` puts it in place of the file in one rename, keeping the file's mode, so
 * nobody ever sees a half-written file under its name; `abort` (a broken session) drops it and
 * leaves the file as it was. Writes are counted against the quota given at open, as growth over
 * the file's size when opened (413 QUOTA_EXCEEDED, the write not done). Writes may be sent
 * without waiting for the previous ones: each takes its place (and its append offset) when
 * called, and `close` waits for them. Two channels writing one file: the last closed wins.
 * A channel that is closed or aborted refuses every call but `abort` (400).
 */
export interface FileChannel {
  readonly writable: boolean;
  /**
   * Up to `length` bytes at `offset` (at most 1 MiB at a time: fewer bytes are not the end of
   * the file); an empty buffer at the end of the file. A writing channel reads its copy.
   */
  read(offset: number, length: number): Promise<Buffer>;
  /**
   * Writes `data` at `offset` (past the end leaves a hole), or at the end with `append`; 400 on
   * a channel opened for reading only. A write that fails (the quota, the disk) spoils the copy:
   * `close` then drops it and rejects with that failure, so an incomplete file never takes the
   * file's place.
   */
  write(offset: number, data: Uint8Array): Promise<void>;
  /** The file as this channel sees it (its private copy while writing). */
  stat(): Promise<EntryStat>;
  /**
   * Changes the file as this channel sees it: a writing channel's copy (its size counted against
   * the quota), a reading channel's file (mode and times only: a size is 400).
   */
  setAttributes(changes: AttributeChanges): Promise<void>;
  /**
   * Ends the channel; a writing one puts its copy in place (keeping the file's mode; a new file
   * gets 0644 and the folder's owner) and answers the entry written, a reading one null.
   */
  close(): Promise<Entry | null>;
  /** Ends the channel leaving the file as it was; never throws. */
  abort(): Promise<void>;
}

/**
 * The files of a server's folder as a remote files session (SFTP) works on them: attributes,
 * channels at offsets, folders read in batches, single-entry changes. Paths, containment (403
 * PATH_OUTSIDE, through symlinks at any depth), the deny list (`guard`, 403 FILE_DENIED) and the
 * quota (`quota`, 413 QUOTA_EXCEEDED) are those of `ServerFiles`; temporary files are never
 * shown nor reachable. A missing entry is 404 NOT_FOUND, an existing one in the way 409
 * ALREADY_EXISTS, a folder where a file is needed 400 NOT_A_FILE (the reverse: NOT_A_FOLDER).
 * The guard refuses a path it denies, as written and as it resolves, for every operation here
 * (a stat and a folder read included); a folder's entries are listed whatever it says, as the
 * file manager's listing shows them. The entry an operation changes is never followed: a symlink
 * is removed, renamed or replaced as itself.
 */
export interface ServerFileChannels {
  /**
   * An entry's attributes; `follow`: through a final symlink (which must stay inside: 403;
   * dangling: 404), else a symlink's own.
   */
  stat(
    server: string,
    segments: readonly string[],
    follow: boolean,
    guard?: PathGuard | null,
  ): Promise<EntryStat>;
  /**
   * Where a path leads once every symlink on it is followed (it must stay inside). Its last
   * segment may be missing (a name about to be made); a folder on the way may not (404).
   */
  realPath(server: string, segments: readonly string[]): Promise<string[]>;
  /**
   * Opens a regular file (following symlinks that stay inside) as `flags` say: a folder is 400
   * NOT_A_FILE, a FIFO, socket or device 400 SPECIAL_FILE.
   */
  openChannel(
    server: string,
    segments: readonly string[],
    flags: ChannelFlags,
    quota?: number | null,
    guard?: PathGuard | null,
  ): Promise<FileChannel>;
  /**
   * A folder's entries (lstat: a symlink is a symlink) in batches of at most `batch`, read as the
   * client asks (a large folder is never held whole); temporary files left out. The folder must
   * exist (404) and be one (400 NOT_A_FOLDER): errors come from the first `next()`. `return()`
   * ends the reading early and lets go of the folder.
   */
  readFolder(
    server: string,
    segments: readonly string[],
    batch: number,
    guard?: PathGuard | null,
  ): AsyncIterableIterator<readonly NamedStat[]>;
  /** Makes one folder; its parent must exist (404), nothing may be at its path (409). */
  makeFolder(server: string, segments: readonly string[], guard?: PathGuard | null): Promise<void>;
  /** Removes a file or a symlink, itself (never a folder: 400 NOT_A_FILE). */
  removeFile(server: string, segments: readonly string[], guard?: PathGuard | null): Promise<void>;
  /** Removes an empty folder (409 FOLDER_NOT_EMPTY otherwise; a file: 400 NOT_A_FOLDER). */
  removeFolder(
    server: string,
    segments: readonly string[],
    guard?: PathGuard | null,
  ): Promise<void>;
  /**
   * Renames `from` to the path `to` (any folder of the server); `replace`: a file or symlink at
   * `to` is replaced in one step (POSIX rename), else 409 when anything is there. A folder at
   * `to` is never replaced, nor anything by a folder (409). The guard checks both paths, and
   * everything inside a folder renamed at both places.
   */
  renamePath(
    server: string,
    from: readonly string[],
    to: readonly string[],
    replace: boolean,
    guard?: PathGuard | null,
  ): Promise<void>;
  /**
   * A symlink's target as a path from the server's root (403 PATH_OUTSIDE when it leads out; not
   * a symlink: 400).
   */
  readLink(
    server: string,
    segments: readonly string[],
    guard?: PathGuard | null,
  ): Promise<string[]>;
  /**
   * Makes a symlink at `link` to `target` (a path from the server's root, which need not exist),
   * stored relative to the link's folder so that it stays inside wherever the folder is; it
   * belongs to the folder's owner. Nothing may be at `link` (409).
   */
  makeLink(
    server: string,
    link: readonly string[],
    target: readonly string[],
    guard?: PathGuard | null,
  ): Promise<void>;
  /**
   * Changes an entry's mode, times or size (following a final symlink that stays inside); a size
   * only for a regular file, counted against `quota`. A FIFO, socket or device is never opened
   * (400 SPECIAL_FILE); the server's own folder is not changed (400).
   */
  setAttributes(
    server: string,
    segments: readonly string[],
    changes: AttributeChanges,
    quota?: number | null,
    guard?: PathGuard | null,
  ): Promise<void>;
}

/**
 * The files of the servers' folders, for the file manager. Every path is a list of plain
 * segments (`userPath`, src/domain/paths.ts, makes them); whatever a caller passes, nothing
 * outside the server's folder is reached, through `..` or a symlink at any depth (403
 * PATH_OUTSIDE). `guard`: a deny list (null: nothing denied). `quota`: the bytes the whole folder
 * may hold, counting only growth (413 QUOTA_EXCEEDED before anything is kept; null: none). A
 * failure leaves nothing half-done: no partial file, no temporary one.
 */
export interface ServerFiles extends ServerFileChannels {
  /** The entries of a folder: folders first, then by name; temporary files are not shown. */
  list(server: string, segments: readonly string[]): Promise<Entry[]>;
  /** Creates an empty file or a folder `name` in the folder `parent` (409 when it exists). */
  createEntry(
    server: string,
    parent: readonly string[],
    name: string,
    type: 'file' | 'folder',
    guard?: PathGuard | null,
  ): Promise<Entry>;
  /** Opens a regular file for reading, following symlinks that stay inside. */
  openFile(
    server: string,
    segments: readonly string[],
    guard?: PathGuard | null,
  ): Promise<OpenedFile>;
  /** A text file's content: UTF-8 only (else 400), at most `maxBytes` (else 413). */
  readText(
    server: string,
    segments: readonly string[],
    maxBytes: number,
    guard?: PathGuard | null,
  ): Promise<string>;
  /** Replaces (or creates) a file's content atomically, keeping its mode; its folder must exist. */
  writeText(
    server: string,
    segments: readonly string[],
    content: string,
    quota?: number | null,
    guard?: PathGuard | null,
  ): Promise<Entry>;
  /**
   * Streams `source` into the file `name` in `folder`, replacing a file there only once it is
   * complete; over `maxBytes` (413), past the quota or aborted, nothing is left behind.
   */
  upload(
    server: string,
    folder: readonly string[],
    name: string,
    source: Readable,
    maxBytes: number | null,
    quota?: number | null,
    guard?: PathGuard | null,
  ): Promise<Entry>;
  /** Renames an entry inside its folder (a symlink is renamed, not its target). */
  renameEntry(
    server: string,
    segments: readonly string[],
    newName: string,
    guard?: PathGuard | null,
  ): Promise<Entry>;
  /**
   * Moves an entry with `mv` meaning: into `destination` when that is a folder, else to that
   * path; never replacing what is at the target (409).
   */
  move(
    server: string,
    source: readonly string[],
    destination: readonly string[],
    guard?: PathGuard | null,
  ): Promise<Entry>;
  /** Deletes a file, a symlink (not its target) or a folder with everything in it. */
  deleteEntry(server: string, segments: readonly string[], guard?: PathGuard | null): Promise<void>;
  /** Deletes several entries, every one checked first; answers the paths deleted. */
  deleteMany(
    server: string,
    paths: readonly (readonly string[])[],
    guard?: PathGuard | null,
  ): Promise<string[]>;
  /** Moves several entries into the existing folder `destination`, every one checked first. */
  moveMany(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    guard?: PathGuard | null,
  ): Promise<Entry[]>;
  /**
   * Packs `sources` (symlinks as symlinks, never followed; special files skipped) into a new
   * archive at `destination`; nothing is left on failure, and nothing there is replaced (409).
   */
  compress(
    server: string,
    sources: readonly (readonly string[])[],
    destination: readonly string[],
    format: 'zip' | 'tar.gz',
    quota?: number | null,
    guard?: PathGuard | null,
  ): Promise<Entry>;
  /** Unpacks the archive at `archive` into the folder `destination`, all or nothing. */
  decompress(
    server: string,
    archive: readonly string[],
    destination: readonly string[],
    limits: ArchiveLimits,
    quota?: number | null,
    guard?: PathGuard | null,
  ): Promise<Entry[]>;
  /**
   * Bytes held by the files and symlinks of the server's folder: the figure quotas are held
   * against (measured at most 10 s ago, moved by the panel's own writes since).
   */
  diskUsage(server: string): Promise<number>;
}

/** What backups read from and write into the servers' folders. */
export interface ServerBackupFiles extends Pick<ServerFiles, 'readText' | 'diskUsage'> {
  /**
   * Writes the whole server folder as a .tar.gz into `into`, as `compress` packs (symlinks as
   * symlinks, special and temporary files left out), leaving out what `options.ignore` ignores.
   * Resolves once `into` has taken the last byte; rejects (and destroys nothing of the folder)
   * when packing or `into` fails.
   */
  packServer(server: string, into: Writable, options: PackOptions): Promise<void>;
  /**
   * Replaces the server's whole folder by the content of an archive, all or nothing: on any
   * failure the folder is as it was. The caller makes sure the server does not run meanwhile.
   * `source`: the archive, a file of the panel's own machine (a backup in its store), read from
   * its start and left open for the caller to close; a host on another machine streams it there.
   * `quota`: the most the new content may hold (413 QUOTA_EXCEEDED).
   */
  replaceFromArchive(
    server: string,
    source: FileHandle,
    limits: ArchiveLimits,
    quota: number | null,
    progress: (written: number) => void,
  ): Promise<void>;
}

/**
 * What backups need of the host, reached through the servers service (which checks who asks):
 * the servers' folders, their status, holding a stopped server stopped, save commands and the
 * console.
 */
export interface BackupHost {
  readonly files: ServerBackupFiles;
  status(name: string): ServerStatus;
  hold(name: string, reason: string): Promise<() => void>;
  command(name: string, line: string, by: string): void;
  /** See ServerConsole.watch: a line of the server's own matching one of `patterns`. */
  watch(name: string, patterns: readonly string[], onMatch: () => void): () => void;
}

/** A server's folder taken away for deletion: put back, or removed for good. */
export interface DiscardedServer {
  /** Puts the folder back as it was (the deletion failed further on). */
  restore(): Promise<void>;
  /** Removes the folder's content in the background; failures are logged. */
  purge(): void;
}

/** Where the host reads the servers' configuration and records where their processes are. */
export interface ServerRecords {
  find(name: string): Promise<ServerRecord | undefined>;
  list(): Promise<ServerRecord[]>;
  allNames(): Promise<string[]>;
  recordStarted(
    name: string,
    process: { pid: number; identity: string; startedAt: Date },
  ): Promise<void>;
  recordStopped(name: string, desiredRunning: boolean): Promise<void>;
  /** How the server's last process ended (kept across the panel's restarts). */
  recordExit(name: string, exit: LastExit): Promise<void>;
  /** `reason` and `lastLines`: why an install failed, and the last lines it printed. */
  setInstall(
    name: string,
    install: {
      state: InstallState;
      exitCode?: number | null;
      finishedAt?: string | null;
      reason?: string | null;
      lastLines?: readonly string[];
    },
  ): Promise<void>;
  /** The registry digest of the image the server's container is made from (null: none known). */
  recordImageDigest(name: string, digest: string | null): Promise<void>;
}

/**
 * What the panel's settings say about pulling images (docs/templates.md, "Images"): which
 * registries images may come from, and the credentials an admin set for some.
 */
export interface RegistryPolicy {
  /** Why `image` may not be pulled (its registry is not on the allow-list), or null. */
  refusal(image: string): Promise<string | null>;
  /** The credentials for the registry of `image`, or null: it is pulled anonymously. */
  credentials(image: string): Promise<RegistryAuth | null>;
}

/** Where the host finds the template a server was made from. */
export interface TemplateSource {
  find(id: string): Promise<TemplateDefinition | undefined>;
}

/** One line of the start-up log about how servers run here. */
export interface HostReport {
  readonly level: 'info' | 'warn';
  readonly message: string;
}

export interface ServerHost {
  readonly files: ServerFiles;
  readonly backupFiles: ServerBackupFiles;

  /** Makes the server's folder (kept if it exists: a world copied in beforehand). */
  create(name: string): Promise<void>;
  /**
   * Stops the server if it runs, forgets it (its console listeners hear nothing more, its
   * container is removed) and takes its folder away in one step.
   */
  discard(name: string): Promise<DiscardedServer>;

  state(name: string): ServerState;
  /**
   * Rejects with an AppError (409, 503…) when the server cannot start as configured. An image
   * the engine lacks is pulled first: the answer comes once its registry has answered (409 with
   * its reason when it refuses), `starting` while the download goes on in the background.
   */
  start(name: string): Promise<ServerStatus>;
  /** The stop sequence: the stop command, SIGTERM, SIGKILL (docs/api.md, contract §4). */
  stop(name: string): Promise<ServerStatus>;
  /** Stops the server if it runs, then starts it. */
  restart(name: string): Promise<ServerStatus>;
  /** Ends every process of the server at once, without the stop command. */
  kill(name: string): Promise<ServerStatus>;
  /**
   * Keeps the stopped server from starting (409 BACKUP_IN_PROGRESS with `reason`) until the
   * answered function is called; 409 when it runs.
   */
  hold(name: string, reason: string): Promise<() => void>;
  /**
   * Runs the server's template install script (status `installing`); answers once it runs, or,
   * when its image is pulled first, as a start does. Its end sets the install state:
   * `installed` on exit code 0, else `failed`.
   */
  install(name: string): Promise<ServerStatus>;

  console(name: string): ServerConsole;
  /** Writes one line to the server's input, shown to every reader as typed by `by`. */
  command(name: string, line: string, by: string): void;

  /** CPU, memory and processes of the running server; zeros when it does not run. */
  usage(name: string): Promise<Usage>;

  /** What the start-up log says about how servers run here. */
  report(): readonly HostReport[];
  /**
   * Once the panel is ready: takes back the servers a previous run left running (status, pid,
   * console history, input, stats, limits), ends what cannot be taken back, starts what should
   * run.
   */
  recover(): Promise<void>;
  /**
   * Takes back the servers shown `unknown` whose engine answers again (docs/nodes.md, "When a
   * node fails"); done on its own every few seconds too. Never rejects.
   */
  reconnect(): Promise<void>;
  /** Removes what an earlier run left in the folders (temporary files, deleted servers). */
  removeLeftovers(): Promise<void>;
  /**
   * The panel is closing. Servers run on and the next panel takes them back (`recover`), unless
   * `stopServers`: then every server is stopped and starts again next time.
   */
  shutdown(options: { readonly stopServers: boolean }): Promise<void>;
  /** Releases what the host holds (cgroups); after shutdown. */
  close(): Promise<void>;
}

/** How the panel reaches the Docker engines of its nodes (docs/nodes.md). */
export interface NodeEngines {
  /**
   * Why `connection` cannot be used as given (an address that is not `tcp://` or `ssh://`, a PEM
   * that does not parse), naming the field of the request at fault; null when it can.
   */
  check(connection: NodeConnection): { readonly field: string; readonly message: string } | null;
  /** Asks the engine how it is, within `deadlineMs`; never rejects. */
  probe(connection: NodeConnection, deadlineMs: number): Promise<ProbeAnswer>;
  /** The same of this machine, the node `local`. */
  probeLocal(deadlineMs: number): Promise<ProbeAnswer>;
}
