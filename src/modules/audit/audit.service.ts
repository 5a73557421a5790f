/**
 * The audit log (src/domain/audit.ts): written by the HTTP hook for every change made through
 * the API (audit.hook.ts), and by the panel for what happens without a request (schedule runs,
 * backups ending, servers crashing); read by admins, and per server by holders of `settings` (the server's own entries, by its id;
 * addresses and API key names only for those who may read the whole log).
 * Entries older than `AUDIT_RETENTION_DAYS` are removed every hour.
 *
 * Every text an entry holds (actor, key or schedule name, server, target, details) is stored with
 * its control characters written out (src/text.ts), so that a name holding a newline or ESC
 * cannot forge a line of the log wherever it is shown or exported.
 */
import type { AuditEntry, AuditFilter, NewAuditEntry } from '../../domain/audit.js';
import { can } from '../../domain/policy.js';
import type { User } from '../../domain/user.js';
import type { Logger } from '../../log.js';
import { escapeControl } from '../../text.js';
import type { AuditRepository } from './audit.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

export interface AuditPage {
  readonly entries: AuditEntry[];
  readonly total: number;
}

/**
 * An entry as one who may not read the whole audit log sees it in a server's Activity: without
 * the address it came from and the name of the API key it came through (docs/api.md, Audit).
 */
const withoutWhereFrom = (entry: AuditEntry): AuditEntry => ({
  ...entry,
  address: null,
  viaName: entry.via === 'api-key' ? null : entry.viaName,
});

/** What an AuditService is made from. */
export interface AuditServiceDeps {
  readonly repo: AuditRepository;
  /**
   * Checks the caller may see the server's log (`server.settings`): throws 403/404; answers
   * the server's id.
   */
  readonly requireSettings: (user: User, server: string) => Promise<{ readonly id: number }>;
  readonly retentionDays: number;
  readonly now: () => Date;
  readonly log: Logger;
}

export class AuditService {
  #timer: NodeJS.Timeout | null = null;
  readonly #deps: AuditServiceDeps;

  constructor(deps: AuditServiceDeps) {
    this.#deps = deps;
  }

  /** Writes an entry; a failure is logged, never thrown (the change itself has happened). */
  async record(entry: NewAuditEntry): Promise<void> {
    try {
      await this.#deps.repo.insert({ ...escapedEntry(entry), at: this.#deps.now().toISOString() });
    } catch (error) {
      this.#deps.log.error(
        { err: error, action: entry.action },
        'an audit entry could not be written',
      );
    }
  }

  /**
   * Writes an entry of what happened without a request: by a schedule, or by the panel itself
   * (`system`). Nobody is its actor and it has no address or status.
   */
  recordUnattended(
    entry: Pick<NewAuditEntry, 'action' | 'server' | 'target' | 'outcome' | 'details'> & {
      readonly via: 'schedule' | 'system';
      readonly viaName?: string;
    },
  ): Promise<void> {
    return this.record({
      actorId: null,
      actor: null,
      viaName: null,
      address: null,
      status: null,
      ...entry,
    });
  }

  page(filter: AuditFilter, limit: number, offset: number): Promise<AuditPage> {
    return this.#deps.repo.page(filter, limit, offset);
  }

  async pageOfServer(
    user: User,
    server: string,
    filter: Omit<AuditFilter, 'server'>,
    limit: number,
    offset: number,
  ): Promise<AuditPage> {
    const { id } = await this.#deps.requireSettings(user, server);
    const page = await this.#deps.repo.page({ ...filter, serverId: id }, limit, offset);
    if (can(user, 'audit.read')) return page;
    return { total: page.total, entries: page.entries.map(withoutWhereFrom) };
  }

  /** Removes what is past the retention now, then every hour. */
  async start(): Promise<void> {
    if (this.#deps.retentionDays === 0) return;
    await this.prune();
    this.#timer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Removes the entries past the retention; answers how many. */
  async prune(): Promise<number> {
    if (this.#deps.retentionDays === 0) return 0;
    const before = new Date(this.#deps.now().getTime() - this.#deps.retentionDays * DAY_MS);
    try {
      return await this.#deps.repo.prune(before.toISOString());
    } catch (error) {
      this.#deps.log.error({ err: error }, 'old audit entries could not be removed');
      return 0;
    }
  }
}

const escaped = (text: string | null): string | null =>
  text === null ? null : escapeControl(text);

function escapedEntry(entry: NewAuditEntry): NewAuditEntry {
  return {
    ...entry,
    actor: escaped(entry.actor),
    viaName: escaped(entry.viaName),
    address: escaped(entry.address),
    server: escaped(entry.server),
    target: escaped(entry.target),
    details: escapedObject(entry.details),
  };
}

function escapedObject(value: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [escapeControl(key), escapedValue(item)]),
  );
}

function escapedValue(value: unknown): unknown {
  if (typeof value === 'string') return escapeControl(value);
  if (Array.isArray(value)) return value.map(escapedValue);
  if (typeof value === 'object' && value !== null) {
    return escapedObject(value as Record<string, unknown>);
  }
  return value;
}
