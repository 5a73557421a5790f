/**
 * The only code that queries the password_links table (migration 0019). Links are found by the
 * SHA-256 of their token; a link of a deleted user is no link.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface StoredLink {
  readonly userId: number;
  readonly username: string;
  readonly expiresAt: string;
}

export class PasswordLinksRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Makes `tokenHash` the user's only link: every earlier one (used or not) is deleted in the
   * same transaction, and so are every user's expired links.
   */
  async replace(link: {
    userId: number;
    tokenHash: string;
    createdAt: Date;
    expiresAt: Date;
  }): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('password_links')
        .where((eb) =>
          eb.or([
            eb('user_id', '=', link.userId),
            eb('expires_at', '<=', link.createdAt.toISOString()),
          ]),
        )
        .execute();
      await trx
        .insertInto('password_links')
        .values({
          user_id: link.userId,
          token_hash: link.tokenHash,
          created_at: link.createdAt.toISOString(),
          expires_at: link.expiresAt.toISOString(),
        })
        .execute();
    });
  }

  /** Deletes every link of the user (their password was set some other way). */
  async deleteAllOf(userId: number): Promise<void> {
    await this.#db.deleteFrom('password_links').where('user_id', '=', userId).execute();
  }

  /** The live link with this hash: not expired at `now`, of a user who is not deleted. */
  async findLive(tokenHash: string, now: Date): Promise<StoredLink | undefined> {
    const row = await this.#db
      .selectFrom('password_links')
      .innerJoin('users', 'users.id', 'password_links.user_id')
      .select(['password_links.user_id', 'users.username', 'password_links.expires_at'])
      .where('password_links.token_hash', '=', tokenHash)
      .where('password_links.expires_at', '>', now.toISOString())
      .where('users.deleted_at', 'is', null)
      .executeTakeFirst();
    return row && { userId: row.user_id, username: row.username, expiresAt: row.expires_at };
  }

  /**
   * Uses the link up: deletes it when it is live at `now` and answers its user's id, or
   * undefined when there was no such link. Of two requests racing with one link, one gets it.
   */
  async take(tokenHash: string, now: Date): Promise<number | undefined> {
    const row = await this.#db
      .deleteFrom('password_links')
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now.toISOString())
      .returning('user_id')
      .executeTakeFirst();
    return row?.user_id;
  }
}
