/**
 * Keeps each node's health: every node is asked every `intervalMs` (all at once, each within
 * `deadlineMs`), and at once when it is added or changed. Answers come from what was last heard,
 * so a node that does not answer never holds up a request: it is `unreachable` one deadline
 * after it stopped answering (docs/nodes.md, "When a node fails").
 */
import type { NodeHealth, ProbeAnswer } from '../../domain/node.js';
import type { Logger } from '../../log.js';

export interface MonitorDeps {
  /** Asks node `name` how it is, within `deadlineMs`; never rejects. */
  readonly probe: (name: string, deadlineMs: number) => Promise<ProbeAnswer>;
  /** The names of every node now. */
  readonly names: () => Promise<readonly string[]>;
  readonly intervalMs: number;
  readonly deadlineMs: number;
  readonly now: () => Date;
  readonly log: Logger;
  /** Hears a node go from one status to another. */
  readonly onChange?: (name: string, health: NodeHealth) => void;
}

const UNKNOWN: NodeHealth = { status: 'unknown', checkedAt: null };

export class NodeMonitor {
  readonly #deps: MonitorDeps;
  readonly #health = new Map<string, NodeHealth>();
  /** The probe under way for each node: a second ask joins it. */
  readonly #asking = new Map<string, Promise<NodeHealth>>();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(deps: MonitorDeps) {
    this.#deps = deps;
  }

  /** Starts asking every node every interval (the first round at once). */
  start(): void {
    if (this.#timer !== null || this.#closed) return;
    void this.#round();
    this.#timer = setInterval(() => void this.#round(), this.#deps.intervalMs);
    this.#timer.unref();
  }

  /** What node `name` last answered; `unknown` before its first answer. */
  health(name: string): NodeHealth {
    return this.#health.get(name) ?? UNKNOWN;
  }

  /** Asks node `name` now (joining a probe under way) and answers what it said. */
  check(name: string): Promise<NodeHealth> {
    let asking = this.#asking.get(name);
    if (asking === undefined) {
      asking = this.#ask(name).finally(() => this.#asking.delete(name));
      this.#asking.set(name, asking);
    }
    return asking;
  }

  /** Forgets a node that was deleted. */
  forget(name: string): void {
    this.#health.delete(name);
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #round(): Promise<void> {
    try {
      const names = await this.#deps.names();
      await Promise.all(names.map((name) => this.check(name)));
    } catch (error) {
      this.#deps.log.warn({ err: error }, 'the nodes could not be listed to check their health');
    }
  }

  async #ask(name: string): Promise<NodeHealth> {
    const answer = await this.#deps.probe(name, this.#deps.deadlineMs);
    const checkedAt = this.#deps.now().toISOString();
    const health: NodeHealth = answer.ok
      ? { status: 'online', checkedAt, engine: answer.engine }
      : { status: 'unreachable', checkedAt, reason: answer.reason };
    if (this.#closed) return health;
    const before = this.#health.get(name)?.status ?? 'unknown';
    this.#health.set(name, health);
    if (before !== health.status) {
      if (health.status === 'unreachable') {
        this.#deps.log.warn({ node: name, reason: health.reason }, 'a node does not answer');
      } else if (before === 'unreachable') {
        this.#deps.log.info({ node: name }, 'a node answers again');
      }
      this.#deps.onChange?.(name, health);
    }
    return health;
  }
}
