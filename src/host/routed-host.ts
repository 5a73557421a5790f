/**
 * The ServerHost the panel holds once servers live on nodes (docs/nodes.md, "Placement"): each
 * server's calls go to the host of the node its record names, and only there; the calls of the
 * whole machine (report, recover, removeLeftovers, shutdown, close) go to every host.
 *
 * A server whose node has no host here (a remote node, until its host is built) answers its
 * operations with 503 NODE_UNREACHABLE and touches no other node: its status reads `unknown`,
 * its console, files, usage and lifecycle are refused. Making and discarding it need nothing of
 * this machine, so they succeed: its record can be made, read and deleted.
 *
 * The node of a server is read from its record for every asynchronous call. The synchronous
 * ones (`state`, `console`, `command`) cannot wait for the database: they use the node last
 * read, every record being read once at `load` (before `recover`) and each new one at `create`;
 * a name never read goes to `local`, as every server did before nodes. A transfer that switched a
 * server to another node says so (`moved`); until then the server is an arrival on its new node
 * (`Arrivals`): that node's host may make and fill its folder, and nothing else reaches it there.
 */
import { LOCAL_NODE } from '../domain/node.js';
import type { ServerStatus } from '../domain/server.js';
import { AppError } from '../errors.js';
import type {
  DiscardedServer,
  HostReport,
  ServerBackupFiles,
  ServerConsole,
  ServerFiles,
  ServerHost,
  ServerRecords,
  ServerState,
  Usage,
} from './host.js';

export interface RoutedHostOptions {
  /** Where each server's node is read (`ServerRecord.node`). */
  readonly records: ServerRecords;
  /** The host of each node that has one here; `local` is the panel's own machine. */
  readonly hosts: ReadonlyMap<string, ServerHost>;
  /**
   * Rejects when servers on `node` may not start now (409 NODE_MAINTENANCE), before a start, a
   * restart or an install reaches the node's host; none is refused when not given.
   */
  readonly refuseStart?: ((node: string) => Promise<void>) | undefined;
  /**
   * True while remote node `node` does not answer (its health, docs/nodes.md "Health"): its
   * servers that were running, starting or stopping read `unknown` at once, before their
   * runtime gives up on the engine. None is when not given.
   */
  readonly unreachable?: ((node: string) => boolean) | undefined;
}

/** The methods of each files port, every one listed, so that a method added to it is routed. */
const FILE_METHODS = {
  stat: true,
  realPath: true,
  openChannel: true,
  readFolder: true,
  makeFolder: true,
  removeFile: true,
  removeFolder: true,
  renamePath: true,
  readLink: true,
  makeLink: true,
  setAttributes: true,
  list: true,
  createEntry: true,
  openFile: true,
  readText: true,
  writeText: true,
  upload: true,
  renameEntry: true,
  move: true,
  deleteEntry: true,
  deleteMany: true,
  moveMany: true,
  compress: true,
  decompress: true,
  diskUsage: true,
} as const satisfies Record<keyof ServerFiles, true>;

const BACKUP_FILE_METHODS = {
  readText: true,
  diskUsage: true,
  packServer: true,
  replaceFromArchive: true,
} as const satisfies Record<keyof ServerBackupFiles, true>;

/** A server on a node without a host here: whether it runs is not known. */
const UNKNOWN: ServerState = { status: 'unknown', pid: null, startedAt: null, lastExit: null };

/** The statuses of a server that runs, which a node gone silent makes `unknown`. */
const RUNNING: ReadonlySet<ServerStatus> = new Set([
  'installing',
  'starting',
  'running',
  'stopping',
]);

/** 503 for an operation on a server whose node has no host here. */
export const noHostFor = (node: string): AppError =>
  new AppError(
    'NODE_UNREACHABLE',
    `The server is on the node ${node}, which this panel cannot run servers on yet: nothing was done`,
  );

/** 503 for an operation on a server whose node does not answer now. */
export const silentNode = (node: string): AppError =>
  new AppError(
    'NODE_UNREACHABLE',
    `The server's node ${node} does not answer: nothing was done; try again once it is back`,
  );

/**
 * An object whose every method in `names` takes a server's name first and answers a promise,
 * each call made on what `target` picks of the server's host.
 */
