/**
 * Settings an admin changes while the panel runs (docs/security.md, "Defaults that bound a
 * tenant"): the limits a new server gets, the backup limits of a server that has none of its own,
 * and whether registration is open once the first account exists.
 */

/** The limits a server is created with when its creator leaves them out. */
export interface DefaultLimits {
  /** Always set: no server runs without a process limit. */
  readonly pids: number;
  readonly memoryBytes: number | null;
  /** 100 = one core. */
  readonly cpuPercent: number | null;
  readonly diskBytes: number | null;
}

/** The backup limits of a server whose own are unset (null in its backup settings). */
export interface DefaultBackupLimits {
  readonly maxCount: number;
  /** Bytes all of a server's backups may hold; null: the server's disk quota (none: no limit). */
  readonly maxBytes: number | null;
}

export interface PanelSettings {
  readonly serverDefaults: DefaultLimits;
  readonly backupDefaults: DefaultBackupLimits;
  /**
   * Whether registration stays open after the first account exists, when `REGISTRATION` is not
   * set (docs/security.md, "Registration").
   */
  readonly registrationOpen: boolean;
}

/** A process limit high enough for any game server (Java starts about 50 threads), not a bomb. */
export const DEFAULT_PIDS_LIMIT = 512;
export const DEFAULT_BACKUP_MAX_COUNT = 10;

export const DEFAULT_PANEL_SETTINGS: PanelSettings = {
  serverDefaults: {
    pids: DEFAULT_PIDS_LIMIT,
    memoryBytes: null,
    cpuPercent: null,
    diskBytes: null,
  },
  backupDefaults: { maxCount: DEFAULT_BACKUP_MAX_COUNT, maxBytes: null },
  registrationOpen: false,
};
