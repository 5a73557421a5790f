/**
 * Watching a server's console for a line: a template's done line while the server starts, a
 * backup's saved line while a backup waits (docs/security.md, "Patterns").
 *
 * The lines are the tenant's and the patterns a user's or an egg's. Plain text is looked for with
 * `includes`. Patterns (`regex:…`) are run by RE2 (src/templates/patterns.ts), linear in the line,
 * but linear is not cheap: a small pattern can still cost tens of microseconds a character. So
 * they never run on the panel's main thread: one worker thread runs every watch's lines, one
 * batch at a time, each batch within MATCH_TIME_LIMIT_MS. A batch that takes longer counts as no
 * match, and the worker is ended and made again for the next one. Each watch has at most one batch
 * in the worker; lines arriving meanwhile wait, the newest MAX_PENDING_LINES of them.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { MAX_SUBJECT_LENGTH, compileLinePattern } from '../../templates/patterns.js';

/** How long one batch of lines may take in the worker before it counts as no match. */
export const MATCH_TIME_LIMIT_MS = 250;
/** Lines kept for a watch while its previous batch is in the worker: the newest ones. */
export const MAX_PENDING_LINES = 64;

/** A pattern as the worker compiles it again: RE2 syntax and flags, already checked here. */
interface WorkerPattern {
  readonly source: string;
  readonly flags: number;
}

interface Batch {
  readonly id: number;
  readonly patterns: readonly WorkerPattern[];
  readonly lines: readonly string[];
  readonly done: (matched: boolean) => void;
}

/** A watch: lines are offered to it; `onMatch` is called once, when one matches. */
export interface LineWatch {
  offer(lines: readonly string[]): void;
  /** Stops the watch: `onMatch` is not called after this. */
  close(): void;
}

