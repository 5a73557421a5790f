/**
 * Game servers: who may see and change which (src/domain/policy.ts), their configuration, and
 * the only way from the HTTP modules to the ServerHost that runs them: lifecycle, console,
 * files and stats are reached through here, each after the caller's rights were checked.
 * Admins see every server; everyone else the servers in their own list. Only admins create and
 * delete servers or set what runs on the host and with how much.
 */
import { parseCommand } from '../../domain/command.js';
import { can } from '../../domain/policy.js';
import {
  NO_SERVER_LIMITS,
  type RuntimeKind,
  type ServerConfig,
  type ServerLimits,
  type ServerStatus,
} from '../../domain/server.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { ServerConsole, ServerFiles, ServerHost } from '../../host/host.js';
import type { ConfigChanges, ServersRepository } from './servers.repository.js';

/** Which servers an admin put in a user's list (the users domain keeps them). */
export interface ServerGrants {
  serverNames(userId: number): Promise<string[]>;
}

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
    readonly outOfMemory: boolean;
    readonly at: string;
  } | null;
  readonly uptimeSeconds: number;
  readonly cpu: { readonly percent: number; readonly limit: number | null };
  readonly memory: { readonly bytes: number; readonly limit: number | null };
  readonly pids: { readonly count: number; readonly limit: number | null };
  readonly disk: { readonly bytes: number; readonly limit: number | null };
}

export interface NewServer {
  readonly name: string;
  readonly displayName?: string | undefined;
  readonly startCommand: string;
  readonly stopCommand?: string | null | undefined;
  readonly stopTimeoutSeconds?: number | undefined;
  readonly autoRestart?: boolean | undefined;
  readonly limits?: Partial<ServerLimits> | undefined;
  readonly runtime?: RuntimeKind | undefined;
  readonly image?: string | null | undefined;
}

/** Fields only an admin may change: what runs on the host, and with how much of it. */
const HOST_FIELDS = ['startCommand', 'stopCommand', 'limits', 'runtime', 'image'] as const;

export class ServersService {
  constructor(
    private readonly deps: {
      readonly servers: ServersRepository;
      readonly grants: ServerGrants;
      readonly host: ServerHost;
      readonly events: PanelEvents;
      readonly now: () => Date;
    },
  ) {}

  /** Whether `user` may see and operate `name` (which need not exist). */
  async canAccess(user: User, name: string): Promise<boolean> {
    if (can(user, 'server.use', { assigned: false })) return true;
    if (!can(user, 'account.use')) return false;
    const assigned = (await this.deps.grants.serverNames(user.id)).includes(name);
    return can(user, 'server.use', { assigned });
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
      can(user, 'servers.list-all') ? undefined : await this.deps.grants.serverNames(user.id),
    );
    return records.map((record) => ({
      name: record.name,
      displayName: record.displayName,
      status: this.deps.host.state(record.name).status,
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
      limits: { ...NO_SERVER_LIMITS, ...server.limits },
      runtime: server.runtime ?? 'process',
      image: server.image ?? null,
      createdAt: this.deps.now().toISOString(),
    };
    checkImage(config);
    if (!(await this.deps.servers.insert(config))) {
      throw new AppError('CONFLICT', 'A server with that name exists');
    }
    try {
      await this.deps.host.create(config.name);
    } catch (error) {
      await this.deps.servers.delete(config.name);
      throw error;
    }
    return config;
  }

  async updateConfig(user: User, name: string, changes: ConfigChanges): Promise<ServerConfig> {
    const current = await this.require(user, name);
    if (
      !can(user, 'server.configure-host') &&
      HOST_FIELDS.some((field) => changes[field] !== undefined)
    ) {
      throw new AppError(
        'FORBIDDEN',
        'Only an admin may change the commands, limits, runtime and image of a server',
      );
    }
    if (changes.startCommand !== undefined) checkCommand('startCommand', changes.startCommand);
    if (changes.stopCommand != null) checkCommandText('stopCommand', changes.stopCommand);
    const updated: ServerConfig = {
      ...current,
      ...changes,
      limits: { ...current.limits, ...changes.limits },
    };
    checkImage(updated);
    if (updated.runtime !== current.runtime) {
      const { status } = this.deps.host.state(name);
      if (status !== 'stopped' && status !== 'crashed') {
        throw new AppError('CONFLICT', 'Stop the server before changing its runtime');
      }
    }
    await this.deps.servers.update(name, changes);
    return updated;
  }

  /**
   * Stops the server if it runs, then deletes it: its directory first, taken away in one rename
   * (into the storage's trash), then its row. A failure on the way leaves the server as it was,
   * directory included, and a server made again under that name never starts from the old
   * folder. The old content is removed in the background; failures there are logged.
   */
  async remove(name: string): Promise<void> {
    if (!(await this.deps.servers.find(name))) throw notFound('Server');
    const discarded = await this.deps.host.discard(name);
    try {
      await this.deps.servers.delete(name);
    } catch (error) {
      await discarded.restore();
      throw error;
    }
    discarded.purge();
    this.deps.events.emit('server-deleted', name);
  }

  async start(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name);
    return this.deps.host.start(name);
  }

  async stop(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name);
    return this.deps.host.stop(name);
  }

  async restart(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name);
    return this.deps.host.restart(name);
  }

  async kill(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name);
    return this.deps.host.kill(name);
  }

  async command(user: User, name: string, command: string): Promise<void> {
    await this.require(user, name);
    this.deps.host.command(name, command, user.username);
  }

  /** The server's console, for a caller who may use the server. */
  async console(user: User, name: string): Promise<ServerConsole> {
    await this.require(user, name);
    return this.deps.host.console(name);
  }

  /** The servers' files and this server's configuration, for a caller who may use the server. */
  async files(user: User, name: string): Promise<{ server: ServerConfig; files: ServerFiles }> {
    const server = await this.require(user, name);
    return { server, files: this.deps.host.files };
  }

  async stats(user: User, name: string): Promise<ServerStats> {
    const config = await this.require(user, name);
    const state = this.deps.host.state(name);
    const [usage, disk] = await Promise.all([
      this.deps.host.usage(name),
      this.deps.host.files.diskUsage(name),
    ]);
    const uptimeMs = state.startedAt ? this.deps.now().getTime() - state.startedAt.getTime() : 0;
    return {
      status: state.status,
      pid: state.pid,
      lastExit: state.lastExit && { ...state.lastExit, at: state.lastExit.at.toISOString() },
      uptimeSeconds: Math.max(0, Math.floor(uptimeMs / 1000)),
      cpu: { percent: usage.cpuPercent, limit: config.limits.cpuPercent },
      memory: { bytes: usage.memoryBytes, limit: config.limits.memoryBytes },
      pids: { count: usage.pids, limit: config.limits.pids },
      disk: { bytes: disk, limit: config.limits.diskBytes },
    };
  }
}

/** The docker runtime runs an image: it needs one. */
function checkImage(config: ServerConfig): void {
  if (config.runtime === 'docker' && config.image === null) {
    throw new AppError('VALIDATION_FAILED', 'image: the docker runtime needs an image', {
      details: [{ path: 'body/image', message: 'the docker runtime needs an image' }],
    });
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
