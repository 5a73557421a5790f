/**
 * Settings journey, on a panel with the defaults (REGISTRATION unset): the first account is the
 * admin; registration is then closed (the sign-up page says so) until the admin opens it on the
 * Settings page; a wrong value is said next to its field; saved defaults are what the API then
 * answers. The page at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, PASSWORD, register, signIn } from './helpers/journey.js';

/** The admin's token, through the API's sign-in. */
const adminToken = async (): Promise<string> => {
  const response = await fetch(`${journeyPanel().url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
};
let journeyPanel: () => { url: string } = () => {
  throw new Error('no panel yet');
};

describe('settings', () => {
  const journeyOf = journey({
    env: () => ({ REGISTRATION: '', REGISTRATION_MAX_PER_ADDRESS: '' }),
    setUp: async (panel) => {
      await register(panel, 'admin');
    },
  });
  const { tab } = journeyOf;
  journeyPanel = () => journeyOf.panel;

  it('closes registration after the admin, and opens it from the Settings page', async () => {
    const visitor = await tab();
    await visitor.page.goto('/register');
    await visitor.page
      .getByText(/closed/i)
      .first()
      .waitFor();

    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const processes = page.getByLabel('Process limit');
    assert.equal(await processes.inputValue(), '512');
    assert.equal(await page.getByLabel('Backups per server').inputValue(), '10');
    await assertAccessible(page, 'the settings page');

    // A wrong value is said next to its field, and nothing is sent.
    await processes.fill('0');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Must be between 1 and 4194304 processes').waitFor();
    assert.equal(await processes.getAttribute('aria-invalid'), 'true');

    await processes.fill('256');
    await page.getByLabel('Memory', { exact: true }).fill('1024');
    await page.getByRole('checkbox', { name: /Anyone may create an account/ }).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();

    // Opened: an account can be made now; a user is refused the settings.
    const panel = journeyOf.panel;
    const second = await register(panel, 'second');
    await assert.rejects(panel.api('GET', '/api/admin/settings', undefined, second), /403/);

    const saved = await panel.api<{
      data: { serverDefaults: { pids: number; memoryBytes: number } };
    }>('GET', '/api/admin/settings', undefined, await adminToken());
    assert.deepEqual(
      { pids: saved.data.serverDefaults.pids, memoryBytes: saved.data.serverDefaults.memoryBytes },
      { pids: 256, memoryBytes: 1024 * 1024 * 1024 },
    );
    const visitorAgain = await tab();
    await visitorAgain.page.goto('/register');
    await visitorAgain.page.getByLabel('Username').waitFor();
    assertClean();
  });

  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await page.goto('/settings');
          await page.getByLabel('Process limit').waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          await screenshot(page, 'settings', viewport, colorScheme);
          assertClean();
        });
      }
    }
  });
});
