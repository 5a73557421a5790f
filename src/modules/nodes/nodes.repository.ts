/**
 * The only code that queries the nodes table, and the `node` column of servers where it counts
 * a node's servers and what they may use.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, NodesTable } from '../../db/schema.js';
import type { NodeConnectionKind, NodeRecord, NodeSettings } from '../../domain/node.js';

/** A node with its sealed secrets: to reach its engine, never answered. */
export interface StoredNode extends NodeRecord {
  readonly sealedSecrets: string | null;
}

/** What a new node is recorded with. */
export interface NewNodeRow extends NodeSettings {
  readonly name: string;
  readonly dockerHost: string;
  readonly connection: Exclude<NodeConnectionKind, 'local'>;
  readonly sealedSecrets: string;
}

/** The changes to a node: how it is reached (all three together) and its settings. */
export type NodeRowChanges = Partial<NodeSettings> & {
  readonly reach?: {
    readonly dockerHost: string;
    readonly connection: Exclude<NodeConnectionKind, 'local'>;
    readonly sealedSecrets: string;
  };
};

/** What the servers on a node hold: their names, and the sum of their limits. */
export interface NodeLoad {
  readonly servers: readonly string[];
  /** Sums of the servers' memory and disk limits; a server without a limit adds nothing. */
  readonly memoryBytes: number;
  readonly diskBytes: number;
}

const bytes = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

const CONNECTIONS: readonly NodeConnectionKind[] = ['local', 'tls', 'ssh'];

const toNode = (row: Selectable<NodesTable>): StoredNode => ({
  name: row.name,
  dockerHost: row.docker_host,
  connection: CONNECTIONS.find((kind) => kind === row.connection) ?? 'local',
  publicAddress: row.public_address,
  memoryBytes: bytes(row.memory_bytes),
  diskBytes: bytes(row.disk_bytes),
  memoryOverallocatePercent: row.memory_overallocate_percent,
  diskOverallocatePercent: row.disk_overallocate_percent,
  maintenance: row.maintenance === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  sealedSecrets: row.secrets,
});

export class NodesRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Every node, `local` first, then by name. */
  async list(): Promise<StoredNode[]> {
    const rows = await this.#db.selectFrom('nodes').selectAll().orderBy('name').execute();
    return rows
      .map(toNode)
      .sort((a, b) => Number(b.connection === 'local') - Number(a.connection === 'local'));
  }

  async find(name: string): Promise<StoredNode | undefined> {
    const row = await this.#db
      .selectFrom('nodes')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    return row && toNode(row);
  }

  /** Records a node; undefined when one of that name exists (nothing changed). */
  async insert(node: NewNodeRow, at: string): Promise<StoredNode | undefined> {
    const row = await this.#db
      .insertInto('nodes')
      .values({
        name: node.name,
        docker_host: node.dockerHost,
        connection: node.connection,
        secrets: node.sealedSecrets,
        public_address: node.publicAddress,
        memory_bytes: node.memoryBytes,
        disk_bytes: node.diskBytes,
        memory_overallocate_percent: node.memoryOverallocatePercent,
        disk_overallocate_percent: node.diskOverallocatePercent,
        maintenance: node.maintenance ? 1 : 0,
        created_at: at,
        updated_at: at,
      })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .returningAll()
      .executeTakeFirst();
    return row && toNode(row);
  }

  /** Applies `changes`; undefined when there is no such node. */
  async update(name: string, changes: NodeRowChanges, at: string): Promise<StoredNode | undefined> {
    const { reach } = changes;
    const row = await this.#db
      .updateTable('nodes')
      .set({
        ...(reach === undefined
          ? {}
          : {
              docker_host: reach.dockerHost,
              connection: reach.connection,
              secrets: reach.sealedSecrets,
            }),
        ...(changes.publicAddress === undefined ? {} : { public_address: changes.publicAddress }),
        ...(changes.memoryBytes === undefined ? {} : { memory_bytes: changes.memoryBytes }),
        ...(changes.diskBytes === undefined ? {} : { disk_bytes: changes.diskBytes }),
        ...(changes.memoryOverallocatePercent === undefined
          ? {}
          : { memory_overallocate_percent: changes.memoryOverallocatePercent }),
        ...(changes.diskOverallocatePercent === undefined
          ? {}
          : { disk_overallocate_percent: changes.diskOverallocatePercent }),
        ...(changes.maintenance === undefined ? {} : { maintenance: changes.maintenance ? 1 : 0 }),
        updated_at: at,
      })
      .where('name', '=', name)
      .returningAll()
      .executeTakeFirst();
    return row && toNode(row);
  }

  /**
   * Deletes `name` if no server is on it, in one transaction with the check: false when it has
   * servers (nothing changed), undefined when there is no such node.
   */
  async deleteIfEmpty(name: string): Promise<boolean | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const onIt = await trx
        .selectFrom('servers')
        .select('name')
        .where('node', '=', name)
        .limit(1)
        .executeTakeFirst();
      if (onIt !== undefined) return false;
      const result = await trx.deleteFrom('nodes').where('name', '=', name).executeTakeFirst();
      return result.numDeletedRows > 0n ? true : undefined;
    });
  }

  /** The servers on each node, and what their limits add up to. */
  async loads(): Promise<Map<string, NodeLoad>> {
    const rows = await this.#db
      .selectFrom('servers')
      .select(['name', 'node', 'memory_limit_bytes', 'disk_limit_bytes'])
      .orderBy('name')
      .execute();
    const loads = new Map<string, { servers: string[]; memoryBytes: number; diskBytes: number }>();
    for (const row of rows) {
      let load = loads.get(row.node);
      if (load === undefined) {
        load = { servers: [], memoryBytes: 0, diskBytes: 0 };
        loads.set(row.node, load);
      }
      load.servers.push(row.name);
      load.memoryBytes += bytes(row.memory_limit_bytes) ?? 0;
      load.diskBytes += bytes(row.disk_limit_bytes) ?? 0;
    }
    return loads;
  }
}
