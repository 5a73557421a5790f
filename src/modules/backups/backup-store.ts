/**
 * Where backups' archives are kept. The panel writes, reads and removes them only through this
 * interface, so that another store (an S3-compatible bucket, docs/backups.md) can take the
 * local folder's place without the backups service changing.
 *
 * The local store keeps `<dir>/<server>/<id>.tar.gz`, folders 0700 and files 0600, owned by the
 * panel: a game server never sees its own backups, let alone another's. A backup is written to a
 * temporary file beside its place and renamed there once complete and flushed: a backup file is
 * either whole or absent.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { OpenedFile } from '../../host/host.js';
import { openedFile } from '../../range-stream.js';

/**
 * A backup's archive opened on the panel's machine: a download streams it (`read`, as any
 * OpenedFile); a restore checks its checksum and hands `handle` to the host, which reads it from
 * its start. Whoever opened it reads it once or closes it (`close` closes `handle` too).
 */
export interface StoredFile extends OpenedFile {
  readonly handle: FileHandle;
}

/** A backup being written: `stream` takes its bytes; then `commit` or `discard`. */
export interface BackupUpload {
  readonly stream: Writable;
  /** Once `stream` has finished: makes the backup visible, whole. */
  commit(): Promise<void>;
  /** Removes whatever was written; never rejects. */
  discard(): Promise<void>;
}

export interface BackupStore {
  /** Where it keeps backups, for the start-up log. */
  readonly description: string;
  create(server: string, id: string): Promise<BackupUpload>;
  /**
   * The backup's archive, opened for reading (download with ranges, checksum, restore); 404
   * when it is not there. A remote store would fetch it to a local temporary file here.
   */
  open(server: string, id: string): Promise<StoredFile | undefined>;
  /** Removes the backup; one already gone is fine. */
  remove(server: string, id: string): Promise<void>;
  /** Removes every backup of a deleted server. */
  removeServer(server: string): Promise<void>;
  /** Removes the temporary files of writes an earlier run of the panel cut short. */
  removeLeftovers(): Promise<number>;
}

const TEMP_PREFIX = '.partial~';
const SUFFIX = '.tar.gz';
/** Ids are UUIDs and server names are checked by the servers module; this keeps both flat. */
const SAFE = /^[A-Za-z0-9_.-]+$/;

export class LocalBackupStore implements BackupStore {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  get description(): string {
    return `backups are kept in ${this.#dir}`;
  }

  #folder(server: string): string {
    if (!SAFE.test(server) || server === '.' || server === '..') {
      throw new Error(`Not a server name: ${JSON.stringify(server)}`);
    }
    return path.join(this.#dir, server);
  }

  #file(server: string, id: string): string {
    if (!SAFE.test(id)) throw new Error(`Not a backup id: ${JSON.stringify(id)}`);
    return path.join(this.#folder(server), `${id}${SUFFIX}`);
  }

  async create(server: string, id: string): Promise<BackupUpload> {
    const folder = this.#folder(server);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const final = this.#file(server, id);
    const temp = path.join(folder, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${id}`);
    const stream = createWriteStream(temp, { flags: 'wx', mode: 0o600 });
    return {
      stream,
      async commit() {
        const handle = await open(temp, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, final);
        const folderHandle = await open(folder, 'r');
        await folderHandle.sync().catch(() => undefined);
        await folderHandle.close();
      },
      async discard() {
        stream.destroy();
        await unlink(temp).catch(() => undefined);
      },
    };
  }

  async open(server: string, id: string): Promise<StoredFile | undefined> {
    const file = this.#file(server, id);
    try {
      const handle = await open(file, 'r');
      const info = await handle.stat().catch(async (error: unknown) => {
        await handle.close();
        throw error;
      });
      const name = `${server}-${id}${SUFFIX}`;
      return {
        handle,
        ...openedFile(handle, { name, size: info.size, modified: info.mtime }),
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async remove(server: string, id: string): Promise<void> {
    await rm(this.#file(server, id), { force: true });
  }

  async removeServer(server: string): Promise<void> {
    await rm(this.#folder(server), { recursive: true, force: true });
  }

  async removeLeftovers(): Promise<number> {
    let removed = 0;
    let servers: string[];
    try {
      servers = await readdir(this.#dir);
    } catch {
      return 0;
    }
    for (const server of servers) {
      const folder = path.join(this.#dir, server);
      if (!(await stat(folder).catch(() => null))?.isDirectory()) continue;
      for (const name of await readdir(folder)) {
        if (!name.startsWith(TEMP_PREFIX)) continue;
        await unlink(path.join(folder, name)).then(
          () => (removed += 1),
          () => undefined,
        );
      }
    }
    return removed;
  }
}
