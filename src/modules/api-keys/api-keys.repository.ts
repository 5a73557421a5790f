/** The only code that reads and writes the `api_keys` table. */
import type { Kysely, Selectable } from 'kysely';
import { Type } from 'typebox';
import { readJson } from '../../db/json-column.js';
import type { ApiKeysTable, Database } from '../../db/schema.js';
import type { ApiKey } from '../../domain/api-key.js';
import { SERVER_PERMISSIONS, type ServerPermission } from '../../domain/policy.js';

type Row = Selectable<ApiKeysTable>;

export interface StoredKey extends ApiKey {
  readonly userId: number;
}

const Servers = Type.Array(Type.String());
const Permissions = Type.Array(
  Type.Union(SERVER_PERMISSIONS.map((permission) => Type.Literal(permission))),
);

const toKey = (row: Row): StoredKey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
  lastUsedAddress: row.last_used_address,
  servers: row.servers === null ? null : readJson(row.servers, Servers, 'api_keys.servers'),
  permissions:
    row.permissions === null
      ? null
      : readJson(row.permissions, Permissions, 'api_keys.permissions'),
});

export class ApiKeysRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async ofUser(userId: number): Promise<StoredKey[]> {
    const rows = await this.#db
      .selectFrom('api_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toKey);
  }

  async countOf(userId: number): Promise<number> {
    const row = await this.#db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async byHash(tokenHash: string): Promise<StoredKey | undefined> {
    const row = await this.#db
      .selectFrom('api_keys')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row && toKey(row);
  }

  async byId(id: number): Promise<StoredKey | undefined> {
    const row = await this.#db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toKey(row);
  }

  async insert(key: {
    userId: number;
    name: string;
    tokenHash: string;
    prefix: string;
    servers: readonly string[] | null;
    permissions: readonly ServerPermission[] | null;
    createdAt: string;
    expiresAt: string | null;
  }): Promise<StoredKey> {
    const row = await this.#db
      .insertInto('api_keys')
      .values({
        user_id: key.userId,
        name: key.name,
        token_hash: key.tokenHash,
        prefix: key.prefix,
        servers: key.servers === null ? null : JSON.stringify(key.servers),
        permissions: key.permissions === null ? null : JSON.stringify(key.permissions),
        created_at: key.createdAt,
        expires_at: key.expiresAt,
        last_used_at: null,
        last_used_address: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toKey(row);
  }

  /** `undefined` when the user has no such key. */
  async delete(userId: number, id: number): Promise<StoredKey | undefined> {
    const row = await this.#db
      .deleteFrom('api_keys')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    return row && toKey(row);
  }

  /** Deletes every key of the user; answers how many there were. */
  async deleteAllOf(userId: number): Promise<number> {
    const rows = await this.#db
      .deleteFrom('api_keys')
      .where('user_id', '=', userId)
      .returning('id')
      .execute();
    return rows.length;
  }

  async recordUse(id: number, at: string, address: string): Promise<void> {
    await this.#db
      .updateTable('api_keys')
      .set({ last_used_at: at, last_used_address: address })
      .where('id', '=', id)
      .execute();
  }
}
