/**
 * What one server's console shows, in order: its output split into lines, the panel's own lines,
 * its status changes and the notices of its egg's features; the last 1000 lines are its history,
 * and every listener hears each event once.
 *
 * Output is never handled where it arrives. A chunk is only counted (its newlines) and queued;
 * a {@link ConsolePacer} shared by every server then splits, stores and hands out lines in
 * slices of a few milliseconds per event-loop turn, so that HTTP requests are answered in
 * between however fast a server prints. The output itself is read as it comes: what the console
 * cannot show is dropped here, never left in the pipe to hold the server up.
 *
 * Lines reach listeners in batches (protocol v2): the first line after a quiet spell at once,
 * then at most one batch every {@link BATCH_MS} ms (sooner when a batch is full), so a flood costs
 * each reader one frame per batch, not one per line. A status change or a line of the panel's own
 * sends what waits before it at once, in order.
 *
 * When a server prints faster than the console can show, the oldest queued output is dropped,
 * whole chunks at a time, so that at most {@link BACKLOG_LINES} lines wait. Dropped lines are
 * counted, and where they were listeners get a `skipped` event with the count instead. The queue
 * always keeps the newest 1000 lines and more, so once the output calms down the history is
 * exactly the last 1000 lines again.
 */
import type { FeatureNotice } from '../../domain/features.js';
import { escapeControl } from '../../text.js';
import { performance } from 'node:perf_hooks';
import type { ConsoleEvent, ConsoleLine } from '../host.js';
import type { OutputStream } from '../runtime/runtime.js';
import {
  HISTORY_LINES,
  LineSplitter,
  MAX_LINE_BYTES,
  RingBuffer,
  countNewlines,
} from './console-log.js';

/** Lines that may wait to be shown; past that the oldest queued output is dropped. */
export const BACKLOG_LINES = 20_000;
/** Bytes that may wait, as long as more than HISTORY_LINES lines stay queued. */
const BACKLOG_BYTES = 4 * 1024 * 1024;
/** The console's share of one event-loop turn, across all servers. */
export const SLICE_MS = 2;
/** The clock is read after this many lines. */
const LINES_PER_CLOCK_READ = 64;
/** Lines that come while a batch was sent less than this long ago wait for the next one. */
export const BATCH_MS = 20;
/** A batch this full goes at once. */
export const BATCH_MAX_LINES = 2_000;
const BATCH_MAX_CHARS = 256 * 1024;

/** Where a process's output goes: one per process, for both its streams. */
export interface OutputSink {
  write(chunk: Buffer, stream: OutputStream): void;
  /** The process is gone: a last line without a newline is emitted. */
  end(): void;
}

/** One output stream of one process. */
interface Stream {
  readonly splitter: LineSplitter;
  /** Bytes since the last newline that arrived, queued or not. */
  unfinished: number;
}

type Item<Status extends string> =
  | {
      readonly kind: 'output';
      readonly stream: Stream;
      readonly data: Buffer;
      readonly ts: string;
      /** Where the lines not yet taken start. */
      offset: number;
      /** Newlines after `offset`. */
      newlines: number;
    }
  /** Dropped output; later drops right after it add to it. */
  | { readonly kind: 'skipped'; lines: number }
  /** A line of the panel's own. */
  | { readonly kind: 'line'; readonly line: string; readonly ts: string }
  | { readonly kind: 'status'; readonly status: Status }
  | { readonly kind: 'notice'; readonly notice: FeatureNotice }
  | { readonly kind: 'end'; readonly stream: Stream; readonly ts: string };

/** Work that the pacer runs in slices. */
interface Drainable {
  readonly name: string;
  /** Works until `deadline` (performance.now()); true when work is left. */
  drain(deadline: number): boolean;
  /** Gives up what is queued, after `drain` failed. */
  abandon(): void;
}

