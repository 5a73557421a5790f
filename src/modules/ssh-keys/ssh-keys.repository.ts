/** The only code that reads and writes the `ssh_keys` table. */
import type { Kysely, Selectable } from 'kysely';
import { withConstraints } from '../../db/database.js';
import { MalformedColumn } from '../../db/json-column.js';
import type { Database, SshKeysTable } from '../../db/schema.js';
import { isSshKeyAlgorithm, type SshKey } from '../../domain/ssh-key.js';

type Row = Selectable<SshKeysTable>;

export interface StoredSshKey extends SshKey {
  readonly userId: number;
}

function toKey(row: Row): StoredSshKey {
  const algorithm = row.algorithm;
  // The panel writes only accepted types: another was written outside it.
  if (!isSshKeyAlgorithm(algorithm)) {
    throw new MalformedColumn('ssh_keys.algorithm', 'not a key type the panel accepts');
  }
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    algorithm,
    publicKey: row.public_key,
    fingerprint: row.fingerprint,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

export class SshKeysRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The user's keys, oldest first. */
  async ofUser(userId: number): Promise<StoredSshKey[]> {
    const rows = await this.#db
      .selectFrom('ssh_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id', 'asc')
      .execute();
    return rows.map(toKey);
  }

  async countOf(userId: number): Promise<number> {
    const row = await this.#db
      .selectFrom('ssh_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async byFingerprint(userId: number, fingerprint: string): Promise<StoredSshKey | undefined> {
    const row = await this.#db
      .selectFrom('ssh_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirst();
    return row && toKey(row);
  }

  async exists(id: number): Promise<boolean> {
    const row = await this.#db
      .selectFrom('ssh_keys')
      .select('id')
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Throws `AlreadyExists` when the user holds the fingerprint already, `NoLongerExists` when the
   * user row is gone.
   */
  async insert(key: {
    userId: number;
    name: string;
    algorithm: string;
    publicKey: string;
    fingerprint: string;
    createdAt: string;
  }): Promise<StoredSshKey> {
    const row = await withConstraints(() =>
      this.#db
        .insertInto('ssh_keys')
        .values({
          user_id: key.userId,
          name: key.name,
          algorithm: key.algorithm,
          public_key: key.publicKey,
          fingerprint: key.fingerprint,
          created_at: key.createdAt,
          last_used_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return toKey(row);
  }

  /** `undefined` when the user has no such key. */
  async delete(userId: number, id: number): Promise<StoredSshKey | undefined> {
    const row = await this.#db
      .deleteFrom('ssh_keys')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    return row && toKey(row);
  }

  async recordUse(id: number, at: string): Promise<void> {
    await this.#db.updateTable('ssh_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
