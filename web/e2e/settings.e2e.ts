/**
 * Settings journey, on a panel with the defaults (REGISTRATION unset): the first account is the
 * admin; registration is then closed (the sign-up page says so) until the admin opens it on the
 * Settings page; a wrong value is said next to its field; saved defaults are what the API then
 * answers. A container registry is listed with credentials that no page or answer shows again,
 * pulls are limited to the list, and it is removed. The page at 1280×800 and 375×812, light and
 * dark.
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
/** A registry password typed into the page: never shown again. */
const REGISTRY_SECRET = 'registry-token-e2e-4d7a';
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

  it('lists a container registry, never shows its password again, and limits pulls to the list', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/settings');
    const section = page.getByRole('region', { name: 'Container registries' });
    await section.getByText(/No registry listed yet/).waitFor();
    const form = section.getByRole('form', { name: 'New registry' });
    const host = form.getByLabel('Registry host');

    // A host no image can name: the API's word, under its field.
    await host.fill('registry');
    await form.getByRole('button', { name: 'Add registry' }).click();
    await form.getByText(/an image cannot name registry as its registry/).waitFor();
    assert.equal(await host.getAttribute('aria-invalid'), 'true');

    await host.fill('ghcr.io');
    await form.getByLabel('Username').fill('robot');
    await form.getByLabel('Password or token').fill(REGISTRY_SECRET);
    await form.getByRole('button', { name: 'Add registry' }).click();
    await form.getByText('ghcr.io listed').waitFor();
    const row = section.getByRole('listitem', { name: 'ghcr.io' });
    await row.getByText('Stored (never shown)').waitFor();
    await row.getByText('robot').waitFor();
    assert.equal(await form.getByLabel('Password or token').inputValue(), '');
    assert.ok(!(await page.content()).includes(REGISTRY_SECRET));
    const token = await adminToken();
    const listed = await journeyOf.panel.api<{ data: unknown }>(
      'GET',
      '/api/admin/registries',
      undefined,
      token,
    );
    assert.ok(!JSON.stringify(listed).includes(REGISTRY_SECRET));
    await assertAccessible(page, 'the container registries');

    // Pulls limited to the list.
    await section
      .getByRole('checkbox', { name: /Pull images only from the registries listed here/ })
      .check();
    for (let attempt = 0; ; attempt += 1) {
      const now = await journeyOf.panel.api<{ data: { restricted: boolean } }>(
        'GET',
        '/api/admin/registries',
        undefined,
        token,
      );
      if (now.data.restricted) break;
      assert.ok(attempt < 100, 'the rule to be saved');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // A new username; the empty password keeps the stored one.
    await row.getByRole('button', { name: 'Change credentials of ghcr.io' }).click();
    const credentials = row.getByRole('form', { name: 'Credentials of ghcr.io' });
    await credentials.getByLabel('Username').fill('robot-two');
    await credentials.getByRole('button', { name: 'Save credentials' }).click();
    await row.getByText('robot-two').waitFor();
    await row.getByText('Stored (never shown)').waitFor();

    await row.getByRole('button', { name: 'Remove ghcr.io' }).click();
    await row.getByRole('button', { name: 'Remove registry' }).click();
    await section.getByText('No registry is listed: no image can be pulled.').waitFor();

    // Left listed, anonymously, for the screenshots.
    await section
      .getByRole('checkbox', { name: /Pull images only from the registries listed here/ })
      .uncheck();
    await host.fill('registry.example:5000');
    await form.getByRole('button', { name: 'Add registry' }).click();
    await section
      .getByRole('listitem', { name: 'registry.example:5000' })
      .getByText('Nobody: pulled anonymously')
      .waitFor();
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
          const registries = page.getByRole('region', { name: 'Container registries' });
          await registries.getByRole('listitem', { name: 'registry.example:5000' }).waitFor();
          await registries.evaluate((section) => {
            section.scrollIntoView({ block: 'start' });
          });
          await screenshot(page, 'settings-registries', viewport, colorScheme);
          assertClean();
        });
      }
    }
  });
});
