/**
 * Brute-force protection for password checks (logins, and the current password that profile
 * changes ask for) that nobody can turn into a lock-out of someone else's account.
 *
 * Failures are counted in a fixed window of `windowSeconds`, three ways:
 *
 * - per (account, address) pair: once one address has failed `maxFailuresPerAccount` times on one
 *   account, that address may not try that account again until the window ends (429 with
 *   Retry-After, the password not checked). Other addresses are not affected.
 * - per address, across accounts: once one address has failed `maxFailuresPerAddress` times, it
 *   may not try any account until the window ends (429 likewise).
 * - per account, across addresses (a guesser spread over many addresses): once an account has
 *   failed `slowDownAfterAccountFailures` times, every attempt on it waits before its password is
 *   checked, whatever the outcome: 250 ms, doubling with each further failure, at most 3 s.
 *   It is slowed, never refused, for this.
 *
 * So an address without a failure in the window is never refused, and the right password from it
 * always works (at worst after the wait): an attacker's failures cannot lock the owner out.
 *
 * Attempts still being checked count as failures until they are settled, so a burst of
 * concurrent attempts cannot slip past a limit before the first of them is counted. A right
 * password clears its pair's count only: not the address's (or an attacker could reset it by
 * logging into an account of their own), nor the account's (the owner signing in does not end a
 * distributed attack).
 *
 * At most `maxConcurrentDelays` attempts wait at once. Past that, an attempt that would wait is
 * refused (429) when its address has failed in the window; one from a clean address still waits.
 *
 * Accounts and addresses are whatever the caller passes: the lower-cased name (whether it exists
 * or not) and Fastify's `request.ip` (see TRUST_PROXY).
 *
 * Kept in memory: the panel is one process, and a restart forgetting the counts is acceptable.
 * Each count map drops ended windows as it is used and holds at most `maxKeys` keys; past that, the
 * oldest window is forgotten first.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface LoginThrottleOptions {
  /** Failures one address may make on one account in a window before that pair is refused. */
  readonly maxFailuresPerAccount: number;
  /** Failures one address may make on all accounts in a window before it is refused. */
  readonly maxFailuresPerAddress: number;
  /** Failures one account may collect from all addresses in a window before it is slowed. */
  readonly slowDownAfterAccountFailures: number;
  readonly windowSeconds: number;
  readonly now: () => Date;
  /** Waits out a slow-down (default: a timer); tests pass one that records the wait instead. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Attempts that may wait at once before attempts from failing addresses are refused. */
  readonly maxConcurrentDelays?: number;
  /** Keys each count map may hold. */
  readonly maxKeys?: number;
}

/** The wait of the first slowed attempt on an account; it doubles with each further failure. */
export const FIRST_DELAY_MS = 250;
/** The longest wait: short of every client and test timeout, long enough to slow a guesser. */
export const MAX_DELAY_MS = 3000;
const DEFAULT_MAX_CONCURRENT_DELAYS = 1024;
const DEFAULT_MAX_KEYS = 100_000;

/** What the throttle would do with an attempt arriving now. */
export type LoginDecision =
  | {
      readonly kind: 'refuse';
      /** `pair`, `address`: that limit is reached; `busy`: too many attempts are waiting. */
      readonly reason: 'pair' | 'address' | 'busy';
      readonly retryAfterSeconds: number;
    }
  | { readonly kind: 'proceed'; readonly delayMs: number };

/** How a throttled password check ended. */
export type LoginOutcome<T> =
  | { readonly kind: 'refused'; readonly retryAfterSeconds: number }
  | { readonly kind: 'wrong' }
  | { readonly kind: 'right'; readonly value: T };

export class LoginThrottle {
  readonly #pairs: Tally;
  readonly #addresses: Tally;
  readonly #accounts: Tally;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #maxConcurrentDelays: number;
  #waiting = 0;
  readonly #options: LoginThrottleOptions;

  constructor(options: LoginThrottleOptions) {
    this.#options = options;

    const windowMs = options.windowSeconds * 1000;
    const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    this.#pairs = new Tally(windowMs, maxKeys);
    this.#addresses = new Tally(windowMs, maxKeys);
    this.#accounts = new Tally(windowMs, maxKeys);
    this.#sleep = options.sleep ?? ((ms) => sleep(ms));
    this.#maxConcurrentDelays = options.maxConcurrentDelays ?? DEFAULT_MAX_CONCURRENT_DELAYS;
  }