// The worker's code: compiles each pattern once (with a bounded cache) and answers whether any
// line of a batch matches any pattern. Plain CommonJS, evaluated as is: it works the same under
// the test runner, from tsc's output and from the bundle (which has no file for a worker).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { RE2JS } = require(workerData.re2js);
const cache = new Map();
function compiled(pattern) {
  const key = pattern.flags + ':' + pattern.source;
  let re = cache.get(key);
  if (re === undefined) {
    if (cache.size >= 256) cache.clear();
    re = RE2JS.compile(pattern.source, pattern.flags);
    cache.set(key, re);
  }
  return re;
}
parentPort.on('message', (batch) => {
  let matched = false;
  try {
    for (const pattern of batch.patterns) {
      const re = compiled(pattern);
      if (batch.lines.some((line) => line.length <= workerData.maxLength && re.test(line))) {
        matched = true;
        break;
      }
    }
  } catch {
    matched = false;
  }
  parentPort.postMessage({ id: batch.id, matched });
});
parentPort.postMessage({ ready: true });
`;

/** Runs the patterns of every watch of this panel in one worker thread, batch by batch. */
export class LineMatcher {
  readonly #timeLimitMs: number;
  readonly #queue: Batch[] = [];
  #worker: Worker | null = null;
  /** Whether the worker has loaded RE2: a batch's time is counted from then on. */
  #ready = false;
  #current: { batch: Batch; timer: NodeJS.Timeout } | null = null;
  #nextId = 1;
  #closed = false;

  constructor(options: { readonly timeLimitMs?: number } = {}) {
    this.#timeLimitMs = options.timeLimitMs ?? MATCH_TIME_LIMIT_MS;
  }

  /**
   * Watches for a line containing one of `patterns`, or matching one written `regex:…` (one
   * that RE2 cannot run never matches). ANSI colour codes are ignored.
   */
  watch(patterns: readonly string[], onMatch: () => void): LineWatch {
    const texts: string[] = [];
    const regexes: WorkerPattern[] = [];
    for (const pattern of patterns) {
      if (!pattern.startsWith('regex:')) {
        texts.push(pattern);
        continue;
      }
      const compiled = compileLinePattern(pattern.slice('regex:'.length));
      if (compiled.ok) regexes.push(compiled.pattern.program);
    }
    let closed = false;
    let busy = false;
    let pending: string[] = [];
    const matched = (): void => {
      if (closed) return;
      closed = true;
      pending = [];
      onMatch();
    };
    const send = (): void => {
      if (closed || busy || pending.length === 0) return;
      busy = true;
      const lines = pending;
      pending = [];
      this.#submit(regexes, lines, (found) => {
        busy = false;
        if (found) matched();
        else send();
      });
    };
    return {
      offer: (lines) => {
        if (closed || lines.length === 0) return;
        const plain = lines.map((line) => line.replace(ANSI, ''));
        if (plain.some((line) => texts.some((text) => line.includes(text)))) {
          matched();
          return;
        }
        if (regexes.length === 0) return;
        pending.push(...plain);
        if (pending.length > MAX_PENDING_LINES) pending = pending.slice(-MAX_PENDING_LINES);
        send();
      },
      close: () => {
        closed = true;
        pending = [];
      },
    };
  }

  /** Ends the worker; watches still open never match after this. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const batch of this.#queue.splice(0)) batch.done(false);
    if (this.#current !== null) {
      clearTimeout(this.#current.timer);
      this.#current.batch.done(false);
      this.#current = null;
    }
    const worker = this.#worker;
    this.#worker = null;
    await worker?.terminate();
  }

  #submit(
    patterns: readonly WorkerPattern[],
    lines: readonly string[],
    done: (matched: boolean) => void,
  ): void {
    if (this.#closed) {
      done(false);
      return;
    }
    this.#queue.push({ id: this.#nextId++, patterns, lines, done });
    this.#next();
  }

  #next(): void {
    if (this.#current !== null || this.#closed || this.#queue.length === 0) return;
    const worker = this.#ensureWorker();
    if (!this.#ready) return; // #next runs again once it is
    const batch = this.#queue.shift();
    if (batch === undefined) return;
    const timer = setTimeout(() => {
      // Too slow: no match, and a fresh worker for what comes next.
      if (this.#current?.batch !== batch) return;
      this.#current = null;
      this.#discardWorker(worker);
      batch.done(false);
      this.#next();
    }, this.#timeLimitMs);
    this.#current = { batch, timer };
    worker.postMessage({ id: batch.id, patterns: batch.patterns, lines: batch.lines });
  }

  #ensureWorker(): Worker {
    if (this.#worker !== null) return this.#worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { re2js: RE2JS_PATH, maxLength: MAX_SUBJECT_LENGTH },
      // A worker of its own size: matching never needs much memory.
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    worker.unref();
    worker.on('message', (answer: { id: number; matched: boolean } | { ready: true }) => {
      if ('ready' in answer) {
        if (this.#worker !== worker) return;
        this.#ready = true;
        this.#next();
        return;
      }
      const current = this.#current;
      if (current?.batch.id !== answer.id) return;
      clearTimeout(current.timer);
      this.#current = null;
      current.batch.done(answer.matched);
      this.#next();
    });
    const lost = (): void => {
      if (this.#worker !== worker) return;
      const booted = this.#ready;
      this.#worker = null;
      this.#ready = false;
      const current = this.#current;
      if (current !== null) {
        clearTimeout(current.timer);
        this.#current = null;
        current.batch.done(false);
      }
      // A worker that could not even start fails what waits, rather than being made again and
      // again; the next batch tries anew.
      if (!booted) for (const batch of this.#queue.splice(0)) batch.done(false);
      this.#next();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.#worker = worker;
    this.#ready = false;
    return worker;
  }

  #discardWorker(worker: Worker): void {
    if (this.#worker === worker) {
      this.#worker = null;
      this.#ready = false;
    }
    void worker.terminate();
  }
}

const RE2JS_PATH = createRequire(import.meta.url).resolve('re2js');

// eslint-disable-next-line no-control-regex -- the escape character starts every ANSI sequence
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
