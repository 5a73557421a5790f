/**
 * The channel of a remote files session (file-channel.ts) that writes a file: on a private copy
 * in the file's own folder, put in the file's place in one rename at close (see file-channel.ts).
 *
 * Bookkeeping of a write (its position, the claim) is done when it is called, before anything is
 * awaited, so writes a client sends without waiting for the answers land where it meant them to.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, lstat, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { AppError } from '../../../errors.js';
import { at, shown } from '../tree.js';
import type { Reservation } from '../usage.js';
import {
  applyChanges,
  changesAnything,
  checkChanges,
  entryStatOf,
  NEW_FILE_MODE,
} from './attributes.js';
import { fsError } from './errors.js';
import type { ServerFolder } from './folder.js';
import { checkOffset, closed, ignore, readAt } from './read-channel.js';
import { entryOf, openRegular, statOf, type Place } from './resolve.js';
import type { AttributeChanges, ChannelFlags, Entry, EntryStat, FileChannel } from '../../host.js';

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, COPYFILE_FICLONE } = constants;

/** Writes all of `data` at `position` (a regular file takes it whole; a short write goes on). */
async function writeAt(handle: FileHandle, data: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < data.byteLength) {
    const { bytesWritten } = await handle.write(
      data,
      done,
      data.byteLength - done,
      position + done,
    );
    if (bytesWritten === 0) throw new Error('the file took no bytes');
    done += bytesWritten;
  }
}

/** What a WriteChannel is made of, once its copy is ready. */
interface WriteChannelParts {
  /** The real file's folder, a descriptor of the channel's own (held until it ends). */
  readonly dir: FileHandle;
  readonly name: string;
  readonly segments: readonly string[];
  readonly temp: string;
  /** The copy, open for reading and writing. */
  readonly handle: FileHandle;
  readonly reservation: Reservation;
  /** The file's size at open: growth past it is claimed from the quota. */
  readonly base: number;
  /** The copy's size now. */
  readonly size: number;
  readonly append: boolean;
  readonly exclusive: boolean;
}

/** A file opened for writing: a private copy, put in the file's place by `close`. */
export class WriteChannel implements FileChannel {
  readonly writable = true;
  readonly #parts: WriteChannelParts;
  #size: number;
  #state: 'open' | 'ending' | 'ended' = 'open';
  /** The first write that failed: the copy is incomplete, and `close` drops it. */
  #failure: Error | null = null;
  readonly #pending = new Set<Promise<unknown>>();

  private constructor(parts: WriteChannelParts) {
    this.#parts = parts;
    this.#size = parts.size;
  }

  /**
   * Makes the copy of the file `name` at `place` (its folder resolved, symlinks followed): new
   * and empty, or a copy of the file's content unless `flags.truncate`; it has the file's mode
   * (a new file's: NEW_FILE_MODE) and belongs to the folder's owner. Nothing is left on failure.
   */
  static async open(
    folder: ServerFolder,
    place: Place,
    name: string,
    flags: ChannelFlags,
    quota: number | null,
  ): Promise<WriteChannel> {
    const segments = place.segments;
    const reservation = await folder.reserve(quota);
    // A descriptor of the channel's own: the place's is closed once resolving is done.
    let dir: FileHandle;
    try {
      dir = await open(at(place.dir.fd), O_RDONLY | O_DIRECTORY);
    } catch (error) {
      reservation.release();
      throw fsError(error, segments);
    }
    const temp = `${folder.tempPrefix}${randomBytes(8).toString('hex')}`;
    let handle: FileHandle | null = null;
    try {
      handle = await open(at(dir.fd, temp), O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0o600);
      const owner = folder.owner();
      // The server's, so that the server can change what the panel wrote for it.
      if (owner) await handle.chown(owner.uid, owner.gid);
      let mode = NEW_FILE_MODE;
      let base = 0;
      let size = 0;
      if (place.stat) {
        // Opened anew, never through a symlink: what was resolved may have changed since.
        const source = await openRegular(dir, name, segments);
        try {
          const stat = await source.stat();
          mode = stat.mode & 0o7777;
          base = stat.size;
          if (!flags.truncate) {
            // Through the descriptors' own links: the very file checked, into the very copy.
            await copyFile(at(source.fd), at(handle.fd), COPYFILE_FICLONE);
            size = (await handle.stat()).size;
          }
        } finally {
          await source.close();
        }
      }
      await handle.chmod(mode); // after chown, which may clear bits; and past the umask
      return new WriteChannel({
        dir,
        name,
        segments,
        temp,
        handle,
        reservation,
        base,
        size,
        append: flags.append,
        exclusive: flags.exclusive,
      });
    } catch (error) {
      reservation.release();
      if (handle) {
        await handle.close().catch(ignore);
        await unlink(at(dir.fd, temp)).catch(ignore);
      }
      await dir.close().catch(ignore);
      throw fsError(error, segments);
    }
  }

