import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HISTORY_LINES,
  LineSplitter,
  MAX_LINE_BYTES,
  RingBuffer,
} from '../src/modules/console/console-log.js';

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
