/**
 * What a start runs, worked out from the server's record and, for a server made from a
 * template, the template: the program and arguments, the environment, how the server tells it
 * has started and how it is stopped.
 */
import { parseCommand } from '../../domain/command.js';
import type { ServerRecord } from '../../domain/server.js';
import type { TemplateDefinition } from '../../domain/template.js';
import { AppError } from '../../errors.js';
import {
  missingVariables,
  renderText,
  startScript,
  templateEnvironment,
} from '../../templates/render.js';
import { INSTALL_SCRIPT_DIR, type ShellCommand } from '../runtime/runtime.js';
import { installShells, START_SHELLS } from '../runtime/shells.js';

export interface Launch {
  readonly argv: readonly [string, ...string[]];
  /** Set when `argv` is a shell script: the shells it may run with, best first. */
  readonly shells?: readonly ShellCommand[];
  readonly env: Readonly<Record<string, string>>;
  /** The command as the console shows it: values filled in, hidden variables masked. */
  readonly shown: string | null;
  /** Empty: the server counts as running as soon as it started. */
  readonly donePatterns: readonly string[];
}

/** The template server's environment, from its variables, primary allocation and memory limit. */
function environmentOf(record: ServerRecord, template: TemplateDefinition): Record<string, string> {
  return templateEnvironment(template, record.startCommand, {
    variables: record.variables,
    allocations: record.allocations,
    memoryBytes: record.limits.memoryBytes,
  });
}

export function serverLaunch(record: ServerRecord, template: TemplateDefinition | null): Launch {
  if (template === null) {
    const command = parseCommand(record.startCommand);
    if (!command.ok) throw new AppError('VALIDATION_FAILED', `startCommand: ${command.reason}`);
    return { argv: command.argv, env: {}, shown: null, donePatterns: [] };
  }
  const env = environmentOf(record, template);
  refuseMissing(record.startCommand, env, 'start command');
  const hidden = new Set(
    template.variables.filter((v) => !v.userViewable).map((v) => v.envVariable),
  );
  const shell = START_SHELLS[0] ?? ['bash'];
  return {
    // Evaluated by bash, as the eggs' yolks entrypoints do (`[[ ]]`, `==`, process substitution).
    argv: [...shell, '-c', startScript(record.startCommand)],
    shells: START_SHELLS,
    env,
    shown: renderText(record.startCommand, env, hidden),
    donePatterns: template.donePatterns,
  };
}

/**
 * The install script's run: the template's entrypoint on the script (or the nearest shell the
 * machine has: src/host/runtime/shells.ts), the server's environment.
 */
export function installLaunch(
  record: ServerRecord,
  template: TemplateDefinition,
): {
  argv: readonly [string, ...string[]];
  shells: readonly ShellCommand[];
  env: Record<string, string>;
} {
  const env = environmentOf(record, template);
  const shells = installShells(template.install?.entrypoint ?? 'bash');
  const shell = shells[0] ?? ['bash'];
  return { argv: [...shell, `${INSTALL_SCRIPT_DIR}/install.sh`], shells, env };
}

function refuseMissing(text: string, env: Record<string, string>, what: string): void {
  const missing = missingVariables(text, env);
  if (missing.length === 0) return;
  if (missing.includes('SERVER_PORT')) {
    throw new AppError(
      'CONFLICT',
      `The ${what} needs a port (SERVER_PORT): an admin gives the server one in its settings`,
    );
  }
  throw new AppError(
    'CONFLICT',
    `The ${what} uses ${missing.map((name) => `{{${name}}}`).join(', ')}, which the server's template does not define`,
  );
}
