/**
 * A server's settings once it exists: its configuration (`PUT …/config`), template variables,
 * allocations, the files its template rewrites at every start, and its install (run the script,
 * or an admin says the files are ready). Every change is checked as at the creation
 * (./server-checks.ts) and takes effect at the next start.
 *
 * Rights: `settings` for the configuration and variables; only admins (`configure-host`) change
 * what runs on the host and with how much (commands, limits, runtime, image), allocations, and
 * the install state, and see or change the variables a template keeps from users.
 */
import { can } from '../../domain/policy.js';
import { AlreadyExists } from '../../domain/conflicts.js';
import type { DefaultLimits } from '../../domain/panel-settings.js';
import type { Allocation, ServerConfig, ServerStatus } from '../../domain/server.js';
import type { User } from '../../domain/user.js';
import { AppError } from '../../errors.js';
import type { ServerHost } from '../../host/host.js';
import { rewrittenKeys, type RewrittenFile } from '../../templates/template-uses.js';
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
  unknownVariable,
  type ImageRefusal,
  type PortRange,
} from './server-checks.js';
import type { ConfigChanges, ServersRepository } from './servers.repository.js';
import type { ServerPlacement, ServersService, TemplateLookup } from './servers.service.js';

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

/** A free port, on a node (`node`) or on every node (null). */
export interface FreePort {
  readonly ip: string;
  readonly port: number;
  readonly range: { readonly min: number; readonly max: number };
  readonly node: string | null;
}

/** Fields only an admin may change: what runs on the host, and with how much of it. */
const HOST_FIELDS = ['startCommand', 'stopCommand', 'limits', 'runtime', 'image'] as const;

/** What the settings of a server are read and changed with. */
export interface ServerSettingsDeps {
  readonly servers: Pick<ServersService, 'require'>;
  readonly repository: ServersRepository;
  readonly host: Pick<ServerHost, 'state' | 'install'>;
  readonly templates: TemplateLookup;
  /** The ports an allocation may have. */
  readonly portRange: PortRange;
  /**
   * The panel's default limits (docs/security.md, "Defaults that bound a tenant"): a process
   * limit set to null gets the default one; none when not given (unit tests).
   */
  readonly defaultLimits?: (() => Promise<DefaultLimits>) | undefined;
  /** Why a server may not have an image; any image when not given (unit tests). */
  readonly imageRefusal?: ImageRefusal | undefined;
  /** The nodes allocations are checked against; every server on `local` when not given. */
  readonly nodes?: Pick<ServerPlacement, 'nodeAddress'> | undefined;
}

export class ServerSettingsService {
  readonly #deps: ServerSettingsDeps;

  constructor(deps: ServerSettingsDeps) {
    this.#deps = deps;
  }

  /** The template variables of a server, those the caller may see. */
  async variables(user: User, name: string): Promise<ServerVariable[]> {
    const record = await this.#deps.servers.require(user, name, 'server.settings');
    if (record.template === null) return [];
    const template = await this.#deps.templates.find(record.template);
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
    const record = await this.#deps.servers.require(user, name, 'server.settings');
    const template =
      record.template === null ? undefined : await this.#deps.templates.find(record.template);
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
    await this.#deps.repository.setVariables(name, merged);
    return this.variables(user, name);
  }

