/**
 * What a console shows (ConsoleFeed): lines in batches, a quiet server's at once; and when output
 * comes faster than it can be shown, output written all at once, before the console has had a
 * single turn, so whatever it must drop is dropped every time, at chunk boundaries chosen by
 * fast-check. Every line is either shown, in order, or counted in a `skipped` event in its place,
 * and the history is exactly the last 1000 lines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fc from 'fast-check';
import {
  BACKLOG_LINES,
  BATCH_MAX_LINES,
  ConsoleFeed,
  ConsolePacer,
} from '../src/host/local/console-feed.js';
import type { ConsoleEvent } from '../src/host/host.js';
import { HISTORY_LINES, LineSplitter, MAX_LINE_BYTES } from '../src/host/local/console-log.js';

type Status = 'running' | 'stopped';
const DONE = '[panel] done';

function feed(now: () => Date = () => new Date(0)): ConsoleFeed<Status> {
  const fail = (error: unknown) => {
    throw error;
  };
  return new ConsoleFeed<Status>({
    name: 'test',
    pacer: new ConsolePacer(fail),
    now,
    onError: fail,
  });
}

/** What listeners were shown, line by line: a line, or a count of lines skipped in its place. */
function shownOf(events: ConsoleEvent<Status>[]): (string | { skipped: number })[] {
  return events.flatMap((event): (string | { skipped: number })[] => {
    if (event.type === 'log') return [...event.lines];
    if (event.type === 'skipped') return [{ skipped: event.lines }];
    return [];
  });
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Every event shown until the `[panel] done` line that follows everything written. */
function collect(console: ConsoleFeed<Status>): Promise<ConsoleEvent<Status>[]> {
  const events: ConsoleEvent<Status>[] = [];
  return new Promise((resolve) => {
    console.subscribe((event) => {
      events.push(event);
      if (event.type === 'log' && event.lines.includes(DONE)) resolve(events);
    });
  });
}

/** What a console shows of `bytes` when nothing is dropped. */
function allLines(bytes: Buffer): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line));
  splitter.push(bytes);
  splitter.end();
  return lines;
}

/** `bytes` cut into chunks at `cuts` (positions, taken modulo the length). */
function chunksOf(bytes: Buffer, cuts: number[]): Buffer[] {
  const ends = [...new Set(cuts.map((cut) => cut % bytes.length)), bytes.length].sort(
    (a, b) => a - b,
  );
  return ends
    .map((end, i) => bytes.subarray(i === 0 ? 0 : ends[i - 1], end))
    .filter((chunk) => chunk.length > 0);
}

/** Walks the lines shown against every line written: each shown in order, or counted skipped. */
function assertAccounted(shown: (string | { skipped: number })[], written: string[]): number {
  let next = 0;
  let skipped = 0;
  for (const line of shown) {
    if (typeof line !== 'string') {
      assert.ok(line.skipped > 0, 'a skipped event counts lines');
      skipped += line.skipped;
      next += line.skipped;
      continue;
    }
    assert.equal(line, written[next], `line ${next} of ${written.length}`);
    next += 1;
  }
  assert.equal(next, written.length, 'every line shown or counted');
  return skipped;
}