function forwarding<T extends object>(
  names: readonly (keyof T & string)[],
  hostFor: (server: string) => Promise<ServerHost>,
  target: (host: ServerHost) => T,
): T {
  const routed: Record<string, (server: string, ...args: unknown[]) => Promise<unknown>> = {};
  for (const name of names) {
    routed[name] = async (server, ...args) => {
      const files = target(await hostFor(server));
      const method: unknown = files[name];
      if (typeof method !== 'function') throw new Error(`the host has no ${name}`);
      return Reflect.apply(method, files, [server, ...args]) as unknown;
    };
  }
  // Every method of T is in `names` (FILE_METHODS and BACKUP_FILE_METHODS are checked whole).
  return routed as unknown as T;
}

export class RoutedHost implements ServerHost {
  readonly files: ServerFiles;
  readonly backupFiles: ServerBackupFiles;
  readonly #options: RoutedHostOptions;
  /** The node of each server, as last read from its record. */
  readonly #nodes = new Map<string, string>();

  constructor(options: RoutedHostOptions) {
    this.#options = options;
    const hostFor = (server: string) => this.#hostFor(server);
    const files = forwarding<ServerFiles>(
      Object.keys(FILE_METHODS) as (keyof ServerFiles)[],
      hostFor,
      (host) => host.files,
    );
    // A folder's reading is an iterator answered at once: the host is found at its first `next`.
    files.readFolder = (server, segments, batch, guard) =>
      (async function* () {
        const host = await hostFor(server);
        yield* host.files.readFolder(server, segments, batch, guard);
      })();
    this.files = files;
    this.backupFiles = forwarding<ServerBackupFiles>(
      Object.keys(BACKUP_FILE_METHODS) as (keyof ServerBackupFiles)[],
      hostFor,
      (host) => host.backupFiles,
    );
  }

  /** The host of `node` here, or null while it has none. */
  hostOf(node: string): ServerHost | null {
    return this.#options.hosts.get(node) ?? null;
  }

  /**
   * The server is on `node` now (a transfer switched it): its synchronous calls go there from now
   * on, as its asynchronous ones do from its record.
   */
  moved(server: string, node: string): void {
    this.#nodes.set(server, node);
  }

  /** Reads the node of every server recorded (for the synchronous calls); before `recover`. */
  async load(): Promise<void> {
    for (const record of await this.#options.records.list()) {
      this.#nodes.set(record.name, record.node);
    }
  }

