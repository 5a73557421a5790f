/**
 * Settings tab journeys: the admin changes a server's display name and stop timeout, saves, and
 * sees them after a reload; a start command the API refuses (a pipe needs a shell) and an
 * out-of-range timeout show the API's messages next to their fields and are not saved; leaving
 * with unsaved changes asks first; a user with access but not admin sees the commands read-only
 * and can still change the timeout; the admin deletes a server after typing its name; the tab
 * at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';

const field = (page: Page, label: string) => page.getByLabel(label, { exact: true });
const save = (page: Page) => page.getByRole('button', { name: 'Save', exact: true });

async function openSettings(page: Page, server: string) {
  await page.goto(`/servers/${server}/settings`);
  await page.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
  await field(page, 'Display name').waitFor();
}

describe('server settings', () => {
  let admin = '';
  const journeyOf = gameServerJourney(async (panel) => {
    admin = await register(panel, 'admin');
    for (const [name, displayName] of [
      ['survival', 'Survival'],
      ['doomed', 'Doomed'],
    ] as const) {
      await panel.api(
        'POST',
        '/api/servers/create',
        { name, displayName, startCommand: fixture.startCommand, stopCommand: 'stop' },
        admin,
      );
    }
  });
  const { fixture } = journeyOf;
  const { tab } = journeyOf;

  it('saves the changed fields and shows them after a reload', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openSettings(page, 'survival');
    assert.equal(await field(page, 'Stop command').inputValue(), 'stop');
    assert.equal(await save(page).isEnabled(), false, 'nothing to save yet');
    await assertAccessible(page, 'the settings tab');

    await field(page, 'Display name').fill('Survival world');
    await field(page, 'Stop timeout (seconds)').fill('25');
    await page.getByLabel('Restart after a crash').check();
    await save(page).click();
    await page.getByRole('status').getByText('Saved', { exact: true }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Survival world' }).waitFor();
    assert.equal(await save(page).isEnabled(), false, 'saved: nothing left to save');

    await page.reload();
    await field(page, 'Display name').waitFor();
    await page.getByRole('heading', { level: 1, name: 'Survival world' }).waitFor();
    assert.equal(await field(page, 'Display name').inputValue(), 'Survival world');
    assert.equal(await field(page, 'Stop timeout (seconds)').inputValue(), '25');
    assert.equal(await page.getByLabel('Restart after a crash').isChecked(), true);
    const config = await journeyOf.panel.api<{ data: Record<string, unknown> }>(
      'GET',
      '/api/servers/survival/config',
      undefined,
      admin,
    );
    assert.equal(config.data.displayName, 'Survival world');
    assert.equal(config.data.stopTimeoutSeconds, 25);
    assert.equal(config.data.autoRestart, true);
    assertClean();
  });

  it("shows the API's refusals next to their fields and saves nothing", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openSettings(page, 'survival');
    const start = field(page, 'Start command');
    await start.fill(`${fixture.startCommand} | tee log`);
    await field(page, 'Stop timeout (seconds)').fill('99999');
    await save(page).click();
    // Both refusals come from the API: the timeout by its schema first (nothing else checked).
    await page.getByText('must be <= 3600', { exact: true }).waitFor();
    assert.equal(await field(page, 'Stop timeout (seconds)').getAttribute('aria-invalid'), 'true');
    await page.getByRole('alert').getByText('Not saved: see the fields marked above').waitFor();
    await assertAccessible(page, 'the settings tab with refused fields');

    await field(page, 'Stop timeout (seconds)').fill('30');
    await save(page).click();
    await page.getByText(/"\|" needs a shell, and commands run without one/).waitFor();
    assert.equal(await start.getAttribute('aria-invalid'), 'true');

    await page.reload();
    await field(page, 'Display name').waitFor();
    assert.equal(await start.inputValue(), fixture.startCommand);
    assert.equal(await field(page, 'Stop timeout (seconds)').inputValue(), '25');
    assertClean();
  });

  it('asks before leaving with unsaved changes', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openSettings(page, 'survival');
    await field(page, 'Display name').fill('Half-typed');
    const console = page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', {
      name: 'Console',
    });
    await console.click();
    const dialog = page.getByRole('dialog', { name: 'Leave without saving?' });
    await dialog.waitFor();
    await assertAccessible(page, 'the leave-without-saving dialog');
    await dialog.getByRole('button', { name: 'Stay', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.match(page.url(), /\/servers\/survival\/settings$/);
    assert.equal(await field(page, 'Display name').inputValue(), 'Half-typed');

    await console.click();
    await dialog.getByRole('button', { name: 'Leave', exact: true }).click();
    await page.waitForURL('**/servers/survival');
    await page.getByRole('region', { name: 'Console', exact: true }).waitFor();

    // Nothing typed: no question.
    await page
      .getByRole('navigation', { name: 'Server sections' })
      .getByRole('link', { name: 'Settings', exact: true })
      .click();
    await field(page, 'Display name').waitFor();
    assert.equal(await field(page, 'Display name').inputValue(), 'Survival world');
    await page.getByRole('link', { name: 'Stats', exact: true }).click();
    await page.waitForURL('**/servers/survival/stats');
    assertClean();
  });

  it('shows the commands read-only to a user who is not an admin', async () => {
    await register(journeyOf.panel, 'player');
    await journeyOf.panel.api('PUT', '/api/users/player/servers', { servers: ['survival'] }, admin);
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await openSettings(page, 'survival');
    for (const label of ['Start command', 'Stop command']) {
      assert.equal(await field(page, label).isEditable(), false, `${label} is read-only`);
    }
    assert.equal(await field(page, 'Display name').isEditable(), true);
    await page
      .getByText(
        'Only an admin can change the start and stop commands, the resource limits, the runtime and the image; they are shown read-only.',
      )
      .waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Delete server' }).count(), 0);
    await assertAccessible(page, 'the settings tab, read-only commands');

    await field(page, 'Stop timeout (seconds)').fill('40');
    await save(page).click();
    await page.getByRole('status').getByText('Saved', { exact: true }).waitFor();
    await page.reload();
    await field(page, 'Display name').waitFor();
    assert.equal(await field(page, 'Stop timeout (seconds)').inputValue(), '40');
    assertClean();
  });

  it('deletes a server once its name is typed', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openSettings(page, 'doomed');
    const zone = page.getByRole('region', { name: 'Delete server' });
    await zone.getByRole('button', { name: 'Delete server', exact: true }).click();
    const confirm = zone.getByLabel('Type doomed to confirm');
    await confirm.fill('Doomed');
    const remove = zone.getByRole('button', { name: 'Delete server', exact: true });
    assert.equal(await remove.isEnabled(), false, 'the name must be typed exactly');
    await assertAccessible(page, 'the delete confirmation');
    await zone.getByRole('button', { name: 'Cancel', exact: true }).click();
    assert.equal(await confirm.count(), 0);

    await zone.getByRole('button', { name: 'Delete server', exact: true }).click();
    await confirm.fill('doomed');
    await remove.click();
    await page.waitForURL('**/servers');
    await page.getByRole('link', { name: 'Survival world', exact: true }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Doomed', exact: true }).count(), 0);
    const servers = await journeyOf.panel.api<{ data: { name: string }[] }>(
      'GET',
      '/api/servers',
      undefined,
      admin,
    );
    assert.deepEqual(
      servers.data.map((server) => server.name),
      ['survival'],
    );
    assertClean();
  });

  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await openSettings(page, 'survival');
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          // On a phone, the tab itself from its top; a desktop shows the whole page.
          if (viewport === PHONE) {
            await page.evaluate(() => {
              document.querySelector('nav[aria-label="Server sections"]')?.scrollIntoView();
            });
          }
          await screenshot(page, 'server-settings', viewport, colorScheme);
          await assertAccessible(page, `the settings tab, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