/**
 * Runs queued console work after I/O, in one slice of at most {@link SLICE_MS} per event-loop
 * turn shared round-robin between the servers that have work, so that a turn never holds more
 * than that whatever the number of noisy servers. An error in a server's work is reported, never
 * thrown: it runs outside any request, and would otherwise end the panel.
 */
export class ConsolePacer {
  readonly #ready = new Set<Drainable>();
  /** A run is pending or under way: work woken meanwhile waits for its end. */
  #scheduled = false;
  readonly #onError: (error: unknown, name: string) => void;

  constructor(onError: (error: unknown, name: string) => void) {
    this.#onError = onError;
  }

  wake(work: Drainable): void {
    this.#ready.add(work);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#run);
  }

  forget(work: Drainable): void {
    this.#ready.delete(work);
  }

  readonly #run = (): void => {
    const deadline = performance.now() + SLICE_MS;
    while (this.#ready.size > 0) {
      const now = performance.now();
      if (now >= deadline) break;
      // An equal share of what is left to each, in turn; whoever still has work goes last.
      const share = (deadline - now) / this.#ready.size;
      const [work] = this.#ready;
      if (work === undefined) break;
      this.#ready.delete(work);
      let more = false;
      try {
        more = work.drain(Math.min(deadline, now + share));
      } catch (error) {
        this.#onError(error, work.name);
        work.abandon();
      }
      if (more) this.#ready.add(work);
    }
    this.#scheduled = this.#ready.size > 0;
    if (this.#scheduled) setImmediate(this.#run);
  };
}

/** What a ConsoleFeed is made from. */
export interface ConsoleFeedDeps {
  /** The server's name, for logs. */
  readonly name: string;
  readonly pacer: ConsolePacer;
  readonly now: () => Date;
  readonly onError: (error: unknown, name: string) => void;
}

export class ConsoleFeed<Status extends string> implements Drainable {
  readonly #history = new RingBuffer();
  readonly #listeners = new Set<(event: ConsoleEvent<Status>) => void>();
  /** Queued work, oldest first, from `#head` on; dropped output leaves holes. */
  #queue: (Item<Status> | undefined)[] = [];
  #head = 0;
  /** Output items before this index have all been taken or dropped. */
  #dropFrom = 0;
  /** The `skipped` item that the next drop adds to, while only holes follow it; else -1. */
  #skipAt = -1;
  #queuedNewlines = 0;
  #queuedBytes = 0;
  #skippedLines = 0;
  /** Lines shown but not yet sent to listeners, and when the last of them arrived. */
  #batch: string[] = [];
  #batchChars = 0;
  #batchTs = '';
  /** The batch goes as soon as the current work is done. */
  #urgent = false;
  #lastSent = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | null = null;
  /** The time of the output item being split. */
  #ts = '';
  #lastTime = Number.NaN;
  #lastIso = '';
  #closed = false;
  readonly #deps: ConsoleFeedDeps;

  constructor(deps: ConsoleFeedDeps) {
    this.#deps = deps;
  }

  get name(): string {
    return this.#deps.name;
  }

  /** Lines dropped unshown since this console began. */
  get skippedLines(): number {
    return this.#skippedLines;
  }

