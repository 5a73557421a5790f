/**
 * The programs the command line runs on the operator's behalf (systemctl): run to the end, their
 * output collected for the person to read, never through a shell.
 */
// eslint-disable-next-line no-restricted-imports -- the operator's command line drives systemctl itself; it starts no game server.
import { spawnSync } from 'node:child_process';

export interface ProgramResult {
  /** True when the program ran and answered exit status 0. */
  readonly ok: boolean;
  /** Why not, in one line: its own error output, its exit status, or why it could not start. */
  readonly problem: string;
}

export function runProgram(program: string, args: readonly string[]): ProgramResult {
  const result = spawnSync(program, args, { encoding: 'utf8', timeout: 120_000 });
  if (result.error) return { ok: false, problem: result.error.message };
  if (result.status === 0) return { ok: true, problem: '' };
  const said = `${result.stderr}\n${result.stdout}`.trim().split('\n')[0] ?? '';
  const status =
    result.status === null ? `signal ${result.signal ?? '?'}` : `status ${result.status}`;
  return { ok: false, problem: said === '' ? `exit ${status}` : `${said} (exit ${status})` };
}
