/**
 * The only code that queries the servers table. The server endpoints arrive with the process
 * runtime; for now users need to know which server names exist.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export class ServersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The names among `names` that exist. */
  async existing(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const rows = await this.db
      .selectFrom('servers')
      .select('name')
      .where('name', 'in', [...names])
      .execute();
    return rows.map((row) => row.name);
  }

  async allNames(): Promise<string[]> {
    const rows = await this.db.selectFrom('servers').select('name').orderBy('name').execute();
    return rows.map((row) => row.name);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('servers')
      .select((eb) => eb.fn.countAll().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
}
