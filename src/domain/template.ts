/**
 * A server template: what to run and how, imported from a Pterodactyl or Pelican egg (or shipped
 * with the panel in that format). Placeholders in the start command and the config-file values
 * are `{{NAME}}` (a variable's environment name) or the `{{server.…}}` / `{{env.…}}` forms the
 * eggs use; src/templates/render.ts resolves them.
 */

/** The egg formats an import understands. */
export type EggFormat = 'PTDL_v1' | 'PTDL_v2' | 'PLCN_v1' | 'PLCN_v2' | 'PLCN_v3';

export const EGG_FORMATS: readonly EggFormat[] = [
  'PTDL_v1',
  'PTDL_v2',
  'PLCN_v1',
  'PLCN_v2',
  'PLCN_v3',
];

/** How a config file is read and written (Wings' parsers). */
export type ConfigParser = 'properties' | 'yaml' | 'json' | 'ini' | 'xml' | 'file';

export const CONFIG_PARSERS: readonly ConfigParser[] = [
  'properties',
  'yaml',
  'json',
  'ini',
  'xml',
  'file',
];

/**
 * One `find` entry of a config file: the key (a dotted path for json and yaml, `section.key` for
 * ini, an element path for xml, the start of a line for `file`) and the value written there.
 * A value with `ifValue` replaces only when the current value equals it (the eggs' object form,
 * `{"old": "new"}`, gives one replacement per pair).
 */
export interface ConfigReplacement {
  readonly match: string;
  readonly ifValue: string | null;
  readonly value: string;
}

export interface ConfigFileRule {
  /** Relative to the server's folder; the storage refuses any path that leaves it. */
  readonly file: string;
  readonly parser: ConfigParser;
  readonly replace: readonly ConfigReplacement[];
}

/**
 * How the server is stopped: a console line, or a signal (`^C` is SIGINT, `^^C` SIGKILL,
 * `^SIGTERM` SIGTERM; docs/templates.md says why).
 */
export type StopMethod =
  | { readonly type: 'command'; readonly command: string }
  | { readonly type: 'signal'; readonly signal: 'SIGINT' | 'SIGTERM' | 'SIGKILL' };

export interface InstallScript {
  /** The script's text, run by `entrypoint` (`bash`, `ash`, `sh`). */
  readonly script: string;
  /** The container image the docker runtime runs it in; the process runtime runs it in its sandbox. */
  readonly image: string;
  readonly entrypoint: string;
}

export interface TemplateVariable {
  /** What the operator sees. */
  readonly name: string;
  readonly description: string;
  /** The environment variable, and the `{{NAME}}` placeholder. */
  readonly envVariable: string;
  readonly defaultValue: string;
  readonly userViewable: boolean;
  readonly userEditable: boolean;
  /** The validation rules as the egg wrote them (`required`, `max:20`, `regex:/^…$/`). */
  readonly rules: readonly string[];
}

export interface TemplateDefinition {
  readonly name: string;
  readonly author: string | null;
  readonly description: string;
  /**
   * Start commands by name (Pelican's `startup_commands`; a PTDL egg has one, named "Default").
   * The first one is the default.
   */
  readonly startupCommands: readonly { readonly name: string; readonly command: string }[];
  readonly stop: StopMethod;
  /**
   * A line of the console containing one of these marks the server as started; a pattern that
   * starts with `regex:` is a regular expression. Empty: running as soon as it starts.
   */
  readonly donePatterns: readonly string[];
  readonly configFiles: readonly ConfigFileRule[];
  readonly install: InstallScript | null;
  readonly variables: readonly TemplateVariable[];
  /** Container images by display name; the first one is the default. */
  readonly dockerImages: readonly { readonly name: string; readonly image: string }[];
  /** Feature flags of the egg (`eula`, `java_version`…), kept for later use. */
  readonly features: readonly string[];
  /**
   * The egg's `file_denylist`: gitignore lines naming the files nobody but an admin may read or
   * change through the panel (src/templates/denylist.ts). A template stored before has none.
   */
  readonly fileDenylist: readonly string[];
  /**
   * False when the game reads nothing from its console input (the egg's feature
   * {@link NO_CONSOLE_INPUT}): the console tab says so instead of offering a command box.
   */
  readonly readsConsoleInput: boolean;
}

/**
 * The egg feature of a game that reads no console input (Minetest). Eggs carry free-form
 * feature strings and both panels ignore those they do not know, so an egg stays importable there.
 */
export const NO_CONSOLE_INPUT = 'no_console_input';

export interface Template extends TemplateDefinition {
  /** A short slug made from the name at import (`minecraft-java`), unique. */
  readonly id: string;
  /** The egg's uuid, when it had one: an egg is imported once. */
  readonly uuid: string | null;
  readonly format: EggFormat;
  /** What the import noticed and did not enforce (unknown validation rules…). */
  readonly warnings: readonly string[];
  readonly createdAt: string;
}
