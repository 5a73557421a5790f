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
  /**
   * The files the host answers with (`files`, `backupFiles`) and renders config files through,
   * in place of its own storage: a file agent's on the same folders (src/host/remote/; the
   * conformance suite runs the wire this way). The supervisor keeps its own storage.
   */
  readonly files?: (ServerFiles & ServerBackupFiles) | undefined;
}

/** Images from any registry, pulled anonymously. */
const ANY_REGISTRY: RegistryPolicy = {
  refusal: () => Promise.resolve(null),
  credentials: () => Promise.resolve(null),
};

export function createLocalHost(options: LocalHostOptions): ServerHost {
  const storage = new ServerStorage(options.serversDir, {
    chowns: options.ownUsers,
    log: options.log,
    now: () => options.now().getTime(),
    ...(options.diskUsageTtlMs === undefined ? {} : { usageTtlMs: options.diskUsageTtlMs }),
  });
  const files = options.files ?? storage;
  const lines = new LineMatcher();
  const supervisor = new Supervisor({
    runtimes: options.runtimes,
    lines,
    servers: options.records,
    templates: options.templates,
    prepareFiles: (record, template, env) =>
      prepareConfigFiles(files, record, template, env, options.log),
    checkPorts: (record) => checkPortsFree(record.allocations),
    storage,
    userOf: options.userOf,
    log: options.log,
    now: options.now,
    diskGraceSeconds: options.diskGraceSeconds,
    registries: options.registries ?? ANY_REGISTRY,
    ...(options.diskCheckMs === undefined ? {} : { diskCheckMs: options.diskCheckMs }),
    ...(options.onServerEvent === undefined ? {} : { onEvent: options.onServerEvent }),
  });
  const runtimes: readonly Runtime[] = [...new Set(Object.values(options.runtimes))];

  return {
    files,
    backupFiles: files,
    async create(name) {
      const record = await options.records.find(name);
      await storage.create(name, record === undefined ? null : options.userOf(record));
    },
    async discard(name): Promise<DiscardedServer> {
      await supervisor.forget(name);
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
      await storage.finishRestores();
      await supervisor.recover();
    },
    removeLeftovers: () => storage.removeLeftovers(() => options.records.allNames()),
    shutdown: ({ stopServers }) => supervisor.shutdown(stopServers),
    async close() {
      await lines.close();
      for (const runtime of runtimes) await runtime.close?.();
    },
  };
}
