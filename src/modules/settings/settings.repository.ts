/**
 * The only code that reads and writes the panel's own settings: one `panel_settings` row each for
 * the server defaults, the backup defaults and registration. A row missing, or holding what this
 * version cannot read, counts as the default.
 */
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { MalformedColumn, readJson } from '../../db/json-column.js';
import type { Database } from '../../db/schema.js';
import {
  DEFAULT_PANEL_SETTINGS,
  type DefaultBackupLimits,
  type DefaultLimits,
  type PanelSettings,
} from '../../domain/panel-settings.js';

const KEYS = {
  serverDefaults: 'server_defaults',
  backupDefaults: 'backup_defaults',
  registrationOpen: 'registration_open',
} as const;

export class SettingsRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async read(): Promise<PanelSettings> {
    const rows = await this.#db
      .selectFrom('panel_settings')
      .select(['key', 'value'])
      .where('key', 'in', Object.values(KEYS))
      .execute();
    const stored = new Map(rows.map((row) => [row.key, parse(row.key, row.value)]));
    const defaults = DEFAULT_PANEL_SETTINGS;
    return {
      serverDefaults: serverDefaults(stored.get(KEYS.serverDefaults)) ?? defaults.serverDefaults,
      backupDefaults: backupDefaults(stored.get(KEYS.backupDefaults)) ?? defaults.backupDefaults,
      registrationOpen:
        typeof stored.get(KEYS.registrationOpen) === 'boolean'
          ? (stored.get(KEYS.registrationOpen) as boolean)
          : defaults.registrationOpen,
    };
  }

  /** Writes every setting, in one transaction. */
  async write(settings: PanelSettings): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      for (const [field, key] of Object.entries(KEYS) as [keyof PanelSettings, string][]) {
        const value = JSON.stringify(settings[field]);
        await trx
          .insertInto('panel_settings')
          .values({ key, value })
          .onConflict((conflict) => conflict.column('key').doUpdateSet({ value }))
          .execute();
      }
    });
  }
}

/** The stored value, or undefined when it is not JSON (it then counts as the default). */
function parse(key: string, text: string): unknown {
  try {
    return readJson(text, Type.Unknown(), `panel_settings.${key}`);
  } catch (error) {
    if (error instanceof MalformedColumn) return undefined;
    throw error;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const count = (value: unknown): value is number => Number.isSafeInteger(value) && Number(value) > 0;
const countOrNull = (value: unknown): value is number | null => value === null || count(value);

function serverDefaults(value: unknown): DefaultLimits | null {
  if (!isRecord(value)) return null;
  const { pids, memoryBytes, cpuPercent, diskBytes } = value;
  if (!count(pids) || !countOrNull(memoryBytes) || !countOrNull(cpuPercent)) return null;
  if (!countOrNull(diskBytes)) return null;
  return { pids, memoryBytes, cpuPercent, diskBytes };
}

function backupDefaults(value: unknown): DefaultBackupLimits | null {
  if (!isRecord(value)) return null;
  const { maxCount, maxBytes } = value;
  if (!count(maxCount) || !countOrNull(maxBytes)) return null;
  return { maxCount, maxBytes };
}
