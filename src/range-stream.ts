/**
 * A download's body: bytes `start` to `end` (inclusive) of an open file, read in large chunks
 * into two buffers that are used in turn, for as long as the download lasts.
 *
 * Why not `handle.createReadStream`: Node's file streams allocate a new buffer for every read;
 * V8 counts those as external memory and answers every few tens of megabytes of it with a full
 * garbage collection. A 1 GiB download cost the panel about 30 of them, one to two seconds of
 * CPU on its heap (a bare server's is much smaller), most of its distance to a bare server.
 *
 * A buffer may only be read into again once its previous content has left for the socket, which
 * a Readable cannot know; whoever writes into the destination can (the write callback). So when
 * piped (Fastify sends a stream body with `pipe`), this stream writes into the destination
 * itself, two writes under way at most. Read any other way, it reads into a new buffer each time,
 * as Node's own streams do. The handle is closed when the stream ends, fails or is destroyed.
 *
 * Shared by whoever streams a file it opened: the storage of the servers' folders (an OpenedFile,
 * src/host/host.ts) and the backups' store.
 */
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { OpenedFile } from './host/host.js';

/** Bytes per read: a gigabyte in 256 reads and writes. */
export const READ_CHUNK_BYTES = 4 * 1024 * 1024;
/** Buffers read into in turn: while one is read into, the others wait to be sent. */
const BUFFERS = 2;

export class RangeStream extends Readable {
  readonly #handle: FileHandle;
  #position: number;
  readonly #end: number;
  /** Settles when the stream is destroyed: a write callback that never comes cannot hold it. */
  readonly #destroyed: Promise<void>;
  #onDestroyed: () => void = () => undefined;

  constructor(handle: FileHandle, start: number, end: number) {
    super({ highWaterMark: READ_CHUNK_BYTES });
    this.#handle = handle;
    this.#position = start;
    this.#end = end;
    this.#destroyed = new Promise((resolve) => {
      this.#onDestroyed = resolve;
    });
  }

  /** Bytes still to read. */
  get #left(): number {
    return Math.max(0, this.#end - this.#position + 1);
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    void this.#writeInto(destination, options?.end !== false);
    return destination;
  }

  async #writeInto(destination: NodeJS.WritableStream, end: boolean): Promise<void> {
    const size = Math.min(READ_CHUNK_BYTES, this.#left);
    const slots = Array.from({ length: BUFFERS }, () => ({
      buffer: Buffer.allocUnsafeSlow(size),
      // The write of its content, as its outcome: never a rejection, as nobody may be waiting
      // for it yet.
      sent: Promise.resolve<Error | null>(null),
    }));
    /** Waits until the destination is done with a buffer; false once this stream is over. */
    const done = async (sent: Promise<Error | null>): Promise<boolean> => {
      const failed = await Promise.race([sent, this.#destroyed.then(() => null)]);
      // The destination failed (a client that went away): it reports that itself.
      if (failed) this.destroy();
      return !this.destroyed;
    };
    try {
      while (this.#left > 0) {
        for (const slot of slots) {
          if (this.#left === 0 || !(await done(slot.sent))) break;
          const length = Math.min(size, this.#left);
          const { bytesRead } = await this.#handle.read(slot.buffer, 0, length, this.#position);
          if (this.destroyed) return;
          // Nothing read: the file got shorter meanwhile, and what it holds has been sent.
          this.#position = bytesRead === 0 ? this.#end + 1 : this.#position + bytesRead;
          const chunk = slot.buffer.subarray(0, bytesRead);
          if (chunk.length === 0) break;
          slot.sent = new Promise((resolve) => {
            destination.write(chunk, (error?: Error | null) => {
              resolve(error ?? null);
            });
          });
        }
        if (this.destroyed) return;
      }
      for (const slot of slots) if (!(await done(slot.sent))) return;
      if (end) destination.end();
      // Ends this stream too, for those who watch it (Fastify does): 'end', then closed.
      this.push(null);
      this.resume();
    } catch (error) {
      this.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }

  override _read(): void {
    const length = Math.min(READ_CHUNK_BYTES, this.#left);
    if (length === 0) {
      this.push(null);
      return;
    }
    const buffer = Buffer.allocUnsafeSlow(length);
    this.#handle.read(buffer, 0, length, this.#position).then(
      ({ bytesRead }) => {
        this.#position += bytesRead;
        this.push(bytesRead === 0 ? null : buffer.subarray(0, bytesRead));
      },
      (error: unknown) => {
        this.destroy(error instanceof Error ? error : new Error(String(error)));
      },
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#onDestroyed();
    this.#handle.close().then(
      () => {
        callback(error);
      },
      (closeError: unknown) => {
        callback(error ?? (closeError instanceof Error ? closeError : null));
      },
    );
  }
}

/**
 * A file opened on this machine as an OpenedFile (src/host/host.ts): `read` streams it through a
 * RangeStream, which closes the handle when it is done; `close` closes it unread.
 */
export function openedFile(
  handle: FileHandle,
  file: Pick<OpenedFile, 'name' | 'size' | 'modified'>,
): OpenedFile {
  return {
    name: file.name,
    size: file.size,
    modified: file.modified,
    read: (range) => new RangeStream(handle, range?.start ?? 0, range?.end ?? file.size - 1),
    close: () => handle.close().catch(() => undefined),
  };
}
