/**
 * How many bytes each server's folder holds, kept without walking the folder on every request,
 * and the disk quota held against the panel's own writes.
 *
 * Per server, one figure: measured by one walk when first needed (concurrent callers share it),
 * then moved by every write and delete the panel makes (`apply`), and measured again in the
 * background once it is older than `ttlMs` (the server's own process writes too, unseen). A walk
 * is taken as the state at its start: what the panel changes while it runs is added to its
 * result. Bytes that writes under way have claimed (`Reservation`) are held apart until the
 * write ends, so two writes can never both fit in the same room.
 *
 * This module only keeps the books; `measure` (storage/walk.ts) is what reads the disk.
 */
import { AppError } from '../../errors.js';

interface Books {
  /** On disk at the last measure, plus the panel's changes since; null until first measured. */
  bytes: number | null;
  /** When `bytes` was last measured. */
  measuredAt: number;
  /** Claimed by writes under way, not yet in `bytes`. */
  reserved: number;
  /** The walk under way, if any, and the panel's changes since it began. */
  walk: Promise<number> | null;
  drift: number;
}

/** What a DiskUsage is made from. */
export interface DiskUsageDeps {
  /** Walks the server's folder and answers the bytes it holds. */
  readonly measure: (server: string) => Promise<number>;
  readonly now: () => number;
  /** How old a figure may be before it is measured again. */
  readonly ttlMs: number;
  /** Where a background walk that failed is reported. */
  readonly warn: (details: object, message: string) => void;
}

export class DiskUsage {
  readonly #books = new Map<string, Books>();
  readonly #deps: DiskUsageDeps;

  constructor(deps: DiskUsageDeps) {
    this.#deps = deps;
  }

  #of(server: string): Books {
    let books = this.#books.get(server);
    if (!books) {
      books = { bytes: null, measuredAt: 0, reserved: 0, walk: null, drift: 0 };
      this.#books.set(server, books);
    }
    return books;
  }

  /** Starts a walk unless one is under way; its result replaces the figure when it ends. */
  #measure(server: string, books: Books): Promise<number> {
    if (books.walk) return books.walk;
    books.drift = 0;
    const walk: Promise<number> = this.#deps.measure(server).then((walked) => {
      // Recorded only while these are still the server's books (not after `forget`).
      if (this.#books.get(server) === books && books.walk === walk) {
        books.bytes = Math.max(0, walked + books.drift);
        books.measuredAt = this.#deps.now();
      }
      return books.bytes ?? walked;
    });
    books.walk = walk;
    void walk
      .finally(() => {
        if (books.walk === walk) books.walk = null;
      })
      .catch(() => undefined);
    return walk;
  }

  #stale(books: Books): boolean {
    return this.#deps.now() - books.measuredAt >= this.#deps.ttlMs;
  }

  /**
   * Bytes in the server's folder, measured at most `ttlMs` ago and moved by the panel's writes
   * since: waits for a walk when the figure is older (what /stats and the supervisor's checks
   * read).
   */
  async current(server: string): Promise<number> {
    const books = this.#of(server);
    if (books.bytes !== null && !this.#stale(books)) return books.bytes;
    await this.#measure(server, books);
    return books.bytes ?? 0;
  }

  /**
   * The figure a write is checked against: waits for the first walk only; an older figure is
   * used as it is and measured again in the background.
   */
  async #ready(server: string): Promise<Books> {
    const books = this.#of(server);
    if (books.bytes === null) await this.#measure(server, books);
    else if (this.#stale(books)) {
      this.#measure(server, books).catch((error: unknown) => {
        this.#deps.warn({ err: error, server }, "could not measure a server's disk use");
      });
    }
    return books;
  }

  /**
   * A write about to grow the server's folder, held to `limit` bytes (null: none, and no walk
   * is waited for). Take it before writing; then `commit` or `release` it, once.
   */
  async reserve(server: string, limit: number | null): Promise<Reservation> {
    const books = limit === null ? this.#of(server) : await this.#ready(server);
    return new Reservation(this, books, limit);
  }

  /** The panel changed the folder by `delta` bytes (negative: freed). */
  apply(server: string, delta: number): void {
    const books = this.#books.get(server);
    if (books) this.#move(books, delta);
  }

  #move(books: Books, delta: number): void {
    if (books.bytes !== null) books.bytes = Math.max(0, books.bytes + delta);
    if (books.walk) books.drift += delta;
  }

  /** The server's folder is gone: its figure, and a walk under way, are dropped. */
  forget(server: string): void {
    this.#books.delete(server);
  }

  /** For `Reservation`: claims `bytes` more, or throws 413 QUOTA_EXCEEDED. */
  claim(books: Books, limit: number | null, bytes: number, total: string): void {
    if (limit !== null && bytes > 0) {
      const used = (books.bytes ?? 0) + books.reserved;
      if (used + bytes > limit) {
        throw new AppError(
          'QUOTA_EXCEEDED',
          `Over the server's disk quota: it uses ${size(used)} of its ${size(limit)}, and this write needs ${total} more; nothing was written`,
        );
      }
    }
    books.reserved += bytes;
  }

  /** For `Reservation`: gives back `held` bytes and books the write's real `growth`. */
  settle(books: Books, held: number, growth: number | null): void {
    books.reserved = Math.max(0, books.reserved - held);
    if (growth !== null) this.#move(books, growth);
  }
}

