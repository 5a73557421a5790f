/**
 * The only code that queries `server_transfers` and `server_old_copies` (migration 0026), and
 * the one update of `servers.node` a transfer makes: the switch, in one transaction with the
 * transfer's record and the old copy to remove.
 */
import type { Kysely, Selectable } from 'kysely';
import { withConstraints } from '../../db/database.js';
import type { Database, ServerTransfersTable } from '../../db/schema.js';
import {
  TRANSFER_PHASES,
  TRANSFER_STATUSES,
  type OldCopy,
  type OldCopyRemoval,
  type Transfer,
  type TransferPhase,
  type TransferStatus,
} from '../../domain/transfer.js';

/** What a transfer is recorded with when it begins. */
export interface NewTransfer {
  readonly id: string;
  readonly server: string;
  readonly from: string;
  readonly to: string;
  readonly phase: TransferPhase;
  readonly byUser: number | null;
  readonly startedAt: string;
}

/** What packing measured. */
export interface PackedTransfer {
  readonly files: number;
  readonly bytes: number;
  readonly checksum: string;
}

const number = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

const toTransfer = (row: Selectable<ServerTransfersTable>): Transfer => ({
  id: row.id,
  server: row.server,
  from: row.from_node,
  to: row.to_node,
  status: TRANSFER_STATUSES.find((status) => status === row.status) ?? 'failed',
  phase: TRANSFER_PHASES.find((phase) => phase === row.phase) ?? 'packing',
  message: row.message,
  files: row.files,
  bytes: number(row.bytes),
  checksum: row.checksum,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
});

export class TransfersRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async find(server: string): Promise<Transfer | undefined> {
    const row = await this.#db
      .selectFrom('server_transfers')
      .selectAll()
      .where('server', '=', server)
      .executeTakeFirst();
    return row && toTransfer(row);
  }

  /** The transfers an earlier run left `running`. */
  async running(): Promise<Transfer[]> {
    const rows = await this.#db
      .selectFrom('server_transfers')
      .selectAll()
      .where('status', '=', 'running')
      .execute();
    return rows.map(toTransfer);
  }

  /**
   * Records a transfer under way in place of the server's last one; false when one is running
   * already. Throws NoLongerExists when the server was deleted.
   */
  async begin(transfer: NewTransfer): Promise<boolean> {
    return withConstraints(() =>
      this.#db.transaction().execute(async (trx) => {
        const current = await trx
          .selectFrom('server_transfers')
          .select('status')
          .where('server', '=', transfer.server)
          .executeTakeFirst();
        if (current?.status === 'running') return false;
        await trx.deleteFrom('server_transfers').where('server', '=', transfer.server).execute();
        await trx
          .insertInto('server_transfers')
          .values({
            server: transfer.server,
            id: transfer.id,
            from_node: transfer.from,
            to_node: transfer.to,
            status: 'running',
            phase: transfer.phase,
            message: null,
            by_user: transfer.byUser,
            files: null,
            bytes: null,
            checksum: null,
            started_at: transfer.startedAt,
            finished_at: null,
          })
          .execute();
        return true;
      }),
    );
  }

  /** Moves a running transfer on to `phase` (with what packing measured, once known). */
  async setPhase(id: string, phase: TransferPhase, packed?: PackedTransfer): Promise<void> {
    await this.#db
      .updateTable('server_transfers')
      .set({
        phase,
        ...(packed === undefined
          ? {}
          : { files: packed.files, bytes: packed.bytes, checksum: packed.checksum }),
      })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  /** Ends a running transfer without a switch; false when it was not running any more. */
  async end(
    id: string,
    status: Exclude<TransferStatus, 'running' | 'done'>,
    message: string,
    at: string,
  ): Promise<boolean> {
    const result = await this.#db
      .updateTable('server_transfers')
      .set({ status, message, finished_at: at })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * The switch, in one transaction: the server's node becomes `to` (its allocations follow
   * through their foreign key), the transfer is `done` and the copy on `from` is to be removed
   * once the server has started on `to`. False, and nothing changed, when the transfer is no
   * longer running (cancelled, or rolled back by another run) or the server is no longer on
   * `from`. Throws AlreadyExists when one of its addresses and ports was taken on `to`
   * meanwhile.
   */
  async switchNode(transfer: Transfer, message: string, at: string): Promise<boolean> {
    return withConstraints(() =>
      this.#db.transaction().execute(async (trx) => {
        const ended = await trx
          .updateTable('server_transfers')
          .set({ status: 'done', phase: 'switched', message, finished_at: at })
          .where('id', '=', transfer.id)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (ended.numUpdatedRows === 0n) return false;
        const moved = await trx
          .updateTable('servers')
          .set({ node: transfer.to })
          .where('name', '=', transfer.server)
          .where('node', '=', transfer.from)
          .executeTakeFirst();
        if (moved.numUpdatedRows === 0n) throw new SwitchRefused();
        await trx
          .deleteFrom('server_old_copies')
          .where('server', '=', transfer.server)
          .where('node', '=', transfer.from)
          .execute();
        await trx
          .insertInto('server_old_copies')
          .values({
            server: transfer.server,
            node: transfer.from,
            remove: 'after-start',
            since: at,
          })
          .execute();
        return true;
      }),
    ).catch((error: unknown) => {
      if (error instanceof SwitchRefused) return false;
      throw error;
    });
  }

  /** The old copies of `server` (every server's without one), on any node. */
  async oldCopies(server?: string): Promise<OldCopy[]> {
    let query = this.#db.selectFrom('server_old_copies').selectAll();
    if (server !== undefined) query = query.where('server', '=', server);
    const rows = await query.orderBy('since').execute();
    return rows.map((row) => ({
      server: row.server,
      node: row.node,
      remove: row.remove === 'now' ? 'now' : 'after-start',
      since: row.since,
    }));
  }

  /** Records a copy of `server` on `node` to remove (replacing what was recorded of it). */
  async addOldCopy(
    server: string,
    node: string,
    remove: OldCopyRemoval,
    at: string,
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('server_old_copies')
        .where('server', '=', server)
        .where('node', '=', node)
        .execute();
      await trx
        .insertInto('server_old_copies')
        .values({ server, node, remove, since: at })
        .execute();
    });
  }

  async removeOldCopy(server: string, node: string): Promise<void> {
    await this.#db
      .deleteFrom('server_old_copies')
      .where('server', '=', server)
      .where('node', '=', node)
      .execute();
  }
}

/** The server was no longer on the node the transfer began from: the transaction is undone. */
class SwitchRefused extends Error {}
