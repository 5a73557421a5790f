// The web UI's budgets (issue 13), in Debian's Chromium against the benchmark's panel:
//  - the JavaScript of the first page (sign-in, then the server list): every script the browser
//    fetched, measured as gzip (level 6) of the file as built;
//  - the console keeping up with a server printing 20,000 lines/s for 10 s: the main thread's
//    long tasks (PerformanceObserver "longtask") while the page shows the flood, and whether
//    the page showed the printer's end line.
/* global window, performance, PerformanceObserver -- in the functions evaluated in the page */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { REPO } from '../lib/panel.mjs';
import { waitForQuiet } from '../lib/proc.mjs';
import { log, round, sleep } from '../lib/util.mjs';
import { CONSOLE_SERVER, PASSWORD } from './seed.mjs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const WEB_ROOT = path.join(REPO, 'dist', 'web');

/** gzip bytes of every script under /assets/ the page fetched, by file. */
function scriptSizes(urls) {
  const sizes = {};
  for (const url of urls) {
    const { pathname } = new URL(url);
    const file = path.join(WEB_ROOT, pathname);
    if (!file.startsWith(WEB_ROOT + path.sep) || !existsSync(file)) continue;
    const bytes = readFileSync(file);
    sizes[pathname] = { bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 6 }).length };
  }
  return sizes;
}

export async function uiScenario({ panel, seeded, quick }) {
  if (!existsSync(CHROMIUM)) {
    log(`ui: no Chromium at ${CHROMIUM}; skipped`);
    return { skipped: `no Chromium at ${CHROMIUM}` };
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  try {
    const base = `http://127.0.0.1:${panel.port}`;
    // 1. The first page's JavaScript, from a cold cache.
    await waitForQuiet();
    const context = await browser.newContext({
      baseURL: base,
      viewport: { width: 1280, height: 800 },
    });
    const page = await context.newPage();
    const scripts = new Set();
    page.on('response', (response) => {
      if (response.request().resourceType() === 'script') scripts.add(response.url());
    });
    await page.goto('/sign-in');
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/servers');
    await page
      .getByRole('region', { name: 'Server list' })
      .getByText(CONSOLE_SERVER)
      .first()
      .waitFor();
    const sizes = scriptSizes(scripts);
    const firstPage = {
      files: sizes,
      bytes: Object.values(sizes).reduce((sum, s) => sum + s.bytes, 0),
      gzipBytes: Object.values(sizes).reduce((sum, s) => sum + s.gzipBytes, 0),
    };
    log(
      `ui: first page ${Object.keys(sizes).length} scripts, ${round(firstPage.gzipBytes / 1024, 1)} KiB gzip`,
    );

    // 2. The console under a flood.
    const api = panel.api.as(seeded.adminToken);
    const status = await api.request('GET', `/api/servers/${CONSOLE_SERVER}/stats`);
    if (status.body?.data?.status !== 'running') {
      await api.call('POST', `/api/servers/${CONSOLE_SERVER}/start`);
    }
    await page.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          window.__longTasks.push({ start: entry.startTime, ms: entry.duration });
        }
      }).observe({ type: 'longtask', buffered: true });
    });
    await page.goto(`/servers/${CONSOLE_SERVER}`);
    await page
      .getByRole('status')
      .getByText('Connected', { exact: true })
      .waitFor({ timeout: 30_000 });
    await sleep(1_000);
    await waitForQuiet();
    const seconds = quick ? 3 : 10;
    const rate = 20_000;
    const id = 900_000 + (Date.now() % 100_000); // the printer takes numeric run ids
    const floodStart = await page.evaluate(() => performance.now());
    await api.call('POST', `/api/servers/${CONSOLE_SERVER}/command`, {
      command: `run ${id} ${rate} ${seconds * 1000}`,
    });
    // The printer's end line reaches the terminal once the page has taken in the whole flood.
    const endLine = page
      .getByRole('region', { name: 'Console', exact: true })
      .locator('.xterm-rows > div')
      .filter({ hasText: `E ${id} ` });
    let shownEnd = true;
    try {
      await endLine.first().waitFor({ timeout: (seconds + 20) * 1000 });
    } catch {
      shownEnd = false;
      if (process.env.UI_BENCH_SCREENSHOT) {
        await page.screenshot({ path: process.env.UI_BENCH_SCREENSHOT });
      }
    }
    const floodEnd = await page.evaluate(() => performance.now());
    const tasks = await page.evaluate(
      ([from, to]) => window.__longTasks.filter((t) => t.start >= from && t.start <= to),
      [floodStart, floodEnd],
    );
    const durations = tasks.map((t) => t.ms).sort((a, b) => a - b);
    const consoleFlood = {
      rate,
      seconds,
      shownEndLine: shownEnd,
      pageSeconds: round((floodEnd - floodStart) / 1000, 1),
      longTasks: durations.length,
      longTaskMaxMs: round(durations.at(-1) ?? 0, 0),
      longTaskTotalMs: round(
        durations.reduce((sum, ms) => sum + ms, 0),
        0,
      ),
    };
    log(
      `ui: console at ${rate} lines/s for ${seconds} s: ${durations.length} long tasks, longest ${consoleFlood.longTaskMaxMs} ms, end line ${shownEnd ? 'shown' : 'NOT shown'}`,
    );
    await context.close();
    return { firstPage, consoleFlood };
  } finally {
    await browser.close();
  }
}