/**
 * Bytes one write claims as it goes, against the server's quota. Synchronous, so two writes
 * checked in turn always see each other's claims.
 */
export class Reservation {
  #held = 0;
  #open = true;
  readonly #usage: DiskUsage;
  readonly #books: Books;
  readonly #limit: number | null;

  constructor(usage: DiskUsage, books: Books, limit: number | null) {
    this.#usage = usage;
    this.#books = books;
    this.#limit = limit;
  }

  /**
   * The write will grow the folder by `growth` bytes in all (new size − old size; what is
   * already claimed counts): claims the rest, or throws 413 QUOTA_EXCEEDED and gives back all
   * it held (the write must then fail).
   * `soFar`: the write is a stream whose end is not known yet, so it needs at least that.
   */
  growTo(growth: number, soFar = false): void {
    if (!this.#open) throw new Error('reservation already settled');
    const more = growth - this.#held;
    if (more <= 0) return;
    try {
      this.#usage.claim(
        this.#books,
        this.#limit,
        more,
        `${soFar ? 'at least ' : ''}${size(growth)}`,
      );
    } catch (error) {
      // The write is doomed: what it holds is given back now, not once its temporary file is
      // gone, so that a write racing it for the same room is not refused too.
      this.release();
      throw error;
    }
    this.#held += more;
  }

  /**
   * As `growTo`, for a write made of parts that goes on after one is refused (a file channel:
   * its client may write less, or give up): a refusal throws 413 QUOTA_EXCEEDED and keeps what
   * was held before, so that the parts already written stay counted.
   */
  tryGrowTo(growth: number): void {
    if (!this.#open) throw new Error('reservation already settled');
    const more = growth - this.#held;
    if (more <= 0) return;
    this.#usage.claim(this.#books, this.#limit, more, size(growth));
    this.#held += more;
  }

  /** The write is on disk and grew the folder by `growth` bytes (negative: shrank it). */
  commit(growth: number): void {
    if (!this.#open) return;
    this.#open = false;
    this.#usage.settle(this.#books, this.#held, growth);
  }

  /** The write failed and left nothing: its claim is given back. */
  release(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#usage.settle(this.#books, this.#held, null);
  }
}

const MIB = 1024 * 1024;
const size = (bytes: number): string =>
  bytes < MIB ? `${bytes} bytes` : `${(bytes / MIB).toFixed(1)} MiB (${bytes} bytes)`;
