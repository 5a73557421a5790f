/**
 * Nodes (docs/nodes.md): the machines game servers run on. The panel's own machine is the node
 * `local` (its process runtime and its Docker engine); every other node is a Docker engine the
 * panel reaches over the engine's API, with mutual TLS (`tcp://host:2376`) or over SSH
 * (`ssh://user@host`). How to reach a node is as secret as the panel's own secret: sealed at
 * rest, never answered, never logged.
 */

/** The panel's own machine. */
export const LOCAL_NODE = 'local';

/** A node's name: lower-case letters, digits and dashes, as it appears in URLs. */
export const NODE_NAME_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$';

/** What a node's engine is reached with: mutual TLS, or an SSH key; `local`: this machine. */
export type NodeConnectionKind = 'local' | 'tls' | 'ssh';

/** The secret part of how a node is reached: PEM texts, or an SSH private key. */
export type NodeSecrets =
  | { readonly kind: 'tls'; readonly ca: string; readonly cert: string; readonly key: string }
  | {
      readonly kind: 'ssh';
      readonly privateKey: string;
      /**
       * The node's SSH host key (known_hosts form, `ssh-ed25519 AAAA…`): the one the admin gave,
       * else the one it showed when added. A node showing another one is refused.
       */
      readonly hostKey: string | null;
    };

/** How to reach a node's engine: its address and the secrets. */
export interface NodeConnection {
  /** `tcp://host:port` (TLS) or `ssh://user@host[:port]`. */
  readonly dockerHost: string;
  readonly secrets: NodeSecrets;
}

/** What an admin sets of a node, besides how it is reached. */
export interface NodeSettings {
  /**
   * What players connect to: a host name or an address. Every remote node has one; null on
   * `local` until an admin sets it (players are told their allocation's address).
   */
  readonly publicAddress: string | null;
  /** Memory the node offers its servers; null: not counted. */
  readonly memoryBytes: number | null;
  /** Disk the node offers its servers; null: not counted. */
  readonly diskBytes: number | null;
  /** How far past `memoryBytes` servers' limits may add up, in percent (0: not at all). */
  readonly memoryOverallocatePercent: number;
  readonly diskOverallocatePercent: number;
  /** No new server is placed on it and none of its servers starts. */
  readonly maintenance: boolean;
}

/** A node as recorded: never its secrets. */
export interface NodeRecord extends NodeSettings {
  readonly name: string;
  /** null for `local`: the panel's own engine (DOCKER_HOST). */
  readonly dockerHost: string | null;
  readonly connection: NodeConnectionKind;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What a node's engine said of itself when it last answered. */
export interface EngineFacts {
  /** The Docker engine's version; null on `local` when it has no engine. */
  readonly version: string | null;
  readonly apiVersion: string | null;
  readonly os: string;
  readonly arch: string;
  readonly cpus: number;
  readonly memoryBytes: number;
}

/** How a node answered when it was last asked. */
export type NodeHealth =
  | { readonly status: 'online'; readonly checkedAt: string; readonly engine: EngineFacts }
  | {
      readonly status: 'unreachable';
      readonly checkedAt: string;
      /** Why, in words an admin can act on ("connection refused at 10.0.0.5:2376"). */
      readonly reason: string;
    }
  /** Not asked yet since the panel started. */
  | { readonly status: 'unknown'; readonly checkedAt: null };

/** The most `limit` may reach with overallocation: null when not counted. */
export function capacityOf(limit: number | null, overallocatePercent: number): number | null {
  return limit === null ? null : Math.floor(limit * (1 + overallocatePercent / 100));
}

/** A node's engine asked how it is: what it said, or why it did not answer. */
export type ProbeAnswer =
  | {
      readonly ok: true;
      readonly engine: EngineFacts;
      /** For `ssh://`: the host key the node showed; null otherwise. */
      readonly sshHostKey: string | null;
    }
  | { readonly ok: false; readonly reason: string };
