/**
 * What a start opens on this machine before the panel is built, in the order that makes a start
 * that fails leave nothing behind: the process runtime first (a SANDBOX that cannot work stops
 * the start before anything is opened), then the docker runtime, then every check of the data
 * directory, and only then the first write (DATA_DIR and its JWT secret, src/data-dir.ts) and the
 * database. A failure on the way closes the process runtime again.
 */
import { ConfigError, ROOT_DATA_DIR, type Config } from './config.js';
import { folderAboveDataDir, panelId, prepareDataDir } from './data-dir.js';
import { openDatabase, type Db } from './db/database.js';
import { createDockerRuntime } from './host/runtime/docker/docker-runtime.js';
import {
  createProcessRuntime,
  type ProcessRuntimeOptions,
} from './host/runtime/process/process-runtime.js';
import type { Runtime } from './host/runtime/runtime.js';
import type { UidRange } from './host/runtime/server-user.js';

/** What tests hand in instead of what the start would open. */
export interface MachineOverrides {
  /** An already open database (tests keep a handle to insert rows directly). */
  readonly db?: Db;
  /** Replaces the local process runtime (the only thing that spawns server processes). */
  readonly runtime?: Runtime;
  /** Replaces the docker runtime. */
  readonly dockerRuntime?: Runtime;
  /** Options of the local runtime that tests change (how a process is identified). */
  readonly processRuntime?: Pick<ProcessRuntimeOptions, 'identityOf' | 'cgroupRoot'>;
}

/** What the start opened. */
export interface Machine {
  /** The process runtime (the one handed in, or the local one). */
  readonly runtime: Runtime;
  readonly docker: Runtime;
  /** A panel running as root gives each server a uid of its own (one of `serverUsers`). */
  readonly serverUsers: UidRange | null;
  readonly jwtSecret: Uint8Array;
  /** What the start-up log should warn about the data directory. */
  readonly dataDirWarnings: string[];
  readonly db: Db;
}

export async function openMachine(
  config: Config,
  overrides: MachineOverrides = {},
): Promise<Machine> {
  // First, so that a SANDBOX that cannot work stops the start before anything is opened.
  const local = overrides.runtime
    ? null
    : await createProcessRuntime({
        sandbox: config.sandbox,
        searchPath: config.searchPath,
        dataDir: config.dataDir,
        serversDir: config.serversDir,
        serverUser: config.serverUser,
        serverUidRange: config.serverUidRange,
        readOnlyPaths: config.sandboxReadOnlyPaths,
        network: config.serverNetwork,
        ...overrides.processRuntime,
      });
  const runtime: Runtime | null = overrides.runtime ?? local;
  if (runtime === null) throw new Error('unreachable: no runtime');
  const serverUsers = local?.serverUsers ?? null;
  try {
    const docker =
      overrides.dockerRuntime ??
      (await createDockerRuntime({
        dockerHost: config.dockerHost,
        dockerCertPath: config.dockerCertPath,
        panelId: panelId(config.dataDir),
        network: config.serverNetwork,
      }));
    // Every check before the first write: a start that fails leaves no data folder behind.
    if (local !== null) {
      const above = folderAboveDataDir(config.dataDir);
      if (!local.canEnter(above)) throw unreachableDataDir(config, above);
    }
    const { jwtSecret, warnings } = prepareDataDir(config, serverUsers !== null);
    if (local !== null && !local.canEnter(config.serversDir)) {
      throw unreachableDataDir(config, config.serversDir);
    }
    const db = overrides.db ?? (await openDatabase(config.database));
    return { runtime, docker, serverUsers, jwtSecret, dataDirWarnings: warnings, db };
  } catch (error) {
    await local?.close?.();
    throw error;
  }
}

/**
 * Servers' own uids cannot pass through `folder` on their way to DATA_DIR/servers. The way out
 * offered is a DATA_DIR outside any home folder, never opening one up to everybody.
 */
function unreachableDataDir(config: Config, folder: string): ConfigError {
  const { first, last } = config.serverUidRange;
  const underDefault =
    config.dataDir === ROOT_DATA_DIR || config.dataDir.startsWith(`${ROOT_DATA_DIR}/`);
  const way = underDefault
    ? `let others pass through ${folder} (chmod o+x ${folder})`
    : `choose a DATA_DIR they can reach, such as DATA_DIR=${ROOT_DATA_DIR} (the default as root)`;
  return new ConfigError(
    'DATA_DIR',
    `servers run as uids of their own (${first}-${last}), which cannot reach ${config.dataDir} through ${folder}: ${way}`,
  );
}
