/**
 * The file manager: who may touch which server's files (anyone with access to the server,
 * docs/api.md, contract §3), and the limits of uploads and the editor. Every path goes through
 * `userPath` and the storage module, the only code that touches a server's directory.
 *
 * The server's disk quota (`limits.diskBytes`, from its configuration as the servers service
 * answers it) is handed to every write that can grow its folder: uploads and saves. Storage
 * counts the bytes against it; creates (an empty file or folder), renames and moves add none,
 * and deletes only free, so they are never refused for it.
 *
 * The server's template may protect files (its `file_denylist`, docs/templates.md "File deny
 * list"): for everyone who may not configure the server's host (everyone but admins), every
 * operation here but listing hands the storage the compiled list, which refuses what it denies
 * with 403 FILE_DENIED. Download links are checked again, with the rights of then, when used.
 */
import type { Readable } from 'node:stream';
import { entryName, uploadName, userPath } from '../../domain/paths.js';
import { can } from '../../domain/policy.js';
import type { User } from '../../domain/user.js';
import { AppError } from '../../errors.js';
import type { ServerConfig } from '../../domain/server.js';
import type { Template } from '../../domain/template.js';
import type { ArchiveLimits, Entry, OpenedFile, PathGuard, ServerFiles } from '../../host/host.js';
import { compileDenylist, type DenyList } from '../../templates/denylist.js';
import type { ServersService } from '../servers/servers.service.js';
import type { DownloadLink, DownloadLinks } from './download-links.js';

/** Finds the account a download link was made for, as it is now. */
export interface AccountLookup {
  findById(id: number): Promise<User | undefined>;
}

/** Where the deny list of a server's template is found. */
export interface DenylistLookup {
  find(id: string): Promise<Pick<Template, 'fileDenylist'> | undefined>;
}

/** Compiled deny lists kept at most, by their text (a template's list never changes). */
const COMPILED_LISTS = 64;

/** One part of a multipart upload, as the HTTP layer hands it over. */
export interface UploadPart {
  readonly fieldname: string;
  readonly filename: string;
  readonly file: Readable;
}

/** What a FilesService is made from. */
export interface FilesServiceDeps {
  readonly servers: ServersService;
  readonly users: AccountLookup;
  /** The user an API key stands for now, narrowed by it; null once revoked or expired. */
  readonly keyUser: (keyId: number) => Promise<User | null>;
  readonly links: DownloadLinks;
  readonly templates: DenylistLookup;
  /** Opens a backup's archive for a link made by the backups module. */
  readonly backups?: { open(user: User, server: string, id: string): Promise<OpenedFile> };
  readonly maxUploadBytes: number | null;
  readonly maxEditBytes: number;
  readonly archive: ArchiveLimits;
}

export class FilesService {
  readonly #deps: FilesServiceDeps;

  constructor(deps: FilesServiceDeps) {
    this.#deps = deps;
  }

  /** Deny lists compiled lately, by their lines joined (oldest first). */
  readonly #compiled = new Map<string, DenyList>();

