/** The only code that reads and writes the two-factor columns, recovery codes and settings. */
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { readJson } from '../../db/json-column.js';
import type { Database } from '../../db/schema.js';
import { ROLES, type Role } from '../../domain/user.js';

export interface TwoFactorState {
  readonly secret: string | null;
  readonly pending: string | null;
  readonly enabledAt: string | null;
  readonly lastStep: number | null;
}

const REQUIRED_KEY = 'two_factor_required_roles';
const Roles = Type.Array(Type.Union(ROLES.map((role) => Type.Literal(role))));

export class TwoFactorRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async state(userId: number): Promise<TwoFactorState | undefined> {
    const row = await this.#db
      .selectFrom('users')
      .select(['totp_secret', 'totp_pending_secret', 'totp_enabled_at', 'totp_last_step'])
      .where('id', '=', userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return (
      row && {
        secret: row.totp_secret,
        pending: row.totp_pending_secret,
        enabledAt: row.totp_enabled_at,
        lastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
      }
    );
  }

  async setPending(userId: number, sealed: string): Promise<void> {
    await this.#db
      .updateTable('users')
      .set({ totp_pending_secret: sealed })
      .where('id', '=', userId)
      .execute();
  }

  /** Turns two-factor sign-in on with the pending secret and these code hashes, in one step. */
  async enable(
    userId: number,
    sealed: string,
    step: number,
    codeHashes: readonly string[],
    at: string,
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set({
          totp_secret: sealed,
          totp_pending_secret: null,
          totp_enabled_at: at,
          totp_last_step: step,
        })
        .where('id', '=', userId)
        .execute();
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      await trx
        .insertInto('recovery_codes')
        .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null })))
        .execute();
    });
  }

  async disable(userId: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set({
          totp_secret: null,
          totp_pending_secret: null,
          totp_enabled_at: null,
          totp_last_step: null,
        })
        .where('id', '=', userId)
        .execute();
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
    });
  }

  /**
   * Records `step` as used unless a later or equal one was: false when the code was used
   * already (two sign-ins racing with one code: only one wins).
   */
  async useStep(userId: number, step: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('users')
      .set({ totp_last_step: step })
      .where('id', '=', userId)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Marks the unused code with this hash used; false when there is none. */
  async useRecoveryCode(userId: number, codeHash: string, at: string): Promise<boolean> {
    const result = await this.#db
      .updateTable('recovery_codes')
      .set({ used_at: at })
      .where('user_id', '=', userId)
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async recoveryCodesLeft(userId: number): Promise<number> {
    const row = await this.#db
      .selectFrom('recovery_codes')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async requiredRoles(): Promise<Role[]> {
    const row = await this.#db
      .selectFrom('panel_settings')
      .select('value')
      .where('key', '=', REQUIRED_KEY)
      .executeTakeFirst();
    return row ? readJson(row.value, Roles, `panel_settings.${REQUIRED_KEY}`) : [];
  }

  async setRequiredRoles(roles: readonly Role[]): Promise<void> {
    const value = JSON.stringify(roles);
    await this.#db
      .insertInto('panel_settings')
      .values({ key: REQUIRED_KEY, value })
      .onConflict((conflict) => conflict.column('key').doUpdateSet({ value }))
      .execute();
  }
}
