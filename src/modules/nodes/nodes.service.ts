/**
 * Nodes (admins only; the routes check the role): the machines servers run on, how the panel
 * reaches each one's Docker engine, and how each is doing (docs/nodes.md).
 *
 * How a node is reached is sealed with a key of its own (derived from the JWT secret), answered
 * never, and opened only to reach the engine. A node is added or changed only once its engine
 * answered with what it was given, so a wrong certificate is refused at once, in words.
 */
import {
  capacityOf,
  LOCAL_NODE,
  type NodeConnection,
  type NodeHealth,
  type NodeRecord,
  type NodeSecrets,
  type NodeSettings,
  type ProbeAnswer,
} from '../../domain/node.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import type { NodeEngines } from '../../host/host.js';
import type { Logger } from '../../log.js';
import type { SecretBox } from '../two-factor/secret-box.js';
import { NodeMonitor } from './node-monitor.js';
import type { NodeLoad, NodeRowChanges, NodesRepository, StoredNode } from './nodes.repository.js';

/** How a node's engine is reached, as sent: TLS material or an SSH key. */
export interface NodeReach {
  readonly dockerHost?: string | undefined;
  readonly tls?: { readonly ca: string; readonly cert: string; readonly key: string } | undefined;
  readonly sshKey?: string | undefined;
  /** The node's SSH host key, known_hosts form; by default the one it shows when added. */
  readonly sshHostKey?: string | undefined;
}

export type NewNode = NodeReach &
  Partial<Omit<NodeSettings, 'publicAddress'>> & {
    readonly name: string;
    readonly dockerHost: string;
    readonly publicAddress: string;
  };

export type NodeChanges = NodeReach & Partial<NodeSettings>;

/** A node as an admin sees it: never how it is reached beyond its address. */
export interface NodeView extends NodeRecord {
  readonly health: NodeHealth;
  /** The servers on it, by name. */
  readonly servers: readonly string[];
  /** What its servers' limits add up to, and the most they may (null: not counted). */
  readonly allocated: {
    readonly memoryBytes: number;
    readonly diskBytes: number;
    readonly memoryCapacityBytes: number | null;
    readonly diskCapacityBytes: number | null;
  };
}

export interface NodesServiceDeps {
  readonly repo: NodesRepository;
  readonly box: SecretBox;
  readonly engines: NodeEngines;
  readonly now: () => Date;
  readonly log: Logger;
  /** How often every node is asked how it is; 15 s by default. */
  readonly checkIntervalMs?: number;
  /** How long a node has to answer; 5 s by default. */
  readonly deadlineMs?: number;
  /**
   * Hears a node added, reached another way (its address or credentials changed) or removed,
   * once it is saved: the panel's host of the node follows (src/host/remote/node-hosts.ts).
   */
  readonly changed?: (name: string, change: 'added' | 'reached' | 'removed') => Promise<void>;
  /**
   * Hears a node answer again after it did not (or at its first answer): the panel takes back
   * its servers shown `unknown` (docs/nodes.md, "When a node fails").
   */
  readonly answersAgain?: (name: string) => void;
}

/** The fields of a node an admin sets, besides how it is reached. */
const SETTINGS = [
  'publicAddress',
  'memoryBytes',
  'diskBytes',
  'memoryOverallocatePercent',
  'diskOverallocatePercent',
  'maintenance',
] as const satisfies readonly (keyof NodeSettings)[];

/** The settings `changes` sets, and nothing else. */
const settingsOf = (changes: Partial<NodeSettings>): Partial<NodeSettings> =>
  Object.fromEntries(
    SETTINGS.filter((key) => changes[key] !== undefined).map((key) => [key, changes[key]]),
  );

/** Bytes in words, as binary units: `512 MiB`, `1.5 GiB`. */
function bytesText(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'] as const;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit] ?? 'bytes'}`;
}

