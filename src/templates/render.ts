/**
 * What a template server runs: its environment and start script, rendered from the template,
 * the server's variable values, its primary allocation and its memory limit on every start.
 *
 * Placeholders are the Pterodactyl forms (an imported Pelican egg is normalised to them):
 * `{{NAME}}` and `{{env.NAME}}` / `{{server.build.env.NAME}}` for an environment variable,
 * `{{server.build.default.port}}`, `{{server.build.default.ip}}` and `{{server.build.memory}}`.
 *
 * The start command runs through `bash -c` (eggs use bash syntax) the way the eggs' own
 * images run it (src/host/runtime/shells.ts): placeholders become `${NAME}` references, so a value is expanded by the shell
 * and never parsed as shell code: a variable holding `; rm -rf ~` is one odd argument, not a
 * command.
 */
import { totalmem } from 'node:os';
import type { Allocation } from '../domain/server.js';
import type { TemplateDefinition } from '../domain/template.js';

/** Placeholders of the server's build that stand for a panel variable. */
const BUILD_PLACEHOLDERS: Readonly<Record<string, string>> = {
  'server.build.default.port': 'SERVER_PORT',
  'server.build.default.ip': 'SERVER_IP',
  'server.build.memory': 'SERVER_MEMORY',
};

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** The environment name a placeholder stands for, or null when it names nothing known. */
function variableOf(placeholder: string): string | null {
  const build = BUILD_PLACEHOLDERS[placeholder];
  if (build !== undefined) return build;
  for (const prefix of ['server.build.env.', 'env.']) {
    if (placeholder.startsWith(prefix)) return placeholder.slice(prefix.length);
  }
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(placeholder) ? placeholder : null;
}

export interface ServerBuild {
  /** The server's values, by environment name; a variable without one gets its default. */
  readonly variables: Readonly<Record<string, string>>;
  /** Primary first. */
  readonly allocations: readonly Allocation[];
  readonly memoryBytes: number | null;
}

/**
 * The environment a template server gets (beside PATH, HOME and LANG): every template variable,
 * then what the panel sets: SERVER_MEMORY (MiB; the host's memory when unlimited, as a Java
 * `-Xmx` needs a number), SERVER_IP and SERVER_PORT (the primary allocation; no SERVER_PORT
 * without one) and STARTUP (the raw start command).
 */
export function templateEnvironment(
  template: Pick<TemplateDefinition, 'variables'>,
  startCommand: string,
  build: ServerBuild,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of template.variables) {
    env[variable.envVariable] = build.variables[variable.envVariable] ?? variable.defaultValue;
  }
  const primary = build.allocations[0];
  env.SERVER_MEMORY = String(Math.floor((build.memoryBytes ?? totalmem()) / 2 ** 20));
  env.SERVER_IP = primary?.ip ?? '0.0.0.0';
  if (primary) env.SERVER_PORT = String(primary.port);
  else delete env.SERVER_PORT;
  env.STARTUP = startCommand;
  return env;
}

/** The start command as a `bash -c` script: placeholders become `${NAME}` references. */
export function startScript(command: string): string {
  return command.replace(PLACEHOLDER, (whole, placeholder: string) => {
    const name = variableOf(placeholder);
    return name === null ? whole : `\${${name}}`;
  });
}

/**
 * The placeholders of `text` that stand for variables `env` does not have (a port the server
 * has no allocation for, a variable the template lacks).
 */
export function missingVariables(text: string, env: Readonly<Record<string, string>>): string[] {
  const missing = new Set<string>();
  for (const match of text.matchAll(PLACEHOLDER)) {
    const name = variableOf(match[1] ?? '');
    if (name !== null && !Object.hasOwn(env, name)) missing.add(name);
  }
  return [...missing];
}

/**
 * `text` with its placeholders replaced by their values (config-file values, the command shown
 * in the console). Variables named in `hidden` show as `[hidden]`; unknown placeholders stay.
 */
export function renderText(
  text: string,
  env: Readonly<Record<string, string>>,
  hidden: ReadonlySet<string> = new Set(),
): string {
  return text.replace(PLACEHOLDER, (whole, placeholder: string) => {
    const name = variableOf(placeholder);
    if (name === null || !Object.hasOwn(env, name)) return whole;
    return hidden.has(name) ? '[hidden]' : (env[name] ?? '');
  });
}

/**
 * `text` with each placeholder replaced by what `replace` answers for it (given its name,
 * `server.build.default.port`, and the environment name it stands for, or null).
 */
export function mapPlaceholders(
  text: string,
  replace: (placeholder: string, variable: string | null, whole: string) => string,
): string {
  return text.replace(PLACEHOLDER, (whole, placeholder: string) =>
    replace(placeholder, variableOf(placeholder), whole),
  );
}
