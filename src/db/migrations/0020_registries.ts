/**
 * Container registries an admin lists (docs/templates.md, "Images"): each host once, with the
 * credentials pulls from it use (the password sealed with a key derived from the panel's JWT
 * secret; both null: pulled anonymously). Whether images may come only from the listed ones is
 * the `registries_restricted` row of panel_settings (absent: from any). And the registry digest
 * of the image each server's container was last made from. Frozen.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('registries')
    .addColumn('host', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text')
    .addColumn('password', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('servers').addColumn('image_digest', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('servers').dropColumn('image_digest').execute();
  await db.schema.dropTable('registries').execute();
}
