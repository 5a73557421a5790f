/**
 * Single-use download links: a browser can only stream a download to disk by navigating to its
 * URL, and a navigation cannot carry the bearer token. A link stands in for the token for one
 * file, one minute and one use. Links live in memory only (a restart forgets them, which costs a
 * click), stored under the SHA-256 of their id so that a dump of the map holds nothing usable.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface DownloadLink {
  readonly userId: number;
  /**
   * The API key the link was made with: the link acts with that key's rights and dies with it
   * (revoked or expired). Absent for a link made in a session.
   */
  readonly keyId?: number;
  readonly server: string;
  /** The file, relative to the server directory, as `userPath` normalised it. */
  readonly path: string;
  /** A backup of the server to download instead of a file (its id). */
  readonly backup?: string;
  readonly expiresAt: Date;
}

export type TakenLink = DownloadLink | 'expired' | 'unknown';

const hash = (id: string): string => createHash('sha256').update(id).digest('hex');

export class DownloadLinks {
  readonly #links = new Map<string, DownloadLink>();
  readonly #now: () => Date;
  readonly #ttlMs: number;
  readonly #cap: number;

  constructor(options: { now: () => Date; ttlMs?: number; cap?: number }) {
    this.#now = options.now;
    this.#ttlMs = options.ttlMs ?? 60_000;
    this.#cap = options.cap ?? 10_000;
  }

  get size(): number {
    return this.#links.size;
  }

  /** A new link's id (256 random bits, URL-safe) and when it expires. */
  create(link: Omit<DownloadLink, 'expiresAt'>): { id: string; expiresAt: Date } {
    this.#prune();
    // At the cap, the oldest links go first (a Map iterates in insertion order).
    for (const key of this.#links.keys()) {
      if (this.#links.size < this.#cap) break;
      this.#links.delete(key);
    }
    const id = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.#now().getTime() + this.#ttlMs);
    this.#links.set(hash(id), { ...link, expiresAt });
    return { id, expiresAt };
  }

  /** Uses a link up: its target, or why there is none. A second take is always 'unknown'. */
  take(id: string): TakenLink {
    const key = hash(id);
    const link = this.#links.get(key);
    if (link === undefined) return 'unknown';
    this.#links.delete(key);
    return link.expiresAt.getTime() <= this.#now().getTime() ? 'expired' : link;
  }

  /** Every link lives as long, so the expired ones are the first in insertion order. */
  #prune(): void {
    const now = this.#now().getTime();
    for (const [key, link] of this.#links) {
      if (link.expiresAt.getTime() > now) break;
      this.#links.delete(key);
    }
  }
}
