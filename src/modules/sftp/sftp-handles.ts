/**
 * The files and folders one SFTP session holds open, by handle: 16 random bytes the client
 * cannot guess or forge (another session's handle means nothing here), at most `max` at once
 * ("too many open files" beyond). An unknown handle is refused with FAILURE "invalid handle".
 * What the client leaves open when the session ends is dropped: a file being written is left
 * as it was (its channel aborted), a file being read or a folder being listed is closed.
 */
import { randomBytes } from 'node:crypto';
import type { FileChannel, NamedStat } from '../../host/host.js';
import type { HandleOrder } from './sftp-order.js';
import { badHandle, Refusal, STATUS } from './sftp-replies.js';

export interface FileHandle {
  readonly kind: 'file';
  /** The order of the requests on this handle. */
  readonly order: HandleOrder;
  readonly segments: readonly string[];
  readonly channel: FileChannel;
}

export interface FolderHandle {
  readonly kind: 'folder';
  readonly order: HandleOrder;
  readonly segments: readonly string[];
  readonly entries: AsyncIterator<readonly NamedStat[]>;
  /** The first batch, read at OPENDIR so that a missing folder fails there; then undefined. */
  first: IteratorResult<readonly NamedStat[]> | undefined;
}

export type Handle = FileHandle | FolderHandle;

export const closing = (): Refusal => new Refusal(STATUS.FAILURE, 'the session is closing');

/** Lets go of a handle the client did not close: a file being written is left as it was. */
export async function dropHandle(handle: Handle): Promise<void> {
  if (handle.kind === 'folder') {
    await handle.entries.return?.().catch(() => undefined);
    return;
  }
  if (handle.channel.writable) {
    await handle.channel.abort();
    return;
  }
  await handle.channel.close().catch(() => handle.channel.abort());
}

export class HandleTable {
  readonly #max: number;
  readonly #handles = new Map<string, Handle>();
  /** Handles being opened: counted against the limit before they exist. */
  #opening = 0;
  #closed = false;

  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Opens what `open` opens as a new handle, counted against the limit from the start; answers
   * the handle's bytes. Opened after the table closed, it is dropped at once.
   */
  async add(open: () => Promise<Handle>): Promise<Buffer> {
    if (this.#closed) throw closing();
    if (this.#handles.size + this.#opening >= this.#max) {
      throw new Refusal(STATUS.FAILURE, 'too many open files');
    }
    this.#opening++;
    try {
      const handle = await open();
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may have run during the await
      if (this.#closed) {
        await dropHandle(handle);
        throw closing();
      }
      let key = randomBytes(16);
      while (this.#handles.has(key.toString('hex'))) key = randomBytes(16);
      this.#handles.set(key.toString('hex'), handle);
      return key;
    } finally {
      this.#opening--;
    }
  }

  /** The handle, or undefined. */
  find(key: Buffer): Handle | undefined {
    return this.#handles.get(key.toString('hex'));
  }

  get(key: Buffer): Handle {
    const handle = this.find(key);
    if (handle === undefined) throw badHandle();
    return handle;
  }

  file(key: Buffer): FileHandle {
    const handle = this.get(key);
    if (handle.kind !== 'file') throw new Refusal(STATUS.FAILURE, 'not a file handle');
    return handle;
  }

  folder(key: Buffer): FolderHandle {
    const handle = this.get(key);
    if (handle.kind !== 'folder') throw new Refusal(STATUS.FAILURE, 'not a folder handle');
    return handle;
  }

  /** Takes the handle out (CLOSE): requests after it on it find it gone. */
  remove(key: Buffer): Handle {
    const handle = this.get(key);
    this.#handles.delete(key.toString('hex'));
    return handle;
  }

  /** No handle is opened from now on; answers those still open, for the caller to drop. */
  close(): Handle[] {
    this.#closed = true;
    const open = [...this.#handles.values()];
    this.#handles.clear();
    return open;
  }
}
