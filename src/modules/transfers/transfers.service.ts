/**
 * Transfers of a server to another node (docs/nodes.md, "Transfers"); admins only.
 *
 * A transfer is checked before anything is touched (the node exists, is not in maintenance, has
 * the memory and answers; the server's addresses and ports are free there; no other transfer
 * runs), then goes on in the background: a running server is stopped with its stop sequence,
 * the server is held stopped (nobody, no schedule and no automatic restart starts it), its folder
 * is packed on the old node into a file of the panel's, checked, unpacked on the new node, the
 * copy there counted against what was packed, and the server switched in one transaction. The
 * old copy is removed once the server has started on its new node; a server that ran before is
 * started there at once.
 *
 * Until the switch, a failure or a cancel removes what was made on the new node and leaves the
 * server on its old node, whole, released. A panel that stops during a transfer leaves it
 * `running` in the database; the next start rolls it back the same way.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { AlreadyExists, NoLongerExists } from '../../domain/conflicts.js';
import type { ServerScopedAction } from '../../domain/policy.js';
import type { ServerRecord, ServerStatus } from '../../domain/server.js';
import type { Transfer, TransferPhase, TransferProgress } from '../../domain/transfer.js';
import type { User } from '../../domain/user.js';
import { AppError } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { ServerHost, ServerState } from '../../host/host.js';
import type { Arrivals } from '../../host/routed-host.js';
import type { Logger } from '../../log.js';
import {
  checkCopy,
  checksumOf,
  packToFile,
  throwIfAborted,
  TransferAborted,
  unlessAborted,
  unpackFromFile,
  type PackedArchive,
} from './transfer-copy.js';
import type { TransfersRepository } from './transfers.repository.js';

/** A transfer as its caller sees it: the record, and how far it is while it runs. */
export interface TransferView extends Transfer {
  readonly progress: TransferProgress | null;
}

/** What a transfer needs of the panel's hosts: the routed host (src/host/routed-host.ts). */
export interface TransferHost {
  /** The host of node `node` here, or null while it has none. */
  hostOf(node: string): ServerHost | null;
  /** The server is on `node` now. */
  moved(server: string, node: string): void;
  state(name: string): ServerState;
  start(name: string): Promise<ServerStatus>;
  stop(name: string): Promise<ServerStatus>;
  hold(name: string, reason: string): Promise<() => void>;
}

export interface TransfersServiceDeps {
  readonly repo: TransfersRepository;
  readonly servers: {
    require(
      user: User,
      name: string,
      action: ServerScopedAction | readonly ServerScopedAction[],
    ): Promise<ServerRecord>;
    find(name: string): Promise<ServerRecord | undefined>;
  };
  readonly host: TransferHost;
  readonly arrivals: Arrivals;
  /** Whether a server with this memory limit may go to `node` now (400, 409, 503). */
  readonly target: (node: string, memoryBytes: number | null) => Promise<void>;
  /**
   * 409 CONFLICT when an address of the server's is not one of `node`'s (docs/nodes.md,
   * "Placement"); 409 ALLOCATION_TAKEN naming the address and port another server has there.
   */
  readonly refuseTaken: (record: ServerRecord, node: string) => Promise<void>;
  readonly events: PanelEvents;
  /** Where the archives under way are kept (`DATA_DIR/transfers`). */
  readonly workDir: string;
  readonly now: () => Date;
  readonly log: Logger;
  /**
   * Awaited at the start of each phase (`switched`: before the switch), the transfer's abort
   * racing it: tests hold a transfer there. Nothing by default.
   */
  readonly pause?: ((server: string, phase: TransferPhase) => Promise<void>) | undefined;
}

/** How often a transfer in progress tells the console socket how far it is. */
const PROGRESS_EVERY_MS = 250;

/** Statuses in which a server is stopped first (its stop sequence) and then transferred. */
const STOPPED_FIRST: ReadonlySet<ServerStatus> = new Set(['running', 'starting', 'stopping']);

interface Job {
  transfer: Transfer;
  progress: TransferProgress;
  readonly abort: AbortController;
  /** Why it was aborted: a cancel (rolled back now) or the panel's close (at the next start). */
  reason: 'cancel' | 'close' | null;
  /** Once the switch is made, a cancel comes too late. */
  switched: boolean;
  toldAt: number;
  done: Promise<void>;
}

