/**
 * The panel as an operator runs it: a separate process started from src/server.ts, for the tests
 * that kill it, restart it or read what it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface PanelProcess {
  readonly child: ChildProcess;
  /** Its base URL, once it listens. */
  readonly url: string;
  /** Everything it printed so far. */
  output(): string;
}

/**
 * Spawns the panel with exactly `env` (and PATH, and no configuration file unless `env` names
 * one in PANEL_CONFIG); its output is piped.
 */
export function spawnPanel(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', PANEL_CONFIG: '/dev/null', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Starts the panel on a free loopback port and waits for its "listening" line; rejects with what
 * it printed when it exits first. `track` is told of the child at once, so that a test's `after`
 * can end it whatever happens.
 */
export async function startPanelProcess(
  env: Record<string, string>,
  track?: (child: ChildProcess) => void,
): Promise<PanelProcess> {
  const child = spawnPanel({ ...env, PORT: '0', LOG_LEVEL: 'info' });
  track?.(child);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (https?:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      reject(new Error(`the panel exited (${code ?? signal}) before listening: ${output}`));
    });
  });
  return { child, url, output: () => output };
}
