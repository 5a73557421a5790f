/**
 * SessionFiles for one signed-in SFTP session: the server's files through the host port, with
 * the caller's rights as they are now (docs/sftp.md, "Rights").
 *
 * Rights are asked of the files service (the same `access` the file manager uses: permission,
 * deny list, quota) and kept for at most `RIGHTS_TTL_MS`; the SFTP server drops them at once
 * when the account's access changes (`access-changed`, `server-deleted`), so a permission taken
 * away applies to the next request, even on a file already open. A 1 GiB upload is 32,768 write
 * requests: asking the database for each would cost more than the writes.
 */
import type { NewAuditEntry } from '../../domain/audit.js';
import type { User } from '../../domain/user.js';
import { AppError } from '../../errors.js';
import type {
  AttributeChanges,
  ChannelFlags,
  Entry,
  EntryStat,
  FileChannel,
  NamedStat,
  PathGuard,
  ServerFiles,
} from '../../host/host.js';
import type { SessionFiles, SessionSpace } from './session-files.js';
import type { Grant } from './sftp-access.js';

/** How long rights are trusted without an event saying they changed. */
export const RIGHTS_TTL_MS = 5_000;

type Need = 'server.files.read' | 'server.files.write';

/** What a session may do with the server's files now. */
export interface FileRights {
  readonly user: User;
  readonly files: ServerFiles;
  readonly guard: PathGuard | null;
  /** The server's disk limit (null: none). */
  readonly quota: number | null;
}

/** What a GrantedFiles is made from. */
export interface GrantedFilesDeps {
  readonly grant: Grant;
  readonly address: string;
  /**
   * The rights of the session's account now for `need`; throws an AppError (403/404) when it
   * does not hold them, or when the session must end (the server ends it).
   */
  readonly rights: (need: Need) => Promise<FileRights>;
  readonly audit: (entry: NewAuditEntry) => Promise<void>;
  /** Free and total bytes of the disk the servers' folders are on. */
  readonly disk: () => Promise<{ readonly freeBytes: number; readonly totalBytes: number }>;
  readonly now: () => number;
}

interface Held {
  readonly at: number;
  readonly rights: Promise<FileRights>;
}

export class GrantedFiles implements SessionFiles {
  readonly #deps: GrantedFilesDeps;
  readonly #held = new Map<Need, Held>();

  constructor(deps: GrantedFilesDeps) {
    this.#deps = deps;
  }

  /** Forgets the rights held: the next request asks again. */
  invalidate(): void {
    this.#held.clear();
  }

