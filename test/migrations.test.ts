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
import { parseEgg } from '../src/templates/egg.js';
import { OPENTTD_STARTUP, SHIPPED_EGGS } from '../src/templates/shipped.js';
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

describe('migration 0022', () => {
  it('brings the shipped Minetest and OpenTTD templates up to date, and the start of OpenTTD servers that kept the shipped one', async () => {
    const { env, cleanup } = await testEnvironment();
    try {
      const database = loadConfig(env).database;
      const old = new Kysely<unknown>({
        dialect:
          database.kind === 'sqlite'
            ? new SqliteDialect({ database: new SQLite(database.file) })
            : new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }),
      });
      const oldStartup =
        '/usr/games/openttd -D {{server.build.default.ip}}:{{server.build.default.port}} -c openttd.cfg';
      try {
        const migrator = new Migrator({
          db: old,
          provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
        });
        const { error } = await migrator.migrateTo('0019_password_links');
        assert.equal(error, undefined);
        const at = '2030-01-01T00:00:00.000Z';
        // The definitions as an earlier panel stored them.
        const [, minetest, openttd] = SHIPPED_EGGS.map((egg) => {
          // Stored before the flag existed.
          const { readsConsoleInput, ...definition } = parseEgg(JSON.stringify(egg)).definition;
          assert.equal(typeof readsConsoleInput, 'boolean');
          return definition;
        });
        assert.ok(minetest && openttd);
        const oldMinetest = { ...minetest, features: [] };
        const oldOpenttd = {
          ...openttd,
          startupCommands: [{ name: 'Default', command: oldStartup }],
          donePatterns: ['starting game'],
          configFiles: openttd.configFiles.map((rule) => ({
            ...rule,
            replace: rule.replace.filter((r) => r.match !== 'gui.autosave_on_exit'),
          })),
        };
        for (const [id, uuid, definition] of [
          ['minetest-debian', 'game-panel-minetest-debian', oldMinetest],
          ['openttd-debian', 'game-panel-openttd-debian', oldOpenttd],
        ] as const) {
          await sql`insert into templates (id, uuid, name, format, definition, warnings, created_at)
                    values (${id}, ${uuid}, ${id}, 'PTDL_v2', ${JSON.stringify(definition)}, '[]', ${at})`.execute(
            old,
          );
        }
        for (const [id, name, start] of [
          [1, 'kept', oldStartup],
          [2, 'changed', `${oldStartup} -g my.sav`],
        ] as const) {
          await sql`insert into server_ids (id, name, created_at) values (${id}, ${name}, ${at})`.execute(
            old,
          );
          await sql`insert into servers (id, name, display_name, start_command, stop_command, stop_timeout_seconds, auto_restart, created_at, desired_running, template_id)
                    values (${id}, ${name}, ${name}, ${start}, 'quit', 10, 0, ${at}, 0, 'openttd-debian')`.execute(
            old,
          );
        }
      } finally {
        await old.destroy();
      }

      const db = await openDatabase(database);
      try {
        const definitions = Object.fromEntries(
          (await db.kysely.selectFrom('templates').select(['id', 'definition']).execute()).map(
            (row) => [row.id, JSON.parse(row.definition) as Record<string, unknown>],
          ),
        );
        const minetest = definitions['minetest-debian'];
        assert.ok(minetest);
        assert.deepEqual(minetest.features, ['no_console_input']);
        assert.equal(minetest.readsConsoleInput, false);
        const openttd = definitions['openttd-debian'];
        assert.ok(openttd);
        assert.deepEqual(openttd.startupCommands, [{ name: 'Default', command: OPENTTD_STARTUP }]);
        assert.deepEqual(openttd.donePatterns, ['starting game', 'Network revision name']);
        assert.deepEqual(
          (openttd.configFiles as { file: string; replace: { match: string }[] }[]).map((rule) => [
            rule.file,
            rule.replace.map((r) => r.match),
          ]),
          [
            ['openttd.cfg', ['network.server_port', 'gui.autosave_on_exit']],
            ['private.cfg', ['network.server_name']],
          ],
        );
        const servers = await db.kysely
          .selectFrom('servers')
          .select(['name', 'start_command', 'install_reason', 'last_exit_clean_stop'])
          .orderBy('name')
          .execute();
        assert.deepEqual(
          servers.map((row) => [row.name, row.start_command]),
          [
            ['changed', `${oldStartup} -g my.sav`],
            ['kept', OPENTTD_STARTUP],
          ],
        );
        assert.deepEqual(
          servers.map((row) => [row.install_reason, row.last_exit_clean_stop]),
          [
            [null, null],
            [null, null],
          ],
        );
      } finally {
        await db.close();
      }
    } finally {
      await cleanup();
    }
  });
});

