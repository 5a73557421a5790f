/**
 * Why an install failed, kept with its state (`install_reason`, and `install_last_lines`: a JSON
 * array of the last lines it printed), and whether a server's last exit was a clean stop
 * (`last_exit_clean_stop`: the stop ended it the way the stop asks).
 *
 * The panel's own templates, as an earlier panel imported them, are brought up to date: Minetest
 * is marked as reading no console input, and OpenTTD loads its newest save at a start and saves
 * at a stop; so are the start commands of servers made from OpenTTD that still run the shipped
 * one (one an admin changed is left alone). Frozen: the texts are those of this release.
 *
 * Numbered 0022: 0020 and 0021 belong to work of the same issue on other branches.
 */
import { sql, type Kysely } from 'kysely';

const OLD_OPENTTD_STARTUP =
  '/usr/games/openttd -D {{server.build.default.ip}}:{{server.build.default.port}} -c openttd.cfg';
const NEW_OPENTTD_STARTUP =
  'save=$(ls -1t save/autosave/*.sav 2>/dev/null | head -n 1); ' +
  'if [ -n "$save" ]; then echo "Loading the newest save: $save"; set -- -g "$save"; fi; ' +
  'exec /usr/games/openttd -D {{server.build.default.ip}}:{{server.build.default.port}} -c openttd.cfg "$@"';

type Definition = Record<string, unknown>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function minetest(definition: Definition): Definition {
  const features: unknown[] = Array.isArray(definition.features) ? definition.features : [];
  return {
    ...definition,
    features: features.includes('no_console_input') ? features : [...features, 'no_console_input'],
    readsConsoleInput: false,
  };
}

function openttd(definition: Definition): Definition {
  const startups: unknown[] = Array.isArray(definition.startupCommands)
    ? definition.startupCommands
    : [];
  const done: unknown[] = Array.isArray(definition.donePatterns) ? definition.donePatterns : [];
  const files: unknown[] = Array.isArray(definition.configFiles) ? definition.configFiles : [];
  return {
    ...definition,
    startupCommands: startups.map((startup: unknown) =>
      isRecord(startup) && startup.command === OLD_OPENTTD_STARTUP
        ? { ...startup, command: NEW_OPENTTD_STARTUP }
        : startup,
    ),
    donePatterns: done.includes('Network revision name')
      ? done
      : [...done, 'Network revision name'],
    configFiles: files.map((rule: unknown) => {
      if (!isRecord(rule) || rule.file !== 'openttd.cfg' || !Array.isArray(rule.replace))
        return rule;
      const replace: unknown[] = rule.replace;
      if (replace.some((r) => isRecord(r) && r.match === 'gui.autosave_on_exit')) return rule;
      return {
        ...rule,
        replace: [...replace, { match: 'gui.autosave_on_exit', ifValue: null, value: 'true' }],
      };
    }),
  };
}

const SHIPPED: Readonly<Record<string, (definition: Definition) => Definition>> = {
  'game-panel-minetest-debian': minetest,
  'game-panel-openttd-debian': openttd,
};

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, type] of [
    ['install_reason', 'text'],
    ['install_last_lines', 'text'],
    ['last_exit_clean_stop', 'integer'],
  ] as const) {
    await db.schema.alterTable('servers').addColumn(name, type).execute();
  }

  for (const [uuid, update] of Object.entries(SHIPPED)) {
    const rows = await sql<{ id: string; definition: string }>`
      select id, definition from templates where uuid = ${uuid}`.execute(db);
    for (const row of rows.rows) {
      let stored: unknown;
      try {
        stored = JSON.parse(row.definition);
      } catch {
        continue;
      }
      if (!isRecord(stored)) continue;
      await sql`update templates set definition = ${JSON.stringify(update(stored))}
                where id = ${row.id}`.execute(db);
      if (update === openttd) {
        await sql`update servers set start_command = ${NEW_OPENTTD_STARTUP}
                  where template_id = ${row.id} and start_command = ${OLD_OPENTTD_STARTUP}`.execute(
          db,
        );
      }
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of ['last_exit_clean_stop', 'install_last_lines', 'install_reason']) {
    await db.schema.alterTable('servers').dropColumn(name).execute();
  }
}