describe('console feed: output faster than it can be shown', () => {
  const numbered = (count: number, width: number) =>
    Array.from({ length: count }, (_, i) => `${i} `.padEnd(width, '.'));

  it('shows or counts every line, and the history is the last 1000 lines', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          // Short lines past the line limit, and long ones past the byte limit (4 MiB).
          shape: fc.constantFrom(
            { width: 1, most: 4 * BACKLOG_LINES },
            { width: 20, most: 4 * BACKLOG_LINES },
            { width: 900, most: 7_000 },
            { width: MAX_LINE_BYTES + 10, most: 1_500 },
          ),
          share: fc.double({ min: 0, max: 1, noNaN: true }),
          cuts: fc.array(fc.nat(), { minLength: 1, maxLength: 300 }),
          trailing: fc.boolean(),
        }),
        async ({ shape: { width, most }, share, cuts, trailing }) => {
          const lines = Math.max(1, Math.round(share * most));
          const console = feed();
          const shown = collect(console);
          const text = numbered(lines, width).join('\n') + (trailing ? '\n' : '');
          const bytes = Buffer.from(text);
          const output = console.output();
          for (const chunk of chunksOf(bytes, cuts)) output.write(chunk, 'stdout');
          output.end();
          console.append(DONE);

          const events = await shown;
          const logged = shownOf(events);
          const written = allLines(bytes);
          const skipped = assertAccounted(logged.slice(0, -1), written);
          assert.equal(console.skippedLines, skipped);
          const history = console.history().map((entry) => entry.line);
          assert.deepEqual(history.slice(0, -1), written.slice(-(HISTORY_LINES - 1)));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps queued output and status changes in the order they happened', async () => {
    const console = feed();
    const shown = collect(console);
    const output = console.output();
    const lines = numbered(3 * BACKLOG_LINES, 8);
    const half = lines.length / 2;
    output.write(Buffer.from(lines.slice(0, half).join('\n') + '\n'), 'stdout');
    console.status('running');
    console.append('[panel] between');
    output.write(Buffer.from(lines.slice(half).join('\n') + '\n'), 'stderr');
    console.status('stopped');
    console.append(DONE);

    const events = await shown;
    const at = (match: (event: ConsoleEvent<Status>) => boolean) => events.findIndex(match);
    const running = at((event) => event.type === 'status' && event.status === 'running');
    const has = (line: string | undefined) => (event: ConsoleEvent<Status>) =>
      event.type === 'log' && line !== undefined && event.lines.includes(line);
    const between = at(has('[panel] between'));
    const stopped = at((event) => event.type === 'status' && event.status === 'stopped');
    const last = at(has(lines.at(-1)));
    assert.ok(running >= 0 && running + 1 === between && between < last && last < stopped);
    const logged = shownOf(events);
    assertAccounted(
      logged.filter((line) => line !== '[panel] between' && line !== DONE),
      lines,
    );
  });

  it('shows nothing more once closed', async () => {
    const console = feed();
    const events: ConsoleEvent<Status>[] = [];
    console.subscribe((event) => events.push(event));
    const output = console.output();
    output.write(Buffer.from('one\ntwo\n'), 'stdout');
    console.close();
    output.write(Buffer.from('three\n'), 'stdout');
    console.append('[panel] after');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, []);
  });
});

describe('console feed: batches', () => {
  it('sends the first line after a quiet spell at once, as a batch of its own', async () => {
    const console = feed();
    const events: ConsoleEvent<Status>[] = [];
    console.subscribe((event) => events.push(event));
    console.output().write(Buffer.from('hello\n'), 'stdout');
    await turn();
    await turn();
    assert.deepEqual(events, [{ type: 'log', lines: ['hello'], ts: new Date(0).toISOString() }]);
  });

  it('gathers a flood into few batches, every line once and in order, each stamped with its last line', async () => {
    let clock = 0;
    const console = feed(() => new Date(clock++));
    const shown = collect(console);
    const output = console.output();
    // Fewer than BACKLOG_LINES, so that none is dropped though all come before the first turn.
    const lines = Array.from({ length: BACKLOG_LINES - 1 }, (_, i) => `line ${i}`);
    // One line per chunk, as a server writing each line on its own would send them.
    for (const line of lines) output.write(Buffer.from(`${line}\n`), 'stdout');
    console.append(DONE);
    const events = await shown;

    const batches = events.filter((event) => event.type === 'log');
    assert.deepEqual(
      batches.flatMap((event) => event.lines),
      [...lines, DONE],
    );
    assert.ok(batches.length < lines.length / 10, `${batches.length} batches`);
    assert.ok(batches.every((event) => event.lines.length <= BATCH_MAX_LINES));
    // Chunk i arrived at clock i: a batch is stamped with the arrival of its last line.
    for (const batch of batches.slice(0, -1)) {
      const last = Number(/\d+$/.exec(batch.lines.at(-1) ?? '')?.[0]);
      assert.equal(batch.ts, new Date(last).toISOString());
    }
  });

  it('sends the waiting lines before a status change, and nothing is lost across it', async () => {
    const console = feed();
    const shown = collect(console);
    const output = console.output();
    output.write(Buffer.from('a\n'), 'stdout');
    await turn();
    await turn();
    output.write(Buffer.from('b\nc\n'), 'stdout'); // waits for the next batch
    console.status('stopped');
    output.write(Buffer.from('d\n'), 'stdout');
    console.append(DONE);
    const events = await shown;
    assert.deepEqual(events, [
      { type: 'log', lines: ['a'], ts: new Date(0).toISOString() },
      { type: 'log', lines: ['b', 'c'], ts: new Date(0).toISOString() },
      { type: 'status', status: 'stopped' },
      { type: 'log', lines: ['d', DONE], ts: new Date(0).toISOString() },
    ]);
  });

  it('gives a listener that comes while a batch waits every line once: history, then batches', async () => {
    const console = feed();
    const output = console.output();
    output.write(Buffer.from('a\n'), 'stdout');
    await turn();
    await turn();
    output.write(Buffer.from('b\nc\n'), 'stdout');
    await turn();
    await turn(); // b and c are taken, and wait for the next batch
    const history = console.history().map((entry) => entry.line);
    const shown = collect(console);
    console.append(DONE);
    const events = await shown;
    assert.deepEqual([...history, ...shownOf(events)], ['a', 'b', 'c', DONE]);
  });
});
