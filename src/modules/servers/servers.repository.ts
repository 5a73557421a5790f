/** The only code that queries the servers table. */
import { sql, type CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { Database, ServersTable } from '../../db/schema.js';
import { byText } from '../../sort.js';

export interface ServerConfig {
  readonly name: string;
  readonly displayName: string;
  readonly startCommand: string;
  readonly stopCommand: string | null;
  readonly stopTimeoutSeconds: number;
  readonly autoRestart: boolean;
  readonly createdAt: string;
}

export interface ServerRecord extends ServerConfig {
  readonly desiredRunning: boolean;
  readonly pid: number | null;
  readonly pidIdentity: string | null;
}

export type ConfigChanges = Partial<
  Pick<
    ServerConfig,
    'displayName' | 'startCommand' | 'stopCommand' | 'stopTimeoutSeconds' | 'autoRestart'
  >
>;

const toRecord = (row: Selectable<ServersTable>): ServerRecord => ({
  name: row.name,
  displayName: row.display_name,
  startCommand: row.start_command,
  stopCommand: row.stop_command,
  stopTimeoutSeconds: row.stop_timeout_seconds,
  autoRestart: row.auto_restart === 1,
  createdAt: row.created_at,
  desiredRunning: row.desired_running === 1,
  pid: row.pid,
  pidIdentity: row.pid_identity,
});

/** Between names in `allNames`: a name is a folder name, which can never hold it. */
const NAME_SEPARATOR = '/';

export class ServersRepository {
  /**
   * `allNames`, compiled once: `GET /api/auth/me` runs it for every admin. The names come back as
   * one text (`string_agg`: PostgreSQL, and SQLite since 3.44, which better-sqlite3 bundles)
   * rather than a row each, which costs a small fraction of building a row per server.
   */
  readonly #allNames: CompiledQuery<{ names: string | null }>;

  constructor(private readonly db: Kysely<Database>) {
    this.#allNames = db
      .selectFrom('servers')
      .select(sql<string | null>`string_agg(name, ${NAME_SEPARATOR})`.as('names'))
      .compile();
  }

  async find(name: string): Promise<ServerRecord | undefined> {
    const row = await this.db
      .selectFrom('servers')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Every server, or those named in `names`, sorted by name. */
  async list(names?: readonly string[]): Promise<ServerRecord[]> {
    if (names?.length === 0) return [];
    let query = this.db.selectFrom('servers').selectAll();
    if (names) query = query.where('name', 'in', [...names]);
    return (await query.execute()).map(toRecord).sort((a, b) => byText(a.name, b.name));
  }

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
    const { rows } = await this.db.executeQuery(this.#allNames);
    const names = rows[0]?.names ?? null;
    return names === null ? [] : names.split(NAME_SEPARATOR).sort(byText);
  }

  /** Throws the database's unique violation when the name is taken. */
  async insert(config: ServerConfig): Promise<void> {
    await this.db
      .insertInto('servers')
      .values({
        name: config.name,
        display_name: config.displayName,
        start_command: config.startCommand,
        stop_command: config.stopCommand,
        stop_timeout_seconds: config.stopTimeoutSeconds,
        auto_restart: config.autoRestart ? 1 : 0,
        created_at: config.createdAt,
        desired_running: 0,
        pid: null,
        pid_identity: null,
        started_at: null,
      })
      .execute();
  }

  async update(name: string, changes: ConfigChanges): Promise<void> {
    const set = {
      ...(changes.displayName === undefined ? {} : { display_name: changes.displayName }),
      ...(changes.startCommand === undefined ? {} : { start_command: changes.startCommand }),
      ...(changes.stopCommand === undefined ? {} : { stop_command: changes.stopCommand }),
      ...(changes.stopTimeoutSeconds === undefined
        ? {}
        : { stop_timeout_seconds: changes.stopTimeoutSeconds }),
      ...(changes.autoRestart === undefined ? {} : { auto_restart: changes.autoRestart ? 1 : 0 }),
    };
    if (Object.keys(set).length === 0) return;
    await this.db.updateTable('servers').set(set).where('name', '=', name).execute();
  }

  async delete(name: string): Promise<void> {
    await this.db.deleteFrom('servers').where('name', '=', name).execute();
  }

  async recordStarted(
    name: string,
    process: { pid: number; identity: string; startedAt: Date },
  ): Promise<void> {
    await this.db
      .updateTable('servers')
      .set({
        desired_running: 1,
        pid: process.pid,
        pid_identity: process.identity,
        started_at: process.startedAt.toISOString(),
      })
      .where('name', '=', name)
      .execute();
  }

  /** The process is gone; `desiredRunning` says whether the panel should start it again. */
  async recordStopped(name: string, desiredRunning: boolean): Promise<void> {
    await this.db
      .updateTable('servers')
      .set({
        desired_running: desiredRunning ? 1 : 0,
        pid: null,
        pid_identity: null,
        started_at: null,
      })
      .where('name', '=', name)
      .execute();
  }
}
