/**
 * Trash and leftovers: what the panel removes in the background. A deleted server's directory is
 * renamed into the trash (`TRASH_NAME`, beside the servers' folders) in one step, so a server
 * made again under its name starts empty, and its content is removed later (`Trash.empty`). The
 * temporary files and folders an earlier run of the panel left (uploads, saves, archives and
 * extractions a killed panel cut short) are removed once the panel serves. None of it ever
 * rejects: what cannot be removed is logged and tried again at the next start.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { at, errnoOf, walkBelow } from '../tree.js';
import { TEMP_PREFIX } from './atomic.js';
import type { ServerFolder } from './folder.js';
import { renameFolder } from './moves.js';
import type { StorageLog } from './types.js';
import { removeEntry, REMOVER, walkTree } from './walk.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/**
 * The folder, beside the servers' own, where the directory of a server being deleted is renamed
 * in one step before its content is removed in the background. `~` may not appear in a server's
 * name, so no server can ever be called this, and no path a user gives leads into it.
 */
export const TRASH_NAME = '.trash~';

/** The trash of deleted servers in `serversDir`; one per ServerStorage. */
export class Trash {
  readonly #serversDir: string;
  readonly #log: StorageLog;
  /** The trash being emptied, and whether to go round once more (something was added). */
  #emptying: Promise<void> | null = null;
  #again = false;

  constructor(serversDir: string, log: StorageLog) {
    this.#serversDir = serversDir;
    this.#log = log;
  }

  /**
   * Takes the server's directory away in one step, the first part of deleting the server: it is
   * renamed into the trash, so a server made again under that name starts from an empty folder
   * however long removing the old content takes. Answers its name in the trash, for `restore`;
   * null when there is nothing to put back: there was no directory, or it could not be renamed
   * (a mount point) and its content was removed where it is, through descriptors like the trash.
   */
  async discard(folder: ServerFolder): Promise<string | null> {
    const dir = folder.directory();
    folder.forget();
    const trash = path.join(this.#serversDir, TRASH_NAME);
    await mkdir(trash, { recursive: true, mode: 0o700 });
    const discarded = `${folder.server}-${randomBytes(8).toString('hex')}`;
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
   * Puts back a directory `discard` took away, when deleting the server failed after all.
   * Never replaces a directory made meanwhile; then, or on any failure, it stays in the trash
   * (logged) and the error is not thrown: the caller is already reporting its own.
   */
  async restore(folder: ServerFolder, discarded: string): Promise<void> {
    try {
      await renameFolder(path.join(this.#serversDir, TRASH_NAME, discarded), folder.directory());
    } catch (error) {
      this.#log.warn(
        { err: error, server: folder.server },
        'could not put back the directory of a server that was not deleted',
      );
    }
  }

  /**
   * Removes everything in the trash: the directories of deleted servers, at any depth and holding
   * a few descriptors at most (see `walkBelow`). Never rejects: what cannot be removed is logged
   * and tried again at the next call. A call while it runs makes it go round once more, and all
   * callers share one promise.
   */
  empty(): Promise<void> {
    this.#again = true;
    this.#emptying ??= (async () => {
      try {
        while (this.#again) {
          this.#again = false;
          await this.#emptyOnce();
        }
      } catch (error) {
        this.#log.warn({ err: error }, 'could not empty the trash of deleted servers');
      } finally {
        this.#emptying = null;
      }
    })();
    return this.#emptying;
  }

  async #emptyOnce(): Promise<void> {
    let trash: FileHandle;
    try {
      trash = await open(
        path.join(this.#serversDir, TRASH_NAME),
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
}

/**
 * Removes the temporary files an earlier run left anywhere in the server's directory (uploads,
 * saves and archives a killed panel cut short) and its temporary folders (extractions); answers
 * how many. This run's own (`folder.tempPrefix`) are never touched, so it may run while uploads
 * and saves are under way.
 */
export async function cleanTemporaryFiles(folder: ServerFolder): Promise<number> {
  let removed = 0;
  await walkTree(folder.directory(), async (dir, name, stat) => {
    if (!name.startsWith(TEMP_PREFIX)) return true;
    if (name.startsWith(folder.tempPrefix)) return false;
    if (stat.isFile()) {
      const gone = await unlink(at(dir.fd, name)).then(
        () => true,
        () => false,
      );
      if (gone) {
        removed += 1;
        folder.apply(-stat.size);
      }
    } else if (stat.isDirectory()) {
      // An extraction cut short: its folder and what it had unpacked.
      const freed = { bytes: 0 };
      const gone = await removeEntry(dir, name, [], freed).then(
        () => true,
        () => false,
      );
      folder.apply(-freed.bytes);
      if (gone) removed += 1;
    }
    return false;
  });
  return removed;
}

/**
 * Removes what an earlier run of the panel left behind: its temporary files in the folders of
 * the servers `servers` answers (`clean`, one server after the other) and the trash of deleted
 * servers (`emptyTrash`). Never rejects, and a failure (logged) never stops the rest.
 */
export async function removeLeftovers(
  servers: () => Promise<readonly string[]>,
  emptyTrash: () => Promise<void>,
  clean: (server: string) => Promise<number>,
  log: StorageLog,
): Promise<void> {
  const trash = emptyTrash();
  let names: readonly string[] = [];
  try {
    names = await servers();
  } catch (error) {
    log.warn({ err: error }, 'could not list the servers to remove leftover temporary files');
  }
  let removed = 0;
  for (const server of names) {
    try {
      const count = await clean(server);
      if (count > 0) log.warn({ server, removed: count }, 'removed leftover temporary files');
      removed += count;
    } catch (error) {
      log.warn({ err: error, server }, 'could not remove leftover temporary files');
    }
  }
  await trash;
  log.info({ servers: names.length, removed }, 'removed the leftovers of an earlier run');
}
