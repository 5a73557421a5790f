/**
 * Game servers: who may see and change which (src/domain/policy.ts), their configuration, and
 * the only way from the HTTP modules to the ServerHost that runs them: lifecycle, console,
 * files and stats are reached through here, each after the caller's rights were checked.
 * Admins see every server; everyone else the servers in their own list. Only admins create and
 * delete servers or set what runs on the host and with how much.
 */
import { parseCommand } from '../../domain/command.js';
import {
  can,
  SERVER_PERMISSIONS,
  type ServerAction,
  type ServerGrant,
  type ServerPermission,
  type ServerScopedAction,
} from '../../domain/policy.js';
import { isIP } from 'node:net';
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
import type { Template, TemplateVariable } from '../../domain/template.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { DefaultLimits } from '../../domain/panel-settings.js';
import type { PanelEvents } from '../../events.js';
import type { BackupHost, ServerConsole, ServerFiles, ServerHost } from '../../host/host.js';
import { stopCommandOf } from '../../domain/stop-command.js';
import { checkValue } from '../../templates/rules.js';
import { rewrittenKeys, type RewrittenFile } from '../../templates/template-uses.js';
import type { ConfigChanges, ServersRepository } from './servers.repository.js';

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
  readonly createdAt: string;
  /** What the caller may do on it. */
  readonly permissions: readonly ServerPermission[];
}

/** A template variable of a server, as its caller may see it. */
export interface ServerVariable {
  readonly name: string;
  readonly description: string;
  readonly envVariable: string;
  readonly value: string;
  readonly defaultValue: string;
  readonly rules: readonly string[];
  readonly userViewable: boolean;
  readonly userEditable: boolean;
  /** Whether the caller may change it. */
  readonly editable: boolean;
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
}

/** Fields only an admin may change: what runs on the host, and with how much of it. */
const HOST_FIELDS = ['startCommand', 'stopCommand', 'limits', 'runtime', 'image'] as const;

export class ServersService {
  constructor(
    private readonly deps: {
      readonly servers: ServersRepository;
      readonly grants: ServerGrants;
      readonly host: ServerHost;
      readonly templates: TemplateLookup;
      readonly events: PanelEvents;
      /** The ports an allocation may have. */
      readonly portRange: { readonly min: number; readonly max: number };
      readonly now: () => Date;
      /**
       * The limits a server gets for those its creator leaves out, the panel's settings
       * (docs/security.md, "Defaults that bound a tenant"); none when not given (unit tests).
       */
      readonly defaultLimits?: () => Promise<DefaultLimits>;
      /**
       * Why a server may not have `image` (its registry is not allowed: docs/templates.md,
       * "Images"), or null; any image when not given (unit tests).
       */
      readonly imageRefusal?: (image: string) => Promise<string | null>;
    },
  ) {}

