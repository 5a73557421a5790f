/**
 * Pulls before a start or install: an image the engine lacks is pulled first, without holding
 * the server's lock (the pulls themselves, shared by every server, are ./image-pulls.ts). The
 * request is answered once the registry has answered (409 with its reason when it refuses,
 * `starting` or `installing` while the image comes); the start or install then runs under the
 * lock, unless a stop, kill, restart, the server's deletion or the panel's end cancelled it
 * meanwhile. A pull that fails, or a check that refuses afterwards, leaves the server stopped
 * (an install `failed`), and its console says why.
 */
import { neverPulled } from '../../domain/image.js';
import type { ServerStatus } from '../../domain/server.js';
import { AppError } from '../../errors.js';
import type { ImageStore } from '../runtime/runtime.js';
import { ImagePulls } from './image-pulls.js';
import {
  refusal,
  setStatus,
  type Entry,
  type PendingPull,
  type SupervisorDeps,
} from './server-entry.js';

/**
 * How long a start or install request waits for the registry's answer about an image being
 * pulled (a refusal is then its answer); the download itself is never waited for.
 */
const REGISTRY_ANSWER_MS = 10_000;

export class PullFirst {
  /** The pulls under way, for each runtime that has images. */
  readonly #pulls = new Map<ImageStore, ImagePulls>();
  readonly #deps: Pick<SupervisorDeps, 'registries' | 'log' | 'servers' | 'now'>;
  /** True once the panel is closing. */
  readonly #closing: () => boolean;

  constructor(
    deps: Pick<SupervisorDeps, 'registries' | 'log' | 'servers' | 'now'>,
    closing: () => boolean,
  ) {
    this.#deps = deps;
    this.#closing = closing;
  }

  /**
   * The answer to a start or install that began a pull: once the registry has answered (409
   * with its reason when it refused; `starting` or `installing` while the image comes), or after
   * REGISTRY_ANSWER_MS at most. Runs outside the lock, so a stop cancels the pull meanwhile.
   */
  async answer(
    entry: Entry,
    begun: { status: ServerStatus; pulling: PendingPull | null },
  ): Promise<ServerStatus> {
    const pulling = begun.pulling;
    if (pulling === null) return begun.status;
    const reason = await answeredWithin(pulling.answered, REGISTRY_ANSWER_MS);
    if (reason === null || reason === undefined) return entry.status;
    await pulling.settled;
    throw new AppError('START_REFUSED', `Cannot pull ${pulling.image}: ${reason}`);
  }

  /**
   * Whether `image` is on the host for a start or install: its digest when it is, null when it
   * must be pulled first (409 when its registry is not allowed, 503 when the engine cannot be
   * reached).
   */
  async onHost(
    images: ImageStore,
    image: string,
    pulled: boolean,
  ): Promise<{ digest: string | null } | null> {
    let found: { digest: string | null } | null;
    try {
      found = await images.find(image);
    } catch (error) {
      throw refusal(error);
    }
    // Just pulled, and gone again: the runtime's own refusal says so.
    if (found !== null || pulled) return found;
    const refused = neverPulled(image) ?? (await this.#deps.registries.refusal(image));
    if (refused !== null) throw new AppError('START_REFUSED', refused);
    return null;
  }

  /**
   * Pulls `image` for the server's start or install, then runs `then` under the lock, unless it
   * was cancelled meanwhile (a stop, kill, restart, its deletion, the panel's end). The lock is
   * not held while the image comes. Must run under the entry's lock.
   */
  begin(
    name: string,
    entry: Entry,
    images: ImageStore,
    image: string,
    kind: PendingPull['kind'],
    then: () => Promise<unknown>,
  ): void {
    let pulls = this.#pulls.get(images);
    if (pulls === undefined) {
      pulls = new ImagePulls({ images, registries: this.#deps.registries, log: this.#deps.log });
      this.#pulls.set(images, pulls);
    }
    const controller = new AbortController();
    const joined = pulls.join(image, {
      say: (line) => {
        entry.log.append(`[panel] ${line}`);
      },
      signal: controller.signal,
    });
    const pending: PendingPull = {
      image,
      kind,
      controller,
      answered: joined.answered,
      settled: Promise.resolve(),
    };
    entry.pulling = pending;
    pending.settled = joined.outcome
      .then((outcome) =>
        entry.lock.run(async () => {
          // Cancelled meanwhile: said by the cancel.
          if (entry.pulling !== pending) return;
          // The panel is closing: started again by the next one, as the shutdown's cancel does.
          if (this.#closing()) {
            await this.cancel(name, entry, true);
            return;
          }
          entry.pulling = null;
          if (outcome.kind !== 'pulled') {
            await this.#notRun(name, entry, kind, null);
            return;
          }
          try {
            await then();
          } catch (error) {
            if (!(error instanceof AppError)) throw error;
            // An install that could not start has said so, and is `failed` already.
            if (kind === 'install' && entry.status !== 'installing') return;
            await this.#notRun(name, entry, kind, error.message);
          }
        }),
      )
      .catch((error: unknown) => {
        this.#deps.log.error({ err: error, server: name }, `could not ${kind} after a pull`);
      });
  }

  /**
   * A start or install that waited for its image does not run: the pull failed (`why` null: the
   * console said why) or a check refused it afterwards. Must run under the entry's lock.
   */
  async #notRun(
    name: string,
    entry: Entry,
    kind: PendingPull['kind'],
    why: string | null,
  ): Promise<void> {
    if (kind === 'install') {
      entry.log.append(`[panel] the install could not start${why === null ? '' : `: ${why}`}`);
      await this.#deps.servers.setInstall(name, {
        state: 'failed',
        exitCode: null,
        finishedAt: this.#deps.now().toISOString(),
      });
    } else {
      entry.log.append(`[panel] the server is not started${why === null ? '' : `: ${why}`}`);
      await this.#deps.servers.recordStopped(name, false);
    }
    if (entry.process === null) setStatus(entry, 'stopped');
  }

  /**
   * Cancels the start or install waiting for its image, if any: the server is stopped (an
   * install is `failed`, as a stopped install is). `desiredRunning`: the panel's next start
   * starts it again (the panel is closing). Must run under the entry's lock.
   */
  async cancel(name: string, entry: Entry, desiredRunning = false): Promise<boolean> {
    const pending = entry.pulling;
    if (pending === null) return false;
    entry.pulling = null;
    pending.controller.abort();
    entry.log.append(
      `[panel] the ${pending.kind} is cancelled (it was waiting for ${pending.image})`,
    );
    setStatus(entry, 'stopped');
    if (pending.kind === 'install') {
      await this.#deps.servers.setInstall(name, {
        state: 'failed',
        exitCode: null,
        finishedAt: this.#deps.now().toISOString(),
      });
    } else await this.#deps.servers.recordStopped(name, desiredRunning);
    return true;
  }
}

/** What `promise` resolves to if it settles within `ms`, else undefined; the timer never outlives the wait. */
async function answeredWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      resolve(undefined);
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
