/**
 * The pulls under way, one per image: servers (starts and installs) that need the same missing
 * image wait for one pull, each told its progress in its own console. A waiter that leaves (its
 * start was stopped) hears nothing more; the pull ends once nobody waits for it.
 *
 * Progress is said in steps, never per layer event: a line each time the downloaded share passes
 * a tenth, and after PROGRESS_EVERY_MS without one when it moved (docs/templates.md, "Images").
 */
import type { Logger } from '../../log.js';
import type { RegistryPolicy } from '../host.js';
import {
  ImagePullError,
  RuntimeUnavailableError,
  type ImageStore,
  type PullProgress,
} from '../runtime/runtime.js';

/** A line at least this often while the share downloaded moves, whatever its steps. */
const PROGRESS_EVERY_MS = 5_000;

/** How a pull ended for one waiter. */
export type PullOutcome =
  | { readonly kind: 'pulled'; readonly digest: string | null }
  | { readonly kind: 'failed'; readonly reason: string }
  /** The waiter left before the end. */
  | { readonly kind: 'left' };

export interface PullWaiter {
  /** One line for the waiter's console (shown as the panel's). */
  say(line: string): void;
  /** Aborted when the waiter leaves: its start or install was cancelled. */
  readonly signal: AbortSignal;
}

export interface JoinedPull {
  /**
   * Settles once the registry has answered: null when the image is coming, else why not (the
   * registry's reason). Never rejects.
   */
  readonly answered: Promise<string | null>;
  /** Settles once the pull has ended, or the waiter left. Never rejects. */
  readonly outcome: Promise<PullOutcome>;
}

interface SharedPull {
  readonly image: string;
  readonly waiters: Set<PullWaiter>;
  readonly controller: AbortController;
  readonly answered: Promise<string | null>;
  outcome: Promise<PullOutcome>;
  /** The share shown last (never lower than before), and when. */
  shown: number;
  shownAt: number;
  extractingSaid: boolean;
}

/** What an ImagePulls is made from. */
export interface ImagePullsDeps {
  readonly images: ImageStore;
  readonly registries: RegistryPolicy;
  readonly log: Logger;
  /** Milliseconds, for the progress lines' pace. */
  readonly clock?: () => number;
}

export class ImagePulls {
  readonly #pulls = new Map<string, SharedPull>();
  readonly #deps: ImagePullsDeps;

  constructor(deps: ImagePullsDeps) {
    this.#deps = deps;
  }

  /** Waits for `image` with `waiter`: joins the pull under way, or begins one. */
  join(image: string, waiter: PullWaiter): JoinedPull {
    let pull = this.#pulls.get(image);
    if (pull === undefined) {
      pull = this.#begin(image);
      waiter.say(`pulling ${image}: the Docker host does not have it`);
    } else {
      waiter.say(
        `pulling ${image}: already being pulled for another server${pull.shown > 0 ? ` (${pull.shown} %)` : ''}`,
      );
    }
    const shared = pull;
    shared.waiters.add(waiter);
    const left = new Promise<PullOutcome>((resolve) => {
      const leave = () => {
        shared.waiters.delete(waiter);
        if (shared.waiters.size === 0 && this.#pulls.get(image) === shared) {
          this.#pulls.delete(image);
          shared.controller.abort();
        }
        resolve({ kind: 'left' });
      };
      if (waiter.signal.aborted) leave();
      else waiter.signal.addEventListener('abort', leave, { once: true });
    });
    return {
      answered: Promise.race([shared.answered, left.then(() => null)]),
      outcome: Promise.race([shared.outcome, left]),
    };
  }

  #begin(image: string): SharedPull {
    const controller = new AbortController();
    let answer: (reason: string | null) => void = () => undefined;
    const answered = new Promise<string | null>((resolve) => {
      answer = resolve;
    });
    const pull: SharedPull = {
      image,
      waiters: new Set(),
      controller,
      answered,
      outcome: Promise.resolve({ kind: 'left' }),
      shown: 0,
      shownAt: this.#now(),
      extractingSaid: false,
    };
    pull.outcome = this.#run(pull, (reason) => {
      answer(reason);
    });
    // Settled for everyone still waiting: the pull is over, a new one may begin.
    void pull.outcome.then((outcome) => {
      if (this.#pulls.get(image) === pull) this.#pulls.delete(image);
      const line =
        outcome.kind === 'pulled'
          ? `pulled ${image}${outcome.digest === null ? '' : ` (${outcome.digest})`}`
          : outcome.kind === 'failed'
            ? `could not pull ${image}: ${outcome.reason}`
            : null;
      if (line !== null) this.#say(pull, line);
    });
    this.#pulls.set(image, pull);
    return pull;
  }

  /** The pull itself; `answer` is told once the registry has answered. Never rejects. */
  async #run(pull: SharedPull, answer: (reason: string | null) => void): Promise<PullOutcome> {
    const { image } = pull;
    const signal = pull.controller.signal;
    try {
      const auth = await this.#deps.registries.credentials(image);
      const pulling = await this.#deps.images.pull(image, {
        auth,
        signal,
        onProgress: (progress) => {
          this.#progress(pull, progress);
        },
      });
      answer(null);
      const digest = await pulling.done;
      return { kind: 'pulled', digest };
    } catch (error) {
      const reason =
        error instanceof ImagePullError || error instanceof RuntimeUnavailableError
          ? error.message
          : 'the panel could not run the pull (its log says why)';
      if (!(error instanceof ImagePullError) && !(error instanceof RuntimeUnavailableError)) {
        this.#deps.log.error({ err: error, image }, 'an image pull failed');
      }
      answer(reason);
      return signal.aborted ? { kind: 'left' } : { kind: 'failed', reason };
    }
  }

  /** Says how far the pull is, in steps (see the module's comment). */
  #progress(pull: SharedPull, progress: PullProgress): void {
    if (progress.total > 0) {
      const share = Math.min(100, Math.floor((progress.downloaded / progress.total) * 100));
      const now = this.#now();
      // Layers become known as they start: the share shown never goes back.
      if (share > pull.shown) {
        const step = Math.floor(share / 10) > Math.floor(pull.shown / 10);
        if (step || now - pull.shownAt >= PROGRESS_EVERY_MS) {
          pull.shown = share;
          pull.shownAt = now;
          this.#say(pull, `pulling ${pull.image}: ${share} %`);
        }
      }
    }
    if (progress.extracting && pull.shown >= 100 && !pull.extractingSaid) {
      pull.extractingSaid = true;
      this.#say(pull, `pulling ${pull.image}: downloaded, extracting`);
    }
  }

  #say(pull: SharedPull, line: string): void {
    for (const waiter of pull.waiters) waiter.say(line);
  }

  #now(): number {
    return this.#deps.clock?.() ?? Date.now();
  }
}