  /** 400 `IMAGE_NOT_ALLOWED` when the docker runtime would pull `config.image` from a registry not allowed. */
  async #checkImageAllowed(config: ServerConfig): Promise<void> {
    if (config.runtime !== 'docker' || config.image === null) return;
    const refused = (await this.deps.imageRefusal?.(config.image)) ?? null;
    if (refused !== null) {
      throw new AppError('IMAGE_NOT_ALLOWED', `image: ${refused}`, {
        details: [{ path: 'body/image', message: refused }],
      });
    }
  }

  /**
   * The limits of a new server: those given (null: none), the panel's defaults for those left
   * out, and always a process limit (a null `pids` gets the default too).
   */
  async #limitsFor(given: Partial<ServerLimits> | undefined): Promise<ServerLimits> {
    const defaults = (await this.deps.defaultLimits?.()) ?? null;
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
    const { permissions, owner } = await this.deps.grants.accessOn(user.id, name);
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
    const user = await this.deps.grants.findById(userId);
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
    const record = await this.deps.servers.find(name);
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
      : await this.deps.grants.serverPermissions(user.id);
    const records = await this.deps.servers.list(held === null ? undefined : [...held.keys()]);
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
          status: this.deps.host.state(record.name).status,
          autoRestart: record.autoRestart,
          template: record.template,
          installState: record.install.state,
          lastExit: this.#lastExit(record),
          createdAt: record.createdAt,
        },
      ];
    });
  }

  /** This run's last exit, else the one recorded by an earlier run. */
  #lastExit(record: ServerRecord): RecordedExit | null {
    const exit = this.deps.host.state(record.name).lastExit;
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
    const allocations = this.#checkAllocations(server.allocations ?? []);
    const runtime = server.runtime ?? 'process';
    const config: ServerConfig = {
      name: server.name,
      displayName: server.displayName ?? template?.name ?? server.name,
      startCommand,
      stopCommand,
      stopTimeoutSeconds: server.stopTimeoutSeconds ?? 10,
      autoRestart: server.autoRestart ?? false,
      limits: await this.#limitsFor(server.limits),
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
      createdAt: this.deps.now().toISOString(),
    };
    checkImage(config);
    await this.#checkImageAllowed(config);
    const owner =
      server.owner === undefined ? null : await this.ownerNamed(server.owner, 'body/owner');
    await this.#refuseTakenAllocations(config.name, allocations);
    let inserted: boolean;
    try {
      inserted = await this.deps.servers.insert(config, variables);
    } catch (error) {
      if (error instanceof AlreadyExists) throw allocationTaken();
      if (error instanceof NoLongerExists) throw notFound('Template');
      throw error;
    }
    if (!inserted) throw new AppError('CONFLICT', 'A server with that name exists');
    try {
      if (owner !== null) await this.deps.grants.setOwner(config.name, owner.id);
    } catch (error) {
      await this.deps.servers.delete(config.name);
      if (error instanceof NoLongerExists) throw unknownOwner('body/owner', server.owner ?? '');
      throw error;
    }
    try {
      await this.deps.host.create(config.name);
    } catch (error) {
      await this.deps.servers.delete(config.name);
      throw error;
    }
    // A template with an install script: the install starts at once, its output in the console.
    if (template?.install) {
      await this.deps.host.install(config.name).catch((error: unknown) => {
        if (!(error instanceof AppError)) throw error;
      });
      return (await this.deps.servers.find(config.name)) ?? config;
    }
    return config;
  }

  /**
   * The account an admin names as a server's owner: a live account that is not an admin (admins
   * hold every permission on every server already). 400 naming `path` otherwise; the caller is an
   * admin, so saying that a name is unknown tells nothing they could not list.
   */
  async ownerNamed(username: string, path: string): Promise<User> {
    const user = await this.deps.grants.findByUsername(username);
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
    const template = await this.deps.templates.find(id);
    if (!template) {
      throw new AppError('VALIDATION_FAILED', `template: there is no template "${id}"`, {
        details: [{ path: 'body/template', message: 'no such template' }],
      });
    }
    return template;
  }

  /** The template variables of a server, those the caller may see. */
  async variables(user: User, name: string): Promise<ServerVariable[]> {
    const record = await this.require(user, name, 'server.settings');
    if (record.template === null) return [];
    const template = await this.deps.templates.find(record.template);
    if (!template) return [];
    const admin = can(user, 'server.configure-host', { permissions: null, server: name });
    return template.variables
      .filter((variable) => admin || variable.userViewable)
      .map((variable) => ({
        name: variable.name,
        description: variable.description,
        envVariable: variable.envVariable,
        value: record.variables[variable.envVariable] ?? variable.defaultValue,
        defaultValue: variable.defaultValue,
        rules: variable.rules,
        userViewable: variable.userViewable,
        userEditable: variable.userEditable,
        editable: admin || variable.userEditable,
      }));
  }

  /**
   * Changes the values of some variables; they take effect at the next start. A user may change
   * only those the template marks editable (403), and sees no other (400 as unknown).
   */
  async setVariables(
    user: User,
    name: string,
    values: Readonly<Record<string, string>>,
  ): Promise<ServerVariable[]> {
    const record = await this.require(user, name, 'server.settings');
    const template =
      record.template === null ? undefined : await this.deps.templates.find(record.template);
    if (!template) {
      throw new AppError(
        'CONFLICT',
        'The server was not made from a template: it has no variables',
      );
    }
    const admin = can(user, 'server.configure-host', { permissions: null, server: name });
    for (const key of Object.keys(values)) {
      const variable = template.variables.find((v) => v.envVariable === key);
      if (!variable || (!admin && !variable.userViewable)) throw unknownVariable(key);
      if (!admin && !variable.userEditable) {
        throw new AppError('FORBIDDEN', `${key}: only an admin may change this variable`);
      }
    }
    const merged = templateValues(
      template,
      { ...record.variables, ...values },
      Object.keys(values),
    );
    await this.deps.servers.setVariables(name, merged);
    return this.variables(user, name);
  }

  /** Replaces the server's allocations (admin); they take effect at the next start. */
  async setAllocations(
    user: User,
    name: string,
    allocations: readonly Allocation[],
  ): Promise<ServerConfig> {
    const record = await this.require(user, name, 'server.configure-host');
    const checked = this.#checkAllocations(allocations);
    await this.#refuseTakenAllocations(name, checked);
    try {
      await this.deps.servers.setAllocations(name, checked);
    } catch (error) {
      if (error instanceof AlreadyExists) throw allocationTaken();
      throw error;
    }
    return { ...record, allocations: checked };
  }

  /**
   * The lowest port of SERVER_PORT_RANGE that no server has on any address (what the create form
   * offers); 409 when every one is given. Whether another program holds it is seen at the start.
   */
  async freePort(): Promise<{ ip: string; port: number; range: { min: number; max: number } }> {
    const { min, max } = this.deps.portRange;
    const taken = new Set((await this.deps.servers.allAllocations()).map((a) => a.port));
    for (let port = min; port <= max; port++) {
      if (!taken.has(port)) return { ip: '0.0.0.0', port, range: { min, max } };
    }
    throw new AppError(
      'CONFLICT',
      `Every port of SERVER_PORT_RANGE (${min}-${max}) is given to a server already`,
    );
  }

  /**
   * The keys of the server's files that its template rewrites at every start (those of `path`
   * when given), from which variables: for a caller who may read its files. A variable the
   * caller may not see (a user, one the template keeps from users) is named as hidden.
   */
  async rewrittenKeys(user: User, name: string, path?: string): Promise<RewrittenFile[]> {
    const record = await this.require(user, name, 'server.files.read');
    const template =
      record.template === null ? undefined : await this.deps.templates.find(record.template);
    if (!template) return [];
    const admin = can(user, 'server.configure-host', { permissions: null, server: name });
    return rewrittenKeys(template, (variable) => admin || variable.userViewable, path);
  }

  /** Runs the template's install script (409 while the server runs or without a script). */
  async install(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.settings');
    return this.deps.host.install(name);
  }

  /** An admin says the server's files are ready (or not), whatever the install did. */
  async markInstalled(
    user: User,
    name: string,
    state: 'installed' | 'not-installed',
  ): Promise<ServerConfig> {
    const record = await this.require(user, name, 'server.configure-host');
    if (this.deps.host.state(name).status === 'installing') {
      throw new AppError('CONFLICT', 'The server is being installed: wait for the end, or kill it');
    }
    // What a failed install left is no longer why the server cannot start.
    await this.deps.servers.setInstall(name, { state, reason: null, lastLines: [] });
    return { ...record, install: { ...record.install, state, reason: null, lastLines: [] } };
  }

  async #recordOf(name: string): Promise<ServerRecord> {
    const record = await this.deps.servers.find(name);
    if (!record) throw notFound('Server');
    return record;
  }

  /** Addresses are IPs, ports within the configured range, none twice. */
  #checkAllocations(allocations: readonly Allocation[]): Allocation[] {
    const { min, max } = this.deps.portRange;
    const seen = new Set<string>();
    return allocations.map((allocation, index) => {
      const path = `body/allocations/${index}`;
      const fail = (message: string) =>
        new AppError('VALIDATION_FAILED', `allocations[${index}]: ${message}`, {
          details: [{ path, message }],
        });
      if (isIP(allocation.ip) === 0) throw fail(`${allocation.ip} is not an IP address`);
      if (allocation.port < min || allocation.port > max)
        throw fail(`port must be between ${min} and ${max}`);
      const key = `${allocation.ip}:${allocation.port}`;
      if (seen.has(key)) throw fail(`${key} is listed twice`);
      seen.add(key);
      return { ip: allocation.ip, port: allocation.port };
    });
  }

  /**
   * Refuses an address and port another server has, counting a wildcard address (0.0.0.0, ::)
   * as every address of the host.
   */
  async #refuseTakenAllocations(name: string, allocations: readonly Allocation[]): Promise<void> {
    const taken = (await this.deps.servers.allAllocations()).filter((a) => a.server !== name);
    for (const allocation of allocations) {
      const clash = taken.find(
        (other) =>
          other.port === allocation.port &&
          (other.ip === allocation.ip || isWildcard(other.ip) || isWildcard(allocation.ip)),
      );
      if (clash) {
        throw new AppError(
          'ALLOCATION_TAKEN',
          `${allocation.ip}:${allocation.port} is taken: server ${clash.server} has ${clash.ip}:${clash.port}`,
        );
      }
    }
  }

  async updateConfig(user: User, name: string, changes: ConfigChanges): Promise<ServerConfig> {
    const current = await this.require(user, name, 'server.settings');
    if (
      !can(user, 'server.configure-host', { permissions: null, server: name }) &&
      HOST_FIELDS.some((field) => changes[field] !== undefined)
    ) {
      throw new AppError(
        'FORBIDDEN',
        'Only an admin may change the commands, limits, runtime and image of a server',
      );
    }
    // A template's start command runs through a shell; any other without one.
    if (changes.startCommand !== undefined && current.template === null)
      checkCommand('startCommand', changes.startCommand);
    if (changes.stopCommand != null) checkCommandText('stopCommand', changes.stopCommand);
    // A process limit cannot be taken away: null stands for the panel's default.
    if (changes.limits?.pids === null && this.deps.defaultLimits !== undefined) {
      const { pids } = await this.deps.defaultLimits();
      changes = { ...changes, limits: { ...changes.limits, pids } };
    }
    const updated: ServerConfig = {
      ...current,
      ...changes,
      limits: { ...current.limits, ...changes.limits },
    };
    checkImage(updated);
    // Checked when it changes (its image, or to the docker runtime), not for every other change.
    if (updated.image !== current.image || updated.runtime !== current.runtime)
      await this.#checkImageAllowed(updated);
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
    await this.require(user, name, 'server.power');
    return this.#explained(user, name, () => this.deps.host.start(name));
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
      const install = (await this.deps.servers.find(name))?.install;
      if (install?.state !== 'failed' || install.lastLines.length === 0) throw error;
      throw new AppError(
        'NOT_INSTALLED',
        `${error.message}. Its last lines: ${install.lastLines.join(' | ')}`,
      );
    }
  }

  async stop(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.power');
    return this.deps.host.stop(name);
  }

  async restart(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.power');
    return this.#explained(user, name, () => this.deps.host.restart(name));
  }

  async kill(user: User, name: string): Promise<ServerStatus> {
    await this.require(user, name, 'server.power');
    return this.deps.host.kill(name);
  }

  async command(user: User, name: string, command: string): Promise<void> {
    await this.require(user, name, 'server.console.write');
    this.deps.host.command(name, command, user.username);
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
      status: (name) => this.deps.host.state(name).status,
      start: async (name) => {
        await existing(name);
        return this.deps.host.start(name);
      },
      stop: async (name) => {
        await existing(name);
        return this.deps.host.stop(name);
      },
      restart: async (name) => {
        await existing(name);
        return this.deps.host.restart(name);
      },
      command: async (name, line) => {
        await existing(name);
        this.deps.host.command(name, line, by);
      },
    };
  }

  /** The server as recorded, for the panel acting on its own behalf (no user is checked). */
  find(name: string): Promise<ServerRecord | undefined> {
    return this.deps.servers.find(name);
  }

  /** The server's status now; the caller has checked who asks (`stopped` for an unknown name). */
  status(name: string): ServerStatus {
    return this.deps.host.state(name).status;
  }

  /**
   * What the backups module needs of the host: the servers' folders, their status, holding a
   * stopped server stopped, save commands and the console. Its callers check the rights first.
   */
  backupHost(): BackupHost {
    const host = this.deps.host;
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
    const host = this.deps.host;
    const names = await this.deps.servers.allNames();
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
    return this.deps.host.console(name);
  }

  /** The servers' files and this server's configuration, for a caller who may use the server. */
  async files(
    user: User,
    name: string,
    need: 'server.files.read' | 'server.files.write',
  ): Promise<{ server: ServerConfig; files: ServerFiles }> {
    const server = await this.require(user, name, need);
    return { server, files: this.deps.host.files };
  }

  async stats(user: User, name: string): Promise<ServerStats> {
    const record = await this.require(user, name, 'server.view');
    const state = this.deps.host.state(name);
    const [usage, disk] = await Promise.all([
      this.deps.host.usage(name),
      this.deps.host.files.diskUsage(name),
    ]);
    const uptimeMs = state.startedAt ? this.deps.now().getTime() - state.startedAt.getTime() : 0;
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

const isWildcard = (ip: string): boolean => ip === '0.0.0.0' || ip === '::';

const unknownOwner = (path: string, username: string): AppError =>
  new AppError('VALIDATION_FAILED', `owner: there is no account "${username}"`, {
    details: [{ path, message: 'no such account' }],
  });

const allocationTaken = (): AppError =>
  new AppError('ALLOCATION_TAKEN', "One of the addresses and ports is another server's");

const unknownVariable = (key: string): AppError =>
  new AppError('VALIDATION_FAILED', `variables.${key}: not a variable of this server`, {
    details: [{ path: `body/variables/${key}`, message: 'not a variable of this server' }],
  });

/**
 * The values of every template variable: `values` over the defaults, each checked against its
 * rules (400 naming the first that fails). `checked`: the names to check (all by default; a
 * change checks what it changes, so a template whose default breaks its own rule stays usable).
 */
function templateValues(
  template: Template,
  values: Readonly<Record<string, string>>,
  checked?: readonly string[],
): Record<string, string> {
  const known = new Set(template.variables.map((variable) => variable.envVariable));
  for (const key of Object.keys(values)) {
    if (!known.has(key)) throw unknownVariable(key);
  }
  const result: Record<string, string> = {};
  for (const variable of template.variables) {
    result[variable.envVariable] = Object.hasOwn(values, variable.envVariable)
      ? (values[variable.envVariable] ?? '')
      : variable.defaultValue;
  }
  // Checked once all are known: a rule may compare with another variable (`gt:environment.MIN`).
  for (const variable of template.variables) {
    if (checked === undefined || checked.includes(variable.envVariable))
      checkVariable(variable, result[variable.envVariable] ?? '', result);
  }
  return result;
}

function checkVariable(
  variable: TemplateVariable,
  value: string,
  fields: Readonly<Record<string, string>>,
): void {
  const problem = checkValue(variable.rules, value === '' ? null : value, fields);
  if (problem !== null) {
    throw new AppError('VALIDATION_FAILED', `variables.${variable.envVariable}: ${problem}`, {
      details: [{ path: `body/variables/${variable.envVariable}`, message: problem }],
    });
  }
  if (/[\0]/.test(value)) {
    throw new AppError(
      'VALIDATION_FAILED',
      `variables.${variable.envVariable}: must not hold NUL`,
      {
        details: [{ path: `body/variables/${variable.envVariable}`, message: 'must not hold NUL' }],
      },
    );
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

/** How a refusal names what an action needs: `power`, or `backups.*` for seeing backups. */
export function permissionName(action: ServerAction): string {
  return action === 'server.backups.view' ? 'backups.*' : action.slice('server.'.length);
}

/** A stop command is a line typed into the console, not a program: it only must be one line. */
function checkCommandText(field: string, command: string): void {
  if (/[\r\n]/.test(command)) {
    throw new AppError('VALIDATION_FAILED', `${field}: must be a single line`, {
      details: [{ path: `body/${field}`, message: 'must be a single line' }],
    });
  }
}
