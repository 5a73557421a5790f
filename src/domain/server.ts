/** A game server as the panel knows it: its configuration, its limits and where it stands. */

export type ServerStatus = 'stopped' | 'starting' | 'running' | 'stopping' | 'crashed';

/** Resource limits of a server; null: none. */
export interface ServerLimits {
  readonly memoryBytes: number | null;
  /** 100 = one core. */
  readonly cpuPercent: number | null;
  readonly pids: number | null;
  readonly diskBytes: number | null;
}

export const NO_SERVER_LIMITS: ServerLimits = {
  memoryBytes: null,
  cpuPercent: null,
  pids: null,
  diskBytes: null,
};

/** What runs a server: a sandboxed local process, or a container. */
export type RuntimeKind = 'process' | 'docker';

export interface ServerConfig {
  readonly name: string;
  readonly displayName: string;
  readonly startCommand: string;
  readonly stopCommand: string | null;
  readonly stopTimeoutSeconds: number;
  readonly autoRestart: boolean;
  readonly limits: ServerLimits;
  readonly runtime: RuntimeKind;
  /** The container image (docker runtime); null for the process runtime. */
  readonly image: string | null;
  readonly createdAt: string;
}

/** The configuration and what the panel recorded of the server's process, to find it again. */
export interface ServerRecord extends ServerConfig {
  readonly desiredRunning: boolean;
  readonly pid: number | null;
  readonly pidIdentity: string | null;
}
