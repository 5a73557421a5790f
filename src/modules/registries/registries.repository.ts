/**
 * The only code that queries the registries table, and the `registries_restricted` row of
 * panel_settings (the rule that only listed registries may be pulled from).
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, RegistriesTable } from '../../db/schema.js';
import type { Registry } from '../../domain/registry.js';

const RESTRICTED_KEY = 'registries_restricted';

/** A registry with its sealed password: for pulls only, never answered. */
export interface StoredRegistry extends Registry {
  readonly sealedPassword: string | null;
}

/** A registry's credentials as stored: both or neither. */
export type StoredCredentials = {
  readonly username: string;
  readonly sealedPassword: string;
} | null;

const toRegistry = (row: Selectable<RegistriesTable>): StoredRegistry => ({
  host: row.host,
  username: row.username,
  passwordSet: row.password !== null,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  sealedPassword: row.password,
});

export class RegistriesRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Every listed registry, by host. */
  async list(): Promise<StoredRegistry[]> {
    const rows = await this.#db.selectFrom('registries').selectAll().orderBy('host').execute();
    return rows.map(toRegistry);
  }

  async find(host: string): Promise<StoredRegistry | undefined> {
    const row = await this.#db
      .selectFrom('registries')
      .selectAll()
      .where('host', '=', host)
      .executeTakeFirst();
    return row && toRegistry(row);
  }

  /** Lists `host`; undefined when it is listed already (nothing changed). */
  async insert(
    host: string,
    credentials: StoredCredentials,
    at: string,
  ): Promise<StoredRegistry | undefined> {
    const row = await this.#db
      .insertInto('registries')
      .values({
        host,
        username: credentials?.username ?? null,
        password: credentials?.sealedPassword ?? null,
        created_at: at,
        updated_at: at,
      })
      .onConflict((conflict) => conflict.column('host').doNothing())
      .returningAll()
      .executeTakeFirst();
    return row && toRegistry(row);
  }

  /** Replaces the credentials of `host`; undefined when it is not listed. */
  async setCredentials(
    host: string,
    credentials: StoredCredentials,
    at: string,
  ): Promise<StoredRegistry | undefined> {
    const row = await this.#db
      .updateTable('registries')
      .set({
        username: credentials?.username ?? null,
        password: credentials?.sealedPassword ?? null,
        updated_at: at,
      })
      .where('host', '=', host)
      .returningAll()
      .executeTakeFirst();
    return row && toRegistry(row);
  }

  async delete(host: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('registries')
      .where('host', '=', host)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Whether only listed registries may be pulled from; a missing or unreadable row: no. */
  async restricted(): Promise<boolean> {
    const row = await this.#db
      .selectFrom('panel_settings')
      .select('value')
      .where('key', '=', RESTRICTED_KEY)
      .executeTakeFirst();
    return row?.value === 'true';
  }

  async setRestricted(restricted: boolean): Promise<void> {
    const value = JSON.stringify(restricted);
    await this.#db
      .insertInto('panel_settings')
      .values({ key: RESTRICTED_KEY, value })
      .onConflict((conflict) => conflict.column('key').doUpdateSet({ value }))
      .execute();
  }
}
