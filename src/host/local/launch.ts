/**
 * What a start runs, worked out from the server's record and, for a server made from a
 * template, the template: the program and arguments, the environment, how the server tells it
 * has started and how it is stopped.
 */
import { parseCommand } from '../../domain/command.js';
import type { ServerRecord } from '../../domain/server.js';
import type { StopMethod, TemplateDefinition } from '../../domain/template.js';
import { AppError } from '../../errors.js';
import {
  missingVariables,
  renderText,
  startScript,
  templateEnvironment,
} from '../../templates/render.js';
import { INSTALL_SCRIPT_DIR } from '../runtime/runtime.js';

export interface Launch {
  readonly argv: readonly [string, ...string[]];
  readonly env: Readonly<Record<string, string>>;
  /** The command as the console shows it: values filled in, hidden variables masked. */
  readonly shown: string | null;
  /** Empty: the server counts as running as soon as it started. */
  readonly donePatterns: readonly string[];
}

/**
 * A stop command of `^C` (or `^SIGINT`) is SIGINT, `^SIGTERM` SIGTERM and `^^C` SIGKILL, as in
 * the eggs; anything else is a line written to the console.
 */
export function stopMethodOf(stopCommand: string | null): StopMethod | null {
  if (stopCommand === null) return null;
  const signal = STOP_SIGNALS[stopCommand];
  return signal ? { type: 'signal', signal } : { type: 'command', command: stopCommand };
}

const STOP_SIGNALS: Readonly<Record<string, 'SIGINT' | 'SIGTERM' | 'SIGKILL'>> = {
  '^C': 'SIGINT',
  '^SIGINT': 'SIGINT',
  '^SIGTERM': 'SIGTERM',
  '^^C': 'SIGKILL',
};

/** The text stored as a server's stop command for a template's stop method. */
export function stopCommandOf(stop: StopMethod): string {
  if (stop.type === 'command') return stop.command;
  return { SIGINT: '^C', SIGTERM: '^SIGTERM', SIGKILL: '^^C' }[stop.signal];
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
  return {
    argv: ['/bin/sh', '-c', startScript(record.startCommand)],
    env,
    shown: renderText(record.startCommand, env, hidden),
    donePatterns: template.donePatterns,
  };
}

/**
 * The install script's run: the template's entrypoint on the script, the server's environment.
 * For the process runtime, `ash` becomes `sh` (the host has no Alpine shell).
 */
export function installLaunch(
  record: ServerRecord,
  template: TemplateDefinition,
): { argv: readonly [string, ...string[]]; env: Record<string, string> } {
  const env = environmentOf(record, template);
  let entrypoint = template.install?.entrypoint ?? 'bash';
  // Alpine's ash, which many eggs name, is not on a Debian host: its POSIX sh runs such scripts.
  if (record.runtime === 'process' && /^(?:\/bin\/)?ash$/.test(entrypoint)) entrypoint = 'sh';
  return { argv: [entrypoint, `${INSTALL_SCRIPT_DIR}/install.sh`], env };
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
