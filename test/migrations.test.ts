/**
 * Migrations that change stored data: a database migrated up to the step before, given rows as
 * an older panel wrote them, then opened by the panel (which migrates to the latest).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { MIGRATIONS, openDatabase } from '../src/db/database.js';
import { testEnvironment } from './helpers/app.js';

describe('migration 0014', () => {
  it('turns every grant of backups into the four backups permissions, and credits old schedules to the oldest admin', async () => {
    const { env, cleanup } = await testEnvironment();
    try {
      const config = loadConfig(env);
      const database = config.database;
      const old = new Kysely<unknown>({
        dialect:
          database.kind === 'sqlite'
            ? new SqliteDialect({ database: new SQLite(database.file) })
            : new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }),
      });
      try {
        const migrator = new Migrator({
          db: old,
          provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
        });
        const { error } = await migrator.migrateTo('0013_webhooks');
        assert.equal(error, undefined);
        const at = '2030-01-01T00:00:00.000Z';
        const user = (name: string, role: string) =>
          sql`insert into users (username, username_key, password_hash, role, token_version, created_at)
              values (${name}, ${name}, null, ${role}, 0, ${at})`.execute(old);
        await user('member', 'user');
        await user('boss', 'admin');
        await user('second', 'admin');
        const ids = Object.fromEntries(
          (
            await sql<{
              id: number | string;
              username: string;
            }>`select id, username from users`.execute(old)
          ).rows.map((row) => [row.username, Number(row.id)]),
        );
        await sql`insert into servers (name, display_name, start_command, stop_command, stop_timeout_seconds, auto_restart, created_at, desired_running)
                  values ('alpha', 'alpha', 'true', null, 10, 0, ${at}, 0)`.execute(old);
        await sql`insert into user_servers (user_id, server_name, permissions)
                  values (${ids.member}, 'alpha', ${JSON.stringify(['files.read', 'backups', 'power'])})`.execute(
          old,
        );
        await sql`insert into api_keys (user_id, name, token_hash, prefix, servers, permissions, created_at)
                  values (${ids.member}, 'old', 'hash', 'gpk_x', null, ${JSON.stringify(['backups'])}, ${at}),
                         (${ids.member}, 'all', 'hash2', 'gpk_y', null, null, ${at})`.execute(old);
        await sql`insert into schedules (server_name, name, cron, timezone, enabled, only_when_running, tasks, last_run_at, last_outcome, handled_until, created_at)
                  values ('alpha', 'old', '0 4 * * *', 'UTC', 1, 0, '[]', null, null, ${at}, ${at})`.execute(
          old,
        );
        await sql`insert into backup_settings (server_name, keep_last, keep_days, max_count, max_bytes, before_commands, after_commands, saved_line, wait_seconds)
                  values ('alpha', null, null, null, null, '["save-off"]', '[]', null, 60)`.execute(
          old,
        );
      } finally {
        await old.destroy();
      }

      const db = await openDatabase(database);
      try {
        const grant = await db.kysely
          .selectFrom('user_servers')
          .select('permissions')
          .executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(grant.permissions), [
          'files.read',
          'backups.create',
          'backups.download',
          'backups.restore',
          'backups.delete',
          'power',
        ]);
        const keys = await db.kysely
          .selectFrom('api_keys')
          .select(['name', 'permissions'])
          .orderBy('name')
          .execute();
        assert.deepEqual(
          keys.map((key) => [
            key.name,
            key.permissions === null ? null : (JSON.parse(key.permissions) as unknown),
          ]),
          [
            ['all', null],
            ['old', ['backups.create', 'backups.download', 'backups.restore', 'backups.delete']],
          ],
        );
        const boss = await db.kysely
          .selectFrom('users')
          .select('id')
          .where('username', '=', 'boss')
          .executeTakeFirstOrThrow();
        const schedule = await db.kysely
          .selectFrom('schedules')
          .select('changed_by')
          .executeTakeFirstOrThrow();
        assert.equal(schedule.changed_by, boss.id);
        const settings = await db.kysely
          .selectFrom('backup_settings')
          .select('commands_by')
          .executeTakeFirstOrThrow();
        assert.equal(settings.commands_by, boss.id);
      } finally {
        await db.close();
      }
    } finally {
      await cleanup();
    }
  });
});
