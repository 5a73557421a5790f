/**
 * What the conformance suite hands every ServerHost: its records of the servers and its templates
 * (`ServerRecords` and `TemplateSource`, ports the host reads through), kept in memory. Written
 * against src/host/host.ts and src/domain/ only, like the suite itself: an implementation under
 * test is given these, whatever machine it runs on.
 *
 * The records outlive a host: a second host made on the same data (a panel's restart) is given
 * the same `MemoryRecords`, and finds there the pids the first one recorded.
 */
import type { LastExit, ServerRecords, TemplateSource } from '../../src/host/host.js';
import {
  NO_SERVER_LIMITS,
  type InstallInfo,
  type ServerConfig,
  type ServerRecord,
} from '../../src/domain/server.js';
import type { TemplateDefinition } from '../../src/domain/template.js';

/** What a test may set of a server's record; the rest takes the defaults below. */
export type RecordFields = Partial<Omit<ServerRecord, 'name' | 'id'>>;

const INSTALLED: InstallInfo = {
  state: 'installed',
  exitCode: null,
  finishedAt: null,
  reason: null,
  lastLines: [],
};

export class MemoryRecords implements ServerRecords {
  readonly #records = new Map<string, ServerRecord>();
  #nextId = 1;

  /** Adds a server's record: stopped, installed, no template, no limits, no allocation. */
  add(name: string, fields: RecordFields & Pick<ServerConfig, 'startCommand'>): ServerRecord {
    const record: ServerRecord = {
      name,
      id: this.#nextId++,
      displayName: name,
      stopCommand: null,
      stopTimeoutSeconds: 5,
      autoRestart: false,
      limits: NO_SERVER_LIMITS,
      runtime: 'process',
      image: null,
      template: null,
      install: INSTALLED,
      allocations: [],
      node: 'local',
      createdAt: new Date().toISOString(),
      variables: {},
      lastExit: null,
      desiredRunning: false,
      pid: null,
      pidIdentity: null,
      imageDigest: null,
      ...fields,
    };
    this.#records.set(name, record);
    return record;
  }

  /** The record as the host last left it. */
  get(name: string): ServerRecord {
    const record = this.#records.get(name);
    if (record === undefined) throw new Error(`no record of ${name}`);
    return record;
  }

  remove(name: string): void {
    this.#records.delete(name);
  }

  #update(name: string, fields: Partial<ServerRecord>): Promise<void> {
    const record = this.#records.get(name);
    if (record !== undefined) this.#records.set(name, { ...record, ...fields });
    return Promise.resolve();
  }

  find(name: string): Promise<ServerRecord | undefined> {
    return Promise.resolve(this.#records.get(name));
  }

  list(): Promise<ServerRecord[]> {
    return Promise.resolve([...this.#records.values()]);
  }

  allNames(): Promise<string[]> {
    return Promise.resolve([...this.#records.keys()]);
  }

  recordStarted(name: string, process: { pid: number; identity: string }): Promise<void> {
    return this.#update(name, {
      desiredRunning: true,
      pid: process.pid,
      pidIdentity: process.identity,
    });
  }

  recordStopped(name: string, desiredRunning: boolean): Promise<void> {
    return this.#update(name, { desiredRunning, pid: null, pidIdentity: null });
  }

  recordExit(name: string, exit: LastExit): Promise<void> {
    return this.#update(name, { lastExit: { ...exit, at: exit.at.toISOString() } });
  }

  setInstall(
    name: string,
    install: {
      state: InstallInfo['state'];
      exitCode?: number | null;
      finishedAt?: string | null;
      reason?: string | null;
      lastLines?: readonly string[];
    },
  ): Promise<void> {
    return this.#update(name, {
      install: {
        state: install.state,
        exitCode: install.exitCode ?? null,
        finishedAt: install.finishedAt ?? null,
        reason: install.reason ?? null,
        lastLines: install.lastLines ?? [],
      },
    });
  }

  recordImageDigest(name: string, digest: string | null): Promise<void> {
    return this.#update(name, { imageDigest: digest });
  }
}

/** Templates by id; none unless a test adds one. */
export class MemoryTemplates implements TemplateSource {
  readonly templates = new Map<string, TemplateDefinition>();

  find(id: string): Promise<TemplateDefinition | undefined> {
    return Promise.resolve(this.templates.get(id));
  }
}
