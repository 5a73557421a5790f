/**
 * A template's config-file rules applied to a server's files before each start (Pterodactyl
 * Wings' "configuration file parsers"; what each parser does is in config-formats.ts, and
 * docs/templates-config-files.md for template authors).
 *
 * Each rule is one file, handled on its own: a file that cannot be read, parsed or written is
 * reported with a message and left exactly as it was, and the other files are still done. A
 * missing file is created, as Wings does, when the rules write something into it (a rule that
 * only changes an existing value creates nothing); its missing folders are made too. Only the
 * rendered values change the file: `render` resolves the placeholders of a value, never of a
 * `match` or an `ifValue`, as in Wings.
 *
 * Paths go through the storage's one containment function (`userPath`) and its descriptor-based
 * resolution, so no rule can reach outside the server's folder, through `..` or a symlink; a rule
 * with an absolute path is refused outright.
 */
import type { ConfigFileRule, ConfigParser } from '../../domain/template.js';
import { userPath } from '../../domain/paths.js';
import { AppError } from '../../errors.js';
import { ConfigFileError, editConfig, type Replacement } from './config-formats.js';
import type { ServerFiles } from '../host.js';

/**
 * What the rules need of the servers' files: the local storage, or the files of another machine
 * (a file agent's, src/host/remote/), through the port.
 */
export type ConfigFileStore = Pick<ServerFiles, 'readText' | 'writeText' | 'createEntry'>;

/** Largest config file read: a bigger one is reported, not parsed. */
export const CONFIG_FILE_MAX_BYTES = 4 * 1024 * 1024;

/** A narrow view of one server's folder: the only way `applyConfigFiles` reaches the disk. */
export interface ConfigFileAccess {
  /** The file's text, or null when there is no such file (nor its folder). */
  read(segments: readonly string[]): Promise<string | null>;
  /** Replaces or creates the file, atomically, making its missing folders. */
  write(segments: readonly string[], content: string): Promise<void>;
}

/**
 * What happened to one rule's file: `changed`, `created` (it did not exist), `unchanged` (its
 * values were already right; it was not rewritten), `skipped` (it does not exist and the rules
 * had nothing to write into it) or `failed` (left as it was; `error` says why).
 */
export type ConfigFileOutcome = 'changed' | 'created' | 'unchanged' | 'skipped' | 'failed';

export interface ConfigFileResult {
  /** The rule's path, as the template gives it. */
  readonly file: string;
  readonly parser: ConfigParser;
  readonly outcome: ConfigFileOutcome;
  /** Why it failed, fit to show to the server's users (names only paths inside the folder). */
  readonly error?: string;
  /** An unexpected error behind `error`, for the log; never shown. */
  readonly cause?: unknown;
}

export interface ConfigFileReport {
  /** One result per rule, in the rules' order. */
  readonly files: readonly ConfigFileResult[];
}

/** Applies `rules` one after the other (a file named twice sees the first rule's changes). */
export async function applyConfigFiles(
  rules: readonly ConfigFileRule[],
  files: ConfigFileAccess,
  render: (value: string) => string,
): Promise<ConfigFileReport> {
  const results: ConfigFileResult[] = [];
  for (const rule of rules) results.push(await applyRule(rule, files, render));
  return { files: results };
}

async function applyRule(
  rule: ConfigFileRule,
  files: ConfigFileAccess,
  render: (value: string) => string,
): Promise<ConfigFileResult> {
  const result = (outcome: ConfigFileOutcome): ConfigFileResult => ({
    file: rule.file,
    parser: rule.parser,
    outcome,
  });
  try {
    const segments = configPath(rule.file);
    const replacements: Replacement[] = rule.replace.map((replacement) => ({
      match: replacement.match,
      ifValue: replacement.ifValue,
      value: render(replacement.value),
    }));
    const current = await files.read(segments);
    const next = editConfig(rule.parser, current ?? '', replacements);
    if (current === null) {
      if (next === '') return result('skipped');
      await files.write(segments, next);
      return result('created');
    }
    if (next === current) return result('unchanged');
    await files.write(segments, next);
    return result('changed');
  } catch (error) {
    if (error instanceof AppError || error instanceof ConfigFileError) {
      return { ...result('failed'), error: error.message };
    }
    if (error instanceof RangeError) {
      return { ...result('failed'), error: 'The file is nested too deeply to be read' };
    }
    return { ...result('failed'), error: 'The file could not be updated', cause: error };
  }
}

/** A rule's path as segments inside the server's folder; absolute paths are refused. */
function configPath(file: string): string[] {
  if (/^(?:[/\\]|[A-Za-z]:)/.test(file)) {
    throw new ConfigFileError(
      `${JSON.stringify(file)} is not relative to the server's folder: config files are`,
    );
  }
  const segments = userPath(file);
  if (segments.length === 0) {
    throw new ConfigFileError(`${JSON.stringify(file)} does not name a file`);
  }
  return segments;
}

/**
 * One server's folder in `storage` as a ConfigFileAccess: text files of at most `maxBytes`
 * (larger ones, folders, binary and special files fail with the storage's error), written held
 * to `quota` (null: none) like any save of the file editor.
 */
export function serverConfigFiles(
  storage: ConfigFileStore,
  server: string,
  options: { readonly maxBytes?: number; readonly quota?: number | null } = {},
): ConfigFileAccess {
  const maxBytes = options.maxBytes ?? CONFIG_FILE_MAX_BYTES;
  const quota = options.quota ?? null;
  const isNotFound = (error: unknown): boolean =>
    error instanceof AppError && error.code === 'NOT_FOUND';
  return {
    async read(segments) {
      try {
        return await storage.readText(server, segments, maxBytes);
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async write(segments, content) {
      try {
        await storage.writeText(server, segments, content, quota);
        return;
      } catch (error) {
        if (!isNotFound(error) || segments.length < 2) throw error;
      }
      // A folder on the way is missing: made one level after the other, each inside its parent
      // as the storage resolves it (an existing entry, a symlink included, is never replaced).
      for (let depth = 0; depth < segments.length - 1; depth += 1) {
        try {
          await storage.createEntry(
            server,
            segments.slice(0, depth),
            segments[depth] ?? '',
            'folder',
          );
        } catch (error) {
          if (!(error instanceof AppError && error.code === 'ALREADY_EXISTS')) throw error;
        }
      }
      await storage.writeText(server, segments, content, quota);
    },
  };
}
