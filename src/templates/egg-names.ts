/**
 * The variable names an egg uses that the import changes, and every reference to them that
 * follows: a reserved name renamed (`hostname` → `SERVER_HOSTNAME`, as Pelican does) and the other
 * spellings of a repeated name (`Foo` then `FOO`: the last is kept). Pure.
 *
 * Contract: a reference keeps pointing at the variable the egg meant.
 * - `{{…}}` placeholders (`{{NAME}}`, `{{env.NAME}}`, `{{server.build.env.NAME}}`…) name a
 *   variable ignoring case: only egg variables answer them, so `{{server.build.env.hostname}}`
 *   and `{{server.build.env.HOSTNAME}}` both mean the variable `hostname`.
 * - Shell references (`$name`, `${name}`, `${name:-x}`, `${#name}`) in start commands and the
 *   install script are case-sensitive, as the shell is: `$HOSTNAME` is the shell's own variable
 *   unless the egg's variable is spelt `HOSTNAME`.
 * - In start commands, also Pelican's rename: every whole word equal to a renamed reserved name,
 *   upper-cased (`\bHOSTNAME\b`), gets the prefix.
 */

export interface NameChanges {
  /** Upper-cased name as the egg wrote it → the name kept. */
  readonly byUpper: ReadonlyMap<string, string>;
  /** Each spelling the egg wrote → the name kept, when they differ. */
  readonly exact: ReadonlyMap<string, string>;
  /** Upper-cased reserved name → the name kept: Pelican's rename of words in start commands. */
  readonly reservedWords: ReadonlyMap<string, string>;
}

export const NO_CHANGES: NameChanges = {
  byUpper: new Map(),
  exact: new Map(),
  reservedWords: new Map(),
};

/** The name a placeholder's variable part stands for after the changes (`hostname` → …). */
export function changedName(name: string, changes: NameChanges): string {
  return changes.byUpper.get(name.toUpperCase()) ?? name;
}

/** `$name`, `${name…}` and `${#name…}` references to a changed spelling, renamed. */
export function renameShellReferences(text: string, changes: NameChanges): string {
  if (changes.exact.size === 0) return text;
  // Names are letters, digits and `_` (checked at import): nothing to escape.
  const names = [...changes.exact.keys()].join('|');
  const reference = new RegExp(`\\$(\\{[#!]?)?(${names})(?![A-Za-z0-9_])`, 'g');
  return text.replace(
    reference,
    (_whole, brace: string | undefined, name: string) =>
      `$${brace ?? ''}${changes.exact.get(name) ?? name}`,
  );
}

/**
 * Pelican's rename in start commands: every whole word equal to a renamed reserved name
 * (upper-cased, case-sensitive) gets the `SERVER_` prefix.
 */
export function renameReservedWords(command: string, changes: NameChanges): string {
  if (changes.reservedWords.size === 0) return command;
  const words = new RegExp(`\\b(${[...changes.reservedWords.keys()].join('|')})\\b`, 'g');
  return command.replace(words, (word) => changes.reservedWords.get(word) ?? word);
}
