/**
 * Game servers: who may see and change which (src/domain/policy.ts), their creation and
 * deletion, and the only way from the HTTP modules to the ServerHost that runs them: lifecycle,
 * console, files and stats are reached through here, each after the caller's rights were
 * checked. Admins see every server; everyone else the servers in their own list. Only admins
 * create and delete servers or set what runs on the host and with how much. A server's settings
 * once it exists (configuration, variables, allocations, install) are
 * ./server-settings.service.ts's, checked as here (./server-checks.ts).
 */
import {
  can,
  SERVER_PERMISSIONS,
  type ServerAction,
  type ServerGrant,
  type ServerPermission,
  type ServerScopedAction,
} from '../../domain/policy.js';
import { AlreadyExists, NoLongerExists } from '../../domain/conflicts.js';
import {
  type Allocation,
  type InstallState,
  type RecordedExit,
  type RuntimeKind,
  type ServerConfig,
  type ServerLimits,
  type ServerRecord,
  type ServerStatus,
} from '../../domain/server.js';
import { LOCAL_NODE } from '../../domain/node.js';
import type { Template } from '../../domain/template.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { DefaultLimits } from '../../domain/panel-settings.js';
import type { PanelEvents } from '../../events.js';
import type { BackupHost, ServerConsole, ServerFiles, ServerHost } from '../../host/host.js';
import { stopCommandOf } from '../../domain/stop-command.js';
import {
  allocationTaken,
  checkAllocations,
  checkCommand,
  checkCommandText,
  checkImage,
  checkImageAllowed,
  checkNodeAddresses,
  refuseTakenAllocations,
  templateValues,
  type ImageRefusal,
  type NodeAddress,
  type PortRange,
} from './server-checks.js';
import type { ServersRepository } from './servers.repository.js';

/** Which servers an admin put in a user's list (the users domain keeps them). */
export interface ServerGrants {
  serverNames(userId: number): Promise<string[]>;
  /** The permissions of the user's list on the server (null: not in it), and whether they own it. */
  accessOn(
    userId: number,
    server: string,
  ): Promise<{ permissions: ReadonlySet<ServerPermission> | null; owner: boolean }>;
  /** The servers in the user's list, with the permissions held on each and whether they own it. */
  serverPermissions(
    userId: number,
  ): Promise<Map<string, { permissions: ServerPermission[]; owner: boolean }>>;
  findByUsername(username: string): Promise<User | undefined>;
  /**
   * Makes the user the server's owner; undefined when the server is gone. Throws
   * `NoLongerExists` when the user was deleted meanwhile.
   */
  setOwner(server: string, userId: number | null): Promise<{ previous: number | null } | undefined>;
  /** The account as it is now; undefined once it is deleted. */
  findById(userId: number): Promise<User | undefined>;
}

/** Where the servers service finds templates (the templates domain keeps them). */
export interface TemplateLookup {
  find(id: string): Promise<Template | undefined>;
}

export interface ServerSummary {
  readonly name: string;
  readonly displayName: string;
  readonly status: ServerStatus;
  readonly autoRestart: boolean;
  readonly template: string | null;
  readonly installState: InstallState;
  readonly lastExit: RecordedExit | null;
  /** The node it is on. */
  readonly node: string;
  readonly createdAt: string;
  /** What the caller may do on it. */
  readonly permissions: readonly ServerPermission[];
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
  /** The registry digest of the image its container was last made from (docker runtime). */
  readonly imageDigest: string | null;
  readonly cpu: { readonly percent: number; readonly limit: number | null };
  readonly memory: { readonly bytes: number; readonly limit: number | null };
  readonly pids: { readonly count: number; readonly limit: number | null };
  readonly disk: { readonly bytes: number; readonly limit: number | null };
}

/** One server's status and use of the machine, as the panel's metrics read them. */
export interface ServerReading {
  readonly name: string;
  readonly status: ServerStatus;
  /** `null` when it could not be read (the process or container went away meanwhile). */
  readonly usage: { readonly cpuPercent: number; readonly memoryBytes: number } | null;
  /** `null` when the folder could not be measured. */
  readonly diskBytes: number | null;
}