  /**
   * Runs one password check under the throttle: refuses it, or waits the slow-down and then runs
   * `check`, which answers `null` for a wrong password (or an unknown account) and anything else
   * for a right one, and counts the outcome. When `check` throws, nothing is counted.
   */
  async attempt<T extends object>(
    account: string,
    address: string,
    check: () => Promise<T | null>,
  ): Promise<LoginOutcome<T>> {
    const decision = this.decide(account, address);
    if (decision.kind === 'refuse') {
      return { kind: 'refused', retryAfterSeconds: decision.retryAfterSeconds };
    }
    const pair = pairKey(account, address);
    this.#pairs.begin(pair);
    this.#addresses.begin(address);
    this.#accounts.begin(account);
    try {
      if (decision.delayMs > 0) {
        this.#waiting += 1;
        try {
          await this.#sleep(decision.delayMs);
        } finally {
          this.#waiting -= 1;
        }
      }
      const value = await check();
      if (value === null) {
        const now = this.#now();
        this.#pairs.fail(pair, now);
        this.#addresses.fail(address, now);
        this.#accounts.fail(account, now);
        return { kind: 'wrong' };
      }
      this.#pairs.clear(pair);
      return { kind: 'right', value };
    } finally {
      this.#pairs.end(pair);
      this.#addresses.end(address);
      this.#accounts.end(account);
    }
  }

  /** What an attempt on `account` from `address` arriving now would meet; changes no count. */
  decide(account: string, address: string): LoginDecision {
    const now = this.#now();
    for (const tally of [this.#pairs, this.#addresses, this.#accounts]) tally.sweep(now);

    const pair = pairKey(account, address);
    const limits = [
      { reason: 'pair', tally: this.#pairs, key: pair, max: this.#options.maxFailuresPerAccount },
      {
        reason: 'address',
        tally: this.#addresses,
        key: address,
        max: this.#options.maxFailuresPerAddress,
      },
    ] as const;
    let refusal: { reason: 'pair' | 'address'; endsAt: number } | null = null;
    for (const { reason, tally, key, max } of limits) {
      if (tally.load(key, now) < max) continue;
      const endsAt = tally.endsAt(key, now);
      if (refusal === null || endsAt > refusal.endsAt) refusal = { reason, endsAt };
    }
    if (refusal !== null) {
      return {
        kind: 'refuse',
        reason: refusal.reason,
        retryAfterSeconds: seconds(refusal.endsAt - now),
      };
    }

    const over = this.#accounts.load(account, now) - this.#options.slowDownAfterAccountFailures;
    if (over < 0) return { kind: 'proceed', delayMs: 0 };
    const delayMs = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(over, 16));
    if (this.#waiting >= this.#maxConcurrentDelays && this.#addresses.failures(address, now) > 0) {
      return { kind: 'refuse', reason: 'busy', retryAfterSeconds: seconds(delayMs) };
    }
    return { kind: 'proceed', delayMs };
  }

  #now(): number {
    return this.#options.now().getTime();
  }
}

/** Unambiguous for any account name and address. */
const pairKey = (account: string, address: string): string => JSON.stringify([account, address]);

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

interface Window {
  count: number;
  endsAt: number;
}

/** Failures per key in a fixed window, and the attempts per key still being checked. */
class Tally {
  /** In the order the windows started, so ended ones are found at the front. */
  readonly #windows = new Map<string, Window>();
  readonly #pending = new Map<string, number>();
  readonly #windowMs: number;
  readonly #maxKeys: number;

  constructor(windowMs: number, maxKeys: number) {
    this.#windowMs = windowMs;
    this.#maxKeys = maxKeys;
  }

  /** Failures in the window running at `now` (0 when none runs). */
  failures(key: string, now: number): number {
    const window = this.#windows.get(key);
    return window !== undefined && window.endsAt > now ? window.count : 0;
  }

  /** Failures plus attempts still being checked. */
  load(key: string, now: number): number {
    return this.failures(key, now) + (this.#pending.get(key) ?? 0);
  }

  /** When the running window ends; `now` when none runs (only pending attempts count). */
  endsAt(key: string, now: number): number {
    const window = this.#windows.get(key);
    return window !== undefined && window.endsAt > now ? window.endsAt : now;
  }

  begin(key: string): void {
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1);
  }

  end(key: string): void {
    const pending = (this.#pending.get(key) ?? 0) - 1;
    if (pending > 0) this.#pending.set(key, pending);
    else this.#pending.delete(key);
  }

  fail(key: string, now: number): void {
    const window = this.#windows.get(key);
    if (window !== undefined && window.endsAt > now) {
      window.count += 1;
      return;
    }
    // Deleted and set again, so the new window goes to the end of the map.
    this.#windows.delete(key);
    if (this.#windows.size >= this.#maxKeys) {
      this.sweep(now);
      const oldest = this.#windows.keys().next();
      if (this.#windows.size >= this.#maxKeys && oldest.done !== true) {
        this.#windows.delete(oldest.value);
      }
    }
    this.#windows.set(key, { count: 1, endsAt: now + this.#windowMs });
  }

  clear(key: string): void {
    this.#windows.delete(key);
  }

  /**
   * Drops the ended windows at the front. Cheap enough for every attempt: it stops at the first
   * window still running (a clock set back merely keeps ended windows a little longer).
   */
  sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.endsAt > now) return;
      this.#windows.delete(key);
    }
  }
}
