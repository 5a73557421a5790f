/**
 * Reading at offsets, for the file channels of a remote files session (file-channel.ts): a
 * channel opened for reading only, on the file itself, and what both kinds of channel share.
 */
import type { FileHandle } from 'node:fs/promises';
import { AppError } from '../../../errors.js';
import { shown } from '../tree.js';
import { applyChanges, checkChanges, entryStatOf } from './attributes.js';
import { fsError } from './errors.js';
import type { AttributeChanges, EntryStat, FileChannel } from '../../host.js';

/**
 * The most one `read` answers: a client asking for more gets this much (fewer bytes are not the
 * end of the file; an empty answer is), so no request can make the panel hold a large buffer.
 */
export const MAX_READ_BYTES = 1024 * 1024;

/** For the cleanup of a channel ending, which never throws. */
export const ignore = (): undefined => undefined;

/** 400 unless `offset` is a place in a file: a whole number of bytes, 0 or more. */
export function checkOffset(offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new AppError('VALIDATION_FAILED', 'An offset is a whole number of bytes, 0 or more');
  }
}

/** Up to `length` bytes (at most MAX_READ_BYTES) at `offset`; empty at the end of the file. */
export async function readAt(
  handle: FileHandle,
  offset: number,
  length: number,
  segments: readonly string[],
): Promise<Buffer> {
  checkOffset(offset);
  if (!Number.isSafeInteger(length) || length < 0) {
    throw new AppError('VALIDATION_FAILED', 'A length is a whole number of bytes, 0 or more');
  }
  const buffer = Buffer.allocUnsafe(Math.min(length, MAX_READ_BYTES));
  try {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
    return buffer.subarray(0, bytesRead);
  } catch (error) {
    throw fsError(error, segments);
  }
}

/** A call on a channel that was closed or aborted. */
export const closed = (segments: readonly string[]): AppError =>
  new AppError('VALIDATION_FAILED', `${shown(segments)} was closed`);

/** A file opened for reading only: the file itself. */
export class ReadChannel implements FileChannel {
  readonly writable = false;
  readonly #handle: FileHandle;
  readonly #segments: readonly string[];
  #open = true;

  constructor(handle: FileHandle, segments: readonly string[]) {
    this.#handle = handle;
    this.#segments = segments;
  }

  #usable(): void {
    if (!this.#open) throw closed(this.#segments);
  }

  async read(offset: number, length: number): Promise<Buffer> {
    this.#usable();
    return readAt(this.#handle, offset, length, this.#segments);
  }

  write(): Promise<void> {
    return Promise.reject(
      new AppError('VALIDATION_FAILED', `${shown(this.#segments)} was opened for reading only`),
    );
  }

  async stat(): Promise<EntryStat> {
    this.#usable();
    return entryStatOf(await this.#handle.stat());
  }

  /** Mode and times of the file itself; its size only through a channel for writing. */
  async setAttributes(changes: AttributeChanges): Promise<void> {
    this.#usable();
    checkChanges(changes);
    if (changes.size !== undefined) {
      throw new AppError(
        'VALIDATION_FAILED',
        `${shown(this.#segments)} was opened for reading only: its size cannot be changed`,
      );
    }
    try {
      await applyChanges(this.#handle, changes);
    } catch (error) {
      throw fsError(error, this.#segments);
    }
  }

  async close(): Promise<null> {
    this.#usable();
    this.#open = false;
    await this.#handle.close();
    return null;
  }

  async abort(): Promise<void> {
    this.#open = false;
    await this.#handle.close().catch(ignore);
  }
}
