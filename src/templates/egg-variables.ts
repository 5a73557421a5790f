/**
 * An egg's `variables` as TemplateVariables, in display order, and the names the import changed
 * (src/templates/egg-names.ts applies them to commands, config files and the install script).
 * Reserved and repeated names are resolved as Pelican does, each with a warning; rules are read
 * by src/templates/rules.ts, and what it does not enforce, or a default that fails its own rules,
 * is a warning, never a refusal. A variable that cannot be read throws, as egg.ts promises.
 */
import type { TemplateVariable } from '../domain/template.js';
import {
  describe,
  EGG_LIMITS,
  invalid,
  list,
  optionalText,
  own,
  record,
  requiredText,
  scalar,
  type Json,
} from './egg-fields.js';
import type { NameChanges } from './egg-names.js';
import { checkValue, comparedVariables, parseRules, ruleNotes, unknownRules } from './rules.js';

/**
 * Variable names Pelican reserves for what the panel itself sets in the environment; its
 * importer renames an egg variable with one of these names to `SERVER_<NAME>`, and so does this.
 */
export const RESERVED_ENV_NAMES: readonly string[] = [
  'P_SERVER_UUID',
  'P_SERVER_ALLOCATION_LIMIT',
  'SERVER_MEMORY',
  'SERVER_IP',
  'SERVER_PORT',
  'ENV',
  'HOME',
  'USER',
  'STARTUP',
  'MODIFIED_STARTUP',
  'SERVER_UUID',
  'UUID',
  'INTERNAL_IP',
  'HOSTNAME',
  'TERM',
  'LANG',
  'PWD',
  'TZ',
  'TIMEZONE',
];

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/i;

/**
 * The variables, in display order, and the names the import changed. A reserved name (any case)
 * is renamed to `SERVER_<NAME>`, as Pelican does; a name repeated (ignoring case, after renames)
 * keeps its last definition, as both panels end up doing (Pterodactyl stores both and the last
 * one fills the environment; Pelican updates the first with the second). Each is a warning.
 */
export function readVariables(
  egg: Json,
  warnings: string[],
): { variables: TemplateVariable[]; renames: NameChanges } {
  const raw = list(own(egg, 'variables'), 'variables');
  if (raw.length > EGG_LIMITS.variables) {
    throw invalid('variables', `has more than ${EGG_LIMITS.variables} variables`);
  }
  const read = raw.map((entry, i) => {
    const { variable, sort } = readVariable(entry, `variables[${i}]`);
    const original = variable.envVariable;
    const upper = original.toUpperCase();
    const reserved = RESERVED_ENV_NAMES.includes(upper);
    const env = reserved ? `SERVER_${upper}` : original;
    if (reserved) {
      warnings.push(
        `variables[${i}] (${original}): the name is reserved for the panel; renamed to ${env}, with every reference to it in the start commands, config files and install script (as Pelican does)`,
      );
    }
    return { variable: { ...variable, envVariable: env }, original, reserved, sort, index: i };
  });

  // The last definition of each name (ignoring case) is kept.
  const last = new Map<string, (typeof read)[number]>();
  for (const entry of read) last.set(entry.variable.envVariable.toUpperCase(), entry);
  const byUpper = new Map<string, string>();
  const exact = new Map<string, string>();
  const reservedWords = new Map<string, string>();
  for (const entry of read) {
    const kept = last.get(entry.variable.envVariable.toUpperCase()) ?? entry;
    const env = kept.variable.envVariable;
    if (kept !== entry) {
      warnings.push(
        `variables[${entry.index}] (${entry.original}): variables[${kept.index}] has the same name; the last one is kept, as in the panels`,
      );
    }
    if (entry.original !== env) {
      byUpper.set(entry.original.toUpperCase(), env);
      exact.set(entry.original, env);
    }
    if (entry.reserved) reservedWords.set(entry.original.toUpperCase(), env);
  }
  const out = read.filter((entry) => last.get(entry.variable.envVariable.toUpperCase()) === entry);

  const defaults = Object.fromEntries(
    out.map(({ variable }) => [variable.envVariable, variable.defaultValue]),
  );
  const names = new Set(out.map(({ variable }) => variable.envVariable));
  for (const { variable, index } of out) {
    const label = `variables[${index}] (${variable.envVariable})`;
    for (const { rule, readAs } of ruleNotes(variable.rules)) {
      warnings.push(`${label}: rule ${JSON.stringify(rule)} is read as ${JSON.stringify(readAs)}`);
    }
    for (const rule of unknownRules(variable.rules)) {
      warnings.push(`${label}: rule ${JSON.stringify(rule)} is not enforced`);
    }
    for (const other of comparedVariables(variable.rules)) {
      if (!names.has(other)) {
        warnings.push(
          `${label}: a rule compares it with ${other}, which is not a variable of this egg; that rule is not enforced`,
        );
      }
    }
    const problem = checkValue(variable.rules, variable.defaultValue, defaults);
    if (problem !== null) {
      warnings.push(
        `${label}: the default value ${JSON.stringify(variable.defaultValue)} fails its own rules: ${problem}`,
      );
    }
  }
  // Pelican exports carry each variable's display position as `sort`.
  const variables = out
    .sort((a, b) => a.sort - b.sort || a.index - b.index)
    .map(({ variable }) => variable);
  return { variables, renames: { byUpper, exact, reservedWords } };
}

