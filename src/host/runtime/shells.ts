/**
 * Start commands and install scripts are shell scripts written for the shells of the eggs'
 * images: start-ups for bash (Wings' yolks evaluate them with bash), install scripts for their
 * declared entrypoint (`bash`, or Alpine's `ash`). A runtime runs the first of the shells the
 * machine or image really has, and tells the console when that is not the one the script asked
 * for (docs/templates.md, "Shells").
 */
import type { LaunchSpec, ShellCommand } from './runtime.js';

/** The shells a start command may run with, best first: bash as in the yolks, else sh. */
export const START_SHELLS: readonly ShellCommand[] = [['bash'], ['sh']];

/**
 * The shells an install script declared with `entrypoint` may run with, best first: the
 * entrypoint itself; for `ash`, busybox's ash where there is no `ash` program (a Debian host),
 * then bash, which runs what eggs write for ash (`echo -e`, `==` in `[ ]`) as ash does; for
 * `bash`, sh when there is no bash. Any other entrypoint runs as written.
 */
export function installShells(entrypoint: string): readonly ShellCommand[] {
  const base = entrypoint.slice(entrypoint.lastIndexOf('/') + 1);
  if (base === 'ash') return [[entrypoint], ['busybox', 'ash'], ['bash'], ['sh']];
  if (base === 'bash') return [[entrypoint], ['sh']];
  return [[entrypoint]];
}

/**
 * `spec` run with the first of its shells that `has` finds (a program name or path). Unchanged
 * when it has no shells, when the first is there, or when none is (the start then fails naming
 * the shell it asked for).
 */
export async function withShell(
  spec: LaunchSpec,
  has: (program: string) => boolean | Promise<boolean>,
  where: string,
): Promise<LaunchSpec> {
  const shells = spec.shells;
  const wanted = shells?.[0];
  if (shells === undefined || wanted === undefined) return spec;
  for (const shell of shells) {
    if (!(await has(shell[0]))) continue;
    if (shell === wanted) return spec;
    const rest = spec.argv.slice(wanted.length);
    const what = spec.install === null ? 'the start command' : 'the install script';
    spec.say?.(`${where} has no ${wanted.join(' ')}: ${what} runs with ${shell.join(' ')}`);
    return { ...spec, argv: [...shell, ...rest] };
  }
  return spec;
}
