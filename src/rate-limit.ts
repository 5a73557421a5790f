/**
 * A count of actions per key (a client address, a user) in a fixed window, for limits such as
 * "5 registrations per address per hour" (docs/security.md, "Rate limits").
 *
 * `take` reserves one action synchronously, so a burst of concurrent requests cannot slip past
 * the limit before the first of them is counted; an action that did not happen after all (a
 * refused registration, a failed insert) is given back with the `release` it answered.
 *
 * Kept in memory, like the login throttle: the panel is one process, and a restart forgetting the
 * counts is acceptable. At most `maxKeys` keys are held; past that the oldest window is forgotten.
 */
export interface RateLimitOptions {
  /** Actions one key may take in a window. */
  readonly max: number;
  readonly windowSeconds: number;
  readonly now: () => Date;
  readonly maxKeys?: number;
}

export type RateDecision =
  | { readonly kind: 'allowed'; readonly release: () => void }
  | { readonly kind: 'refused'; readonly retryAfterSeconds: number };

interface Window {
  count: number;
  readonly endsAt: number;
}

const DEFAULT_MAX_KEYS = 100_000;

export class RateLimit {
  /** In the order the windows started, so ended ones are found at the front. */
  readonly #windows = new Map<string, Window>();
  readonly #options: RateLimitOptions;

  constructor(options: RateLimitOptions) {
    this.#options = options;
  }

  /** Counts one action of `key` now, or refuses it when the key's window is full. */
  take(key: string): RateDecision {
    const now = this.#options.now().getTime();
    this.#sweep(now);
    let window = this.#windows.get(key);
    if (window !== undefined && window.endsAt <= now) {
      this.#windows.delete(key);
      window = undefined;
    }
    if (window === undefined) {
      if (this.#windows.size >= (this.#options.maxKeys ?? DEFAULT_MAX_KEYS)) {
        const oldest = this.#windows.keys().next();
        if (oldest.done !== true) this.#windows.delete(oldest.value);
      }
      window = { count: 0, endsAt: now + this.#options.windowSeconds * 1000 };
      this.#windows.set(key, window);
    }
    if (window.count >= this.#options.max) {
      return {
        kind: 'refused',
        retryAfterSeconds: Math.max(1, Math.ceil((window.endsAt - now) / 1000)),
      };
    }
    window.count += 1;
    const taken = window;
    let released = false;
    return {
      kind: 'allowed',
      release: () => {
        if (released) return;
        released = true;
        if (taken.count > 0) taken.count -= 1;
      },
    };
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.endsAt > now) return;
      this.#windows.delete(key);
    }
  }
}