const EMPTY_LOAD: NodeLoad = { servers: [], memoryBytes: 0, diskBytes: 0 };

export class NodesService {
  readonly #deps: NodesServiceDeps;
  readonly #monitor: NodeMonitor;
  readonly #deadlineMs: number;
  /** The placement under way, which the next one waits for (`placing`). */
  #placements: Promise<void> = Promise.resolve();

  constructor(deps: NodesServiceDeps) {
    this.#deps = deps;
    this.#deadlineMs = deps.deadlineMs ?? 5_000;
    this.#monitor = new NodeMonitor({
      probe: (name, deadlineMs) => this.#probe(name, deadlineMs),
      names: async () => (await deps.repo.list()).map((node) => node.name),
      intervalMs: deps.checkIntervalMs ?? 15_000,
      deadlineMs: this.#deadlineMs,
      now: deps.now,
      log: deps.log,
      onChange: (name, health) => {
        if (health.status === 'online') deps.answersAgain?.(name);
      },
    });
  }

  /** Starts asking every node how it is, now and every interval. */
  start(): void {
    this.#monitor.start();
  }

  close(): void {
    this.#monitor.close();
  }

  async list(): Promise<NodeView[]> {
    const [nodes, loads] = await Promise.all([this.#deps.repo.list(), this.#deps.repo.loads()]);
    return nodes.map((node) => this.#view(node, loads.get(node.name)));
  }

  async get(name: string): Promise<NodeView> {
    const node = await this.#deps.repo.find(name);
    if (node === undefined) throw notFound('Node');
    return this.#view(node, (await this.#deps.repo.loads()).get(name));
  }

  /**
   * Adds a node once its engine answered: 400 for what cannot be used, 409 for a name taken,
   * 503 NODE_UNREACHABLE (nothing saved) when the engine refused or did not answer.
   */
  async create(input: NewNode): Promise<NodeView> {
    if (input.name === LOCAL_NODE || (await this.#deps.repo.find(input.name)) !== undefined) {
      throw new AppError('ALREADY_EXISTS', `A node named ${input.name} exists already`);
    }
    const connection = await this.#reachable(this.#connection(input.dockerHost, input));
    const added = await this.#deps.repo.insert(
      {
        name: input.name,
        dockerHost: connection.dockerHost,
        connection: connection.secrets.kind,
        sealedSecrets: this.#deps.box.seal(JSON.stringify(connection.secrets)),
        publicAddress: input.publicAddress,
        memoryBytes: input.memoryBytes ?? null,
        diskBytes: input.diskBytes ?? null,
        memoryOverallocatePercent: input.memoryOverallocatePercent ?? 0,
        diskOverallocatePercent: input.diskOverallocatePercent ?? 0,
        maintenance: input.maintenance ?? false,
      },
      this.#deps.now().toISOString(),
    );
    if (added === undefined) {
      throw new AppError('ALREADY_EXISTS', `A node named ${input.name} exists already`);
    }
    await this.#monitor.check(added.name);
    await this.#deps.changed?.(added.name, 'added');
    return this.#view(added, EMPTY_LOAD);
  }

  /**
   * Changes a node's settings, or how it is reached (checked against its engine first, as when
   * added). `local` is reached as the panel is configured: only its settings change.
   */
  async update(name: string, changes: NodeChanges): Promise<NodeView> {
    const current = await this.#deps.repo.find(name);
    if (current === undefined) throw notFound('Node');
    const reaching =
      changes.dockerHost !== undefined ||
      changes.tls !== undefined ||
      changes.sshKey !== undefined ||
      changes.sshHostKey !== undefined;
    if (name === LOCAL_NODE) {
      if (reaching) {
        const field =
          changes.dockerHost !== undefined ? 'dockerHost' : changes.tls ? 'tls' : 'sshKey';
        throw invalidField(
          field,
          "the panel's own machine is reached as the panel is configured (DOCKER_HOST)",
        );
      }
      // publicAddress null is allowed: players are told their allocation's address again.
    } else if (changes.publicAddress === null) {
      throw invalidField(
        'publicAddress',
        'a node other than local needs the address players connect to',
      );
    }
    const rowChanges: { -readonly [K in keyof NodeRowChanges]: NodeRowChanges[K] } =
      settingsOf(changes);
    if (reaching) {
      if (changes.tls === undefined && changes.sshKey === undefined) {
        throw invalidField(
          'tls',
          'a new dockerHost needs its certificates (tls) or its SSH key (sshKey) again',
        );
      }
      const connection = await this.#reachable(
        this.#connection(changes.dockerHost ?? current.dockerHost ?? '', changes),
      );
      rowChanges.reach = {
        dockerHost: connection.dockerHost,
        connection: connection.secrets.kind,
        sealedSecrets: this.#deps.box.seal(JSON.stringify(connection.secrets)),
      };
    }
    const updated = await this.#deps.repo.update(name, rowChanges, this.#deps.now().toISOString());
    if (updated === undefined) throw notFound('Node');
    if (reaching) {
      await this.#monitor.check(name);
      await this.#deps.changed?.(name, 'reached');
    }
    return this.#view(updated, (await this.#deps.repo.loads()).get(name));
  }

  /** 409 for `local` and for a node with servers on it (move them first). */
  async remove(name: string): Promise<void> {
    if (name === LOCAL_NODE) {
      throw new AppError('CONFLICT', "The panel's own machine (local) cannot be removed");
    }
    const deleted = await this.#deps.repo.deleteIfEmpty(name);
    if (deleted === undefined) throw notFound('Node');
    if (!deleted) {
      throw new AppError(
        'NODE_HAS_SERVERS',
        `Servers are on the node ${name}: transfer them to another node or delete them first`,
      );
    }
    this.#monitor.forget(name);
    await this.#deps.changed?.(name, 'removed');
  }

  /**
   * The node a new server whose memory limit is `memoryBytes` (null: none, counted as 0) goes on
   * (docs/nodes.md, "Placement"). `named`: that node, which must exist (400, field `node`), not be
   * in maintenance (409 NODE_MAINTENANCE) and have the memory left (409 NODE_FULL); its health is
   * the admin's to judge. Else the node with the most memory left that fits, never one in
   * maintenance or `unreachable` (409 NODE_FULL naming why each was passed over); while `local`
   * is the only node, it is as if named. Memory left: the node's capacity with overallocation
   * less its servers' limits (no capacity: unlimited). Ties go to `local`, then by name.
   */
  async place(memoryBytes: number | null, named?: string): Promise<string> {
    return (await this.#choose(memoryBytes, named)).name;
  }

  /**
   * `place`, then `record(node)` to record the server there, under the placement lock: no other
   * placement runs until `record` settles, so the server it records counts against the next
   * and two creations at once never both take the memory left for one (docs/nodes.md,
   * "Placement"). The lock is this panel's: one panel process places on a database.
   */
  placing<T>(
    memoryBytes: number | null,
    named: string | undefined,
    record: (node: { name: string; publicAddress: string | null }) => Promise<T>,
  ): Promise<T> {
    const turn = this.#placements.then(async () => {
      const node = await this.#choose(memoryBytes, named);
      return record({ name: node.name, publicAddress: node.publicAddress });
    });
    this.#placements = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** Node `name`'s name and public address (what allocations are checked against), if any. */
  async nodeAddress(
    name: string,
  ): Promise<{ name: string; publicAddress: string | null } | undefined> {
    const node = await this.#deps.repo.find(name);
    return node && { name: node.name, publicAddress: node.publicAddress };
  }

  async #choose(memoryBytes: number | null, named: string | undefined): Promise<StoredNode> {
    const [nodes, loads] = await Promise.all([this.#deps.repo.list(), this.#deps.repo.loads()]);
    const need = memoryBytes ?? 0;
    const left = (node: StoredNode): number => {
      const capacity = capacityOf(node.memoryBytes, node.memoryOverallocatePercent);
      return capacity === null
        ? Number.POSITIVE_INFINITY
        : capacity - (loads.get(node.name)?.memoryBytes ?? 0);
    };
    const only = nodes.length === 1 && nodes[0]?.name === LOCAL_NODE ? LOCAL_NODE : undefined;
    const chosen = named ?? only;
    if (chosen !== undefined) {
      const node = nodes.find((each) => each.name === chosen);
      if (node === undefined) throw invalidField('node', `there is no node "${chosen}"`);
      if (node.maintenance) {
        throw new AppError(
          'NODE_MAINTENANCE',
          `The node ${node.name} is in maintenance: no server is placed on it`,
        );
      }
      if (left(node) < need) {
        throw new AppError(
          'NODE_FULL',
          `The node ${node.name} has ${bytesText(Math.max(0, left(node)))} of memory left, and the server's limit is ${bytesText(need)}`,
        );
      }
      return node;
    }
    const why: string[] = [];
    let best: { node: StoredNode; left: number } | undefined;
    // `local` first (the list's order): a tie goes to it.
    for (const node of nodes) {
      const health = this.#monitor.health(node.name);
      if (node.maintenance) why.push(`${node.name} is in maintenance`);
      else if (health.status === 'unreachable') why.push(`${node.name} is unreachable`);
      else if (left(node) < need) {
        why.push(`${node.name} has ${bytesText(Math.max(0, left(node)))} left`);
      } else if (best === undefined || left(node) > best.left) {
        best = { node, left: left(node) };
      }
    }
    if (best === undefined) {
      throw new AppError(
        'NODE_FULL',
        `No node can take a server with a memory limit of ${bytesText(need)}: ${why.join('; ')}`,
      );
    }
    return best.node;
  }

  /**
   * Whether a server with this memory limit may be transferred to node `name` now: the node must
   * exist (400 naming `node`), not be in maintenance (409 NODE_MAINTENANCE), have the memory left
   * (409 NODE_FULL) and, unless it is `local`, answer now, within the deadline (503
   * NODE_UNREACHABLE with its reason).
   */
  async transferTarget(name: string, memoryBytes: number | null): Promise<void> {
    await this.place(memoryBytes, name);
    if (name === LOCAL_NODE) return;
    const answer = await this.#probe(name, this.#deadlineMs);
    if (!answer.ok) {
      throw new AppError(
        'NODE_UNREACHABLE',
        `The node ${name} does not answer (${answer.reason}): nothing was transferred`,
      );
    }
  }

  /** 409 NODE_MAINTENANCE when node `name` is in maintenance: none of its servers starts. */
  async refuseStartOn(name: string): Promise<void> {
    const node = await this.#deps.repo.find(name);
    if (node?.maintenance === true) {
      throw new AppError(
        'NODE_MAINTENANCE',
        `The node ${name} is in maintenance: its servers do not start until it is over`,
      );
    }
  }

  /** What node `name` last answered, without asking it. */
  health(name: string): NodeHealth {
    return this.#monitor.health(name);
  }

  /** The names of the remote nodes (every node but `local`). */
  async remoteNames(): Promise<string[]> {
    return (await this.#deps.repo.list())
      .map((node) => node.name)
      .filter((name) => name !== LOCAL_NODE);
  }

  /** How node `name`'s engine is reached, secrets opened; null for `local`. */
  async connectionOf(name: string): Promise<NodeConnection | null> {
    const node = await this.#deps.repo.find(name);
    if (node === undefined) throw notFound('Node');
    return this.#open(node);
  }

  #view(node: StoredNode, load: NodeLoad | undefined): NodeView {
    const used = load ?? EMPTY_LOAD;
    return {
      name: node.name,
      dockerHost: node.dockerHost,
      connection: node.connection,
      publicAddress: node.publicAddress,
      memoryBytes: node.memoryBytes,
      diskBytes: node.diskBytes,
      memoryOverallocatePercent: node.memoryOverallocatePercent,
      diskOverallocatePercent: node.diskOverallocatePercent,
      maintenance: node.maintenance,
      createdAt: node.createdAt,
      updatedAt: node.updatedAt,
      health: this.#monitor.health(node.name),
      servers: used.servers,
      allocated: {
        memoryBytes: used.memoryBytes,
        diskBytes: used.diskBytes,
        memoryCapacityBytes: capacityOf(node.memoryBytes, node.memoryOverallocatePercent),
        diskCapacityBytes: capacityOf(node.diskBytes, node.diskOverallocatePercent),
      },
    };
  }

  /** The connection `reach` describes, checked; 400 naming the field otherwise. */
  #connection(dockerHost: string, reach: NodeReach): NodeConnection {
    let secrets: NodeSecrets;
    if (dockerHost.startsWith('ssh://')) {
      if (reach.tls !== undefined)
        throw invalidField('tls', 'an ssh:// node is reached with sshKey, not tls');
      if (reach.sshKey === undefined)
        throw invalidField(
          'sshKey',
          'an ssh:// node needs the private key the panel signs in with',
        );
      secrets = { kind: 'ssh', privateKey: reach.sshKey, hostKey: reach.sshHostKey ?? null };
    } else {
      if (reach.sshKey !== undefined || reach.sshHostKey !== undefined) {
        throw invalidField('sshKey', 'a tcp:// node is reached with tls, not sshKey');
      }
      if (reach.tls === undefined)
        throw invalidField(
          'tls',
          'a tcp:// node needs its CA, the client certificate and key (the engine runs with --tlsverify)',
        );
      secrets = { kind: 'tls', ...reach.tls };
    }
    const connection: NodeConnection = { dockerHost, secrets };
    const problem = this.#deps.engines.check(connection);
    if (problem !== null) throw invalidField(problem.field, problem.message);
    return connection;
  }

  /**
   * `connection` once its engine answered, with an SSH node's host key pinned to the one it
   * showed when none was given; 503 NODE_UNREACHABLE otherwise.
   */
  async #reachable(connection: NodeConnection): Promise<NodeConnection> {
    const answer = await this.#deps.engines.probe(connection, this.#deadlineMs);
    if (!answer.ok) {
      throw new AppError(
        'NODE_UNREACHABLE',
        `The node's engine at ${connection.dockerHost} cannot be used: ${answer.reason}; nothing was saved`,
      );
    }
    const { secrets } = connection;
    if (secrets.kind === 'ssh' && secrets.hostKey === null && answer.sshHostKey !== null) {
      return { ...connection, secrets: { ...secrets, hostKey: answer.sshHostKey } };
    }
    return connection;
  }

  #open(node: StoredNode): NodeConnection | null {
    if (node.connection === 'local' || node.dockerHost === null || node.sealedSecrets === null) {
      return null;
    }
    const opened = this.#deps.box.open(node.sealedSecrets);
    if (opened === null) return null;
    return { dockerHost: node.dockerHost, secrets: JSON.parse(opened) as NodeSecrets };
  }

  async #probe(name: string, deadlineMs: number): Promise<ProbeAnswer> {
    if (name === LOCAL_NODE) return this.#deps.engines.probeLocal(deadlineMs);
    const node = await this.#deps.repo.find(name);
    if (node === undefined) return { ok: false, reason: 'the node was deleted' };
    const connection = this.#open(node);
    if (connection === null) {
      return {
        ok: false,
        reason:
          'how to reach it cannot be read (JWT_SECRET changed?): set its certificates or key again',
      };
    }
    return this.#deps.engines.probe(connection, deadlineMs);
  }
}