export function readVariable(
  entry: unknown,
  path: string,
): { variable: TemplateVariable; sort: number } {
  const fields = record(entry, path);
  const envVariable = requiredText(
    own(fields, 'env_variable'),
    `${path}.env_variable`,
    EGG_LIMITS.name,
  );
  if (!ENV_NAME.test(envVariable)) {
    throw invalid(
      `${path}.env_variable`,
      `${describe(envVariable)} is not a variable name (letters, digits and _, not starting with a digit)`,
    );
  }
  const sort = own(fields, 'sort');
  return {
    variable: {
      name: requiredText(own(fields, 'name'), `${path}.name`, EGG_LIMITS.name),
      description: optionalText(own(fields, 'description'), `${path}.description`, EGG_LIMITS.text),
      envVariable,
      defaultValue: scalar(own(fields, 'default_value'), `${path}.default_value`, EGG_LIMITS.value),
      userViewable: flag(own(fields, 'user_viewable'), `${path}.user_viewable`),
      userEditable: flag(own(fields, 'user_editable'), `${path}.user_editable`),
      rules: readRules(own(fields, 'rules'), `${path}.rules`),
    },
    sort: typeof sort === 'number' && Number.isFinite(sort) ? sort : Number.MAX_SAFE_INTEGER,
  };
}

export function readRules(value: unknown, path: string): string[] {
  if (value === undefined || value === null) return [];
  let rules: string[];
  if (typeof value === 'string') {
    if (value.length > EGG_LIMITS.rule * EGG_LIMITS.rules) throw invalid(path, 'is too long');
    rules = parseRules(value);
  } else {
    rules = parseRules(
      // An empty entry (`["required", "string", ""]`, as Pelican exports `required|string|`) is
      // dropped, as the same trailing pipe in a string is.
      list(value, path).map((rule, i) => optionalText(rule, `${path}[${i}]`, EGG_LIMITS.rule)),
    );
  }
  if (rules.length > EGG_LIMITS.rules)
    throw invalid(path, `has more than ${EGG_LIMITS.rules} rules`);
  const long = rules.findIndex((rule) => rule.length > EGG_LIMITS.rule);
  if (long !== -1)
    throw invalid(`${path}[${long}]`, `is longer than ${EGG_LIMITS.rule} characters`);
  return rules;
}

/** Booleans as the eggs write them: true/false, 1/0, "1"/"0", "true"/"false"; absent is false. */
export function flag(value: unknown, path: string): boolean {
  if (value === undefined || value === null) return false;
  if (value === true || value === 1 || value === '1' || value === 'true') return true;
  if (value === false || value === 0 || value === '0' || value === 'false' || value === '')
    return false;
  throw invalid(path, `${describe(value)} is not true or false`);
}
