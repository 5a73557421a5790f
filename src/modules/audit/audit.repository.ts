/** The only code that reads and writes the `audit_log` table. */
import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import { Type } from 'typebox';
import { readJson } from '../../db/json-column.js';
import type { AuditLogTable, Database } from '../../db/schema.js';
import type { AuditEntry, AuditFilter, NewAuditEntry } from '../../domain/audit.js';

type Row = Selectable<AuditLogTable>;

const Details = Type.Record(Type.String(), Type.Unknown());

const toEntry = (row: Row): AuditEntry => ({
  id: row.id,
  at: row.at,
  actor: row.actor_name,
  actorId: row.actor_id,
  via: row.via as AuditEntry['via'],
  viaName: row.via_name,
  address: row.address,
  action: row.action,
  server: row.server,
  serverId: row.server_id,
  target: row.target,
  outcome: row.outcome as AuditEntry['outcome'],
  status: row.status,
  details: readJson(row.details, Details, 'audit_log.details'),
});

/** `%` and `_` are wildcards of LIKE: a prefix holding them matches them as themselves. */
const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export class AuditRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Writes the entry, under the id the server it names has now (none if it has none). */
  async insert(entry: NewAuditEntry & { at: string }): Promise<void> {
    const server = entry.server;
    await this.#db
      .insertInto('audit_log')
      .values((eb) => ({
        server_id:
          server === null
            ? null
            : eb.selectFrom('servers').select('servers.id').where('servers.name', '=', server),
        at: entry.at,
        actor_id: entry.actorId,
        actor_name: entry.actor,
        via: entry.via,
        via_name: entry.viaName,
        address: entry.address,
        action: entry.action,
        server: entry.server,
        target: entry.target,
        outcome: entry.outcome,
        status: entry.status,
        details: JSON.stringify(entry.details),
      }))
      .execute();
  }

  async page(
    filter: AuditFilter,
    limit: number,
    offset: number,
  ): Promise<{ entries: AuditEntry[]; total: number }> {
    const where = <O>(query: SelectQueryBuilder<Database, 'audit_log', O>) => {
      let q = query;
      if (filter.actor !== undefined) q = q.where('actor_name', '=', filter.actor);
      if (filter.server !== undefined) q = q.where('server', '=', filter.server);
      if (filter.serverId !== undefined) q = q.where('server_id', '=', filter.serverId);
      if (filter.action !== undefined) {
        q = filter.action.endsWith('.')
          ? q.where('action', 'like', likePrefix(filter.action))
          : q.where('action', '=', filter.action);
      }
      if (filter.via !== undefined) q = q.where('via', '=', filter.via);
      if (filter.outcome !== undefined) q = q.where('outcome', '=', filter.outcome);
      if (filter.since !== undefined) q = q.where('at', '>=', filter.since);
      if (filter.until !== undefined) q = q.where('at', '<', filter.until);
      return q;
    };
    const [rows, count] = await Promise.all([
      where(this.#db.selectFrom('audit_log').selectAll())
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute(),
      where(
        this.#db
          .selectFrom('audit_log')
          .select((eb) => eb.fn.countAll<number | string>().as('count')),
      ).executeTakeFirstOrThrow(),
    ]);
    return { entries: rows.map(toEntry), total: Number(count.count) };
  }

  /** Removes the entries older than `before`; answers how many. */
  async prune(before: string): Promise<number> {
    const result = await this.#db
      .deleteFrom('audit_log')
      .where('at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
