/**
 * Audit log journey: an API key made on the profile and a file written with it show up on the
 * admin's audit page, by whom and through which key; the filters (via, action prefix, actor,
 * outcome) narrow the list and stay in the URL; a user holding `settings` on a server sees its
 * Activity on the Settings tab, and no audit page. The pages at 1280×800 and 375×812, light and
 * dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import {
  assertAccessible,
  gameServerJourney,
  PASSWORD,
  register,
  signIn,
} from './helpers/journey.js';

const entries = (page: Page) => page.getByRole('list', { name: 'Audit log' }).getByRole('listitem');
const filters = (page: Page) => page.getByRole('form', { name: 'Filters' });

/** The actions of the entries shown, top to bottom, read at once. */
function actions(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const list = document.querySelector('ul[aria-label="Audit log"]');
    const items = list === null ? [] : Array.from(list.querySelectorAll(':scope > li'));
    return items.map((item) => item.querySelector('code')?.textContent ?? '');
  });
}

async function apply(page: Page) {
  await filters(page).getByRole('button', { name: 'Apply filters' }).click();
}

describe('audit log', () => {
  const journeyOf = gameServerJourney(async (panel) => {
    const admin = await register(panel, 'admin');
    await register(panel, 'alice');
    await panel.api(
      'POST',
      '/api/servers/create',
      { name: 'world', displayName: 'World', startCommand: journeyOf.fixture.startCommand },
      admin,
    );
    await panel.api(
      'PUT',
      '/api/servers/world/users/alice',
      { permissions: ['settings', 'files.read'] },
      admin,
    );
  });
  const { tab } = journeyOf;

  it('shows what was done, by whom and how, and the filters narrow it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/profile');
    const form = page.getByRole('form', { name: 'New API key' });
    await form.getByLabel('Key name').fill('notes script');
    await form.getByLabel('Your password').fill(PASSWORD);
    await form.getByRole('button', { name: 'Create API key' }).click();
    const token =
      (await page
        .getByRole('group', { name: 'Token of the key notes script' })
        .locator('code')
        .textContent()) ?? '';
    const written = await fetch(
      `${journeyOf.panel.url}/api/servers/world/files/content?path=notes.txt`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'hello\n' }),
      },
    );
    assert.equal(written.status, 200);
    // A sign-in refused: a failed entry.
    const refused = await fetch(`${journeyOf.panel.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: `${PASSWORD} but wrong` }),
    });
    assert.equal(refused.status, 401);

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    await entries(page).first().waitFor();
    const all = await actions(page);
    assert.ok(all.includes('api-key.create'), `the key's creation is listed: ${all.join(', ')}`);
    assert.ok(all.includes('file.write'), `the file written is listed: ${all.join(', ')}`);
    assert.ok(all.includes('auth.login'), `the sign-ins are listed: ${all.join(', ')}`);
    await assertAccessible(page, 'the audit log');

    await filters(page).getByLabel('Via').selectOption('api-key');
    await apply(page);
    await page.waitForURL(/via=api-key/);
    assert.equal(
      await page.evaluate(() => document.activeElement?.textContent),
      'Apply filters',
      'applying keeps the focus on the button',
    );
    await page.getByText(/matching the filters/).waitFor();
    assert.deepEqual(await actions(page), ['file.write']);
    await entries(page).first().getByText('admin with the API key notes script').waitFor();
    await entries(page).first().getByText('world', { exact: true }).waitFor();

    await filters(page).getByLabel('Via').selectOption('');
    await filters(page).getByLabel('Action').fill('api-key.');
    await apply(page);
    await page.waitForURL(/action=api-key\./);
    await expectOnly(page, 'api-key.create');

    await filters(page).getByLabel('Action').fill('');
    await filters(page).getByLabel('Outcome').selectOption('failed');
    await apply(page);
    await expectOnly(page, 'auth.login');
    await entries(page)
      .first()
      .getByText(/^Failed/)
      .waitFor();

    // The filters live in the URL: a reload shows the same entries.
    await page.reload();
    assert.equal(await filters(page).getByLabel('Outcome').inputValue(), 'failed');
    await expectOnly(page, 'auth.login');

    await filters(page).getByRole('button', { name: 'Clear filters' }).click();
    await filters(page).getByLabel('Actor').fill('nobody');
    await apply(page);
    await page.getByText('No entries match').waitFor();
    await assertAccessible(page, 'the audit log without matches');
    assertClean();
  });

  it("shows a server's activity to a user holding its settings", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    assert.equal(await page.getByRole('link', { name: 'Audit log' }).count(), 0);
    await page.goto('/servers/world/settings');
    const activity = page.getByRole('region', { name: 'Activity' });
    const items = activity.getByRole('list', { name: 'Server activity' }).getByRole('listitem');
    await items.first().waitFor();
    const shown = await items.locator('code').allTextContents();
    assert.ok(shown.includes('file.write'), `the file written is listed: ${shown.join(', ')}`);
    // Key names and addresses are the admins' alone (docs/api.md, "Audit log").
    await activity.getByText('admin with an API key').first().waitFor();
    assert.equal(await activity.getByText('notes script').count(), 0, 'no key name shown');
    await activity.evaluate((section) => {
      section.scrollIntoView();
    });
    await assertAccessible(page, "the server's activity");
    assertClean();
  });

  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          const fits = async (what: string) => {
            const width = await page.evaluate(() => document.documentElement.scrollWidth);
            assert.ok(width <= viewport.width, `${what}: no sideways scrolling (${width} px)`);
          };
          await signIn(page, 'admin');
          await page.goto('/audit');
          await entries(page).first().waitFor();
          await fits('the audit log');
          await screenshot(page, 'audit', viewport, colorScheme);
          await page.getByRole('list', { name: 'Audit log' }).evaluate((list) => {
            list.scrollIntoView();
          });
          await screenshot(page, 'audit-entries', viewport, colorScheme);
          await assertAccessible(page, `the audit log, ${colorScheme}`);
          await page.goto('/servers/world/settings');
          const activity = page.getByRole('region', { name: 'Activity' });
          await activity.getByRole('listitem').first().waitFor();
          await activity.evaluate((section) => {
            section.scrollIntoView();
          });
          await fits("the server's activity");
          await screenshot(page, 'server-activity', viewport, colorScheme);
          assertClean();
        });
      }
    }
  });
});

/** Every entry shown is `action` (there is at least one). */
async function expectOnly(page: Page, action: string) {
  await page.waitForFunction(
    (wanted) => {
      const list = document.querySelector('ul[aria-label="Audit log"]');
      const items = list === null ? [] : Array.from(list.querySelectorAll(':scope > li'));
      const codes = items.map((item) => item.querySelector('code')?.textContent);
      return codes.length > 0 && codes.every((code) => code === wanted);
    },
    action,
    { timeout: 10_000 },
  );
}
