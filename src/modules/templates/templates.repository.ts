/** The only code that queries the templates table. */
import type { Kysely, Selectable } from 'kysely';
import { Type } from 'typebox';
import { withConstraints } from '../../db/database.js';
import { readJson } from '../../db/json-column.js';
import type { Database, TemplatesTable } from '../../db/schema.js';
import {
  EGG_FORMATS,
  NO_CONSOLE_INPUT,
  type EggFormat,
  type Template,
  type TemplateDefinition,
} from '../../domain/template.js';
import { byText } from '../../sort.js';

const formatOf = (value: string): EggFormat =>
  EGG_FORMATS.find((format) => format === value) ?? 'PTDL_v2';

/** A definition as stored: one stored before the deny list or `readsConsoleInput` lacks it. */
type StoredDefinition = Omit<TemplateDefinition, 'readsConsoleInput' | 'fileDenylist'> & {
  readonly readsConsoleInput?: boolean;
  readonly fileDenylist?: readonly string[];
};

/**
 * Checks that a stored definition is an object; its fields are the egg importer's own
 * (src/templates/egg.ts), written after it checked them, and migrations keep them current.
 */
const isStoredDefinition = (value: unknown): value is StoredDefinition =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const Warnings = Type.Array(Type.String());

/**
 * A stored definition: one stored before the deny list was kept has none, one stored before
 * `readsConsoleInput` existed reads it from its features.
 */
function definitionOf(text: string): TemplateDefinition {
  const stored = readJson(text, isStoredDefinition, 'templates.definition');
  return {
    ...stored,
    fileDenylist: stored.fileDenylist ?? [],
    readsConsoleInput: stored.readsConsoleInput ?? !stored.features.includes(NO_CONSOLE_INPUT),
  };
}

const toTemplate = (row: Selectable<TemplatesTable>): Template => ({
  ...definitionOf(row.definition),
  id: row.id,
  uuid: row.uuid,
  format: formatOf(row.format),
  warnings: readJson(row.warnings, Warnings, 'templates.warnings'),
  createdAt: row.created_at,
});

export class TemplatesRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async find(id: string): Promise<Template | undefined> {
    const row = await this.#db
      .selectFrom('templates')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toTemplate(row);
  }

  async findByUuid(uuid: string): Promise<Template | undefined> {
    const row = await this.#db
      .selectFrom('templates')
      .selectAll()
      .where('uuid', '=', uuid)
      .executeTakeFirst();
    return row && toTemplate(row);
  }

  /** Every template, by name. */
  async list(): Promise<Template[]> {
    const rows = await this.#db.selectFrom('templates').selectAll().execute();
    return rows.map(toTemplate).sort((a, b) => byText(a.name, b.name) || byText(a.id, b.id));
  }

  async ids(): Promise<string[]> {
    const rows = await this.#db.selectFrom('templates').select('id').execute();
    return rows.map((row) => row.id);
  }

  /** Throws AlreadyExists when the id or the uuid is taken. */
  async insert(template: Template): Promise<void> {
    const { id, uuid, format, warnings, createdAt, ...definition } = template;
    await withConstraints(() =>
      this.#db
        .insertInto('templates')
        .values({
          id,
          uuid,
          name: definition.name,
          format,
          definition: JSON.stringify(definition),
          warnings: JSON.stringify(warnings),
          created_at: createdAt,
        })
        .execute(),
    );
  }

  /** False when there was none. Throws NoLongerExists while a server uses it. */
  async delete(id: string): Promise<boolean> {
    const result = await withConstraints(() =>
      this.#db.deleteFrom('templates').where('id', '=', id).executeTakeFirst(),
    );
    return result.numDeletedRows > 0n;
  }
}