  #usable(): void {
    if (this.#state !== 'open') throw closed(this.#parts.segments);
  }

  /** Runs `work` on the copy as one of the channel's operations, which `close` waits for. */
  #track<T>(work: Promise<T>): Promise<T> {
    this.#pending.add(work);
    void work
      .finally(() => {
        this.#pending.delete(work);
      })
      .catch(ignore);
    return work;
  }

  /** A write failed: the copy is not what the client meant, and is never put in place. */
  #failed(error: unknown): Error {
    const reported = fsError(error, this.#parts.segments);
    this.#failure ??= reported;
    return reported;
  }

  read(offset: number, length: number): Promise<Buffer> {
    if (this.#state !== 'open') return Promise.reject(closed(this.#parts.segments));
    return this.#track(readAt(this.#parts.handle, offset, length, this.#parts.segments));
  }

  write(offset: number, data: Uint8Array): Promise<void> {
    let position: number;
    if (this.#state !== 'open') return Promise.reject(closed(this.#parts.segments));
    try {
      checkOffset(offset);
      position = this.#parts.append ? this.#size : offset;
      const end = position + data.byteLength;
      if (!Number.isSafeInteger(end)) {
        throw new AppError('VALIDATION_FAILED', 'A write may not end past 2^53 bytes');
      }
      if (end > this.#size) {
        this.#parts.reservation.tryGrowTo(end - this.#parts.base);
        this.#size = end;
      }
    } catch (error) {
      return Promise.reject(this.#failed(error));
    }
    return this.#track(
      writeAt(this.#parts.handle, data, position).catch((error: unknown) => {
        throw this.#failed(error);
      }),
    );
  }

  async stat(): Promise<EntryStat> {
    this.#usable();
    return entryStatOf(await this.#track(this.#parts.handle.stat()));
  }

  /** Changes the copy: its size (growth claimed from the quota), mode and times. */
  async setAttributes(changes: AttributeChanges): Promise<void> {
    this.#usable();
    checkChanges(changes);
    if (!changesAnything(changes)) return;
    const { size } = changes;
    if (size !== undefined) {
      try {
        if (size > this.#size) this.#parts.reservation.tryGrowTo(size - this.#parts.base);
      } catch (error) {
        throw this.#failed(error);
      }
      this.#size = size;
    }
    await this.#track(
      applyChanges(this.#parts.handle, changes).catch((error: unknown) => {
        throw size === undefined ? fsError(error, this.#parts.segments) : this.#failed(error);
      }),
    );
  }

  /**
   * Waits for the writes under way, then puts the copy in the file's place in one rename and
   * answers the entry; after a failed write, drops the copy and rejects with that failure.
   */
  async close(): Promise<Entry> {
    this.#usable();
    this.#state = 'ending';
    const { dir, name, segments, temp, handle, reservation } = this.#parts;
    await Promise.allSettled(this.#pending);
    try {
      if (this.#failure !== null) throw this.#failure;
      // On the disk before its name is: a power cut never leaves a file with holes in place.
      await handle.sync();
      const { size } = await handle.stat();
      await handle.close();
      const replaced = await lstat(at(dir.fd, name)).catch(() => null);
      if (replaced?.isDirectory()) {
        throw new AppError('NOT_A_FILE', `${shown(segments)} is a folder now`);
      }
      if (this.#parts.exclusive) {
        // Never over a file that appeared since the open: link(2) fails with EEXIST.
        await link(at(dir.fd, temp), at(dir.fd, name));
        await unlink(at(dir.fd, temp));
      } else {
        await rename(at(dir.fd, temp), at(dir.fd, name));
      }
      reservation.commit(size - (replaced?.size ?? 0));
      // The rename itself is only durable once the folder is flushed.
      await dir.sync();
      return entryOf(segments, await statOf(dir, name, segments));
    } catch (error) {
      await this.#drop();
      throw fsError(error, segments);
    } finally {
      this.#state = 'ended';
      await dir.close().catch(ignore);
    }
  }

  async abort(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'ending';
    await Promise.allSettled(this.#pending);
    await this.#drop();
    this.#state = 'ended';
    await this.#parts.dir.close().catch(ignore);
  }

  /** Removes the copy and gives back what it claimed; never throws. */
  async #drop(): Promise<void> {
    const { dir, temp, handle, reservation } = this.#parts;
    await handle.close().catch(ignore);
    await unlink(at(dir.fd, temp)).catch(ignore);
    reservation.release();
  }
}
