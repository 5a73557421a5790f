/**
 * How a game server's process is run. The host's supervisor drives servers only through this
 * interface; the process runtime (plain, or inside a bubblewrap sandbox) is one implementation,
 * the Docker runtime (a container per server) another.
 */

import type { RegistryAuth } from '../../domain/registry.js';
import type { Allocation, ServerLimits } from '../../domain/server.js';
import type { Usage } from '../host.js';

/** The server's limits the kernel enforces (the disk quota is the panel's); null: none. */
export type ResourceLimits = Omit<ServerLimits, 'diskBytes'>;

export type LimitName = keyof ResourceLimits;

export const NO_LIMITS: ResourceLimits = { memoryBytes: null, cpuPercent: null, pids: null };

/**
 * The `oom_score_adj` of every server's processes: when memory runs out, the kernel picks a game
 * server before the panel (which lowers its own, see src/oom-score.ts) or the rest of the host.
 * docs/security.md, "Defaults that bound a tenant".
 */
export const SERVER_OOM_SCORE_ADJ = 500;

/** A shell and its options, as it begins a command line: `['bash']`, `['busybox', 'ash']`. */
export type ShellCommand = readonly [string, ...string[]];

export interface LaunchSpec {
  /** The server's name, for logs. */
  readonly name: string;
  /** Program and arguments, already split; run without a shell. */
  readonly argv: readonly [string, ...string[]];
  /**
   * Set when `argv` is a script run by a shell: `argv` starts with the first of these, and the
   * runtime runs the first one the host or image has instead (src/host/runtime/shells.ts).
   */
  readonly shells?: readonly ShellCommand[];
  /** The server's directory: the working directory, and the only place it may write. */
  readonly cwd: string;
  readonly limits: ResourceLimits;
  /** The container image, for runtimes that run one; ignored by the process runtime. */
  readonly image: string | null;
  /**
   * Variables added to the server's minimal environment (a template's); they never replace
   * PATH, HOME or LANG.
   */
  readonly env: Readonly<Record<string, string>>;
  /** The server's addresses and ports, primary first: a container has them published. */
  readonly ports: readonly Allocation[];
  /**
   * Set for a template's install script rather than the server: `argv` runs
   * `/mnt/install/install.sh`, with the server's folder at `/mnt/server` (where egg scripts
   * expect them) as the working directory.
   */
  readonly install: { readonly script: string } | null;
  /**
   * The server's own user (uid and gid) it runs as, whatever the runtime; `null`: the panel's
   * own user (the panel does not run as root).
   */
  readonly user: { readonly uid: number; readonly gid: number } | null;
  /**
   * Tells the server's console what the runtime does on its way to the start (an image being
   * pulled, a shell the image lacks); the supervisor shows each line as the panel's.
   */
  readonly say?: (line: string) => void;
}

/** Where an install script finds the server's folder and itself (the eggs' paths). */
export const INSTALL_SERVER_DIR = '/mnt/server';
export const INSTALL_SCRIPT_DIR = '/mnt/install';

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: string | null;
  /** The kernel ended the server because it passed its memory limit. */
  readonly outOfMemory: boolean;
  /**
   * The end is not known: the engine the server runs on stopped answering (for a minute), so it
   * may still run there. Code and signal are null. The runtime's `adopt` takes it back once the
   * engine answers again.
   */
  readonly lost?: true;
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
  /**
   * Asks the server's processes to end (SIGTERM, or SIGINT for a template whose stop is `^C`),
   * leaving any sandbox wrapper alone.
   */
  terminate(signal?: 'SIGTERM' | 'SIGINT'): Promise<void>;
  /** Ends every process of the server at once (SIGKILL). */
  kill(): Promise<void>;
  usage(): Promise<Usage>;
  /**
   * Lets go of the server without ending it: the panel is closing and the server runs on, its
   * output kept for the next panel, which takes it over ({@link Runtime.adopt}). Afterwards no
   * output is delivered and `exited` never settles.
   */
  detach(): void;
}

export interface LeftoverProcess {
  /** The server's name: whatever is left in its cgroup is ended. */
  readonly name: string;
  /** The main process an earlier panel recorded, if any. */
  readonly pid: number | null;
  readonly identity: string | null;
}

export interface Runtime {
  readonly kind: 'process' | 'docker';
  /**
   * Which limits the runtime can have the kernel enforce; starting a server with another one
   * set is refused (never run unlimited).
   */
  readonly enforces: ReadonlySet<LimitName>;
  /** Why some limits cannot be enforced, when so (for the 409 and the start-up log). */
  readonly limitsUnavailableReason?: string;
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
  /**
   * Finds a server an earlier panel left running (it let go of it at its close, or was killed)
   * and takes it over as it runs: its output since it started, as far as it was kept, comes
   * first, then what it prints from now on. A server that ended meanwhile is answered with its
   * exit already settled. `null` when there is nothing to take over (what is left is then
   * reaped).
   */
  adopt?(leftover: LeftoverProcess): Promise<RunningProcess | null>;
  /** Removes what the runtime keeps of a deleted server (its container), if anything. */
  discard?(name: string): Promise<void>;
  /** Releases what the runtime holds for the panel (its parent cgroup), once every server ended. */
  close?(): Promise<void>;
  /**
   * The images of a runtime that runs them (docker): what the host has, and pulls. The host
   * pulls a missing image before a start or an install, outside the server's lock.
   */
  readonly images?: ImageStore;
}

/** How far a pull is: bytes of the layers the engine downloads, over the layers known so far. */
export interface PullProgress {
  readonly downloaded: number;
  /** 0 while no layer's size is known yet. */
  readonly total: number;
  /** A layer is being unpacked (after its download). */
  readonly extracting: boolean;
}

export interface ImageStore {
  /**
   * The image as the host has it: its registry digest (`sha256:…` of the manifest the engine
   * pulled or pushed it by; null for an image built or loaded here), or null when the host does
   * not have it. Rejects with {@link RuntimeUnavailableError} when the engine cannot be reached.
   */
  find(image: string): Promise<{ readonly digest: string | null } | null>;
  /**
   * Pulls `image` from its registry. Resolves once the registry has answered that it gives the
   * image (the download is then under way); `done` settles with its digest once the image is on
   * the host. Rejects, or `done` rejects, with {@link ImagePullError} carrying the registry's
   * reason (unauthorized, not found, unreachable), or with {@link RuntimeUnavailableError}.
   * Aborting `signal` ends the pull.
   */
  pull(
    image: string,
    options: {
      readonly auth: RegistryAuth | null;
      readonly signal: AbortSignal;
      readonly onProgress: (progress: PullProgress) => void;
    },
  ): Promise<{ readonly done: Promise<string | null> }>;
}

/** The server's program could not start: the server is shown as crashed, with the reason. */
export class StartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartError';
  }
}

/**
 * The server cannot start as configured (a missing image, a limit the runtime cannot enforce):
 * the request is refused (409) and the server stays as it was.
 */
export class StartRefusedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartRefusedError';
  }
}

/** A pull failed: the message is the registry's (or the engine's) reason, as it said it. */
export class ImagePullError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ImagePullError';
  }
}

/** The runtime itself cannot be reached (the Docker daemon is down): 503, with the reason. */
export class RuntimeUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RuntimeUnavailableError';
  }
}