  /**
   * Replaces the server's allocations (admin); they take effect at the next start. On a remote
   * node each names an address of it (./server-checks.ts `checkNodeAddresses`).
   */
  async setAllocations(
    user: User,
    name: string,
    allocations: readonly Allocation[],
  ): Promise<ServerConfig> {
    const record = await this.#deps.servers.require(user, name, 'server.configure-host');
    const checked = checkAllocations(allocations, this.#deps.portRange);
    const node = await this.#deps.nodes?.nodeAddress(record.node);
    if (node !== undefined) checkNodeAddresses(checked, node);
    await refuseTakenAllocations(this.#deps.repository, name, record.node, checked);
    try {
      await this.#deps.repository.setAllocations(name, checked);
    } catch (error) {
      if (error instanceof AlreadyExists) throw allocationTaken();
      throw error;
    }
    return { ...record, allocations: checked };
  }

  /**
   * The lowest port of SERVER_PORT_RANGE that no server on node `on` has on any address (400
   * naming `querystring/node` when there is no such node); without a node, that no server on any
   * node has, so it fits wherever the placement puts a new server. 409 when every one is given.
   * Whether another program holds it is not probed: `local`'s start does (409 PORT_IN_USE); a
   * remote node's ports cannot be probed from the panel's machine, and a port taken there fails
   * the server's start on the node (docs/nodes.md, "Placement").
   */
  async freePort(on?: string): Promise<FreePort> {
    if (on !== undefined && (await this.#deps.nodes?.nodeAddress(on)) === undefined) {
      throw new AppError('VALIDATION_FAILED', `node: there is no node "${on}"`, {
        details: [{ path: 'querystring/node', message: 'no such node' }],
      });
    }
    const { min, max } = this.#deps.portRange;
    const taken = new Set((await this.#deps.repository.allAllocations(on)).map((a) => a.port));
    for (let port = min; port <= max; port++) {
      if (!taken.has(port)) return { ip: '0.0.0.0', port, range: { min, max }, node: on ?? null };
    }
    throw new AppError(
      'CONFLICT',
      on === undefined
        ? `Every port of SERVER_PORT_RANGE (${min}-${max}) is given to a server already`
        : `Every port of SERVER_PORT_RANGE (${min}-${max}) is given to a server on node ${on} already`,
    );
  }

  /**
   * `freePort` on the node server `name` is on (admin, as changing its allocations): ports its
   * own allocations and those of the other servers there hold are taken, those of servers on
   * other nodes are not.
   */
  async freePortOf(user: User, name: string): Promise<FreePort> {
    const record = await this.#deps.servers.require(user, name, 'server.configure-host');
    return this.freePort(record.node);
  }

  /**
   * The keys of the server's files that its template rewrites at every start (those of `path`
   * when given), from which variables: for a caller who may read its files. A variable the
   * caller may not see (a user, one the template keeps from users) is named as hidden.
   */
  async rewrittenKeys(user: User, name: string, path?: string): Promise<RewrittenFile[]> {
    const record = await this.#deps.servers.require(user, name, 'server.files.read');
    const template =
      record.template === null ? undefined : await this.#deps.templates.find(record.template);
    if (!template) return [];
    const admin = can(user, 'server.configure-host', { permissions: null, server: name });
    return rewrittenKeys(template, (variable) => admin || variable.userViewable, path);
  }

  /** Runs the template's install script (409 while the server runs or without a script). */
  async install(user: User, name: string): Promise<ServerStatus> {
    await this.#deps.servers.require(user, name, 'server.settings');
    return this.#deps.host.install(name);
  }

  /** An admin says the server's files are ready (or not), whatever the install did. */
  async markInstalled(
    user: User,
    name: string,
    state: 'installed' | 'not-installed',
  ): Promise<ServerConfig> {
    const record = await this.#deps.servers.require(user, name, 'server.configure-host');
    if (this.#deps.host.state(name).status === 'installing') {
      throw new AppError('CONFLICT', 'The server is being installed: wait for the end, or kill it');
    }
    // What a failed install left is no longer why the server cannot start.
    await this.#deps.repository.setInstall(name, { state, reason: null, lastLines: [] });
    return { ...record, install: { ...record.install, state, reason: null, lastLines: [] } };
  }

  async updateConfig(user: User, name: string, changes: ConfigChanges): Promise<ServerConfig> {
    const current = await this.#deps.servers.require(user, name, 'server.settings');
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
    if (changes.limits?.pids === null && this.#deps.defaultLimits !== undefined) {
      const { pids } = await this.#deps.defaultLimits();
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
      await checkImageAllowed(updated, this.#deps.imageRefusal);
    if (updated.runtime !== current.runtime) {
      const { status } = this.#deps.host.state(name);
      if (status !== 'stopped' && status !== 'crashed') {
        throw new AppError('CONFLICT', 'Stop the server before changing its runtime');
      }
    }
    await this.#deps.repository.update(name, changes);
    return updated;
  }
}
