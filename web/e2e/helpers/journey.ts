/**
 * What every journey file shares: a panel started from the build, one browser, fresh tabs that
 * are closed at the end, signing in as a person would, and the accessibility check.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, PHONE, launchBrowser, openTab, type Tab, type Viewport } from './browser.js';
import { gameServerFixture, type GameServerFixture } from './fixture.js';
import { startPanel, type E2ePanel } from './panel.js';

/** The password of every account the journeys make. */
export const PASSWORD = 'correct horse battery';

export interface Journey {
  /** The panel, once `before` ran. */
  readonly panel: E2ePanel;
  /** A fresh browser profile with one page, closed when the file's journeys end. */
  readonly tab: (viewport?: Viewport, colorScheme?: 'light' | 'dark') => Promise<Tab>;
}

/**
 * Registers `before` and `after` hooks in the calling `describe`: a panel (with `env`, and its
 * SFTP server on with `sftp`), a browser, and `setUp` (accounts, servers) once both run;
 * everything closed afterwards.
 */
export function journey(
  options: {
    env?: () => Record<string, string>;
    sftp?: boolean;
    setUp?: (panel: E2ePanel) => Promise<void>;
    tearDown?: () => void;
  } = {},
): Journey {
  let panel: E2ePanel | undefined;
  let browser: Browser | undefined;
  const tabs: Tab[] = [];
  before(async () => {
    panel = await startPanel(options.env?.() ?? {}, { sftp: options.sftp ?? false });
    browser = await launchBrowser();
    await options.setUp?.(panel);
  });
  after(async () => {
    for (const { context } of tabs) await context.close().catch(() => undefined);
    await browser?.close();
    // Servers still running are stopped by the panel as it closes.
    await panel?.close();
    options.tearDown?.();
  });
  return {
    get panel() {
      assert.ok(panel, 'the panel is started in before()');
      return panel;
    },
    tab: async (viewport, colorScheme) => {
      assert.ok(panel && browser, 'the panel and browser are started in before()');
      const opened = await openTab(browser, panel.url, {
        ...(viewport ? { viewport } : {}),
        ...(colorScheme ? { colorScheme } : {}),
      });
      tabs.push(opened);
      return opened;
    },
  };
}

/** Signs in through the form and waits for the servers page. */
export async function signIn(page: Page, username: string, password = PASSWORD): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL('**/servers');
}

/** An account made through the API; the first one registered is the admin. Returns its token. */
export async function register(panel: E2ePanel, username: string): Promise<string> {
  const { access_token } = await panel.api<{ access_token: string }>('POST', '/api/auth/register', {
    username,
    password: PASSWORD,
  });
  return access_token;
}

const axeSource = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * Runs axe-core (WCAG 2.1 A and AA rules) on the page as it is now and fails on any serious or
 * critical violation, listing each with the elements it found. The script is evaluated through
 * the browser's debugging protocol, so the page's Content-Security-Policy stays as it is.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (...args: unknown[]) => Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => JSON.stringify(n.target)),
    }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.slice(0, 5).join(', ')}`),
    [],
    `${what}: no serious or critical accessibility violation`,
  );
}

/**
 * `journey()` for a panel whose sandbox may read the stand-in game server
 * (`fixture.startCommand`), its folder removed when the file's journeys end; `env` adds to the
 * panel's environment, `sftp` turns its SFTP server on.
 */
export function gameServerJourney(
  setUp: (panel: E2ePanel) => Promise<void>,
  env: Record<string, string> = {},
  options: { readonly sftp?: boolean } = {},
): Journey & { readonly fixture: GameServerFixture } {
  const fixture = gameServerFixture();
  const inner = journey({
    env: () => ({ SANDBOX_READ_ONLY_PATHS: fixture.folder, ...env }),
    sftp: options.sftp ?? false,
    setUp,
    tearDown: () => {
      fixture.remove();
    },
  });
  return {
    get panel() {
      return inner.panel;
    },
    tab: inner.tab,
    fixture,
  };
}

/**
 * `gameServerJourney()` whose set-up registers `owner` (the panel's first account, so its admin)
 * and makes `servers` (name → display name) as that account, each running the stand-in game
 * server. `token()` is the owner's, once `before` ran.
 */
export function ownerJourney(
  owner: string,
  servers: Readonly<Record<string, string>>,
  options: { readonly sftp?: boolean } = {},
): Journey & { readonly fixture: GameServerFixture; token(): string } {
  let token: string | undefined;
  const inner: Journey & { readonly fixture: GameServerFixture } = gameServerJourney(
    async (panel) => {
      token = await register(panel, owner);
      for (const [name, displayName] of Object.entries(servers)) {
        await panel.api(
          'POST',
          '/api/servers/create',
          { name, displayName, startCommand: inner.fixture.startCommand },
          token,
        );
      }
    },
    {},
    options,
  );
  return {
    get panel() {
      return inner.panel;
    },
    tab: inner.tab,
    fixture: inner.fixture,
    token: () => {
      assert.ok(token !== undefined, 'the owner is registered in before()');
      return token;
    },
  };
}

/** Fails when the page scrolls sideways at `viewport`'s width. */
export async function assertFits(page: Page, viewport: Viewport, what: string): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= viewport.width, `${what}: no sideways scrolling (${width} px)`);
}

/**
 * A `describe('screenshots')` of four tests, at DESKTOP and PHONE in light and dark: each opens
 * a fresh tab of that look, runs `shoot` (which takes the screenshots), and fails if the page
 * logged an error.
 */
export function screenshots(
  tab: Journey['tab'],
  shoot: (page: Page, viewport: Viewport, colorScheme: 'light' | 'dark') => Promise<void>,
): void {
  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await shoot(page, viewport, colorScheme);
          assertClean();
        });
      }
    }
  });
}