  async stat(segments: readonly string[], follow: boolean): Promise<EntryStat> {
    const { files, guard } = await this.#rights('server.files.read');
    return files.stat(this.#server, segments, follow, guard);
  }

  async realPath(segments: readonly string[]): Promise<string[]> {
    const { files } = await this.#rights('server.files.read');
    return files.realPath(this.#server, segments);
  }

  async open(segments: readonly string[], flags: ChannelFlags): Promise<FileChannel> {
    if (!flags.write) {
      const { files, guard } = await this.#rights('server.files.read');
      return this.#watched(await files.openChannel(this.#server, segments, flags, null, guard));
    }
    return this.#change('file.upload', segments, {}, async ({ files, guard, quota }) =>
      this.#watched(await files.openChannel(this.#server, segments, flags, quota, guard), segments),
    );
  }

  async readFolder(
    segments: readonly string[],
    batch: number,
  ): Promise<AsyncIterableIterator<readonly NamedStat[]>> {
    const { files, guard } = await this.#rights('server.files.read');
    return files.readFolder(this.#server, segments, batch, guard);
  }

  makeFolder(segments: readonly string[]): Promise<void> {
    return this.#change('file.create', segments, { type: 'folder' }, ({ files, guard }) =>
      files.makeFolder(this.#server, segments, guard),
    );
  }

  removeFile(segments: readonly string[]): Promise<void> {
    return this.#change('file.delete', segments, {}, ({ files, guard }) =>
      files.removeFile(this.#server, segments, guard),
    );
  }

  removeFolder(segments: readonly string[]): Promise<void> {
    return this.#change('file.delete', segments, { type: 'folder' }, ({ files, guard }) =>
      files.removeFolder(this.#server, segments, guard),
    );
  }

  rename(from: readonly string[], to: readonly string[], replace: boolean): Promise<void> {
    return this.#change('file.rename', from, { to: pathOf(to), replace }, ({ files, guard }) =>
      files.renamePath(this.#server, from, to, replace, guard),
    );
  }

  async readLink(segments: readonly string[]): Promise<string[]> {
    const { files, guard } = await this.#rights('server.files.read');
    return files.readLink(this.#server, segments, guard);
  }

  makeLink(link: readonly string[], target: readonly string[]): Promise<void> {
    return this.#change('file.create', link, { type: 'symlink', to: pathOf(target) }, (held) =>
      held.files.makeLink(this.#server, link, target, held.guard),
    );
  }

  setAttributes(segments: readonly string[], changes: AttributeChanges): Promise<void> {
    return this.#change('file.attributes', segments, detailsOf(changes), (held) =>
      held.files.setAttributes(this.#server, segments, changes, held.quota, held.guard),
    );
  }

  async space(): Promise<SessionSpace> {
    const { files, quota } = await this.#rights('server.files.read');
    const [usedBytes, disk] = await Promise.all([files.diskUsage(this.#server), this.#deps.disk()]);
    return {
      limitBytes: quota,
      usedBytes,
      diskFreeBytes: disk.freeBytes,
      diskTotalBytes: disk.totalBytes,
    };
  }

  get #server(): string {
    return this.#deps.grant.server;
  }

  #rights(need: Need): Promise<FileRights> {
    const now = this.#deps.now();
    const held = this.#held.get(need);
    if (held && now - held.at < RIGHTS_TTL_MS) return held.rights;
    const rights = this.#deps.rights(need);
    this.#held.set(need, { at: now, rights });
    // A refusal is not kept: the next request asks again.
    rights.catch(() => {
      if (this.#held.get(need)?.rights === rights) this.#held.delete(need);
    });
    return rights;
  }

  /** A change: needs `files.write` now, and is audited whichever way it ends. */
  async #change<T>(
    action: string,
    segments: readonly string[],
    details: Record<string, unknown>,
    run: (rights: FileRights) => Promise<T>,
  ): Promise<T> {
    let rights: FileRights | undefined;
    try {
      rights = await this.#rights('server.files.write');
      const result = await run(rights);
      // A written file is audited when its channel is closed, with what was written.
      if (action !== 'file.upload') await this.#audit(action, segments, 'ok', details, rights);
      return result;
    } catch (error) {
      const code = error instanceof AppError ? error.code : 'INTERNAL';
      await this.#audit(action, segments, 'failed', { ...details, code }, rights);
      throw error;
    }
  }

  /**
   * The channel with every read and write checking the rights of now; a writing channel whose
   * account lost `files.write` is aborted at close (nothing kept), and its close is audited.
   */
  #watched(channel: FileChannel, written?: readonly string[]): FileChannel {
    const need: Need = channel.writable ? 'server.files.write' : 'server.files.read';
    return {
      writable: channel.writable,
      read: async (offset, length) => {
        await this.#rights(need);
        return channel.read(offset, length);
      },
      write: async (offset, data) => {
        await this.#rights('server.files.write');
        return channel.write(offset, data);
      },
      stat: async () => {
        await this.#rights(need);
        return channel.stat();
      },
      setAttributes: async (changes) => {
        await this.#rights('server.files.write');
        return channel.setAttributes(changes);
      },
      close: async (): Promise<Entry | null> => {
        if (written === undefined) return channel.close();
        let rights: FileRights | undefined;
        try {
          rights = await this.#rights('server.files.write');
        } catch (error) {
          await channel.abort();
          await this.#audit('file.upload', written, 'failed', { code: codeOf(error) });
          throw error;
        }
        try {
          const entry = await channel.close();
          await this.#audit('file.upload', written, 'ok', { bytes: entry?.size ?? 0 }, rights);
          return entry;
        } catch (error) {
          await this.#audit('file.upload', written, 'failed', { code: codeOf(error) }, rights);
          throw error;
        }
      },
      abort: async () => {
        await channel.abort();
        if (written !== undefined) {
          await this.#audit('file.upload', written, 'failed', { reason: 'not closed' });
        }
      },
    };
  }

  async #audit(
    action: string,
    segments: readonly string[],
    outcome: 'ok' | 'failed',
    details: Record<string, unknown>,
    rights?: FileRights,
  ): Promise<void> {
    const { grant, address } = this.#deps;
    const user = rights?.user ?? grant.user;
    await this.#deps.audit({
      actorId: user.id,
      actor: user.username,
      via: 'sftp',
      viaName: grant.credentialName,
      address,
      action,
      server: grant.server,
      target: pathOf(segments),
      outcome,
      status: null,
      details,
    });
  }
}

const pathOf = (segments: readonly string[]): string => `/${segments.join('/')}`;

const codeOf = (error: unknown): string => (error instanceof AppError ? error.code : 'INTERNAL');

const detailsOf = (changes: AttributeChanges): Record<string, unknown> => ({
  ...(changes.mode === undefined ? {} : { mode: `0${changes.mode.toString(8)}` }),
  ...(changes.size === undefined ? {} : { size: changes.size }),
  ...(changes.modified === undefined ? {} : { modified: changes.modified.toISOString() }),
});
