/**
 * Game servers: who may see and change which (DECISIONS.md §3), their configuration, and the
 * lifecycle calls handed to the supervisor. Admins see every server; everyone else the servers
 * in their own list. Only admins create and delete servers or set the commands run on the host.
 */
import { isUniqueViolation } from '../../db/database.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { ServerStorage } from '../../files/storage.js';
import type { User, UsersRepository } from '../users/users.repository.js';
import { parseCommand } from './command.js';
import type { ConfigChanges, ServerConfig, ServersRepository } from './servers.repository.js';
import type { ServerStatus, Supervisor } from './supervisor.js';

export interface ServerSummary {
  readonly name: string;
  readonly displayName: string;
  readonly status: ServerStatus;
  readonly autoRestart: boolean;
  readonly createdAt: string;
}

export interface ServerStats {
  readonly status: ServerStatus;
  readonly pid: number | null;
  readonly lastExit: {
    readonly code: number | null;
    readonly signal: string | null;
    readonly at: string;
  } | null;
  readonly uptimeSeconds: number;
  readonly cpu: { readonly percent: number };
  readonly memory: { readonly bytes: number };
  readonly disk: { readonly bytes: number };
}

export interface NewServer {
  readonly name: string;
  readonly displayName?: string | undefined;
  readonly startCommand: string;
  readonly stopCommand?: string | null | undefined;
  readonly stopTimeoutSeconds?: number | undefined;
  readonly autoRestart?: boolean | undefined;
}

/** Fields only an admin may change: they decide what runs on the host. */
const HOST_COMMAND_FIELDS = ['startCommand', 'stopCommand'] as const;

export class ServersService {
  constructor(
    private readonly deps: {
      readonly servers: ServersRepository;
      readonly users: UsersRepository;
      readonly supervisor: Supervisor;
      readonly storage: ServerStorage;
      readonly events: PanelEvents;
      readonly now: () => Date;
    },
  ) {}

  /** Whether `user` may see and operate `name` (which need not exist). */
  async canAccess(user: User, name: string): Promise<boolean> {
    if (user.role === 'banned') return false;
    if (user.role === 'admin') return true;
    return (await this.deps.users.serverNames(user.id)).includes(name);
  }

  /** The server's configuration, or 404 when it does not exist and 403 when `user` may not see it. */
  async require(user: User, name: string): Promise<ServerConfig> {
    const record = await this.deps.servers.find(name);
    if (!record) throw notFound('Server');
    if (!(await this.canAccess(user, name))) {
      throw new AppError('FORBIDDEN', 'You have no access to this server');
    }
    return record;
  }

  async list(user: User): Promise<ServerSummary[]> {
    const records = await this.deps.servers.list(
      user.role === 'admin' ? undefined : await this.deps.users.serverNames(user.id),
    );
    return records.map((record) => ({
      name: record.name,
      displayName: record.displayName,
      status: this.deps.supervisor.state(record.name).status,
      autoRestart: record.autoRestart,
      createdAt: record.createdAt,
    }));
  }

  async create(server: NewServer): Promise<ServerConfig> {
    checkCommand('startCommand', server.startCommand);
    if (server.stopCommand != null) checkCommandText('stopCommand', server.stopCommand);
    const config: ServerConfig = {
      name: server.name,
      displayName: server.displayName ?? server.name,
      startCommand: server.startCommand,
      stopCommand: server.stopCommand ?? null,
      stopTimeoutSeconds: server.stopTimeoutSeconds ?? 10,
      autoRestart: server.autoRestart ?? false,
      createdAt: this.deps.now().toISOString(),
    };
    try {
      await this.deps.servers.insert(config);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError('CONFLICT', 'A server with that name exists');
      throw error;
    }
    try {
      await this.deps.storage.create(config.name);
    } catch (error) {
      await this.deps.servers.delete(config.name);
      throw error;
    }
    return config;
  }

  async updateConfig(user: User, name: string, changes: ConfigChanges): Promise<ServerConfig> {
    const current = await this.require(user, name);
    if (
      user.role !== 'admin' &&
      HOST_COMMAND_FIELDS.some((field) => changes[field] !== undefined)
    ) {
      throw new AppError('FORBIDDEN', 'Only an admin may change the commands a server runs');
    }
    if (changes.startCommand !== undefined) checkCommand('startCommand', changes.startCommand);
    if (changes.stopCommand != null) checkCommandText('stopCommand', changes.stopCommand);
    await this.deps.servers.update(name, changes);
    return { ...current, ...changes };
  }

  /**
   * Stops the server if it runs, then deletes it: its directory first, taken away in one rename
   * (into the storage's trash), then its row. A failure on the way leaves the server as it was,
   * directory included, and a server made again under that name never starts from the old
   * folder. The old content is removed in the background; failures there are logged.
   */
  async remove(name: string): Promise<void> {
    if (!(await this.deps.servers.find(name))) throw notFound('Server');
    await this.deps.supervisor.forget(name);
    const discarded = await this.deps.storage.discardDirectory(name);
    try {
      await this.deps.servers.delete(name);
    } catch (error) {
      if (discarded !== null) await this.deps.storage.restoreDirectory(name, discarded);
      throw error;
    }
    void this.deps.storage.emptyTrash();
    this.deps.events.emit('server-deleted', name);
  }

  async start(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name);
    return this.deps.supervisor.start(name);
  }

  async stop(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name);
    return this.deps.supervisor.stop(name);
  }

  async command(user: User, name: string, command: string): Promise<void> {
    await this.require(user, name);
    this.deps.supervisor.command(name, command, user.username);
  }

  async stats(user: User, name: string): Promise<ServerStats> {
    await this.require(user, name);
    const state = this.deps.supervisor.state(name);
    const [usage, disk] = await Promise.all([
      this.deps.supervisor.usage(name),
      this.deps.storage.diskUsage(name),
    ]);
    const uptimeMs = state.startedAt ? this.deps.now().getTime() - state.startedAt.getTime() : 0;
    return {
      status: state.status,
      pid: state.pid,
      lastExit: state.lastExit && { ...state.lastExit, at: state.lastExit.at.toISOString() },
      uptimeSeconds: Math.max(0, Math.floor(uptimeMs / 1000)),
      cpu: { percent: usage.cpuPercent },
      memory: { bytes: usage.memoryBytes },
      disk: { bytes: disk },
    };
  }
}

function checkCommand(field: string, command: string): void {
  const parsed = parseCommand(command);
  if (!parsed.ok) {
    throw new AppError('VALIDATION_FAILED', `${field}: ${parsed.reason}`, {
      details: [{ path: `body/${field}`, message: parsed.reason }],
    });
  }
}

/** A stop command is a line typed into the console, not a program: it only must be one line. */
function checkCommandText(field: string, command: string): void {
  if (/[\r\n]/.test(command)) {
    throw new AppError('VALIDATION_FAILED', `${field}: must be a single line`, {
      details: [{ path: `body/${field}`, message: 'must be a single line' }],
    });
  }
}
