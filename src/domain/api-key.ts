/**
 * API keys: long-lived credentials a user makes for scripts. A request made with a key acts as
 * its owner, narrowed by the key: to some servers, and to some server permissions. A key with a
 * permission list does nothing outside servers but read its owner's own account (no staff or
 * admin action); a key without one does everything its owner may.
 */
import type { ServerPermission } from './policy.js';

/** What a request made with a key is narrowed to. */
export interface KeyScope {
  readonly id: number;
  readonly name: string;
  /** The servers it reaches; null: every server its owner can reach. */
  readonly servers: ReadonlySet<string> | null;
  /** The server permissions it carries; null: everything its owner may do. */
  readonly permissions: ReadonlySet<ServerPermission> | null;
  /** When it stops working (its console sockets close then); null: never. */
  readonly expiresAt: string | null;
}

export interface ApiKey {
  readonly id: number;
  readonly name: string;
  /** The key's first characters, to recognise it by. */
  readonly prefix: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly lastUsedAt: string | null;
  readonly lastUsedAddress: string | null;
  readonly servers: readonly string[] | null;
  readonly permissions: readonly ServerPermission[] | null;
}

/** Every key starts with this, so a key is told from a session token (and found by scanners). */
export const API_KEY_PREFIX = 'gpk_';
