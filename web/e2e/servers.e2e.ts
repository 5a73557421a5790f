/**
 * Servers page journeys: the admin's empty list, creating a server and seeing it listed (on the
 * node placement chose), a refused creation showing the API's message, reload and pasted links,
 * another user's view, the limits of a new server prefilled from the panel's defaults, and the
 * same page on a 375 px phone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

async function createServer(page: Page, name: string, displayName: string) {
  const form = page.getByRole('region', { name: 'Create server' });
  await form.getByLabel('Name', { exact: true }).fill(name);
  await form.getByLabel('Display name').fill(displayName);
  await form.getByLabel('Start command').fill('/bin/cat');
  await form.getByLabel('Stop command').fill('stop');
  await form.getByRole('button', { name: 'Create server', exact: true }).click();
}

const serverList = (page: Page) => page.getByRole('region', { name: 'Server list' });

describe('servers', () => {
  let admin = '';
  const servers = journey({
    // The first account is the admin; the second an ordinary user.
    setUp: async (panel) => {
      admin = await register(panel, 'admin');
      await register(panel, 'player');
    },
  });
  const { tab } = servers;

  it('shows the admin an empty list, then the server they create', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await serverList(page).getByText('No servers yet').waitFor();
    await assertAccessible(page, 'the empty servers page');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await screenshot(page, 'servers-empty', DESKTOP, colorScheme);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    await createServer(page, 'survival', 'Survival');
    await page.getByRole('status').getByText('Created survival').waitFor();
    const item = serverList(page).getByRole('listitem');
    await item.getByText('Survival', { exact: true }).waitFor();
    await item.getByText('survival', { exact: true }).waitFor();
    await item.getByText('Stopped', { exact: true }).waitFor();
    // Where it runs: the panel's own machine, the only node, chosen automatically.
    await item.getByText('Node: local', { exact: true }).waitFor();
    const node = page
      .getByRole('region', { name: 'Create server' })
      .getByRole('combobox', { name: 'Node' });
    assert.equal(await node.inputValue(), '');
    await node.getByRole('option', { name: /^local: / }).waitFor({ state: 'attached' });
    assert.equal(await page.getByText('No servers yet').count(), 0);
    // The form is empty again, ready for the next one.
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), '');
    assertClean();
  });

  it("shows the API's message when a creation is refused", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await serverList(page).getByText('Survival', { exact: true }).waitFor();
    await createServer(page, 'survival', 'Again');
    await page
      .getByRole('alert')
      .getByText(/already exists|taken|exists/i)
      .waitFor();
    await createServer(page, 'bad name!', 'Bad');
    await page
      .getByRole('alert')
      .getByText(/^body\/name: /)
      .waitFor();
    assert.equal(await serverList(page).getByRole('listitem').count(), 1);
    assertClean();
  });

  it('keeps the page on reload and opens a pasted link', async () => {
    const { page, context, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.reload();
    assert.match(page.url(), /\/servers$/);
    await serverList(page).getByText('Survival', { exact: true }).waitFor();
    const pasted = await context.newPage();
    await pasted.goto('/servers');
    await serverList(pasted).getByText('Survival', { exact: true }).waitFor();
    assert.match(pasted.url(), /\/servers$/);
    await pasted.close();
    await page.goto('/no/such/page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await assertAccessible(page, 'the page-not-found page');
    assertClean();
  });

  it('shows a user only their servers, without the create form', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await serverList(page).getByText('No servers yet').waitFor();
    await page.getByText('An administrator can give you access to a server.').waitFor();
    assert.equal(await page.getByRole('region', { name: 'Create server' }).count(), 0);
    const header = page.getByRole('banner');
    await header.getByText('player', { exact: true }).waitFor();
    await header.getByText('user', { exact: true }).waitFor();
    assertClean();
  });

  it('works on a 375 px phone: list, create, no sideways scrolling', async () => {
    const { page, assertClean } = await tab(PHONE);
    await signIn(page, 'admin');
    await serverList(page).getByText('Survival', { exact: true }).waitFor();
    await createServer(page, 'creative-world-with-a-long-name', 'Creative world with a long name');
    await serverList(page).getByText('creative-world-with-a-long-name', { exact: true }).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `no sideways scrolling (${width} px)`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL('**/sign-in');
    assertClean();
  });

  it('keeps statuses live, shows CPU and memory of a running server, and deletes with confirmation', async () => {
    const { panel } = servers;
    await panel.api(
      'POST',
      '/api/servers/create',
      { name: 'doomed', displayName: 'Doomed', startCommand: '/bin/cat' },
      admin,
    );
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    const row = serverList(page).getByRole('listitem').filter({ hasText: 'Doomed' });
    await row.getByText('Stopped', { exact: true }).waitFor();
    assert.equal(await row.getByText('CPU').count(), 0);

    // Started elsewhere (here, a script): the list follows without a reload.
    await panel.api('POST', '/api/servers/doomed/start', undefined, admin);
    await row.getByText('Running', { exact: true }).waitFor();
    await row.getByText('CPU').waitFor();
    await row.getByText('Memory').waitFor();
    await assertAccessible(page, 'the servers page with a running server');

    await row.getByRole('button', { name: 'Delete doomed' }).click();
    const confirm = row.getByRole('group', { name: 'Delete doomed?' });
    await confirm.getByText('its folder with every file in it is removed').waitFor();
    await assertAccessible(page, 'the delete confirmation');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await confirm.count(), 0);
    await row.getByRole('button', { name: 'Delete doomed' }).click();
    await row.getByRole('button', { name: 'Delete server' }).click();
    await row.waitFor({ state: 'detached' });
    const left = await panel.api<{ data: { name: string }[] }>(
      'GET',
      '/api/servers',
      undefined,
      admin,
    );
    assert.ok(!left.data.some((server) => server.name === 'doomed'), 'the API no longer lists it');
    assertClean();
  });

  it('offers no Delete to a user', async () => {
    await servers.panel.api('PUT', '/api/users/player/servers', { servers: ['survival'] }, admin);
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await serverList(page).getByText('Survival', { exact: true }).waitFor();
    assert.equal(await page.getByRole('button', { name: /^Delete/ }).count(), 0);
    assertClean();
  });

  it("prefills a new server's limits from the panel's defaults and creates it with them", async () => {
    const { panel } = servers;
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    // The admin changes the defaults on the Settings page.
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByLabel('Process limit').fill('300');
    await page.getByLabel('Memory', { exact: true }).fill('1024');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();

    await page.getByRole('link', { name: 'Servers' }).click();
    const form = page.getByRole('region', { name: 'Create server' });
    const limits = form.getByRole('group', { name: 'Limits' });
    const field = (label: string) => limits.getByLabel(label, { exact: true });
    await field('Process limit').waitFor();
    assert.equal(await field('Process limit').inputValue(), '300');
    assert.equal(await field('Memory limit').inputValue(), '1024');
    assert.equal(await field('CPU limit').inputValue(), '', 'no CPU default: empty');
    assert.equal(await field('Disk limit').inputValue(), '');
    await limits.getByText("the panel's default is 300").waitFor();
    await assertAccessible(page, 'the create form with its limits');

    // The process limit may not be emptied; the refusal is said next to it and nothing is sent.
    await form.getByLabel('Name', { exact: true }).fill('limited');
    await form.getByLabel('Start command').fill('/bin/cat');
    await field('Process limit').fill('');
    await field('CPU limit').fill('50');
    await field('Disk limit').fill('2');
    await limits.getByRole('combobox', { name: 'Disk limit unit' }).selectOption('GiB');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await limits.getByText('Enter a number: every server has a process limit').waitFor();
    assert.equal(await field('Process limit').getAttribute('aria-invalid'), 'true');
    // The API's range is said next to the field too, in MiB.
    await field('Process limit').fill('300');
    await field('Memory limit').fill('4');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await limits.getByText(/must be >= 8388608 \(8 MiB\)/).waitFor();
    assert.equal(await field('Memory limit').getAttribute('aria-invalid'), 'true');
    await field('Memory limit').fill('1024');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await page.getByRole('status').getByText('Created limited').waitFor();
    // The form starts again from the defaults.
    assert.equal(await field('CPU limit').inputValue(), '');

    const config = await panel.api<{
      data: {
        limits: {
          memoryBytes: number | null;
          cpuPercent: number | null;
          pids: number | null;
          diskBytes: number | null;
        };
      };
    }>('GET', '/api/servers/limited/config', undefined, admin);
    assert.deepEqual(config.data.limits, {
      memoryBytes: 1024 * 1024 * 1024,
      cpuPercent: 50,
      pids: 300,
      diskBytes: 2 * 1024 * 1024 * 1024,
    });
    // The server's own Settings tab shows them in the same fields.
    await page.goto('/servers/limited/settings');
    assert.equal(await page.getByLabel('Process limit', { exact: true }).inputValue(), '300');
    assert.equal(await page.getByLabel('Memory limit', { exact: true }).inputValue(), '1024');
    assert.equal(await page.getByLabel('CPU limit', { exact: true }).inputValue(), '50');
    assert.equal(await page.getByLabel('Disk limit', { exact: true }).inputValue(), '2');

    // Back to the defaults and one server, for the pictures below.
    await panel.api('DELETE', '/api/servers/limited', undefined, admin);
    await panel.api(
      'PUT',
      '/api/admin/settings',
      { serverDefaults: { pids: 512, memoryBytes: null, cpuPercent: null, diskBytes: null } },
      admin,
    );
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab(viewport, colorScheme);
        await signIn(page, 'admin');
        await serverList(page).getByText('Survival', { exact: true }).waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
        await screenshot(page, 'servers', viewport, colorScheme);
        await assertAccessible(page, `the servers page, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
