/**
 * How a game server's process is run. Routes and services talk only to this interface; the local
 * runtime (plain, or inside a bubblewrap sandbox) is one implementation, and a container runtime
 * can be another without touching them.
 */

export interface LaunchSpec {
  /** The server's name, for logs. */
  readonly name: string;
  /** Program and arguments, already split; run without a shell. */
  readonly argv: readonly [string, ...string[]];
  /** The server's directory: the working directory, and the only place it may write. */
  readonly cwd: string;
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: string | null;
}

export interface Usage {
  /** CPU use of the whole process tree since the previous reading; 100 is one full core. */
  readonly cpuPercent: number;
  /** Resident memory of the whole process tree. */
  readonly memoryBytes: number;
}

export type OutputStream = 'stdout' | 'stderr';

export interface RunningProcess {
  readonly pid: number;
  /** Names this process for the life of the machine's boot; kept to find it after a panel crash. */
  readonly identity: string;
  readonly startedAt: Date;
  /**
   * Resolves once the main process has exited and every process left in its tree or group has
   * been killed: when it resolves, nothing of the server runs any more.
   */
  readonly exited: Promise<ExitInfo>;
  onOutput(listener: (chunk: Buffer, stream: OutputStream) => void): void;
  /** Writes one line to standard input; false when standard input is closed. */
  writeLine(line: string): boolean;
  /**
   * False when no process of the server holds its standard input any more (it closed it), so
   * what is written there is never read; true when it does or when that cannot be told.
   */
  readsInput(): Promise<boolean>;
  /** Asks the server's processes to end (SIGTERM), leaving any sandbox wrapper alone. */
  terminate(): Promise<void>;
  /** Ends every process of the server at once (SIGKILL). */
  kill(): Promise<void>;
  usage(): Promise<Usage>;
}

export interface LeftoverProcess {
  /** The server's name: whatever is left in its cgroup is ended. */
  readonly name: string;
  /** The main process an earlier panel recorded, if any. */
  readonly pid: number | null;
  readonly identity: string | null;
}

export interface ProcessRuntime {
  /** One line for the start-up log: how servers are isolated. */
  readonly description: string;
  /** False when servers run without isolation from the host: the panel warns at start. */
  readonly isolated: boolean;
  /** Starts a process; rejects with {@link StartError} when it cannot be started at all. */
  start(spec: LaunchSpec): Promise<RunningProcess>;
  /**
   * Ends what an earlier panel that was killed left running of a server: everything in its
   * cgroup, and the process tree of `pid` if it still names that very process (same identity);
   * a reused pid is left alone. True when something was ended.
   */
  reap(leftover: LeftoverProcess): Promise<boolean>;
  /** Releases what the runtime holds for the panel (its parent cgroup), once every server ended. */
  close?(): Promise<void>;
}

export class StartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartError';
  }
}
