/**
 * `DATA_DIR/panel.pid`: the pid of the panel that runs on a data directory. One panel at a time
 * may hold a data directory (two would take the same game servers from each other), and the
 * command line finds the panel there (`game-panel shutdown`).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config.js';

const FILE = 'panel.pid';

/**
 * The pid of the panel running on `dataDir`, or `null` when none does: no file, or one naming a
 * process that is gone or is not a Node.js program (the pid was reused).
 */
export function runningPanel(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(path.join(dataDir, FILE), 'utf8'), 10);
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    const program = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return path.basename(program).startsWith('node') ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Records this process as the panel of `dataDir`; a ConfigError when another panel runs on it.
 * Answers the release, which removes the file if it still names this process.
 */
export function claimDataDir(dataDir: string): () => void {
  const other = runningPanel(dataDir);
  if (other !== null && other !== process.pid) {
    throw new ConfigError(
      'DATA_DIR',
      `another panel (pid ${other}) runs on ${dataDir}; stop it first (game-panel shutdown)`,
    );
  }
  const file = path.join(dataDir, FILE);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o644 });
  return () => {
    if (runningPanel(dataDir) === process.pid) rmSync(file, { force: true });
  };
}
