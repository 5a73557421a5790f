/**
 * Opens the panel's database: embedded SQLite (a file in DATA_DIR) or PostgreSQL, behind the same
 * Kysely interface, and brings its schema up to date. Only this folder and the repositories know
 * which one is in use.
 */
import SQLite from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type Migration,
  type SqliteDatabase,
} from 'kysely';
import pg from 'pg';
import type { Config } from '../config.js';
import * as initial from './migrations/0001_initial.js';
import * as serverRuntime from './migrations/0002_server_runtime.js';
import * as ticketHistory from './migrations/0003_ticket_history.js';
import * as oidcIdentities from './migrations/0004_oidc_identities.js';
import * as serverLimits from './migrations/0005_server_limits.js';
import * as templates from './migrations/0006_templates.js';
import * as schedules from './migrations/0007_schedules.js';
import * as backups from './migrations/0008_backups.js';
import * as serverPermissions from './migrations/0009_server_permissions.js';
import * as twoFactor from './migrations/0010_two_factor.js';
import * as apiKeys from './migrations/0011_api_keys.js';
import * as auditLog from './migrations/0012_audit_log.js';
import * as webhooks from './migrations/0013_webhooks.js';
import * as permissionAuthors from './migrations/0014_permission_authors.js';
import * as defaultLimits from './migrations/0016_default_limits.js';
import * as serverOwner from './migrations/0017_server_owner.js';
import * as serverIds from './migrations/0018_server_ids.js';
import * as passwordLinks from './migrations/0019_password_links.js';
import * as registries from './migrations/0020_registries.js';
import * as installReason from './migrations/0022_install_reason.js';
import * as sshKeys from './migrations/0023_ssh_keys.js';
import * as nodes from './migrations/0024_nodes.js';
import * as allocationsPerNode from './migrations/0025_allocations_per_node.js';
import * as serverTransfers from './migrations/0026_server_transfers.js';
import { AlreadyExists, NoLongerExists } from '../domain/conflicts.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  close(): Promise<void>;
}

/** Every migration, in order. Listed explicitly so a build holds them all and none is skipped. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial': initial,
  '0002_server_runtime': serverRuntime,
  '0003_ticket_history': ticketHistory,
  '0004_oidc_identities': oidcIdentities,
  '0005_server_limits': serverLimits,
  '0006_templates': templates,
  '0007_schedules': schedules,
  '0008_backups': backups,
  '0009_server_permissions': serverPermissions,
  '0010_two_factor': twoFactor,
  '0011_api_keys': apiKeys,
  '0012_audit_log': auditLog,
  '0013_webhooks': webhooks,
  '0014_permission_authors': permissionAuthors,
  '0016_default_limits': defaultLimits,
  '0017_server_owner': serverOwner,
  '0018_server_ids': serverIds,
  '0019_password_links': passwordLinks,
  '0020_registries': registries,
  '0022_install_reason': installReason,
  '0023_ssh_keys': sshKeys,
  '0024_nodes': nodes,
  '0025_allocations_per_node': allocationsPerNode,
  '0026_server_transfers': serverTransfers,
};

/** How long SQLite waits for another writer before giving up with SQLITE_BUSY. */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;

export async function openDatabase(database: Config['database']): Promise<Db> {
  if (database.kind === 'sqlite') {
    const file = new SQLite(database.file, { timeout: SQLITE_BUSY_TIMEOUT_MS });
    file.pragma('journal_mode = WAL');
    // FULL: an acknowledged write survives a power cut too, not only a crash of the panel.
    file.pragma('synchronous = FULL');
    file.pragma('foreign_keys = ON');
    file.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    const kysely = new Kysely<Database>({
      dialect: new SqliteDialect({ database: withStatementCache(file) }),
    });
    return withMigrations({ kysely, dialect: 'sqlite', close: () => kysely.destroy() });
  }

  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  // An idle client whose connection drops emits 'error' on the pool; without a listener that
  // would crash the panel. The next query simply gets a fresh connection.
  pool.on('error', () => undefined);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return withMigrations({ kysely, dialect: 'postgres', close: () => kysely.destroy() });
}

/** Prepared statements kept for reuse, the most recently used last. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; preparing is a good part of a small query's cost in SQLite.
 * The same SQL text always gets the same prepared statement (they are reusable: the driver runs
 * each one to completion before the next), up to a bounded number of distinct texts.
 */
function withStatementCache(file: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => {
      cache.clear();
      file.close();
    },
    prepare: (sql: string) => {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = file.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) {
          const oldest = cache.keys().next();
          if (oldest.done !== true) cache.delete(oldest.value);
        }
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

async function withMigrations(db: Db): Promise<Db> {
  try {
    await migrate(db);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

async function migrate(db: Db): Promise<void> {
  // On PostgreSQL the bookkeeping tables go in the schema the connection works in, so panels
  // sharing one database in separate schemas (search_path) never see each other's migrations.
  const migrationTableSchema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely))
          .rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
    ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }),
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) {
    throw error instanceof Error ? error : new Error('Migration failed', { cause: error });
  }
}

const errorCode = (error: unknown): unknown =>
  typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;

/**
 * Runs a repository's write, turning either database's constraint violations into the domain's
 * `AlreadyExists` (unique) and `NoLongerExists` (foreign key); other errors pass unchanged.
 */
export async function withConstraints<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw new AlreadyExists({ cause: error });
    if (isForeignKeyViolation(error)) throw new NoLongerExists({ cause: error });
    throw error;
  }
}

/** True when `error` is a unique-constraint violation, on either database. */
export function isUniqueViolation(error: unknown): boolean {
  const code = errorCode(error);
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** True when `error` is a foreign-key violation, on either database. */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = errorCode(error);
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