  /**
   * The files of `server` for `user`, if they hold `need` (else 403/404), with what they may
   * not touch there: the template's deny list, or null for someone who may configure the
   * server's host (an admin, with an API key not narrowed to permissions), or when there is none.
   * The SFTP server asks the same (src/modules/sftp/session-files.ts).
   */
  async access(
    user: User,
    server: string,
    need: 'server.files.read' | 'server.files.write',
  ): Promise<{ config: ServerConfig; files: ServerFiles; guard: PathGuard | null }> {
    const { server: config, files } = await this.#deps.servers.files(user, server, need);
    return { config, files, guard: await this.#guard(user, config) };
  }

  async #guard(user: User, config: ServerConfig): Promise<PathGuard | null> {
    if (config.template === null) return null;
    if (can(user, 'server.configure-host', { permissions: null, server: config.name })) {
      return null;
    }
    const lines = (await this.#deps.templates.find(config.template))?.fileDenylist ?? [];
    if (lines.length === 0) return null;
    const key = lines.join('\n');
    let list = this.#compiled.get(key);
    if (list === undefined) {
      list = compileDenylist(lines).list;
      if (this.#compiled.size >= COMPILED_LISTS) {
        const oldest = this.#compiled.keys().next();
        if (oldest.done !== true) this.#compiled.delete(oldest.value);
      }
    } else {
      this.#compiled.delete(key);
    }
    this.#compiled.set(key, list);
    return list;
  }

  async list(user: User, server: string, path: string): Promise<Entry[]> {
    const { files } = await this.#deps.servers.files(user, server, 'server.files.read');
    return files.list(server, userPath(path));
  }

  async create(
    user: User,
    server: string,
    request: { type: 'file' | 'folder'; name: string; path: string },
  ): Promise<Entry> {
    const { files, guard } = await this.access(user, server, 'server.files.write');
    return files.createEntry(
      server,
      userPath(request.path),
      entryName(request.name),
      request.type,
      guard,
    );
  }

  /**
   * Stores every part named `file` in the folder `path`, one after the other, each under its own
   * (sanitised) name. Parts must be consumed in order, so a refused part ends the request.
   */
  async upload(
    user: User,
    server: string,
    path: string,
    parts: AsyncIterable<UploadPart>,
  ): Promise<Entry[]> {
    const { config, files, guard } = await this.access(user, server, 'server.files.write');
    const folder = userPath(path);
    const stored: Entry[] = [];
    for await (const part of parts) {
      if (part.fieldname !== 'file') {
        part.file.resume();
        const field = part.fieldname ? `"${part.fieldname.slice(0, 64)}"` : 'without a name';
        throw new AppError('INVALID_UPLOAD', `Unexpected field ${field}; send files as "file"`);
      }
      const name = uploadName(part.filename);
      stored.push(
        await files.upload(
          server,
          folder,
          name,
          part.file,
          this.#deps.maxUploadBytes,
          config.limits.diskBytes,
          guard,
        ),
      );
    }
    if (stored.length === 0) throw new AppError('INVALID_UPLOAD', 'No file in the upload');
    return stored;
  }

  /** Opens a file for download; the caller reads it once or closes it. */
  async open(user: User, server: string, path: string): Promise<OpenedFile> {
    const { files, guard } = await this.access(user, server, 'server.files.read');
    return files.openFile(server, userPath(path), guard);
  }

  /**
   * A single-use link to download the file at `path` without a token (see DownloadLinks). The
   * file must exist and be a file now; it is opened again, with the rights of then, when used.
   */
  async createDownloadLink(
    user: User,
    server: string,
    path: string,
  ): Promise<{ id: string; expiresAt: Date }> {
    const file = await this.open(user, server, path);
    await file.close();
    return this.#deps.links.create({
      userId: user.id,
      ...(user.key === undefined ? {} : { keyId: user.key.id }),
      server,
      path: userPath(path).join('/'),
    });
  }

  /**
   * Uses up a download link and opens its file, checking the rights of the link's user as they
   * are now: deleted, banned or taken off the server since, and the link is refused. A link made
   * with an API key acts with that key, and is refused once the key is revoked or expired.
   */
  async openByLink(id: string): Promise<OpenedFile> {
    const link = this.#deps.links.take(id);
    if (link === 'unknown') {
      throw new AppError('NOT_FOUND', 'Download link not found or already used');
    }
    if (link === 'expired') {
      throw new AppError('LINK_EXPIRED', 'This download link has expired; download the file again');
    }
    if (link.keyId !== undefined) {
      const user = await this.#deps.keyUser(link.keyId);
      if (user?.id !== link.userId) {
        throw new AppError(
          'FORBIDDEN',
          'The API key that asked for this link is revoked or expired',
        );
      }
      return this.#openLinked(user, link);
    }
    const user = await this.#deps.users.findById(link.userId);
    if (!user) throw new AppError('FORBIDDEN', 'The account that asked for this link is gone');
    return this.#openLinked(user, link);
  }

  /** Opens what a link points at with the rights `user` holds now. */
  async #openLinked(user: User, link: DownloadLink): Promise<OpenedFile> {
    if (!can(user, 'account.use')) throw new AppError('BANNED', 'This account is banned');
    if (link.backup !== undefined) {
      if (!this.#deps.backups) throw new AppError('NOT_FOUND', 'Backups are not available');
      return this.#deps.backups.open(user, link.server, link.backup);
    }
    return this.open(user, link.server, link.path);
  }

  async readContent(
    user: User,
    server: string,
    path: string,
  ): Promise<{ path: string; content: string }> {
    const { files, guard } = await this.access(user, server, 'server.files.read');
    const segments = userPath(path);
    const content = await files.readText(server, segments, this.#deps.maxEditBytes, guard);
    return { path: segments.join('/'), content };
  }

  async writeContent(user: User, server: string, path: string, content: string): Promise<Entry> {
    const { config, files, guard } = await this.access(user, server, 'server.files.write');
    if (Buffer.byteLength(content) > this.#deps.maxEditBytes) {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `Content may be at most ${this.#deps.maxEditBytes} bytes`,
      );
    }
    return files.writeText(server, userPath(path), content, config.limits.diskBytes, guard);
  }

  async rename(user: User, server: string, oldPath: string, newName: string): Promise<Entry> {
    const { files, guard } = await this.access(user, server, 'server.files.write');
    return files.renameEntry(server, userPath(oldPath), entryName(newName), guard);
  }

  async move(user: User, server: string, source: string, destination: string): Promise<Entry> {
    const { files, guard } = await this.access(user, server, 'server.files.write');
    return files.move(server, userPath(source), userPath(destination), guard);
  }

  /** Moves several entries into one folder: all checked first (see ServerStorage.moveMany). */
  async moveMany(
    user: User,
    server: string,
    paths: readonly string[],
    destination: string,
  ): Promise<Entry[]> {
    const { files, guard } = await this.access(user, server, 'server.files.write');
    return files.moveMany(server, paths.map(userPath), userPath(destination), guard);
  }

  /** Deletes several entries: all checked first (see ServerStorage.deleteMany). */
  async deleteMany(user: User, server: string, paths: readonly string[]): Promise<string[]> {
    const { files, guard } = await this.access(user, server, 'server.files.write');
    const list = paths.map(userPath);
    if (list.some((segments) => segments.length === 0)) {
      throw new AppError('VALIDATION_FAILED', 'The server directory itself cannot be deleted');
    }
    return files.deleteMany(server, list, guard);
  }

  /** Packs files and folders into a new archive, held to the server's disk quota. */
  async compress(
    user: User,
    server: string,
    request: { paths: readonly string[]; destination: string; format: 'zip' | 'tar.gz' },
  ): Promise<Entry> {
    const { config, files, guard } = await this.access(user, server, 'server.files.write');
    return files.compress(
      server,
      request.paths.map(userPath),
      userPath(request.destination),
      request.format,
      config.limits.diskBytes,
      guard,
    );
  }

  /** Unpacks an archive into a folder, within the archive limits and the disk quota. */
  async decompress(
    user: User,
    server: string,
    path: string,
    destination: string,
  ): Promise<Entry[]> {
    const { config, files, guard } = await this.access(user, server, 'server.files.write');
    return files.decompress(
      server,
      userPath(path),
      userPath(destination),
      this.#deps.archive,
      config.limits.diskBytes,
      guard,
    );
  }

  async delete(user: User, server: string, path: string): Promise<string> {
    const { files, guard } = await this.access(user, server, 'server.files.write');
    const segments = userPath(path);
    if (segments.length === 0) {
      throw new AppError('VALIDATION_FAILED', 'The server directory itself cannot be deleted');
    }
    await files.deleteEntry(server, segments, guard);
    return segments.join('/');
  }
}
