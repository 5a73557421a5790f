/**
 * What a template's start and config files use, for the people who fill them in: whether it
 * needs a port (the create form marks the port required), and which keys of a file its config
 * rules rewrite at every start, from which variables (the file editor says so before anyone
 * edits them). Pure: the template, a path and who may see which variable.
 */
import type { TemplateDefinition, TemplateVariable } from '../domain/template.js';
import { mapPlaceholders } from './render.js';

/** What the panel itself puts in a server's environment, as the note names it. */
const PANEL_VALUES: Readonly<Record<string, string>> = {
  SERVER_PORT: "the server's primary port",
  SERVER_IP: "the server's primary address",
  SERVER_MEMORY: "the server's memory limit in MiB",
};

/** A shell reference to the port in a start command: `$SERVER_PORT`, `${SERVER_PORT}`. */
const SHELL_PORT = /\$\{?SERVER_PORT\b/;

/**
 * True when a start command (any of them) or a config-file value uses the server's port
 * (`{{server.build.default.port}}`, `{{SERVER_PORT}}`, `$SERVER_PORT`): without one the start is
 * refused, or the file gets the placeholder as it is.
 */
export function needsPort(template: Pick<TemplateDefinition, 'startupCommands' | 'configFiles'>) {
  const usesPort = (text: string) => {
    let found = false;
    mapPlaceholders(text, (_placeholder, variable, whole) => {
      if (variable === 'SERVER_PORT') found = true;
      return whole;
    });
    return found;
  };
  return (
    template.startupCommands.some(({ command }) => usesPort(command) || SHELL_PORT.test(command)) ||
    template.configFiles.some((rule) => rule.replace.some(({ value }) => usesPort(value)))
  );
}

/** Where a rewritten value comes from. */
export interface ValueSource {
  /** The environment name; null for a variable the caller may not see, or a panel setting. */
  readonly envVariable: string | null;
  /** In words: the variable's name, `a hidden variable`, or what the panel puts there. */
  readonly name: string;
  /** A template variable the caller may not see. */
  readonly hidden: boolean;
}

export interface RewrittenKey {
  /** The key as the parser reads it (`server-port`, `network.server_port`, a line's start). */
  readonly match: string;
  /** Only a current value equal to this is replaced (null: always). */
  readonly ifValue: string | null;
  /** What is written, placeholders as in the template; a hidden variable's shows as `[hidden]`. */
  readonly value: string;
  /** The variables and panel values the written value is made of (none: a fixed value). */
  readonly from: readonly ValueSource[];
}

export interface RewrittenFile {
  readonly file: string;
  readonly parser: TemplateDefinition['configFiles'][number]['parser'];
  readonly keys: readonly RewrittenKey[];
}

/**
 * `path` as a comparable form: separators `/` or `\`, no empty or `.` segments (`./a//b` is
 * `a/b`); null when a `..` segment leaves the folder (no rule names such a path).
 */
function normalPath(path: string): string | null {
  const segments = path.split(/[\\/]/).filter((segment) => segment !== '' && segment !== '.');
  return segments.includes('..') ? null : segments.join('/');
}

/**
 * The config rules of the template, those of `path` alone when it is given, with what each
 * written value is made of. `sees` says whether the caller may see a variable: one they may
 * not is named as hidden, never by its name or value.
 */
export function rewrittenKeys(
  template: Pick<TemplateDefinition, 'configFiles' | 'variables'>,
  sees: (variable: TemplateVariable) => boolean,
  path?: string,
): RewrittenFile[] {
  const wanted = path === undefined ? undefined : normalPath(path);
  if (wanted === null) return [];
  const variables = new Map(template.variables.map((v) => [v.envVariable, v]));
  return template.configFiles
    .filter((rule) => wanted === undefined || normalPath(rule.file) === wanted)
    .map((rule) => ({
      file: rule.file,
      parser: rule.parser,
      keys: rule.replace.map((replacement) => {
        const from = new Map<string, ValueSource>();
        const value = mapPlaceholders(replacement.value, (placeholder, name, whole) => {
          const variable = name === null ? undefined : variables.get(name);
          if (variable !== undefined && !sees(variable)) {
            from.set(`hidden:${name ?? ''}`, {
              envVariable: null,
              name: 'a hidden variable',
              hidden: true,
            });
            return '[hidden]';
          }
          const source: ValueSource =
            variable !== undefined
              ? { envVariable: variable.envVariable, name: variable.name, hidden: false }
              : name !== null && PANEL_VALUES[name] !== undefined
                ? { envVariable: name, name: PANEL_VALUES[name], hidden: false }
                : { envVariable: null, name: `the panel's ${placeholder}`, hidden: false };
          from.set(source.envVariable ?? placeholder, source);
          return whole;
        });
        return {
          match: replacement.match,
          ifValue: replacement.ifValue,
          value,
          from: [...from.values()],
        };
      }),
    }));
}
