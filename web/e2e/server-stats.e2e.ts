/**
 * Stats tab journeys: a stopped server shows an empty state, not a chart; started, its CPU and
 * memory charts gain readings, and once the stand-in game server burns a core and holds 100 MiB
 * (commands typed into the console) their text alternatives say so; the window survives a visit
 * to another tab; stopped again, the charts give way to the empty state; the tab at 1280×800 and
 * 375×812, light and dark, with no Content-Security-Policy violation from uPlot.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { sendCommand } from './helpers/console.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';

const chart = (page: Page, what: 'CPU' | 'Memory') =>
  page.getByRole('img', { name: `${what} use over the last 5 minutes`, exact: true });

/** How many readings the chart holds. */
const samples = async (page: Page, what: 'CPU' | 'Memory') =>
  Number(await chart(page, what).getAttribute('data-samples'));

/** Waits until the chart holds more than `count` readings. */
async function moreSamplesThan(page: Page, what: 'CPU' | 'Memory', count: number) {
  await page.waitForFunction(
    ([name, least]) =>
      Number(document.querySelector(`[aria-label="${name}"]`)?.getAttribute('data-samples')) >
      least,
    [`${what} use over the last 5 minutes`, count] as const,
    { timeout: 60_000 },
  );
}

/** The chart's text alternative (the element describing it). */
async function summary(page: Page, what: 'CPU' | 'Memory'): Promise<string> {
  const id = await chart(page, what).getAttribute('aria-describedby');
  assert.ok(id !== null, 'the chart is described');
  return (await page.locator(`[id="${id}"]`).textContent()) ?? '';
}

/** The "max" value of a text alternative, in its unit (%, MiB…). */
const maxOf = (text: string): number => Number(/max ([\d.]+)/.exec(text)?.[1] ?? NaN);

/** Waits until the chart's text alternative gives a latest value below, or at least, `value`. */
async function nowIs(
  page: Page,
  what: 'CPU' | 'Memory',
  compared: 'below' | 'at least',
  value: number,
) {
  await page.waitForFunction(
    ([name, how, than]) => {
      const id = document.querySelector(`[aria-label="${name}"]`)?.getAttribute('aria-describedby');
      const text = id ? (document.getElementById(id)?.textContent ?? '') : '';
      const now = Number(/^Now ([\d.]+)/.exec(text)?.[1] ?? NaN);
      return how === 'below' ? now < than : now >= than;
    },
    [`${what} use over the last 5 minutes`, compared, value] as const,
    { timeout: 60_000 },
  );
}

describe('server stats', () => {
  let admin = '';
  const journeyOf = gameServerJourney(async (panel) => {
    admin = await register(panel, 'admin');
    await panel.api(
      'POST',
      '/api/servers/create',
      { name: 'survival', displayName: 'Survival', startCommand: fixture.startCommand },
      admin,
    );
  });
  const { fixture } = journeyOf;
  const { tab } = journeyOf;

  it('charts CPU and memory while the server runs, and nothing once it stops', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/survival/stats');
    await page.getByText('The server is stopped.', { exact: true }).waitFor();
    assert.equal(await page.getByRole('img').count(), 0, 'no chart of a stopped server');
    await page.getByRole('region', { name: 'Disk' }).getByText('Server folder').waitFor();
    await assertAccessible(page, 'the stats tab, stopped');

    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await chart(page, 'CPU').waitFor();
    await chart(page, 'Memory').waitFor();
    await moreSamplesThan(page, 'CPU', 1);
    assert.match(await summary(page, 'CPU'), /^Now [\d.]+ % · min [\d.]+ % · max [\d.]+ %/);
    assert.match(await summary(page, 'Memory'), /^Now [\d.]+ MiB · min/);
    const idleMemory = maxOf(await summary(page, 'Memory'));
    await assertAccessible(page, 'the stats tab, running');
    // The first reading averages since the start (Node starting up); then it idles.
    await nowIs(page, 'CPU', 'below', 5);

    // Typed into the console, then back: the window kept what it read.
    const seen = await samples(page, 'CPU');
    await page.getByRole('link', { name: 'Console', exact: true }).click();
    await page.getByRole('status').getByText('Connected', { exact: true }).waitFor();
    await sendCommand(page, 'alloc 100');
    await sendCommand(page, 'burn 30');
    await page.getByRole('link', { name: 'Stats', exact: true }).click();
    await chart(page, 'CPU').waitFor();
    assert.ok((await samples(page, 'CPU')) >= seen, 'the readings made before are still there');

    // A busy core shows, whatever share of it a busy machine leaves the server.
    await nowIs(page, 'CPU', 'at least', 10);
    await nowIs(page, 'Memory', 'at least', 100);
    assert.ok(maxOf(await summary(page, 'Memory')) > idleMemory, 'memory rose');

    // The canvas itself changes as readings arrive.
    const canvas = page.locator('[aria-label="CPU use over the last 5 minutes"] canvas');
    const before = await canvas.evaluate((element) => (element as HTMLCanvasElement).toDataURL());
    await moreSamplesThan(page, 'CPU', await samples(page, 'CPU'));
    const after = await canvas.evaluate((element) => (element as HTMLCanvasElement).toDataURL());
    assert.notEqual(after, before, 'the chart was drawn again with the new reading');

    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('The server is stopped.', { exact: true }).waitFor({ timeout: 60_000 });
    assert.equal(await page.getByRole('img').count(), 0, 'no chart once stopped');
    assertClean();
  });

  describe('screenshots', () => {
    before(async () => {
      // Stopped by the journey above, unless it failed half-way.
      await journeyOf.panel
        .api('POST', '/api/servers/survival/stop', undefined, admin)
        .catch(() => undefined);
      await journeyOf.panel.api('POST', '/api/servers/survival/start', undefined, admin);
      for (const command of ['alloc 60', 'burn 90']) {
        await journeyOf.panel.api('POST', '/api/servers/survival/command', { command }, admin);
      }
    });

    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await page.goto('/servers/survival/stats');
          await moreSamplesThan(page, 'Memory', 3);
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          const box = await chart(page, 'CPU').boundingBox();
          assert.ok(box !== null && box.width <= viewport.width, 'the chart fits the page');
          // On a phone, the tab itself from its top; a desktop shows the whole page.
          if (viewport === PHONE) {
            await page.evaluate(() => {
              document.querySelector('nav[aria-label="Server sections"]')?.scrollIntoView();
            });
          }
          await screenshot(page, 'server-stats', viewport, colorScheme);
          await assertAccessible(page, `the stats tab, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
