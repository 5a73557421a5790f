/**
 * The ServerHost of this machine: the supervisor, the console it keeps for each server, the
 * storage of the servers' folders, and the runtimes that run them, put together.
 */
import type { EventExit, ServerEventKind, ServerRecord } from '../../domain/server.js';
import type { Logger } from '../../log.js';
import type {
  DiscardedServer,
  HostReport,
  RegistryPolicy,
  ServerBackupFiles,
  ServerFiles,
  ServerHost,
  ServerRecords,
  TemplateSource,
} from '../host.js';
import type { Runtime } from '../runtime/runtime.js';
import { LineMatcher } from './line-watch.js';
import { checkPortsFree } from './ports.js';
import { prepareConfigFiles } from './prepare-files.js';
import { ServerStorage } from './storage/server-storage.js';
import type { FileOwner } from './storage/types.js';
import { Supervisor, type Runtimes } from './supervisor.js';

export interface LocalHostOptions {
  /** `DATA_DIR/servers`: one folder per server. */
  readonly serversDir: string;
  /**
   * Each server's own user (from its id), who owns its folder and runs it; null for every
   * server when servers run as the panel's user.
   */
  readonly userOf: (record: ServerRecord) => FileOwner | null;
  /** Whether servers run as users of their own (the panel runs as root). */
  readonly ownUsers: boolean;
  readonly runtimes: Runtimes;
  readonly records: ServerRecords;
  readonly templates: TemplateSource;
  readonly log: Logger;
  readonly now: () => Date;
  /** How long a running server may stay over its disk quota before it is stopped. */
  readonly diskGraceSeconds: number;
  /** How often running servers' disk use is compared with their quota. */
  readonly diskCheckMs?: number | undefined;
  /** How old a folder's measured size may get before it is walked again. */
  readonly diskUsageTtlMs?: number | undefined;
  /** Hears each start, stop and crash of a server (`server-event` in src/events.ts). */
  readonly onServerEvent?:
    ((server: string, kind: ServerEventKind, exit?: EventExit) => void) | undefined;
  /** Which registries images may be pulled from, and their credentials; by default any, none. */
  readonly registries?: RegistryPolicy | undefined;
  /** See SupervisorDeps.refuseStart: the node's maintenance. */
  readonly refuseStart?: (() => Promise<void>) | undefined;
  /**
   * The files the host answers with (`files`, `backupFiles`) and renders config files through,
   * in place of its own storage: a file agent's on the same folders (src/host/remote/; the
   * conformance suite runs the wire this way). The supervisor keeps its own storage.
   */
  readonly files?: (ServerFiles & ServerBackupFiles) | undefined;
  /**
   * The servers' folders, in place of the local storage's (a node's volumes): given with
   * `files`, which then answer for the same folders. `serversDir` is then not used.
   */
  readonly folders?: ServerFolders | undefined;
  /**
   * Whether a start first checks that the server's ports are free on this machine (not on a
   * node: its engine refuses a port taken there).
   */
  readonly checkPorts?: boolean | undefined;
}

/**
 * What a host keeps of its servers' folders beside their files: where each is for its runtime,
 * how much it holds, taking one away when its server is deleted, and the sweeps at start-up. On
 * this machine the local storage (./storage/); on a node its volumes (src/host/remote/).
 */
export interface ServerFolders {
  /** Makes the server's folder (kept if it exists), owned by `owner` where it can be. */
  create(name: string, owner: FileOwner | null): Promise<void>;
  /** The folder as the server's runtime mounts or enters it. */
  directoryOf(name: string): string;
  diskUsage(name: string): Promise<number>;
  /**
   * Takes the folder of a server being deleted out of the way: `restore` puts it back (the
   * deletion failed), `purge` removes it for good (in the background; never rejects).
   */
  discard(name: string): Promise<{ restore(): Promise<void>; purge(): void }>;
  /** Ends what a restore cut short left, before anything starts. */
  finishRestores(): Promise<void>;
  /** Removes what an earlier run left behind; never rejects. */
  removeLeftovers(servers: () => Promise<readonly string[]>): Promise<void>;
}