  /**
   * The last ≤1000 lines sent to listeners, oldest first. Lines of the batch not yet sent are
   * left out: a listener subscribed now receives them in that batch.
   */
  history(): ConsoleLine[] {
    const lines = this.#history.toArray();
    return lines.slice(0, Math.max(0, lines.length - this.#batch.length));
  }

  /** Calls `listener` with every event from now on, until unsubscribed. */
  subscribe(listener: (event: ConsoleEvent<Status>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A sink for the output of one process. */
  output(): OutputSink {
    const streams: Record<OutputStream, Stream> = {
      stdout: this.#stream(),
      stderr: this.#stream(),
    };
    return {
      write: (chunk, name) => {
        this.#write(streams[name], chunk);
      },
      end: () => {
        const ts = this.#timestamp();
        this.#enqueue({ kind: 'end', stream: streams.stdout, ts });
        this.#enqueue({ kind: 'end', stream: streams.stderr, ts });
      },
    };
  }

  /**
   * A line of the panel's own (`[panel] …`), sent at once after everything before it. Its control
   * characters are written out (src/text.ts): whatever it quotes (a command, a start command
   * with its variables, a file name) cannot end it and forge another panel line.
   */
  append(line: string): void {
    const item = { kind: 'line', line: escapeControl(line), ts: this.#timestamp() } as const;
    if (this.#idle()) {
      this.#take(item);
      this.#sendBatch();
    } else this.#enqueue(item);
  }

  /** A status change, sent at once after everything before it. */
  status(status: Status): void {
    const item = { kind: 'status', status } as const;
    if (this.#idle()) this.#take(item);
    else this.#enqueue(item);
  }

  /** A feature's notice, sent at once after everything before it. */
  notice(notice: FeatureNotice): void {
    const item = { kind: 'notice', notice } as const;
    if (this.#idle()) this.#take(item);
    else this.#enqueue(item);
  }

  /** Drops what is queued and every listener; nothing is shown any more. */
  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    this.abandon();
    this.#batch = [];
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#deps.pacer.forget(this);
  }

  /** Forgets what is queued (after a failure, or once everything was shown). */
  abandon(): void {
    this.#queue = [];
    this.#head = 0;
    this.#dropFrom = 0;
    this.#skipAt = -1;
    this.#queuedNewlines = 0;
    this.#queuedBytes = 0;
  }

  drain(deadline: number): boolean {
    const more = this.#work(deadline);
    this.#scheduleBatch();
    return more;
  }

  /** Takes queued items until `deadline`; true when some are left. */
  #work(deadline: number): boolean {
    let lines = 0;
    while (this.#head < this.#queue.length) {
      if (this.#closed) return false;
      const item = this.#queue[this.#head];
      if (item?.kind === 'output') {
        const { data } = item;
        this.#ts = item.ts;
        while (item.offset < data.length) {
          if (++lines % LINES_PER_CLOCK_READ === 0 && performance.now() >= deadline) return true;
          const next = item.stream.splitter.pushLine(data, item.offset);
          if (data[next - 1] === 0x0a) {
            item.newlines -= 1;
            this.#queuedNewlines -= 1;
          }
          this.#queuedBytes -= next - item.offset;
          item.offset = next;
        }
      } else if (item !== undefined) {
        this.#take(item);
      }
      this.#queue[this.#head] = undefined;
      this.#head += 1;
      if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) this.#compact();
    }
    this.abandon();
    return false;
  }

  /** Shows one queued item other than output. */
  #take(item: Exclude<Item<Status>, { kind: 'output' }>): void {
    switch (item.kind) {
      case 'skipped':
        this.#sendBatch();
        this.#send({ type: 'skipped', lines: item.lines });
        return;
      case 'line':
        this.#line(item.line, item.ts);
        this.#urgent = true;
        return;
      case 'status':
        this.#sendBatch();
        this.#send({ type: 'status', status: item.status });
        return;
      case 'notice':
        this.#sendBatch();
        this.#send({ type: 'notice', ...item.notice });
        return;
      case 'end':
        this.#ts = item.ts;
        item.stream.splitter.end();
        this.#urgent = true;
        return;
    }
  }

  /** A line is shown: it joins the history and the batch. */
  #line(line: string, ts: string): void {
    this.#history.push({ line, ts });
    this.#batch.push(line);
    this.#batchChars += line.length;
    this.#batchTs = ts;
    if (this.#batch.length >= BATCH_MAX_LINES || this.#batchChars >= BATCH_MAX_CHARS) {
      this.#sendBatch();
    }
  }

  /** Sends the batch now, or once BATCH_MS have passed since the last one. */
  #scheduleBatch(): void {
    if (this.#batch.length === 0 || this.#timer !== null) return;
    const wait = this.#lastSent + BATCH_MS - performance.now();
    if (this.#urgent || wait <= 0) {
      this.#sendBatch();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#sendBatch();
    }, wait);
  }

  #sendBatch(): void {
    this.#urgent = false;
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#batch.length === 0) return;
    const lines = this.#batch;
    this.#batch = [];
    this.#batchChars = 0;
    this.#lastSent = performance.now();
    this.#send({ type: 'log', lines, ts: this.#batchTs });
  }

  /** Forgets the part of the queue already taken, so that a queue never drained stays small. */
  #compact(): void {
    const head = this.#head;
    this.#queue = this.#queue.slice(head);
    this.#head = 0;
    this.#dropFrom = Math.max(0, this.#dropFrom - head);
    this.#skipAt = this.#skipAt >= head ? this.#skipAt - head : -1;
  }