/** Whether an account may still do something on a server, and if not, why. */
export type Standing =
  { readonly ok: true; readonly user: User } | { readonly ok: false; readonly reason: string };

/** What the panel itself may do to a server (see `ServersService.actingAs`). */
export interface ServerActor {
  status(name: string): ServerStatus;
  start(name: string): Promise<ServerStatus>;
  stop(name: string): Promise<ServerStatus>;
  restart(name: string): Promise<ServerStatus>;
  command(name: string, line: string): Promise<void>;
}

export interface NewServer {
  readonly name: string;
  readonly displayName?: string | undefined;
  /** Required without a template; with one, the template's first start command by default. */
  readonly startCommand?: string | undefined;
  readonly template?: string | undefined;
  /** Values of the template's variables, by environment name; the others get their default. */
  readonly variables?: Readonly<Record<string, string>> | undefined;
  readonly allocations?: readonly Allocation[] | undefined;
  readonly stopCommand?: string | null | undefined;
  readonly stopTimeoutSeconds?: number | undefined;
  readonly autoRestart?: boolean | undefined;
  readonly limits?: Partial<ServerLimits> | undefined;
  readonly runtime?: RuntimeKind | undefined;
  readonly image?: string | null | undefined;
  /** The username of its owner (docs/api.md, "A server's owner"); none by default. */
  readonly owner?: string | undefined;
  /** The node to put it on; by default the one placement picks (docs/nodes.md, "Placement"). */
  readonly node?: string | undefined;
}

/** Where servers go, and the nodes their allocations are checked against (the nodes domain). */
export interface ServerPlacement {
  /**
   * Places a new server with this memory limit on `named` (checked) or on the node with the most
   * memory left (400 unknown node, 409 NODE_MAINTENANCE, 409 NODE_FULL), and runs `record` to
   * record it there: no other placement runs until `record` settles, so two creations at once
   * never both take the memory left for one.
   */
  placing<T>(
    memoryBytes: number | null,
    named: string | undefined,
    record: (node: NodeAddress) => Promise<T>,
  ): Promise<T>;
  /** Node `name` as allocations are checked against it; undefined when there is none. */
  nodeAddress(name: string): Promise<NodeAddress | undefined>;
}

/** What the ServersService is built from (src/app.ts wires it). */
export interface ServersServiceDeps {
  readonly servers: ServersRepository;
  readonly grants: ServerGrants;
  readonly host: ServerHost;
  readonly templates: TemplateLookup;
  readonly events: PanelEvents;
  /** The ports an allocation may have. */
  readonly portRange: PortRange;
  readonly now: () => Date;
  /**
   * The limits a server gets for those its creator leaves out, the panel's settings
   * (docs/security.md, "Defaults that bound a tenant"); none when not given (unit tests).
   */
  readonly defaultLimits?: () => Promise<DefaultLimits>;
  /** Why a server may not have an image (./server-checks.ts); any when not given (unit tests). */
  readonly imageRefusal?: ImageRefusal;
  /** Where new servers go; every one on `local` when not given (unit tests). */
  readonly placement?: ServerPlacement;
}

export class ServersService {
  readonly #deps: ServersServiceDeps;

  constructor(deps: ServersServiceDeps) {
    this.#deps = deps;
  }

  /**
   * The limits of a new server: those given (null: none), the panel's defaults for those left
   * out, and always a process limit (a null `pids` gets the default too).
   */
  async #limitsFor(given: Partial<ServerLimits> | undefined): Promise<ServerLimits> {
    const defaults = (await this.#deps.defaultLimits?.()) ?? null;
    const pick = <K extends keyof ServerLimits>(key: K): ServerLimits[K] =>
      given?.[key] !== undefined ? given[key] : (defaults?.[key] ?? null);
    return {
      memoryBytes: pick('memoryBytes'),
      cpuPercent: pick('cpuPercent'),
      diskBytes: pick('diskBytes'),
      pids: given?.pids ?? defaults?.pids ?? null,
    };
  }

