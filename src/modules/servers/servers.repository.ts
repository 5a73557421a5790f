/** The only code that queries the servers table. */
import { sql, type CompiledQuery, type Kysely, type Selectable, type Transaction } from 'kysely';
import { Type } from 'typebox';
import { withConstraints } from '../../db/database.js';
import { readJson } from '../../db/json-column.js';
import { AlreadyExists } from '../../domain/conflicts.js';
import type { Database, ServersTable } from '../../db/schema.js';
import {
  INSTALL_STATES,
  type Allocation,
  type InstallState,
  type ServerConfig,
  type ServerLimits,
  type ServerRecord,
} from '../../domain/server.js';
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

const installState = (value: string): InstallState =>
  INSTALL_STATES.find((state) => state === value) ?? 'not-installed';

/** Any JSON: the two columns below say themselves what they make of a wrong shape. */
const Anything = Type.Unknown();

/** The stored variables; anything but an object of texts (never written so) counts as none. */
function variablesOf(text: string): Record<string, string> {
  const parsed = readJson(text, Anything, 'servers.variables');
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  return Object.fromEntries(
    Object.entries(parsed).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

/** The stored last lines of a failed install; anything but a list of texts counts as none. */
function linesOf(text: string | null): string[] {
  if (text === null) return [];
  const parsed = readJson(text, Anything, 'servers.install_last_lines');
  return Array.isArray(parsed)
    ? parsed.filter((line): line is string => typeof line === 'string')
    : [];
}

/** What `setInstall` records: the state, and what is known of the install that ended. */
export interface InstallChange {
  readonly state: InstallState;
  readonly exitCode?: number | null;
  readonly finishedAt?: string | null;
  /** Why it failed (null: it did not); the last lines go with it. */
  readonly reason?: string | null;
  readonly lastLines?: readonly string[];
}

const toRecord = (
  row: Selectable<ServersTable>,
  allocations: readonly Allocation[],
): ServerRecord => ({
  id: row.id,
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
  template: row.template_id,
  install: {
    state: installState(row.install_state),
    exitCode: row.install_exit_code,
    finishedAt: row.install_finished_at,
    reason: row.install_reason,
    lastLines: linesOf(row.install_last_lines),
  },
  allocations,
  node: row.node,
  createdAt: row.created_at,
  variables: variablesOf(row.variables),
  lastExit:
    row.last_exit_at === null
      ? null
      : {
          code: row.last_exit_code,
          signal: row.last_exit_signal,
          outOfMemory: row.last_exit_out_of_memory === 1,
          cleanStop: row.last_exit_clean_stop === 1,
          at: row.last_exit_at,
        },
  desiredRunning: row.desired_running === 1,
  pid: row.pid,
  pidIdentity: row.pid_identity,
  imageDigest: row.image_digest,
});

function limitColumns(limits: Partial<ServerLimits>) {
  return {
    ...(limits.memoryBytes === undefined ? {} : { memory_limit_bytes: limits.memoryBytes }),
    ...(limits.cpuPercent === undefined ? {} : { cpu_limit_percent: limits.cpuPercent }),
    ...(limits.pids === undefined ? {} : { pids_limit: limits.pids }),
    ...(limits.diskBytes === undefined ? {} : { disk_limit_bytes: limits.diskBytes }),
  };
}

async function insertAllocations(
  trx: Transaction<Database>,
  name: string,
  node: string,
  allocations: readonly Allocation[],
): Promise<void> {
  if (allocations.length === 0) return;
  await trx
    .insertInto('server_allocations')
    .values(
      allocations.map((allocation, index) => ({
        server_name: name,
        node,
        ip: allocation.ip,
        port: allocation.port,
        is_primary: index === 0 ? 1 : 0,
      })),
    )
    .execute();
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
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;

    this.#allNames = db
      .selectFrom('servers')
      .select(sql<string | null>`string_agg(name, ${NAME_SEPARATOR})`.as('names'))
      .compile();
  }

  async find(name: string): Promise<ServerRecord | undefined> {
    const row = await this.#db
      .selectFrom('servers')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    return row && toRecord(row, await this.#allocations([name]).then((all) => all.get(name) ?? []));
  }

  /** The allocations of the servers named, primary first, by server. */
  async #allocations(names: readonly string[]): Promise<Map<string, Allocation[]>> {
    const byServer = new Map<string, Allocation[]>();
    if (names.length === 0) return byServer;
    const rows = await this.#db
      .selectFrom('server_allocations')
      .select(['server_name', 'ip', 'port', 'is_primary'])
      .where('server_name', 'in', [...names])
      .orderBy('is_primary', 'desc')
      .orderBy('port')
      .orderBy('ip')
      .execute();
    for (const row of rows) {
      const list = byServer.get(row.server_name) ?? [];
      list.push({ ip: row.ip, port: row.port });
      byServer.set(row.server_name, list);
    }
    return byServer;
  }

  /** Every allocation, with its server and the node it is on (those of `node` when given). */
  async allAllocations(node?: string): Promise<(Allocation & { server: string; node: string })[]> {
    let query = this.#db
      .selectFrom('server_allocations')
      .select(['server_name', 'node', 'ip', 'port']);
    if (node !== undefined) query = query.where('node', '=', node);
    const rows = await query.execute();
    return rows.map((row) => ({
      server: row.server_name,
      node: row.node,
      ip: row.ip,
      port: row.port,
    }));
  }

  /**
   * Replaces the server's allocations (the first one primary) in one transaction, on the node
   * the server is on. Throws AlreadyExists when an address and port is another server's there.
   */
  async setAllocations(name: string, allocations: readonly Allocation[]): Promise<void> {
    await withConstraints(() =>
      this.#db.transaction().execute(async (trx) => {
        const server = await trx
          .selectFrom('servers')
          .select('node')
          .where('name', '=', name)
          .executeTakeFirst();
        if (server === undefined) return;
        await trx.deleteFrom('server_allocations').where('server_name', '=', name).execute();
        await insertAllocations(trx, name, server.node, allocations);
      }),
    );
  }

  /** Every server, or those named in `names`, sorted by name. */
  async list(names?: readonly string[]): Promise<ServerRecord[]> {
    if (names?.length === 0) return [];
    let query = this.#db.selectFrom('servers').selectAll();
    if (names) query = query.where('name', 'in', [...names]);
    const rows = await query.execute();
    const allocations = await this.#allocations(rows.map((row) => row.name));
    return rows
      .map((row) => toRecord(row, allocations.get(row.name) ?? []))
      .sort((a, b) => byText(a.name, b.name));
  }

  /** The names among `names` that exist. */
  async existing(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const rows = await this.#db
      .selectFrom('servers')
      .select('name')
      .where('name', 'in', [...names])
      .execute();
    return rows.map((row) => row.name);
  }

  async allNames(): Promise<string[]> {
    const { rows } = await this.#db.executeQuery(this.#allNames);
    const names = rows[0]?.names ?? null;
    return names === null ? [] : names.split(NAME_SEPARATOR).sort(byText);
  }

  /**
   * Adds the server with its variables and allocations in one transaction, under a new id from
   * `server_ids` (never one a deleted server had); false when one of that name exists. Throws AlreadyExists when an allocation is another server's, and
   * NoLongerExists when its template was deleted meanwhile.
   */
  async insert(
    config: ServerConfig,
    variables: Readonly<Record<string, string>> = {},
  ): Promise<boolean> {
    const row = {
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
      template_id: config.template,
      variables: JSON.stringify(variables),
      install_state: config.install.state,
      node: config.node,
    };
    try {
      await withConstraints(() =>
        this.#db.transaction().execute(async (trx) => {
          const { id } = await trx
            .insertInto('server_ids')
            .values({ name: config.name, created_at: config.createdAt })
            .returning('id')
            .executeTakeFirstOrThrow();
          await trx
            .insertInto('servers')
            .values({ ...row, id })
            .execute();
          await insertAllocations(trx, config.name, config.node, config.allocations);
        }),
      );
      return true;
    } catch (error) {
      // The name is taken: false. An allocation taken (AlreadyExists too) is the caller's.
      if (error instanceof AlreadyExists && (await this.find(config.name))) return false;
      throw error;
    }
  }

  async setVariables(name: string, variables: Readonly<Record<string, string>>): Promise<void> {
    await this.#db
      .updateTable('servers')
      .set({ variables: JSON.stringify(variables) })
      .where('name', '=', name)
      .execute();
  }

  async setInstall(name: string, install: InstallChange): Promise<void> {
    await this.#db
      .updateTable('servers')
      .set({
        install_state: install.state,
        ...(install.exitCode === undefined ? {} : { install_exit_code: install.exitCode }),
        ...(install.finishedAt === undefined ? {} : { install_finished_at: install.finishedAt }),
        ...(install.reason === undefined ? {} : { install_reason: install.reason }),
        ...(install.lastLines === undefined
          ? {}
          : {
              install_last_lines:
                install.lastLines.length === 0 ? null : JSON.stringify(install.lastLines),
            }),
      })
      .where('name', '=', name)
      .execute();
  }

  /** How the server's last process ended. */
  async recordExit(
    name: string,
    exit: {
      code: number | null;
      signal: string | null;
      outOfMemory: boolean;
      cleanStop: boolean;
      at: Date;
    },
  ): Promise<void> {
    await this.#db
      .updateTable('servers')
      .set({
        last_exit_code: exit.code,
        last_exit_signal: exit.signal,
        last_exit_out_of_memory: exit.outOfMemory ? 1 : 0,
        last_exit_clean_stop: exit.cleanStop ? 1 : 0,
        last_exit_at: exit.at.toISOString(),
      })
      .where('name', '=', name)
      .execute();
  }

  /** The servers made from the template, by name. */
  async usesTemplate(id: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('servers')
      .select('name')
      .where('template_id', '=', id)
      .execute();
    return rows.map((row) => row.name).sort(byText);
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
      // The digest was the old image's: the next start records the new one's.
      ...(changes.image === undefined ? {} : { image: changes.image, image_digest: null }),
      ...limitColumns(changes.limits ?? {}),
    };
    if (Object.keys(set).length === 0) return;
    await this.#db.updateTable('servers').set(set).where('name', '=', name).execute();
  }

  async delete(name: string): Promise<void> {
    await this.#db.deleteFrom('servers').where('name', '=', name).execute();
  }

  async recordStarted(
    name: string,
    process: { pid: number; identity: string; startedAt: Date },
  ): Promise<void> {
    await this.#db
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

  async recordImageDigest(name: string, digest: string | null): Promise<void> {
    await this.#db
      .updateTable('servers')
      .set({ image_digest: digest })
      .where('name', '=', name)
      .execute();
  }

  /** The process is gone; `desiredRunning` says whether the panel should start it again. */
  async recordStopped(name: string, desiredRunning: boolean): Promise<void> {
    await this.#db
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