/** The folders of a local storage. */
export function localFolders(storage: ServerStorage): ServerFolders {
  return {
    create: (name, owner) => storage.create(name, owner),
    directoryOf: (name) => storage.directoryOf(name),
    diskUsage: (name) => storage.diskUsage(name),
    async discard(name) {
      const discarded = await storage.discardDirectory(name);
      return {
        restore: async () => {
          if (discarded !== null) await storage.restoreDirectory(name, discarded);
        },
        purge: () => {
          void storage.emptyTrash();
        },
      };
    },
    finishRestores: () => storage.finishRestores(),
    removeLeftovers: (servers) => storage.removeLeftovers(servers),
  };
}

/** Images from any registry, pulled anonymously. */
const ANY_REGISTRY: RegistryPolicy = {
  refusal: () => Promise.resolve(null),
  credentials: () => Promise.resolve(null),
};

export function createLocalHost(options: LocalHostOptions): ServerHost {
  let folders = options.folders;
  let files = options.files;
  if (folders === undefined || files === undefined) {
    const storage = new ServerStorage(options.serversDir, {
      chowns: options.ownUsers,
      log: options.log,
      now: () => options.now().getTime(),
      ...(options.diskUsageTtlMs === undefined ? {} : { usageTtlMs: options.diskUsageTtlMs }),
    });
    folders ??= localFolders(storage);
    files ??= storage;
  }
  const checkPorts = options.checkPorts ?? true;
  const lines = new LineMatcher();
  const supervisor = new Supervisor({
    runtimes: options.runtimes,
    lines,
    servers: options.records,
    templates: options.templates,
    prepareFiles: (record, template, env) =>
      prepareConfigFiles(files, record, template, env, options.log),
    checkPorts: (record) => (checkPorts ? checkPortsFree(record.allocations) : Promise.resolve()),
    storage: folders,
    userOf: options.userOf,
    log: options.log,
    now: options.now,
    diskGraceSeconds: options.diskGraceSeconds,
    registries: options.registries ?? ANY_REGISTRY,
    refuseStart: options.refuseStart,
    ...(options.diskCheckMs === undefined ? {} : { diskCheckMs: options.diskCheckMs }),
    ...(options.onServerEvent === undefined ? {} : { onEvent: options.onServerEvent }),
  });
  const runtimes: readonly Runtime[] = [...new Set(Object.values(options.runtimes))];

  return {
    files,
    backupFiles: files,
    async create(name) {
      const record = await options.records.find(name);
      await folders.create(name, record === undefined ? null : options.userOf(record));
    },
    async discard(name): Promise<DiscardedServer> {
      await supervisor.forget(name);
      return folders.discard(name);
    },
    state: (name) => supervisor.state(name),
    start: (name) => supervisor.start(name),
    stop: (name) => supervisor.stop(name),
    restart: (name) => supervisor.restart(name),
    kill: (name) => supervisor.kill(name),
    install: (name) => supervisor.install(name),
    hold: (name, reason) => supervisor.hold(name, reason),
    console: (name) => ({
      history: () => supervisor.history(name),
      subscribe: (listener) => supervisor.subscribe(name, listener),
      watch: (patterns, onMatch) => supervisor.watch(name, patterns, onMatch),
      notices: () => supervisor.notices(name),
    }),
    command: (name, line, by) => {
      supervisor.command(name, line, by);
    },
    usage: (name) => supervisor.usage(name),
    report: (): HostReport[] =>
      runtimes.map((runtime) => ({
        level: runtime.isolated ? 'info' : 'warn',
        message: runtime.description,
      })),
    async recover() {
      // A restore cut short between its renames gets its directory back before anything starts.
      await folders.finishRestores();
      await supervisor.recover();
    },
    removeLeftovers: () => folders.removeLeftovers(() => options.records.allNames()),
    reconnect: () => supervisor.reconnect(),
    shutdown: ({ stopServers }) => supervisor.shutdown(stopServers),
    async close() {
      await lines.close();
      for (const runtime of runtimes) await runtime.close?.();
    },
  };
}