  /** What `user` holds on `name` (which need not exist), for the policy. */
  async #grant(user: User, name: string): Promise<ServerGrant> {
    // Admins hold everything everywhere, the banned nothing: no need to look.
    if (user.role === 'admin' || !can(user, 'account.use'))
      return { permissions: null, server: name };
    const { permissions, owner } = await this.#deps.grants.accessOn(user.id, name);
    return { permissions, owner, server: name };
  }

  /** Whether `user` may do `action` on `name` (which need not exist). */
  async permits(user: User, name: string, action: ServerScopedAction): Promise<boolean> {
    return can(user, action, await this.#grant(user, name));
  }

  /** The server's configuration, for a caller who may see it, with what they may do on it. */
  async configFor(
    user: User,
    name: string,
  ): Promise<ServerRecord & { permissions: readonly ServerPermission[] }> {
    const { record, permissions } = await this.requireHeld(user, name, 'server.view');
    return { ...record, permissions };
  }

  /**
   * `require`, answering also the permissions `user` holds on the server as the policy judges
   * them (an admin's every one, narrowed by an API key).
   */
  async requireHeld(
    user: User,
    name: string,
    action: ServerAction,
  ): Promise<{ record: ServerRecord; permissions: ServerPermission[] }> {
    const { record, grant } = await this.#checked(user, name, action);
    return {
      record,
      permissions: SERVER_PERMISSIONS.filter((p) => can(user, `server.${p}`, grant)),
    };
  }

  /**
   * The server as recorded (its configuration, variables and last exit), or 404 when it does not
   * exist, 403 when `user` may not see it, and 403 naming the first permission missing when they
   * may see it but not do `action` (every one of them, when several are given).
   */
  async require(
    user: User,
    name: string,
    action: ServerScopedAction | readonly ServerScopedAction[],
  ): Promise<ServerRecord> {
    return (await this.#checked(user, name, action)).record;
  }

  /**
   * Whether the account `userId`, as it is now, may still do every one of `actions` on `name`:
   * the account when it may, else why not, in words for an operator. For what the panel does
   * later on someone's behalf (a schedule's run, a backup's save commands): the account must
   * exist, not be banned, have the server and hold each permission, as the policy judges it (an
   * admin holds everything). No API key narrows it: the key was checked when the thing was set.
   */
  async stillPermits(
    userId: number,
    name: string,
    actions: readonly ServerAction[],
  ): Promise<Standing> {
    const user = await this.#deps.grants.findById(userId);
    if (!user) return { ok: false, reason: 'the account that set it no longer exists' };
    if (!can(user, 'account.use')) {
      return { ok: false, reason: `${user.username} is banned` };
    }
    const grant = await this.#grant(user, name);
    if (!can(user, 'server.view', grant)) {
      return { ok: false, reason: `${user.username} no longer has the server` };
    }
    const missing = actions.find((action) => !can(user, action, grant));
    return missing === undefined
      ? { ok: true, user }
      : {
          ok: false,
          reason: `${user.username} no longer holds the ${permissionName(missing)} permission on the server`,
        };
  }

  /** `require`, answering also what the user holds on the server (read once). */
  async #checked(
    user: User,
    name: string,
    action: ServerScopedAction | readonly ServerScopedAction[],
  ): Promise<{ record: ServerRecord; grant: ServerGrant }> {
    const record = await this.#deps.servers.find(name);
    if (!record) throw notFound('Server');
    const grant = await this.#grant(user, name);
    if (!can(user, 'server.view', grant)) {
      throw new AppError('FORBIDDEN', 'You have no access to this server');
    }
    const actions: readonly ServerScopedAction[] = typeof action === 'string' ? [action] : action;
    const missing = actions.find((each) => !can(user, each, grant));
    if (missing !== undefined) {
      throw new AppError(
        'FORBIDDEN',
        missing === 'server.configure-host'
          ? 'Only an admin may do this'
          : `You lack the ${permissionName(missing)} permission on this server`,
      );
    }
    return { record, grant };
  }

  async list(user: User): Promise<ServerSummary[]> {
    // The servers of the account (every one for an admin), then those its API key reaches.
    const held = can({ role: user.role }, 'servers.list-all')
      ? null
      : await this.#deps.grants.serverPermissions(user.id);
    const records = await this.#deps.servers.list(held === null ? undefined : [...held.keys()]);
    return records.flatMap((record) => {
      const access = held?.get(record.name);
      const grant: ServerGrant = {
        permissions: held === null ? null : new Set(access?.permissions),
        owner: access?.owner === true,
        server: record.name,
      };
      if (!can(user, 'server.view', grant)) return [];
      return [
        {
          permissions: SERVER_PERMISSIONS.filter((p) => can(user, `server.${p}`, grant)),
          name: record.name,
          displayName: record.displayName,
          status: this.#deps.host.state(record.name).status,
          autoRestart: record.autoRestart,
          template: record.template,
          installState: record.install.state,
          lastExit: this.#lastExit(record),
          node: record.node,
          createdAt: record.createdAt,
        },
      ];
    });
  }

  /** This run's last exit, else the one recorded by an earlier run. */
  #lastExit(record: ServerRecord): RecordedExit | null {
    const exit = this.#deps.host.state(record.name).lastExit;
    return exit ? { ...exit, at: exit.at.toISOString() } : record.lastExit;
  }

  async create(server: NewServer): Promise<ServerConfig> {
    const template = server.template === undefined ? null : await this.#template(server.template);
    const startCommand = server.startCommand ?? template?.startupCommands[0]?.command;
    if (startCommand === undefined) {
      throw new AppError('VALIDATION_FAILED', 'startCommand: required without a template', {
        details: [{ path: 'body/startCommand', message: 'required without a template' }],
      });
    }
    if (template === null) checkCommand('startCommand', startCommand);
    const stopCommand =
      server.stopCommand !== undefined
        ? server.stopCommand
        : template === null
          ? null
          : stopCommandOf(template.stop);
    if (stopCommand != null) checkCommandText('stopCommand', stopCommand);
    if (server.variables !== undefined && template === null) {
      throw new AppError(
        'VALIDATION_FAILED',
        'variables: only a server made from a template has variables',
        {
          details: [{ path: 'body/variables', message: 'only with a template' }],
        },
      );
    }
    const variables = template === null ? {} : templateValues(template, server.variables ?? {});
    const allocations = checkAllocations(server.allocations ?? [], this.#deps.portRange);
    const runtime = server.runtime ?? 'process';
    const limits = await this.#limitsFor(server.limits);
    const unplaced: Omit<ServerConfig, 'node'> = {
      name: server.name,
      displayName: server.displayName ?? template?.name ?? server.name,
      startCommand,
      stopCommand,
      stopTimeoutSeconds: server.stopTimeoutSeconds ?? 10,
      autoRestart: server.autoRestart ?? false,
      limits,
      runtime,
      image:
        server.image ?? (runtime === 'docker' ? (template?.dockerImages[0]?.image ?? null) : null),
      template: template?.id ?? null,
      install: {
        state: template?.install ? 'not-installed' : 'installed',
        exitCode: null,
        finishedAt: null,
        reason: null,
        lastLines: [],
      },
      allocations,
      createdAt: this.#deps.now().toISOString(),
    };
    checkImage(unplaced);
    await checkImageAllowed(unplaced, this.#deps.imageRefusal);
    const owner =
      server.owner === undefined ? null : await this.ownerNamed(server.owner, 'body/owner');
    // Recorded on the node it is placed on before the next placement is made (docs/nodes.md,
    // "Placement"): what the node holds counts for the next at once.
    const record = async (node: NodeAddress): Promise<ServerConfig> => {
      const placed: ServerConfig = { ...unplaced, node: node.name };
      checkNodeAddresses(allocations, node);
      await refuseTakenAllocations(this.#deps.servers, placed.name, node.name, allocations);
      let inserted: boolean;
      try {
        inserted = await this.#deps.servers.insert(placed, variables);
      } catch (error) {
        if (error instanceof AlreadyExists) throw allocationTaken();
        if (error instanceof NoLongerExists) throw notFound('Template');
        throw error;
      }
      if (!inserted) throw new AppError('CONFLICT', 'A server with that name exists');
      return placed;
    };
    const config =
      this.#deps.placement === undefined
        ? await record({ name: server.node ?? LOCAL_NODE, publicAddress: null })
        : await this.#deps.placement.placing(limits.memoryBytes, server.node, record);
    try {
      if (owner !== null) await this.#deps.grants.setOwner(config.name, owner.id);
    } catch (error) {
      await this.#deps.servers.delete(config.name);
      if (error instanceof NoLongerExists) throw unknownOwner('body/owner', server.owner ?? '');
      throw error;
    }
    try {
      await this.#deps.host.create(config.name);
    } catch (error) {
      await this.#deps.servers.delete(config.name);
      throw error;
    }
    // A template with an install script: the install starts at once, its output in the console.
    if (template?.install) {
      await this.#deps.host.install(config.name).catch((error: unknown) => {
        if (!(error instanceof AppError)) throw error;
      });
      return (await this.#deps.servers.find(config.name)) ?? config;
    }
    return config;
  }

  /**
   * The account an admin names as a server's owner: a live account that is not an admin (admins
   * hold every permission on every server already). 400 naming `path` otherwise; the caller is an
   * admin, so saying that a name is unknown tells nothing they could not list.
   */
  async ownerNamed(username: string, path: string): Promise<User> {
    const user = await this.#deps.grants.findByUsername(username);
    if (!user) throw unknownOwner(path, username);
    if (user.role === 'admin') {
      throw new AppError(
        'VALIDATION_FAILED',
        `owner: ${user.username} is an admin, who holds every permission on every server already`,
        { details: [{ path, message: 'an admin cannot own a server' }] },
      );
    }
    return user;
  }

  async #template(id: string): Promise<Template> {
    const template = await this.#deps.templates.find(id);
    if (!template) {
      throw new AppError('VALIDATION_FAILED', `template: there is no template "${id}"`, {
        details: [{ path: 'body/template', message: 'no such template' }],
      });
    }
    return template;
  }

  async #recordOf(name: string): Promise<ServerRecord> {
    const record = await this.#deps.servers.find(name);
    if (!record) throw notFound('Server');
    return record;
  }

  /**
   * Stops the server if it runs, then deletes it: its directory first, taken away in one rename
   * (into the storage's trash), then its row. A failure on the way leaves the server as it was,
   * directory included, and a server made again under that name never starts from the old
   * folder. The old content is removed in the background; failures there are logged.
   */
  async remove(name: string): Promise<void> {
    if (!(await this.#deps.servers.find(name))) throw notFound('Server');
    const discarded = await this.#deps.host.discard(name);
    try {
      await this.#deps.servers.delete(name);
    } catch (error) {
      await discarded.restore();
      throw error;
    }
    discarded.purge();
    this.#deps.events.emit('server-deleted', name);
  }

  async start(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.power');
    return this.#explained(user, name, () => this.#deps.host.start(name));
  }

  /**
   * `start`, whose refusal for a failed install (409 NOT_INSTALLED, which says why) also quotes
   * the install's last lines to a caller who may read the console, where they were printed.
   */
  async #explained(
    user: User,
    name: string,
    start: () => Promise<ServerStatus>,
  ): Promise<ServerStatus> {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'NOT_INSTALLED') throw error;
      if (!(await this.permits(user, name, 'server.console.read'))) throw error;
      const install = (await this.#deps.servers.find(name))?.install;
      if (install?.state !== 'failed' || install.lastLines.length === 0) throw error;
      throw new AppError(
        'NOT_INSTALLED',
        `${error.message}. Its last lines: ${install.lastLines.join(' | ')}`,
      );
    }
  }

  async stop(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.power');
    return this.#deps.host.stop(name);
  }

  async restart(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.power');
    return this.#explained(user, name, () => this.#deps.host.restart(name));
  }

  async kill(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.power');
    return this.#deps.host.kill(name);
  }

  async command(user: User, name: string, command: string): Promise<void> {
    await this.require(user, name, 'server.console.write');
    this.#deps.host.command(name, command, user.username);
  }

  /**
   * The server's lifecycle and console for the panel acting on its own behalf, not a user's (a
   * schedule's tasks): no user is checked, the server must exist (404). The console shows
   * commands as typed by `by`.
   */
  actingAs(by: string): ServerActor {
    const existing = async (name: string) => {
      await this.#recordOf(name);
    };
    return {
      status: (name) => this.#deps.host.state(name).status,
      start: async (name) => {
        await existing(name);
        return this.#deps.host.start(name);
      },
      stop: async (name) => {
        await existing(name);
        return this.#deps.host.stop(name);
      },
      restart: async (name) => {
        await existing(name);
        return this.#deps.host.restart(name);
      },
      command: async (name, line) => {
        await existing(name);
        this.#deps.host.command(name, line, by);
      },
    };
  }

  /** The server as recorded, for the panel acting on its own behalf (no user is checked). */
  find(name: string): Promise<ServerRecord | undefined> {
    return this.#deps.servers.find(name);
  }

  /** The server's status now; the caller has checked who asks (`stopped` for an unknown name). */
  status(name: string): ServerStatus {
    return this.#deps.host.state(name).status;
  }

  /**
   * What the backups module needs of the host: the servers' folders, their status, holding a
   * stopped server stopped, save commands and the console. Its callers check the rights first.
   */
  backupHost(): BackupHost {
    const host = this.#deps.host;
    return {
      files: host.backupFiles,
      status: (name) => host.state(name).status,
      hold: (name, reason) => host.hold(name, reason),
      command: (name, line, by) => {
        host.command(name, line, by);
      },
      watch: (name, patterns, onMatch) => host.console(name).watch(patterns, onMatch),
    };
  }

  /**
   * Every server's status, CPU, memory and disk use, for the panel itself (its metrics): no user
   * is checked. A reading that fails is `null`, never a failure of the whole. CPU is measured
   * since the previous reading of the server, whoever asked (a scrape or a stats request).
   */
  async readings(): Promise<ServerReading[]> {
    const host = this.#deps.host;
    const names = await this.#deps.servers.allNames();
    return Promise.all(
      names.map(async (name) => {
        const [usage, diskBytes] = await Promise.all([
          host.usage(name).catch(() => null),
          host.files.diskUsage(name).catch(() => null),
        ]);
        return {
          name,
          status: host.state(name).status,
          usage: usage && { cpuPercent: usage.cpuPercent, memoryBytes: usage.memoryBytes },
          diskBytes,
        };
      }),
    );
  }

  /** The server's console, for a caller who may use the server. */
  async console(user: User, name: string): Promise<ServerConsole> {
    await this.require(user, name, 'server.console.read');
    return this.#deps.host.console(name);
  }

  /** The server's console, for the panel itself (no user is checked). */
  consoleOf(name: string): ServerConsole {
    return this.#deps.host.console(name);
  }

  /** The servers' files and this server's configuration, for a caller who may use the server. */
  async files(
    user: User,
    name: string,
    need: 'server.files.read' | 'server.files.write',
  ): Promise<{ server: ServerConfig; files: ServerFiles }> {
    const server = await this.require(user, name, need);
    return { server, files: this.#deps.host.files };
  }

  async stats(user: User, name: string): Promise<ServerStats> {
    const record = await this.require(user, name, 'server.view');
    const state = this.#deps.host.state(name);
    const [usage, disk] = await Promise.all([
      this.#deps.host.usage(name),
      // A server whose node does not answer is `unknown`, its figures 0 (docs/nodes.md).
      this.#deps.host.files.diskUsage(name).catch((error: unknown) => {
        if (error instanceof AppError && state.status === 'unknown') return 0;
        throw error;
      }),
    ]);
    const uptimeMs = state.startedAt ? this.#deps.now().getTime() - state.startedAt.getTime() : 0;
    return {
      status: state.status,
      pid: state.pid,
      lastExit: this.#lastExit(record),
      uptimeSeconds: Math.max(0, Math.floor(uptimeMs / 1000)),
      imageDigest: record.imageDigest,
      cpu: { percent: usage.cpuPercent, limit: record.limits.cpuPercent },
      memory: { bytes: usage.memoryBytes, limit: record.limits.memoryBytes },
      pids: { count: usage.pids, limit: record.limits.pids },
      disk: { bytes: disk, limit: record.limits.diskBytes },
    };
  }
}

const unknownOwner = (path: string, username: string): AppError =>
  new AppError('VALIDATION_FAILED', `owner: there is no account "${username}"`, {
    details: [{ path, message: 'no such account' }],
  });

/** How a refusal names what an action needs: `power`, or `backups.*` for seeing backups. */
export function permissionName(action: ServerAction): string {
  return action === 'server.backups.view' ? 'backups.*' : action.slice('server.'.length);
}