describe('migration 0025', () => {
  it('keys allocations on their server’s node, keeping every one, and moves them with it', async () => {
    const { env, cleanup } = await testEnvironment();
    try {
      const database = loadConfig(env).database;
      const old = new Kysely<unknown>({
        dialect:
          database.kind === 'sqlite'
            ? new SqliteDialect({ database: new SQLite(database.file) })
            : new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }),
      });
      const at = '2030-01-01T00:00:00.000Z';
      try {
        const migrator = new Migrator({
          db: old,
          provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
        });
        const { error } = await migrator.migrateTo('0024_nodes');
        assert.equal(error, undefined);
        await sql`insert into nodes (name, docker_host, connection, created_at, updated_at)
                  values ('eu-1', 'tcp://10.0.0.5:2376', 'tls', ${at}, ${at})`.execute(old);
        for (const [id, name, node] of [
          [1, 'here', 'local'],
          [2, 'there', 'eu-1'],
        ] as const) {
          await sql`insert into server_ids (id, name, created_at) values (${id}, ${name}, ${at})`.execute(
            old,
          );
          await sql`insert into servers (id, name, display_name, start_command, stop_timeout_seconds, auto_restart, created_at, desired_running, node)
                    values (${id}, ${name}, ${name}, 'true', 10, 0, ${at}, 0, ${node})`.execute(
            old,
          );
        }
        await sql`insert into server_allocations (server_name, ip, port, is_primary)
                  values ('here', '0.0.0.0', 30000, 1), ('here', '0.0.0.0', 30001, 0),
                         ('there', '0.0.0.0', 30002, 1)`.execute(old);
      } finally {
        await old.destroy();
      }

      const db = await openDatabase(database);
      try {
        const rows = () =>
          db.kysely
            .selectFrom('server_allocations')
            .select(['server_name', 'node', 'ip', 'port', 'is_primary'])
            .orderBy('port')
            .orderBy('server_name')
            .execute();
        assert.deepEqual(await rows(), [
          { server_name: 'here', node: 'local', ip: '0.0.0.0', port: 30000, is_primary: 1 },
          { server_name: 'here', node: 'local', ip: '0.0.0.0', port: 30001, is_primary: 0 },
          { server_name: 'there', node: 'eu-1', ip: '0.0.0.0', port: 30002, is_primary: 1 },
        ]);
        // The same address and port on another node; never twice on one.
        await db.kysely
          .insertInto('server_allocations')
          .values({ server_name: 'there', node: 'eu-1', ip: '0.0.0.0', port: 30000, is_primary: 0 })
          .execute();
        await assert.rejects(
          db.kysely
            .insertInto('server_allocations')
            .values({
              server_name: 'there',
              node: 'eu-1',
              ip: '0.0.0.0',
              port: 30002,
              is_primary: 0,
            })
            .execute(),
        );
        // An allocation's node is its server's.
        await assert.rejects(
          db.kysely
            .insertInto('server_allocations')
            .values({
              server_name: 'there',
              node: 'local',
              ip: '0.0.0.0',
              port: 30009,
              is_primary: 0,
            })
            .execute(),
        );
        // A server moved to a node where one of its addresses is taken is not moved.
        const move = () =>
          db.kysely
            .updateTable('servers')
            .set({ node: 'eu-1' })
            .where('name', '=', 'here')
            .execute();
        await assert.rejects(move());
        const here = await db.kysely
          .selectFrom('servers')
          .select('node')
          .where('name', '=', 'here')
          .executeTakeFirstOrThrow();
        assert.equal(here.node, 'local');
        // Else it takes its allocations with it.
        await db.kysely
          .deleteFrom('server_allocations')
          .where('server_name', '=', 'there')
          .where('port', '=', 30000)
          .execute();
        await move();
        assert.deepEqual(
          (await rows()).map((row) => [row.server_name, row.node, row.port]),
          [
            ['here', 'eu-1', 30000],
            ['here', 'eu-1', 30001],
            ['there', 'eu-1', 30002],
          ],
        );
      } finally {
        await db.close();
      }
    } finally {
      await cleanup();
    }
  });
});
