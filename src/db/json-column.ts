/**
 * The one reader of JSON columns: a repository parses every JSON text it stored through
 * `readJson`, with the schema (TypeBox) or guard of what it writes there, and gets that type back
 * without a cast.
 *
 * A malformed column fails the same way everywhere: a text that is not JSON, or JSON its schema
 * does not describe, throws `MalformedColumn`, naming the column but never the value (it may hold
 * users' text or secrets). The panel writes nothing malformed, so this means the database was
 * changed outside it: the request fails as any unexpected error does (500, logged with its request
 * id, its text never shown to the client) instead of handing a wrong shape to code that trusts the
 * type. A column whose contract is more lenient says so by its schema (server variables and user
 * permissions read any JSON and drop what this version does not know), and a repository whose
 * contract reads an unreadable value as its default (the panel settings, perhaps written by
 * another version) catches this one error.
 */
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';

/** A stored JSON text that is not what its repository writes there. */
export class MalformedColumn extends Error {
  constructor(
    /** `table.column`. */
    readonly column: string,
    reason: string,
  ) {
    super(`The stored ${column} is malformed: ${reason}`);
    this.name = 'MalformedColumn';
  }
}

/** A check of a parsed value: a TypeBox schema, or a guard for what a schema cannot say. */
export type JsonCheck<T> = TSchema | ((value: unknown) => value is T);

const isGuard = <T>(check: JsonCheck<T>): check is (value: unknown) => value is T =>
  typeof check === 'function';

/** The value stored in `column` as `text`; throws `MalformedColumn` (see above). */
export function readJson<T>(text: string, guard: (value: unknown) => value is T, column: string): T;
export function readJson<const S extends TSchema>(
  text: string,
  schema: S,
  column: string,
): Static<S>;
export function readJson(text: string, check: JsonCheck<unknown>, column: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedColumn(column, 'not JSON');
  }
  const ok = isGuard(check) ? check(value) : Value.Check(check, value);
  if (!ok) throw new MalformedColumn(column, 'not the shape written there');
  return value;
}
