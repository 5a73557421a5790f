import { describe, expect, it } from 'vitest';
import { append, columns, GAP_AFTER_MS, summarise, type History, type Reading } from './history';

const running = (at: number, cpuPercent: number, memoryBytes = 1000): Reading => ({
  at,
  status: 'running',
  cpuPercent,
  memoryBytes,
});
const stopped = (at: number): Reading => ({ at, status: 'stopped', cpuPercent: 0, memoryBytes: 0 });
const feed = (readings: Reading[], windowMs?: number): History =>
  readings.reduce<History>((history, reading) => append(history, reading, windowMs), []);

describe('stats history', () => {
  it('appends the readings of a running server', () => {
    expect(feed([running(1000, 5, 10), running(4000, 7, 20)])).toEqual([
      { at: 1000, cpu: 5, memory: 10 },
      { at: 4000, cpu: 7, memory: 20 },
    ]);
  });

  it('ignores a reading no newer than the last (the same answer seen twice)', () => {
    const history = feed([running(1000, 5), running(4000, 7)]);
    expect(append(history, running(4000, 9))).toBe(history);
    expect(append(history, running(2000, 9))).toBe(history);
  });

  it('keeps only the window, dropping the oldest readings', () => {
    const readings = Array.from({ length: 50 }, (_, i) => running(i * 3000, i));
    const history = feed(readings, 60_000);
    expect(history[0]?.at).toBe(147_000 - 60_000);
    expect(history.at(-1)?.at).toBe(147_000);
    expect(history).toHaveLength(21);
  });

  it('breaks the line when the server stops, once however long it stays stopped', () => {
    const history = feed([running(0, 5), running(3000, 6), stopped(6000), stopped(9000)]);
    expect(history.map((sample) => sample.cpu)).toEqual([5, 6, null]);
    const again = feed([running(0, 5), stopped(3000), stopped(6000), running(9000, 8)]);
    expect(again.map((sample) => sample.cpu)).toEqual([5, null, 8]);
  });

  it('draws nothing for a server that never ran while watched', () => {
    expect(feed([stopped(0), stopped(3000)])).toEqual([]);
  });

  it('breaks the line over a pause in the readings', () => {
    const history = feed([running(0, 5), running(3000 + GAP_AFTER_MS, 6)]);
    expect(history.map((sample) => sample.cpu)).toEqual([5, null, 6]);
    expect(feed([running(0, 5), running(GAP_AFTER_MS, 6)]).map((s) => s.cpu)).toEqual([5, 6]);
  });

  it('never starts the window with a gap', () => {
    const history = feed([running(0, 5), stopped(3000), running(70_000, 6)], 60_000);
    expect(history).toEqual([{ at: 70_000, cpu: 6, memory: 1000 }]);
  });
});

describe('summary and columns', () => {
  const history = feed([running(0, 5, 100), running(3000, 40, 300), stopped(6000)]);

  it('gives the latest value and the range over the window, gaps aside', () => {
    expect(summarise(history, 'cpu')).toEqual({ latest: 40, min: 5, max: 40 });
    expect(summarise(history, 'memory')).toEqual({ latest: 300, min: 100, max: 300 });
    expect(summarise([], 'cpu')).toBeNull();
  });

  it('gives uPlot its columns, seconds and values with gaps as null', () => {
    expect(columns(history, 'cpu')).toEqual([
      [0, 3, 6],
      [5, 40, null],
    ]);
  });
});
