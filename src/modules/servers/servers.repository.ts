/** The only code that queries the servers table. */
import { sql, type CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { withConstraints } from '../../db/database.js';
import { AlreadyExists } from '../../domain/conflicts.js';
import type { Database, ServersTable } from '../../db/schema.js';
import type { ServerConfig, ServerLimits, ServerRecord } from '../../domain/server.js';
import { byText } from '../../sort.js';

export type ConfigChanges = Partial<
  Pick<
    ServerConfig,
    | 'displayName'
    | 'startCommand'
    | 'stopCommand'
    | 'stopTimeoutSeconds'
    | 'autoRestart'
    | 'runtime'
    | 'image'
  >
> & { readonly limits?: Partial<ServerLimits> };

const bytes = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

const toRecord = (row: Selectable<ServersTable>): ServerRecord => ({
  name: row.name,
  displayName: row.display_name,
  startCommand: row.start_command,
  stopCommand: row.stop_command,
  stopTimeoutSeconds: row.stop_timeout_seconds,
  autoRestart: row.auto_restart === 1,
  limits: {
    memoryBytes: bytes(row.memory_limit_bytes),
    cpuPercent: row.cpu_limit_percent,
    pids: row.pids_limit,
    diskBytes: bytes(row.disk_limit_bytes),
  },
  runtime: row.runtime === 'docker' ? 'docker' : 'process',
  image: row.image,
  createdAt: row.created_at,
  desiredRunning: row.desired_running === 1,
  pid: row.pid,
  pidIdentity: row.pid_identity,
});

function limitColumns(limits: Partial<ServerLimits>) {
  return {
    ...(limits.memoryBytes === undefined ? {} : { memory_limit_bytes: limits.memoryBytes }),
    ...(limits.cpuPercent === undefined ? {} : { cpu_limit_percent: limits.cpuPercent }),
    ...(limits.pids === undefined ? {} : { pids_limit: limits.pids }),
    ...(limits.diskBytes === undefined ? {} : { disk_limit_bytes: limits.diskBytes }),
  };
}

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
  /** Adds the server; false when one of that name exists. */
  async insert(config: ServerConfig): Promise<boolean> {
    const insert = this.db.insertInto('servers').values({
      name: config.name,
      display_name: config.displayName,
      start_command: config.startCommand,
      stop_command: config.stopCommand,
      stop_timeout_seconds: config.stopTimeoutSeconds,
      auto_restart: config.autoRestart ? 1 : 0,
      memory_limit_bytes: config.limits.memoryBytes,
      cpu_limit_percent: config.limits.cpuPercent,
      pids_limit: config.limits.pids,
      disk_limit_bytes: config.limits.diskBytes,
      runtime: config.runtime,
      image: config.image,
      created_at: config.createdAt,
      desired_running: 0,
      pid: null,
      pid_identity: null,
      started_at: null,
    });
    try {
      await withConstraints(() => insert.execute());
      return true;
    } catch (error) {
      if (error instanceof AlreadyExists) return false;
      throw error;
    }
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
      ...(changes.runtime === undefined ? {} : { runtime: changes.runtime }),
      ...(changes.image === undefined ? {} : { image: changes.image }),
      ...limitColumns(changes.limits ?? {}),
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
