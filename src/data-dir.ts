/**
 * The permissions of the data directory: the database, the secrets and the server folders belong
 * to the panel alone. DATA_DIR and its `servers` folder are 0700, or 0711 when servers run as
 * another user (it must pass through them to reach its own folder, without listing them); the
 * SQLite database is 0600 (SQLite gives its journal files the same mode). A directory that was
 * readable by others is tightened, and the panel says so.
 */
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import type { Config } from './config.js';

/** Applies the modes; returns what the start-up log should warn about. */
export function secureDataDir(config: Config, serversRunAsOtherUser: boolean): string[] {
  const warnings: string[] = [];
  const folderMode = serversRunAsOtherUser ? 0o711 : 0o700;
  const before = statSync(config.dataDir).mode & 0o777;
  if ((before & 0o066) !== 0) {
    warnings.push(
      `DATA_DIR ${config.dataDir} was open to others (mode ${octal(before)}): now ${octal(folderMode)}`,
    );
  }
  chmodSync(config.dataDir, folderMode);
  mkdirSync(config.serversDir, { recursive: true, mode: folderMode });
  chmodSync(config.serversDir, folderMode);
  // Backups hold every server's files: the panel's alone, whatever the servers run as.
  mkdirSync(config.backupDir, { recursive: true, mode: 0o700 });
  chmodSync(config.backupDir, 0o700);
  if (config.database.kind === 'sqlite') {
    closeSync(openSync(config.database.file, 'a', 0o600));
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        chmodSync(`${config.database.file}${suffix}`, 0o600);
      } catch {
        // No journal file yet.
      }
    }
  }
  return warnings;
}

const octal = (mode: number): string => `0${mode.toString(8).padStart(3, '0')}`;

/**
 * Names this panel on the machine (from its data directory): its parent cgroup and the label of
 * its containers, so that two panels never take each other's servers.
 */
export function panelId(dataDir: string): string {
  return createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
}
