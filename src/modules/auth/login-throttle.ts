/**
 * Counts failed logins per account and per client address in a fixed window. Once either count
 * reaches its limit, every login attempt for that account (or from that address) is refused with
 * 429 until the window ends, without checking the password, so a guesser learns nothing more.
 * Successful logins are never counted; one clears the account's count (not the address's, or an
 * attacker could reset it by logging into an account of their own).
 *
 * Kept in memory: the panel is one process, and a restart forgetting the counts is acceptable.
 * The maps are swept as they are used, so their size stays bounded by the active attackers.
 */
export interface LoginThrottleOptions {
  readonly maxFailuresPerAccount: number;
  readonly maxFailuresPerAddress: number;
  readonly windowSeconds: number;
  readonly now: () => Date;
}

interface Window {
  count: number;
  endsAt: number;
}

const SWEEP_EVERY = 1024;

export class LoginThrottle {
  readonly #accounts = new Map<string, Window>();
  readonly #addresses = new Map<string, Window>();
  #calls = 0;

  constructor(private readonly options: LoginThrottleOptions) {}

  /** Seconds until a login may be tried again, or `null` when it may be tried now. */
  retryAfter(account: string, address: string): number | null {
    const now = this.options.now().getTime();
    this.#sweep(now);
    const ends = [
      this.#blockedUntil(this.#accounts, account, this.options.maxFailuresPerAccount, now),
      this.#blockedUntil(this.#addresses, address, this.options.maxFailuresPerAddress, now),
    ].filter((end): end is number => end !== null);
    if (ends.length === 0) return null;
    return Math.max(1, Math.ceil((Math.max(...ends) - now) / 1000));
  }

  recordFailure(account: string, address: string): void {
    const now = this.options.now().getTime();
    this.#bump(this.#accounts, account, now);
    this.#bump(this.#addresses, address, now);
  }

  recordSuccess(account: string): void {
    this.#accounts.delete(account);
  }

  #blockedUntil(map: Map<string, Window>, key: string, max: number, now: number): number | null {
    const window = map.get(key);
    if (window === undefined || window.endsAt <= now) return null;
    return window.count >= max ? window.endsAt : null;
  }

  #bump(map: Map<string, Window>, key: string, now: number): void {
    const window = map.get(key);
    if (window === undefined || window.endsAt <= now) {
      map.set(key, { count: 1, endsAt: now + this.options.windowSeconds * 1000 });
    } else {
      window.count += 1;
    }
  }

  #sweep(now: number): void {
    this.#calls += 1;
    if (this.#calls % SWEEP_EVERY !== 0) return;
    for (const map of [this.#accounts, this.#addresses]) {
      for (const [key, window] of map) if (window.endsAt <= now) map.delete(key);
    }
  }
}
