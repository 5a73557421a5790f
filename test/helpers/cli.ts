/**
 * The operator's command line as an operator runs it: a separate process started from
 * src/cli.ts, with exactly the environment given (and PATH), standard input given as text.
 */
import { spawn } from 'node:child_process';

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCliProcess(
  args: readonly string[],
  env: Record<string, string>,
  stdin = '',
): Promise<CliResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    // No configuration file unless `env` names one: nothing of this machine's leaks in.
    env: { PATH: process.env.PATH ?? '', PANEL_CONFIG: '/dev/null', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => {
      resolve({ status, stdout, stderr });
    });
  });
}
