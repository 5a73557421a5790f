/**
 * The hosts of the remote nodes (docs/nodes.md, "A node's host"), kept in the routed host's map:
 * one per node the panel knows, made at start-up (before the servers are recovered) and when a
 * node is added, made again when how it is reached changes, closed when it is removed. A node
 * whose connection cannot be opened (its secrets sealed under another JWT_SECRET) has no host:
 * its servers answer 503 NODE_UNREACHABLE (src/host/routed-host.ts). Making a host never waits
 * for the node to answer: an engine that is down makes a host whose calls fail until it is back.
 */
import type { NodeConnection } from '../../domain/node.js';
import type { Logger } from '../../log.js';
import type { ServerHost } from '../host.js';

export interface NodeHostsOptions {
  /** The routed host's map: `local` is in it already, and stays. */
  readonly hosts: Map<string, ServerHost>;
  /** The remote nodes' names. */
  readonly names: () => Promise<readonly string[]>;
  /** How node `name` is reached, its secrets opened; null when they cannot be. */
  readonly connectionOf: (name: string) => Promise<NodeConnection | null>;
  readonly make: (name: string, connection: NodeConnection) => Promise<ServerHost>;
  readonly log: Logger;
}

export type NodeChange = 'added' | 'reached' | 'removed';

export class NodeHosts {
  readonly #options: NodeHostsOptions;
  /** One change of a node's host at a time, in order. */
  #queue: Promise<void> = Promise.resolve();

  constructor(options: NodeHostsOptions) {
    this.#options = options;
  }

  /** Makes the host of every remote node; before the servers are recovered. */
  async load(): Promise<void> {
    const names = await this.#options.names();
    await Promise.all(names.map((name) => this.#set(name)));
  }

  /**
   * Follows a change of node `name`: `added` makes its host, `reached` (how it is reached
   * changed) makes it again and takes over what runs there, `removed` closes it. Never rejects.
   */
  changed(name: string, change: NodeChange): Promise<void> {
    const next = this.#queue.then(async () => {
      const old = this.#options.hosts.get(name);
      if (change !== 'added' && old !== undefined) {
        this.#options.hosts.delete(name);
        await this.#closing(name, old);
      }
      if (change === 'removed') return;
      const made = await this.#set(name);
      if (change === 'reached' && made !== null) await made.recover();
    });
    this.#queue = next.catch((error: unknown) => {
      this.#options.log.error({ node: name, err: error }, 'a node host could not follow a change');
    });
    return this.#queue;
  }

  async #set(name: string): Promise<ServerHost | null> {
    try {
      const connection = await this.#options.connectionOf(name);
      if (connection === null) {
        this.#options.log.warn(
          { node: name },
          "the node's connection cannot be opened (was JWT_SECRET changed?): give its credentials again",
        );
        return null;
      }
      const host = await this.#options.make(name, connection);
      this.#options.hosts.set(name, host);
      return host;
    } catch (error) {
      this.#options.log.error({ node: name, err: error }, "a node's host could not be made");
      return null;
    }
  }

  /** Lets go of what runs there (it runs on) and closes the host. */
  async #closing(name: string, host: ServerHost): Promise<void> {
    try {
      await host.shutdown({ stopServers: false });
      await host.close();
    } catch (error) {
      this.#options.log.warn({ node: name, err: error }, "a node's host did not close cleanly");
    }
  }
}
