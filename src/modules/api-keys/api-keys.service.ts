/**
 * API keys (src/domain/api-key.ts): made, listed and revoked by their owner in a signed-in
 * session (never with a key), and turned back into their owner on every request made with one.
 *
 * A key is `gpk_` and 256 random bits in base64url. Only its SHA-256 is stored: the key has too
 * much entropy to guess, so a slow hash would only slow every request down. Its first twelve
 * characters are kept as a prefix for its owner to recognise it by.
 *
 * Making a key asks its owner to prove who they are again (the password, and a code with two-factor
 * sign-in), so a stolen session cannot become a lasting credential. Revoking a key (one, or all of
 * them at a password change) tells the panel that the owner's access changed: the console
 * sockets opened with it close at once (4401), and a download link made with it no longer works.
 */
import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, type ApiKey, type KeyScope } from '../../domain/api-key.js';
import type { ServerPermission } from '../../domain/policy.js';
import type { User } from '../../domain/user.js';
import { AppError, invalidField } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { ConfirmIdentity, IdentityProof } from '../two-factor/two-factor.service.js';
import type { ApiKeysRepository, StoredKey } from './api-keys.repository.js';

/** How many keys one user may hold. */
export const MAX_KEYS_PER_USER = 50;
/** A key's last use is written at most this often (or when its address changes). */
const USE_RECORD_INTERVAL_MS = 60_000;
const PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

/** What the owner sends to make a key, with the proof that it is them. */
export interface NewApiKey extends IdentityProof {
  readonly name: string;
  readonly expiresAt?: string | null | undefined;
  readonly servers?: readonly string[] | null | undefined;
  readonly permissions?: readonly ServerPermission[] | null | undefined;
}

/** An API key as its owner sees it. */
export interface ApiKeyView extends ApiKey {
  readonly expired: boolean;
}

/** What an ApiKeysService is made from. */
export interface ApiKeysServiceDeps {
  readonly keys: ApiKeysRepository;
  /** The account behind a key: `undefined` once deleted. */
  readonly findUser: (id: number) => Promise<User | undefined>;
  /** The servers the user can reach by their account. */
  readonly reachableServers: (user: User) => Promise<string[]>;
  /** Proof that the owner is at the keyboard (TwoFactorService.confirm); throws when not. */
  readonly confirmIdentity: ConfirmIdentity;
  /** Told of revocations (`access-changed`), so the key's console sockets close. */
  readonly events: PanelEvents;
  readonly now: () => Date;
}

export class ApiKeysService {
  readonly #deps: ApiKeysServiceDeps;

  constructor(deps: ApiKeysServiceDeps) {
    this.#deps = deps;
  }

  async list(user: User): Promise<ApiKeyView[]> {
    return (await this.#deps.keys.ofUser(user.id)).map((key) => this.#view(key));
  }

  /** `address` is the client's, for the login throttle that counts wrong passwords and codes. */
  async create(
    user: User,
    input: NewApiKey,
    address: string,
  ): Promise<{ key: ApiKeyView; token: string }> {
    await this.#deps.confirmIdentity(user, { password: input.password, code: input.code }, address);
    const now = this.#deps.now();
    const name = input.name.trim();
    if (name === '') throw invalidField('name', 'must not be blank');
    const expiresAt = input.expiresAt ?? null;
    if (expiresAt !== null && Date.parse(expiresAt) <= now.getTime()) {
      throw invalidField('expiresAt', 'must be in the future');
    }
    const servers = input.servers == null ? null : [...new Set(input.servers)];
    if (servers !== null) {
      const reachable = new Set(await this.#deps.reachableServers(user));
      const unknown = servers.find((server) => !reachable.has(server));
      if (unknown !== undefined) {
        throw invalidField('servers', `you have no server named ${JSON.stringify(unknown)}`);
      }
    }
    const permissions = input.permissions == null ? null : [...new Set(input.permissions)];
    if ((await this.#deps.keys.countOf(user.id)) >= MAX_KEYS_PER_USER) {
      throw new AppError(
        'CONFLICT',
        `You hold ${MAX_KEYS_PER_USER} API keys already: revoke one first`,
      );
    }
    const token = API_KEY_PREFIX + randomBytes(32).toString('base64url');
    const key = await this.#deps.keys.insert({
      userId: user.id,
      name,
      tokenHash: hashOf(token),
      prefix: token.slice(0, PREFIX_LENGTH),
      servers,
      permissions,
      createdAt: now.toISOString(),
      expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    });
    return { key: this.#view(key), token };
  }

  /** Revokes the user's key: requests made with it are refused from now on. */
  async revoke(user: User, id: number): Promise<ApiKeyView> {
    const key = await this.#deps.keys.delete(user.id, id);
    if (!key) throw new AppError('NOT_FOUND', 'You have no such API key');
    this.#deps.events.emit('access-changed', user.id);
    return this.#view(key);
  }

  /** Revokes every key of the user (a password change); answers how many there were. */
  async revokeAll(userId: number): Promise<number> {
    const count = await this.#deps.keys.deleteAllOf(userId);
    if (count > 0) this.#deps.events.emit('access-changed', userId);
    return count;
  }

  /**
   * The user the key `id` stands for now, narrowed by it; `null` once it is revoked or expired,
   * or its owner deleted (a download link made with a key dies with it).
   */
  async userOfKey(id: number): Promise<User | null> {
    const key = await this.#deps.keys.byId(id);
    return key ? this.#owner(key) : null;
  }

  /**
   * The user a key stands for, narrowed by it; `null` for an unknown, expired or revoked key or a
   * deleted account. Records the key's use (`address` when known).
   */
  async authenticate(token: string, address: string | null): Promise<User | null> {
    const key = await this.#deps.keys.byHash(hashOf(token));
    if (!key) return null;
    const user = await this.#owner(key);
    if (!user) return null;
    const now = this.#deps.now();
    const stale =
      key.lastUsedAt === null ||
      now.getTime() - Date.parse(key.lastUsedAt) >= USE_RECORD_INTERVAL_MS ||
      (address !== null && address !== key.lastUsedAddress);
    if (stale) {
      await this.#deps.keys.recordUse(
        key.id,
        now.toISOString(),
        address ?? key.lastUsedAddress ?? '',
      );
    }
    return user;
  }

  /** The key's owner narrowed by it; `null` when it expired or the owner is gone. */
  async #owner(key: StoredKey): Promise<User | null> {
    if (key.expiresAt !== null && Date.parse(key.expiresAt) <= this.#deps.now().getTime()) {
      return null;
    }
    const user = await this.#deps.findUser(key.userId);
    if (!user) return null;
    const scope: KeyScope = {
      id: key.id,
      name: key.name,
      servers: key.servers === null ? null : new Set(key.servers),
      permissions: key.permissions === null ? null : new Set(key.permissions),
      expiresAt: key.expiresAt,
    };
    return { ...user, key: scope };
  }

  #view(key: StoredKey): ApiKeyView {
    const expired =
      key.expiresAt !== null && Date.parse(key.expiresAt) <= this.#deps.now().getTime();
    return {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      createdAt: key.createdAt,
      expiresAt: key.expiresAt,
      lastUsedAt: key.lastUsedAt,
      lastUsedAddress: key.lastUsedAddress,
      servers: key.servers,
      permissions: key.permissions,
      expired,
    };
  }
}

const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');