export class TransfersService {
  readonly #deps: TransfersServiceDeps;
  readonly #jobs = new Map<string, Job>();
  /** Old copies being removed now, by `server node`: one removal of each at a time. */
  readonly #removing = new Map<string, Promise<void>>();
  #closing = false;

  constructor(deps: TransfersServiceDeps) {
    this.#deps = deps;
  }

  /** The server's last transfer, with its progress while it runs; null when it had none. */
  async get(user: User, server: string): Promise<TransferView | null> {
    await this.#deps.servers.require(user, server, 'server.view');
    const transfer = await this.#deps.repo.find(server);
    return transfer === undefined ? null : this.#view(transfer);
  }

  /** Starts a transfer of `server` to `node`; answers its record (`running`) once checked. */
  async start(user: User, server: string, node: string): Promise<TransferView> {
    const record = await this.#deps.servers.require(user, server, 'server.configure-host');
    if (this.#closing) throw new AppError('CONFLICT', 'The panel is closing');
    if (record.node === node) {
      throw new AppError('CONFLICT', `The server is on the node ${node} already`);
    }
    if (this.#jobs.has(server)) throw inProgress(this.#jobs.get(server)?.transfer.to ?? node);
    await this.#deps.target(node, record.limits.memoryBytes);
    const from = this.#deps.host.hostOf(record.node);
    if (from === null) {
      throw new AppError(
        'NODE_UNREACHABLE',
        `The server's node ${record.node} cannot be reached from this panel: nothing was transferred`,
      );
    }
    if (this.#deps.host.hostOf(node) === null) {
      throw new AppError(
        'NODE_UNREACHABLE',
        `The node ${node} cannot be reached from this panel: nothing was transferred`,
      );
    }
    await this.#deps.refuseTaken(record, node);
    const status = this.#deps.host.state(server).status;
    if (status === 'installing') {
      throw new AppError(
        'CONFLICT',
        "The server's install script is running: transfer it once the install ended",
      );
    }
    const stopFirst = STOPPED_FIRST.has(status);
    const transfer: Transfer = {
      id: randomUUID(),
      server,
      from: record.node,
      to: node,
      status: 'running',
      phase: stopFirst ? 'stopping' : 'packing',
      message: null,
      files: null,
      bytes: null,
      checksum: null,
      startedAt: this.#deps.now().toISOString(),
      finishedAt: null,
    };
    const job: Job = {
      transfer,
      progress: { phase: transfer.phase, bytes: 0, totalBytes: null, files: 0 },
      abort: new AbortController(),
      reason: null,
      switched: false,
      toldAt: 0,
      done: Promise.resolve(),
    };
    // Claimed before any await: a second transfer of the server is refused meanwhile.
    this.#jobs.set(server, job);
    let release: (() => void) | null = null;
    try {
      // A stopped server is held at once: a start right after this answer is refused.
      if (!stopFirst) release = await this.#deps.host.hold(server, this.#holdReason(node));
      const begun = await this.#deps.repo.begin({
        id: transfer.id,
        server,
        from: transfer.from,
        to: node,
        phase: transfer.phase,
        byUser: user.id,
        startedAt: transfer.startedAt,
      });
      if (!begun) throw inProgress(node);
    } catch (error) {
      release?.();
      this.#jobs.delete(server);
      if (error instanceof NoLongerExists) throw new AppError('NOT_FOUND', 'Server not found');
      throw error;
    }
    job.done = this.#run(job, release).finally(() => {
      this.#jobs.delete(server);
    });
    this.#tell(job, true);
    return this.#view(transfer);
  }

  /**
   * Cancels the server's transfer before its switch: what was made on the new node is removed,
   * the server stays where it was, released; answers once that is done. 409 when none is under
   * way, or when it has switched already.
   */
  async cancel(user: User, server: string): Promise<TransferView> {
    await this.#deps.servers.require(user, server, 'server.configure-host');
    const job = this.#jobs.get(server);
    if (job === undefined) {
      throw new AppError('CONFLICT', 'No transfer of the server is under way');
    }
    if (job.switched) {
      throw new AppError(
        'CONFLICT',
        `The server was switched to the node ${job.transfer.to} already: transfer it back instead`,
      );
    }
    job.reason ??= 'cancel';
    job.abort.abort(new TransferAborted('cancelled'));
    await job.done;
    const transfer = await this.#deps.repo.find(server);
    if (transfer === undefined) throw new AppError('NOT_FOUND', 'Server not found');
    if (transfer.status === 'done') {
      throw new AppError(
        'CONFLICT',
        `The server was switched to the node ${transfer.to} before the cancel came: transfer it back instead`,
      );
    }
    return this.#view(transfer);
  }

  /**
   * At the panel's start, once the nodes' hosts are made and before the servers are recovered:
   * what an earlier run left is rolled back (a transfer under way: the copy on its new node is
   * removed, the server stays on its old node) and removed (archives of the work folder, old
   * copies to remove at once).
   */
  async recover(): Promise<void> {
    await rm(this.#deps.workDir, { recursive: true, force: true });
    await mkdir(this.#deps.workDir, { recursive: true, mode: 0o700 });
    for (const transfer of await this.#deps.repo.running()) {
      const message = `The panel stopped during the transfer to ${transfer.to}: it was rolled back; the server stays on ${transfer.from}`;
      await this.#removeArrival(transfer.server, transfer.to);
      await this.#deps.repo.end(transfer.id, 'failed', message, this.#deps.now().toISOString());
      this.#deps.log.warn(
        { server: transfer.server, from: transfer.from, to: transfer.to },
        'rolled back a transfer an earlier run left under way',
      );
      this.#told(
        transfer,
        { phase: transfer.phase, bytes: 0, totalBytes: null, files: 0 },
        {
          status: 'failed',
          message,
        },
      );
    }
    for (const copy of await this.#deps.repo.oldCopies()) {
      if (copy.remove === 'now') await this.#removeOldCopy(copy.server, copy.node);
    }
  }

  /**
   * Once the servers are recovered: the old copies of servers that run on their new node (a
   * start the panel did not see through) are removed.
   */
  async removeStarted(): Promise<void> {
    for (const copy of await this.#deps.repo.oldCopies()) {
      const status = this.#deps.host.state(copy.server).status;
      if (status === 'running') await this.#removeOldCopy(copy.server, copy.node);
    }
  }

  /** A server started: its old copies (none, mostly) are removed now. */
  started(server: string): void {
    void this.#deps.repo
      .oldCopies(server)
      .then(async (copies) => {
        for (const copy of copies) await this.#removeOldCopy(copy.server, copy.node);
      })
      .catch((error: unknown) => {
        this.#deps.log.warn({ err: error, server }, "could not look up a server's old copies");
      });
  }

  /** A server was deleted: its copies left on other nodes are removed too. */
  deleted(server: string): void {
    this.started(server);
  }

  /**
   * The panel is closing: the transfers under way stop where they are (the next start rolls
   * them back), and the old copies being removed are waited for.
   */
  async close(): Promise<void> {
    this.#closing = true;
    for (const job of this.#jobs.values()) {
      job.reason ??= 'close';
      job.abort.abort(new TransferAborted('the panel is closing'));
    }
    await Promise.allSettled([...this.#jobs.values()].map((job) => job.done));
    await Promise.allSettled([...this.#removing.values()]);
  }

  #holdReason(node: string): string {
    return `The server is being transferred to the node ${node}: it starts once the transfer ends`;
  }

  async #run(job: Job, held: (() => void) | null): Promise<void> {
    const { transfer } = job;
    const { server, to } = transfer;
    const signal = job.abort.signal;
    let release = held;
    const file = path.join(this.#deps.workDir, `${server}-${transfer.id}.tar.gz`);
    let arrival: (() => void) | null = null;
    const wasRunning = transfer.phase === 'stopping';
    try {
      if (wasRunning) {
        await this.#phase(job, 'stopping');
        await unlessAborted(signal, this.#deps.host.stop(server));
        release = await this.#deps.host
          .hold(server, this.#holdReason(to))
          .catch((error: unknown) => {
            throw error instanceof AppError
              ? new AppError(
                  error.code,
                  `The server could not be held stopped for the transfer: ${error.message}`,
                )
              : error;
          });
      }
      const from = this.#hostOf(transfer.from);
      const target = this.#hostOf(to);

      await this.#phase(job, 'packing');
      job.progress = {
        ...job.progress,
        totalBytes: await from.backupFiles.diskUsage(server).catch(() => null),
      };
      const packed = await packToFile(from.backupFiles, server, file, signal, (count) => {
        this.#moved(job, count.bytes, count.files);
      });
      await this.#deps.repo.setPhase(transfer.id, 'unpacking', {
        files: packed.files,
        bytes: packed.bytes,
        checksum: packed.checksum,
      });
      job.transfer = {
        ...job.transfer,
        files: packed.files,
        bytes: packed.bytes,
        checksum: packed.checksum,
      };

      await this.#phase(job, 'unpacking', packed.bytes);
      await this.#checksum(file, packed, signal);
      arrival = this.#deps.arrivals.arriving(server, to);
      await unlessAborted(signal, target.create(server));
      await unpackFromFile(target.backupFiles, server, file, packed, signal, (written) => {
        this.#moved(job, written, job.progress.files);
      });

      await this.#phase(job, 'checking', packed.bytes);
      await checkCopy(target.backupFiles, server, packed, signal, (count) => {
        this.#moved(job, count.bytes, count.files);
      });

      await this.#phase(job, 'switched', packed.bytes);
      throwIfAborted(signal);
      await this.#switch(job, packed);
      arrival();
      arrival = null;
      release?.();
      release = null;
      if (wasRunning) {
        await this.#deps.host.start(server).catch((error: unknown) => {
          this.#deps.log.warn(
            { err: error, server, node: to },
            'a server transferred while it ran did not start on its new node',
          );
        });
      }
    } catch (error) {
      if (job.switched) {
        // Switched: the server is on its new node whatever failed after.
        this.#deps.log.warn({ err: error, server }, 'a transfer failed after its switch');
        return;
      }
      if (job.reason === 'close') {
        // Left `running`: the next start rolls it back.
        arrival?.();
        release?.();
        return;
      }
      const cancelled = job.reason === 'cancel';
      const message = cancelled
        ? `The transfer to ${to} was cancelled; the server stays on ${transfer.from}`
        : `${this.#reason(error)}; the server stays on ${transfer.from}`;
      if (arrival !== null) {
        await this.#removeArrival(server, to);
        arrival();
      }
      release?.();
      await this.#deps.repo
        .end(
          transfer.id,
          cancelled ? 'cancelled' : 'failed',
          message,
          this.#deps.now().toISOString(),
        )
        .catch((recordError: unknown) => {
          this.#deps.log.error(
            { err: recordError, server },
            'the end of a transfer was not recorded',
          );
        });
      job.transfer = {
        ...job.transfer,
        status: cancelled ? 'cancelled' : 'failed',
        message,
      };
      this.#tell(job, true);
    } finally {
      await rm(file, { force: true });
    }
  }

  /** The host of `node`; 503 when it has none here any more. */
  #hostOf(node: string): ServerHost {
    const host = this.#deps.host.hostOf(node);
    if (host === null) {
      throw new AppError('NODE_UNREACHABLE', `The node ${node} cannot be reached from this panel`);
    }
    return host;
  }

  /** The archive as the panel holds it must be the one packed, byte for byte. */
  async #checksum(file: string, packed: PackedArchive, signal: AbortSignal): Promise<void> {
    const held = await checksumOf(file, signal);
    if (held !== packed.checksum) {
      throw new AppError(
        'INVALID_ARCHIVE',
        'The archive the panel holds does not match its checksum as packed: nothing was switched',
      );
    }
  }

  /** The switch: one transaction moves the server to its new node; then the hosts follow. */
  async #switch(job: Job, packed: PackedArchive): Promise<void> {
    const { transfer } = job;
    const message = `Transferred ${packed.files} files (${packed.bytes} bytes) from ${transfer.from}`;
    const at = this.#deps.now().toISOString();
    let switched: boolean;
    try {
      switched = await this.#deps.repo.switchNode(transfer, message, at);
    } catch (error) {
      if (error instanceof AlreadyExists) {
        throw new AppError(
          'ALLOCATION_TAKEN',
          `One of the server's addresses and ports was taken on ${transfer.to} meanwhile: nothing was switched`,
        );
      }
      throw error;
    }
    if (!switched) {
      throw new AppError(
        'CONFLICT',
        'The server or its transfer changed meanwhile (deleted, or rolled back by another run): nothing was switched',
      );
    }
    job.switched = true;
    this.#deps.host.moved(transfer.server, transfer.to);
    // A copy left on the new node by an earlier transfer was replaced by this one.
    await this.#deps.repo.removeOldCopy(transfer.server, transfer.to);
    job.transfer = {
      ...transfer,
      status: 'done',
      phase: 'switched',
      message,
      finishedAt: at,
    };
    job.progress = { ...job.progress, phase: 'switched' };
    this.#deps.events.emit('server-moved', transfer.server, transfer.from, transfer.to);
    this.#tell(job, true);
  }

  /**
   * Removes the server's folder from `node`, where it was being copied to: on a failure there
   * (the node went away), it is recorded to remove at the next chance.
   */
  async #removeArrival(server: string, node: string): Promise<void> {
    const release = this.#deps.arrivals.arriving(server, node);
    try {
      const host = this.#deps.host.hostOf(node);
      if (host === null) throw new Error(`the node ${node} has no host here`);
      (await host.discard(server)).purge();
    } catch (error) {
      this.#deps.log.warn(
        { err: error, server, node },
        'what a transfer made on a node could not be removed: it will be at the next start',
      );
      await this.#deps.repo.addOldCopy(server, node, 'now', this.#deps.now().toISOString());
    } finally {
      release();
    }
  }

  /**
   * Removes the copy of `server` on `node` (never the node its record names: that copy is the
   * server's own), then forgets it; a failure keeps it for the next start.
   */
  #removeOldCopy(server: string, node: string): Promise<void> {
    const key = `${server} ${node}`;
    const current = this.#removing.get(key);
    if (current !== undefined) return current;
    const removal = (async () => {
      const record = await this.#deps.servers.find(server);
      if (record?.node === node || this.#jobs.get(server)?.transfer.to === node) {
        if (record?.node === node) await this.#deps.repo.removeOldCopy(server, node);
        return;
      }
      const host = this.#deps.host.hostOf(node);
      if (host === null) return;
      (await host.discard(server)).purge();
      await this.#deps.repo.removeOldCopy(server, node);
      this.#deps.log.info({ server, node }, "removed a transferred server's old copy");
    })()
      .catch((error: unknown) => {
        this.#deps.log.warn(
          { err: error, server, node },
          "a transferred server's old copy could not be removed: it will be at the next start",
        );
      })
      .finally(() => {
        this.#removing.delete(key);
      });
    this.#removing.set(key, removal);
    return removal;
  }

  async #phase(job: Job, phase: TransferPhase, totalBytes: number | null = null): Promise<void> {
    throwIfAborted(job.abort.signal);
    if (phase !== job.transfer.phase && phase !== 'switched') {
      await this.#deps.repo.setPhase(job.transfer.id, phase);
    }
    job.transfer = { ...job.transfer, phase };
    job.progress = { phase, bytes: 0, totalBytes, files: 0 };
    this.#deps.log.debug(
      { server: job.transfer.server, from: job.transfer.from, to: job.transfer.to, phase },
      'a transfer moved on',
    );
    this.#tell(job, true);
    const pause = this.#deps.pause?.(job.transfer.server, phase);
    if (pause !== undefined) await unlessAborted(job.abort.signal, pause);
  }

  #moved(job: Job, bytes: number, files: number): void {
    job.progress = { ...job.progress, bytes, files };
    this.#tell(job, false);
  }

  /** Tells the console socket how far the transfer is: at most every 250 ms, and at changes. */
  #tell(job: Job, now: boolean): void {
    const at = Date.now();
    if (!now && at - job.toldAt < PROGRESS_EVERY_MS) return;
    job.toldAt = at;
    this.#told(job.transfer, job.progress, job.transfer);
  }

  #told(
    transfer: Transfer,
    progress: TransferProgress,
    outcome: Pick<Transfer, 'status' | 'message'>,
  ): void {
    this.#deps.events.emit('transfer-progress', transfer.server, {
      ...progress,
      transfer: transfer.id,
      from: transfer.from,
      to: transfer.to,
      status: outcome.status,
      message: outcome.message,
    });
  }

  #reason(error: unknown): string {
    if (error instanceof AppError) return error.message;
    this.#deps.log.error({ err: error }, 'a transfer failed');
    return `The transfer failed: ${error instanceof Error ? error.message : String(error)}`;
  }

  #view(transfer: Transfer): TransferView {
    const job = this.#jobs.get(transfer.server);
    const live = job?.transfer.id === transfer.id ? job : undefined;
    const current = live?.transfer ?? transfer;
    return {
      ...current,
      progress: current.status === 'running' && live !== undefined ? live.progress : null,
    };
  }
}

const inProgress = (node: string): AppError =>
  new AppError(
    'TRANSFER_IN_PROGRESS',
    `A transfer of the server to the node ${node} is under way: cancel it or wait for its end`,
  );