  #stream(): Stream {
    return {
      splitter: new LineSplitter((line) => {
        this.#line(line, this.#ts);
      }),
      unfinished: 0,
    };
  }

  /** Where output arrives: constant work per byte, whatever the number of lines in it. */
  #write(stream: Stream, data: Buffer): void {
    if (this.#closed || data.length === 0) return;
    const newlines = countNewlines(data);
    if (newlines === 0 && stream.unfinished > MAX_LINE_BYTES) {
      // The middle of a line that is cut anyway: what is queued of it already decides the cut.
      stream.unfinished += data.length;
      return;
    }
    stream.unfinished =
      newlines === 0 ? stream.unfinished + data.length : data.length - data.lastIndexOf(0x0a) - 1;
    this.#queuedNewlines += newlines;
    this.#queuedBytes += data.length;
    this.#enqueue({ kind: 'output', stream, data, ts: this.#timestamp(), offset: 0, newlines });
    this.#shed();
  }

  /**
   * Drops the oldest queued output, whole chunks, while BACKLOG_LINES lines would still wait
   * without it (or more than BACKLOG_BYTES wait), never leaving HISTORY_LINES or fewer after it:
   * the lines after a gap fill the history, so it is exact again once the queue is shown.
   */
  #shed(): void {
    let index = Math.max(this.#dropFrom, this.#head);
    if (this.#skipAt < this.#head) this.#skipAt = -1;
    for (;;) {
      let item = this.#queue[index];
      // Events stay, in their place: a drop after one is announced after it.
      while (index < this.#queue.length && item?.kind !== 'output') {
        if (item !== undefined) this.#skipAt = -1;
        index += 1;
        item = this.#queue[index];
      }
      if (item?.kind !== 'output') break;
      const after = this.#queuedNewlines - item.newlines;
      const tooMany =
        after >= BACKLOG_LINES || (this.#queuedBytes > BACKLOG_BYTES && after > HISTORY_LINES);
      if (!tooMany) break;
      const lost = item.stream.splitter.drop(item.newlines, item.data.at(-1) === 0x0a);
      this.#queuedNewlines = after;
      this.#queuedBytes -= item.data.length - item.offset;
      this.#skippedLines += lost;
      const open = this.#queue[this.#skipAt];
      if (open?.kind === 'skipped') {
        open.lines += lost;
        this.#queue[index] = undefined;
      } else {
        this.#queue[index] = { kind: 'skipped', lines: lost };
        this.#skipAt = index;
      }
      index += 1;
    }
    this.#dropFrom = index;
  }

  /** Nothing waits to be shown, as with a quiet server: an event can be taken at once. */
  #idle(): boolean {
    return !this.#closed && this.#head === this.#queue.length;
  }

  #enqueue(item: Item<Status>): void {
    if (this.#closed) return;
    this.#queue.push(item);
    this.#deps.pacer.wake(this);
  }

  #send(event: ConsoleEvent<Status>): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#deps.onError(error, this.#deps.name);
      }
    }
  }

  /** The current time in ISO-8601, formatted once per millisecond. */
  #timestamp(): string {
    const date = this.#deps.now();
    const time = date.getTime();
    if (time !== this.#lastTime) {
      this.#lastTime = time;
      this.#lastIso = date.toISOString();
    }
    return this.#lastIso;
  }
}