  /** The node of `server` as its record says now (the last known, or `local`, without one). */
  async #nodeOf(server: string): Promise<string> {
    const record = await this.#options.records.find(server);
    if (record !== undefined) this.#nodes.set(server, record.node);
    return record?.node ?? this.#nodes.get(server) ?? LOCAL_NODE;
  }

  async #hostFor(server: string): Promise<ServerHost> {
    return this.#hostOn(await this.#nodeOf(server));
  }

  /** Node `node`'s host; 503 while it has none here, or does not answer. */
  #hostOn(node: string): ServerHost {
    const host = this.hostOf(node);
    if (host === null) throw noHostFor(node);
    // Answered at once rather than at the engine's deadline: the panel stays responsive.
    if (this.#silent(node)) throw silentNode(node);
    return host;
  }

  /** A remote node that does not answer now (its health); `local` never counts as one. */
  #silent(node: string): boolean {
    return node !== LOCAL_NODE && this.#options.unreachable?.(node) === true;
  }

  /** The host of `server` by the node last read, for the calls that cannot wait. */
  #hostNow(server: string): { node: string; host: ServerHost | null } {
    const node = this.#nodes.get(server) ?? LOCAL_NODE;
    return { node, host: this.hostOf(node) };
  }

  /** `start`'s, `restart`'s and `install`'s: the node must let its servers start. */
  async #startable(server: string): Promise<ServerHost> {
    const node = await this.#nodeOf(server);
    await this.#options.refuseStart?.(node);
    return this.#hostOn(node);
  }

  #all(): ServerHost[] {
    return [...this.#options.hosts.values()];
  }

  async create(name: string): Promise<void> {
    const node = await this.#nodeOf(name);
    // A node without a host here has nothing to prepare on this machine.
    await this.hostOf(node)?.create(name);
  }

  async discard(name: string): Promise<DiscardedServer> {
    const node = await this.#nodeOf(name);
    const host = this.hostOf(node);
    if (host !== null) return host.discard(name);
    return { restore: () => Promise.resolve(), purge: () => undefined };
  }

  state(name: string): ServerState {
    const { node, host } = this.#hostNow(name);
    if (host === null) return UNKNOWN;
    const state = host.state(name);
    if (RUNNING.has(state.status) && this.#silent(node)) return { ...state, status: 'unknown' };
    return state;
  }

  async start(name: string): Promise<ServerStatus> {
    return (await this.#startable(name)).start(name);
  }

  async stop(name: string): Promise<ServerStatus> {
    return (await this.#hostFor(name)).stop(name);
  }

  async restart(name: string): Promise<ServerStatus> {
    return (await this.#startable(name)).restart(name);
  }

  async kill(name: string): Promise<ServerStatus> {
    return (await this.#hostFor(name)).kill(name);
  }

  async hold(name: string, reason: string): Promise<() => void> {
    return (await this.#hostFor(name)).hold(name, reason);
  }

  async install(name: string): Promise<ServerStatus> {
    return (await this.#startable(name)).install(name);
  }

  console(name: string): ServerConsole {
    const { node, host } = this.#hostNow(name);
    if (host === null) throw noHostFor(node);
    return host.console(name);
  }

  command(name: string, line: string, by: string): void {
    const { node, host } = this.#hostNow(name);
    if (host === null) throw noHostFor(node);
    host.command(name, line, by);
  }

  async usage(name: string): Promise<Usage> {
    const node = await this.#nodeOf(name);
    // Nothing is known of a server on a node that does not answer: its status says so.
    if (this.#silent(node)) return { cpuPercent: 0, memoryBytes: 0, pids: 0 };
    return this.#hostOn(node).usage(name);
  }

  report(): readonly HostReport[] {
    return this.#all().flatMap((host) => host.report());
  }

  async recover(): Promise<void> {
    await this.load();
    for (const host of this.#all()) await host.recover();
  }

  async reconnect(): Promise<void> {
    await Promise.all(this.#all().map((host) => host.reconnect()));
  }

  /** Takes back the `unknown` servers of node `node`, which answers again. Never rejects. */
  async reconnectNode(node: string): Promise<void> {
    await this.hostOf(node)?.reconnect();
  }

  async removeLeftovers(): Promise<void> {
    await Promise.all(this.#all().map((host) => host.removeLeftovers()));
  }

  async shutdown(options: { readonly stopServers: boolean }): Promise<void> {
    await Promise.all(this.#all().map((host) => host.shutdown(options)));
  }

  async close(): Promise<void> {
    for (const host of this.#all()) await host.close();
  }
}

/**
 * The servers being transferred to another node, by the node they go to (docs/nodes.md,
 * "Transfers"): while one is copied there, that node's host finds its record (`recordsOn`'s
 * `find`), so that it can make its folder, as the server's own user, and fill it. It is never
 * listed there (nothing recovers, starts or cleans it up), and no call of the routed host goes
 * there before the switch.
 */
export class Arrivals {
  readonly #to = new Map<string, string>();

  /** `server` is being copied to `node` until the answered function is called. */
  arriving(server: string, node: string): () => void {
    this.#to.set(server, node);
    return () => {
      if (this.#to.get(server) === node) this.#to.delete(server);
    };
  }

  /** The node `server` is being copied to, if it is. */
  nodeOf(server: string): string | undefined {
    return this.#to.get(server);
  }
}

/**
 * The records of the servers on `node` only, for that node's host: another node's server is
 * never found, listed, recovered nor cleaned up there, except that a server arriving there
 * (`arrivals`) is found. What a host records passes through.
 */
export function recordsOn(
  records: ServerRecords,
  node: string,
  arrivals?: Arrivals,
): ServerRecords {
  const onNode = async () => (await records.list()).filter((record) => record.node === node);
  return {
    find: async (name) => {
      const record = await records.find(name);
      if (record === undefined) return undefined;
      return record.node === node || arrivals?.nodeOf(name) === node ? record : undefined;
    },
    list: onNode,
    allNames: async () => (await onNode()).map((record) => record.name),
    recordStarted: (name, process) => records.recordStarted(name, process),
    recordStopped: (name, desiredRunning) => records.recordStopped(name, desiredRunning),
    recordExit: (name, exit) => records.recordExit(name, exit),
    setInstall: (name, install) => records.setInstall(name, install),
    recordImageDigest: (name, digest) => records.recordImageDigest(name, digest),
  };
}
