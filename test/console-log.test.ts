import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fc from 'fast-check';
import {
  HISTORY_LINES,
  LineSplitter,
  MAX_LINE_BYTES,
  RingBuffer,
  countNewlines,
} from '../src/host/local/console-log.js';

const split = (...chunks: (string | Buffer)[]): string[] => {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line));
  for (const chunk of chunks) splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  splitter.end();
  return lines;
};

describe('console lines', () => {
  it('splits output into lines across chunks, dropping CR of CRLF', () => {
    assert.deepEqual(split('one\ntw', 'o\r\nthr', 'ee\n', 'tail'), ['one', 'two', 'three', 'tail']);
    assert.deepEqual(split('\n\n'), ['', '']);
  });

  it('never splits a UTF-8 character across chunks', () => {
    const text = Buffer.from('héllo wörld ⛏️\n');
    const chunks = Array.from(text, (byte) => Buffer.from([byte]));
    assert.deepEqual(split(...chunks), ['héllo wörld ⛏️']);
  });

  it('cuts a line longer than 8 KiB and drops the rest of it', () => {
    const long = 'x'.repeat(MAX_LINE_BYTES * 3);
    const lines = split(`${long}\nnext\n`);
    assert.equal(lines.length, 2);
    assert.ok(lines[0]!.startsWith('x'.repeat(MAX_LINE_BYTES)));
    assert.ok(Buffer.byteLength(lines[0]!) <= MAX_LINE_BYTES + 20);
    assert.match(lines[0]!, /\[line cut\]$/);
    assert.equal(lines[1], 'next');
  });

  it('cuts on a character boundary', () => {
    const lines = split(`${'é'.repeat(MAX_LINE_BYTES)}\n`);
    assert.ok(!lines[0]!.includes('\uFFFD'), 'no broken character');
  });

  it('holds at most one partial line however long the output without newlines', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    const chunk = Buffer.alloc(64 * 1024, 'y');
    for (let i = 0; i < 1600; i++) splitter.push(chunk); // 100 MiB without a newline
    assert.equal(lines.length, 1, 'one cut line, the rest dropped');
    splitter.push(Buffer.from('\nafter\n'));
    assert.deepEqual(lines.slice(1), ['after']);
  });
});

/** The lines the console shows of `bytes`, the contract written plainly. */
function contract(bytes: Buffer): string[] {
  const lines: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    const newline = bytes.indexOf(10, start);
    const line = bytes.subarray(start, newline < 0 ? bytes.length : newline);
    if (line.length > MAX_LINE_BYTES) {
      let end = MAX_LINE_BYTES;
      while (((line[end] ?? 0) & 0xc0) === 0x80) end -= 1;
      lines.push(`${line.subarray(0, end).toString()} [line cut]`);
    } else {
      lines.push(line.subarray(0, line.at(-1) === 13 ? -1 : undefined).toString());
    }
    if (newline < 0) break;
    start = newline + 1;
  }
  return lines;
}

describe('console lines, taken one at a time', () => {
  /** Output of mixed lines: short, empty, CRLF, non-ASCII, and some over 8 KiB. */
  const output = fc
    .array(
      fc.oneof(
        fc.string({ maxLength: 40 }).map((text) => text.replace(/[\r\n]/g, '')),
        fc.constantFrom(
          '',
          '\r',
          'héllo ⛏️\r',
          'x'.repeat(MAX_LINE_BYTES),
          'é'.repeat(MAX_LINE_BYTES),
        ),
      ),
      { maxLength: 40 },
    )
    .chain((lines) =>
      fc.record({
        bytes: fc.constant(Buffer.from(lines.join('\n') + (lines.length > 0 ? '\n' : ''))),
        tail: fc.string({ maxLength: 10 }).map((text) => text.replace(/[\r\n]/g, '')),
        cuts: fc.array(fc.nat(), { maxLength: 8 }),
      }),
    );

  it('splits as the contract says, one line per call, whatever the chunk boundaries', () => {
    fc.assert(
      fc.property(output, ({ bytes: body, tail, cuts }) => {
        const bytes = Buffer.concat([body, Buffer.from(tail)]);
        const boundaries = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort(
          (a, b) => a - b,
        );
        const chunks = [0, ...boundaries, bytes.length]
          .slice(1)
          .map((end, i, ends) => bytes.subarray(i === 0 ? 0 : ends[i - 1], end))
          .filter((chunk) => chunk.length > 0);
        const byLine: string[] = [];
        const splitter = new LineSplitter((line) => byLine.push(line));
        for (const chunk of chunks) {
          let offset = 0;
          while (offset < chunk.length) {
            const next = splitter.pushLine(chunk, offset);
            assert.ok(next > offset && next <= chunk.length);
            offset = next;
          }
        }
        splitter.end();
        assert.deepEqual(byLine, contract(bytes));
        assert.deepEqual(split(...chunks), contract(bytes));
      }),
    );
  });

  it('counts the lines it loses when output is dropped unread', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    splitter.push(Buffer.from('one\ntw'));
    // "two" loses its end, "three" is dropped whole, "fo" begins a line that goes on.
    assert.equal(splitter.drop(2, false), 3);
    splitter.push(Buffer.from('ur\nfive\n'));
    assert.deepEqual(lines, ['one', 'five']);
    // A drop that ends on a newline leaves the next line whole.
    assert.equal(splitter.drop(1, true), 1);
    splitter.push(Buffer.from('six\n'));
    // Bytes without a newline, in a line already shown cut: nothing more is lost.
    splitter.push(Buffer.from('y'.repeat(MAX_LINE_BYTES + 1)));
    assert.equal(splitter.drop(0, false), 0);
    splitter.push(Buffer.from('yyy\nseven'));
    splitter.end();
    assert.deepEqual(lines.slice(2), ['six', `${'y'.repeat(MAX_LINE_BYTES)} [line cut]`, 'seven']);
  });

  it('counts newlines like a plain loop, at any alignment', () => {
    fc.assert(
      fc.property(
        fc
          .uint8Array({ maxLength: 300 })
          .map((bytes) => bytes.map((byte) => (byte < 64 ? 10 : byte))),
        fc.nat({ max: 7 }),
        (bytes, shift) => {
          const buffer = Buffer.alloc(bytes.length + shift);
          buffer.set(bytes, shift);
          const view = buffer.subarray(shift);
          assert.equal(countNewlines(view), view.filter((byte) => byte === 10).length);
        },
      ),
    );
  });
});

describe('console history', () => {
  it('keeps the last 1000 lines, oldest first', () => {
    const buffer = new RingBuffer();
    for (let i = 0; i < 2500; i++) buffer.push({ line: `line ${i}`, ts: '' });
    const lines = buffer.toArray().map((entry) => entry.line);
    assert.equal(lines.length, HISTORY_LINES);
    assert.equal(lines[0], 'line 1500');
    assert.equal(lines.at(-1), 'line 2499');
  });

  it('returns fewer lines in order before it is full', () => {
    const buffer = new RingBuffer(4);
    assert.deepEqual(buffer.toArray(), []);
    for (const line of ['a', 'b', 'c']) buffer.push({ line, ts: '' });
    assert.deepEqual(
      buffer.toArray().map((entry) => entry.line),
      ['a', 'b', 'c'],
    );
  });
});
