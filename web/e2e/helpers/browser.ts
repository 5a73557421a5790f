/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser). Every page records
 * what would mean the UI is broken without failing on its own: console errors, uncaught
 * exceptions and Content-Security-Policy violations; `assertClean` fails the test on any.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type Locator,
  type Page,
} from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * `args` add to Chromium's command line (`--host-resolver-rules=…`, to reach a loopback panel by a
 * name that is not loopback).
 */
export function launchBrowser(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
      ...args,
    ],
  });
}

export interface Viewport {
  readonly width: number;
  readonly height: number;
}

export const DESKTOP: Viewport = { width: 1280, height: 800 };
export const PHONE: Viewport = { width: 375, height: 812 };

export interface Tab {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Fails when the page logged an error, threw, or broke its Content-Security-Policy. */
  readonly assertClean: () => void;
}

/** A fresh browser profile (its own localStorage) with one page. */
export async function openTab(
  browser: Browser,
  baseURL: string,
  options: {
    viewport?: Viewport;
    colorScheme?: 'light' | 'dark';
    /** For a panel serving a certificate of a throwaway CA the browser does not know. */
    ignoreHTTPSErrors?: boolean;
  } = {},
): Promise<Tab> {
  const context = await browser.newContext({
    baseURL,
    ignoreHTTPSErrors: options.ignoreHTTPSErrors ?? false,
    viewport: options.viewport ?? DESKTOP,
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // A refused API call shows in the console as a failed resource load: that is the API
    // answering, which the journeys check on the page itself.
    if (message.type() === 'error' && !message.text().includes('Failed to load resource')) {
      problems.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return {
    context,
    page,
    assertClean: () => {
      assert.deepEqual(problems, [], 'the page stayed free of errors and CSP violations');
    },
  };
}

/** Writes docs/screenshots/<name>-<width>x<height>-<scheme>.png. */
export async function screenshot(
  page: Page,
  name: string,
  viewport: Viewport,
  colorScheme: 'light' | 'dark',
): Promise<string> {
  const dir = path.join('docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${viewport.width}x${viewport.height}-${colorScheme}.png`);
  await page.screenshot({ path: file, fullPage: false, animations: 'disabled' });
  return file;
}

/**
 * Scrolls `locator`'s element to the top of the page, for a screenshot that starts with it
 * (Playwright's own scrolling stops as soon as the element is in view).
 */
export async function scrollToTop(locator: Locator): Promise<void> {
  await locator.evaluate((element) => {
    element.scrollIntoView();
  });
}

/** The session the page keeps in localStorage, or null. */
export function storedSession(page: Page): Promise<string | null> {
  return page.evaluate(() => window.localStorage.getItem('game-panel.session'));
}
