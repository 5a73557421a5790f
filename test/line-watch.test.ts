/**
 * The console watch (src/host/local/line-watch.ts): patterns of users and eggs run in a worker
 * thread, each batch of lines within a time limit, so that even a pattern that is linear but
 * slow per character never holds the panel's main thread (docs/security.md, "Patterns").
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RE2JS } from 're2js';
import { LineMatcher } from '../src/host/local/line-watch.js';

/** A line of pseudo-random a's and b's: RE2's DFA cannot cache its way through it. */
function randomAb(length: number, seed: number): string {
  let state = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out += (state >> 16) & 1 ? 'a' : 'b';
  }
  return out;
}

/** Resolves true when `watch` fires within `ms`, false otherwise. */
function fired(matcher: LineMatcher, patterns: string[], lines: string[][], ms = 5000) {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      watch.close();
      resolve(false);
    }, ms);
    const watch = matcher.watch(patterns, () => {
      clearTimeout(timer);
      resolve(true);
    });
    for (const batch of lines) watch.offer(batch);
  });
}

describe('console watches', () => {
  const matcher = new LineMatcher({ timeLimitMs: 100 });
  after(() => matcher.close());

  it('finds text and RE2 patterns, ANSI colours aside, and nothing else', async () => {
    assert.equal(
      await fired(matcher, ['Done ('], [['loading'], ['\x1b[32mDone\x1b[0m (3.1s)!']]),
      true,
    );
    assert.equal(await fired(matcher, ['regex:^Done \\(\\d+'], [['x'], ['Done (12s)']]), true);
    assert.equal(await fired(matcher, ['regex:(?i)^server STARTED$'], [['Server started']]), true);
    assert.equal(await fired(matcher, ['regex:^Done$'], [['not Done'], ['Done!']], 500), false);
    // A pattern RE2 cannot run never matches, whatever the line.
    assert.equal(await fired(matcher, ['regex:(a)\\1'], [['aa']], 500), false);
  });

  it('never calls back after close', async () => {
    let calls = 0;
    const watch = matcher.watch(['regex:x'], () => {
      calls += 1;
    });
    watch.offer(['x']);
    watch.close();
    watch.offer(['x']);
    await sleep(300);
    assert.equal(calls, 0);
  });

  it('a slow pattern holds neither the main thread nor the next watch', async () => {
    const pattern = '[ab]*a[ab]{20}\\d';
    const lines = Array.from({ length: 16 }, (_, i) => randomAb(8000, i + 1));
    // What one such line costs on this thread, measured now.
    const re = RE2JS.compile(pattern);
    const started = performance.now();
    re.test(lines[0] ?? '');
    const oneLine = performance.now() - started;

    // The largest gap between timer ticks while the worker is given every line.
    let last = performance.now();
    let gap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      gap = Math.max(gap, now - last);
      last = now;
    }, 2);
    try {
      const hostile = fired(matcher, [`regex:${pattern}`], [lines], 1500);
      const benign = fired(matcher, ['regex:^ready$'], [['ready']]);
      assert.equal(await benign, true, 'a watch queued behind the slow one still matches');
      assert.equal(await hostile, false, 'a batch past the time limit counts as no match');
    } finally {
      // Also when an assertion fails: a ticker left running keeps this file from ever ending.
      clearInterval(ticker);
    }
    assert.ok(
      gap < (oneLine * lines.length) / 4,
      `the main thread was held ${gap.toFixed(1)} ms; the lines cost ${(oneLine * lines.length).toFixed(1)} ms here`,
    );
    // The worker was made again: the same pattern still finds a short matching line.
    assert.equal(await fired(matcher, [`regex:${pattern}`], [[`a${'b'.repeat(20)}7`]]), true);
  });
});
