/**
 * Bulk actions in the Files tab: entries chosen by their checkboxes are moved into a folder in
 * one go (a missing folder refused with the API's message), Select all chooses every entry, a
 * delete of entries one of which went meanwhile is refused with nothing deleted, then the
 * chosen entries are deleted after a confirmation; the selection at 1280×800 and 375×812, light
 * and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

const list = (page: Page) => page.getByRole('list', { name: /^Content of/ });
const names = (page: Page) => list(page).getByRole('link').allTextContents();
const selection = (page: Page) => page.getByRole('group', { name: 'Selection' });

describe('files in bulk', () => {
  let admin = '';
  const journeyOf = journey({
    setUp: async (started) => {
      admin = await register(started, 'admin');
      await started.api(
        'POST',
        '/api/servers/create',
        { name: 'world', startCommand: '/bin/cat' },
        admin,
      );
    },
  });
  const { tab } = journeyOf;
  const put = (path: string, content: string) =>
    journeyOf.panel.api('PUT', `/api/servers/world/files/content?path=${path}`, { content }, admin);
  const folder = (name: string) =>
    journeyOf.panel.api(
      'POST',
      '/api/servers/world/files/create',
      { type: 'folder', name, path: '' },
      admin,
    );

  it('moves chosen entries into a folder, then deletes chosen entries', async () => {
    await folder('archive');
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await put(name, `${name}\n`);
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/world/files');
    await list(page).waitFor();
    await selection(page).getByText('None selected').waitFor();
    assert.equal(
      await selection(page).getByRole('button', { name: 'Delete selected' }).isDisabled(),
      true,
    );

    await page.getByLabel('Select a.txt', { exact: true }).check();
    await page.getByLabel('Select b.txt', { exact: true }).check();
    await selection(page).getByText('2 entries selected').waitFor();
    await assertAccessible(page, 'two entries chosen');

    await selection(page).getByRole('button', { name: 'Move selected…' }).click();
    const move = page.getByRole('form', { name: 'Move selected' });
    await move.getByLabel('Move 2 entries into the folder').fill('nowhere');
    await move.getByRole('button', { name: 'Move', exact: true }).click();
    await page.getByRole('alert').waitFor();
    assert.deepEqual(await names(page), ['archive/', 'a.txt', 'b.txt', 'c.txt']);
    await move.getByLabel('Move 2 entries into the folder').fill('archive');
    await move.getByRole('button', { name: 'Move', exact: true }).click();
    await page.getByText('Moved 2 entries to /archive').waitFor();
    await list(page)
      .getByRole('link', { name: 'a.txt', exact: true })
      .waitFor({ state: 'detached' });
    assert.deepEqual(await names(page), ['archive/', 'c.txt']);
    await selection(page).getByText('None selected').waitFor();

    await selection(page).getByLabel('Select all', { exact: true }).check();
    await selection(page).getByText('2 entries selected').waitFor();
    assert.equal(await page.getByLabel('Select archive', { exact: true }).isChecked(), true);
    assert.equal(await page.getByLabel('Select c.txt', { exact: true }).isChecked(), true);
    await page.getByLabel('Select archive', { exact: true }).uncheck();
    await selection(page).getByText('1 entry selected').waitFor();
    assert.equal(
      await selection(page)
        .getByLabel('Select all', { exact: true })
        .evaluate((box) => (box as HTMLInputElement).indeterminate),
      true,
    );

    // c.txt goes behind the page's back: the bulk delete is refused, and nothing is deleted.
    await page.getByLabel('Select archive', { exact: true }).check();
    await journeyOf.panel.api('DELETE', '/api/servers/world/files?path=c.txt', undefined, admin);
    await selection(page).getByRole('button', { name: 'Delete selected' }).click();
    const confirm = page.getByRole('group', { name: 'Delete 2 entries?' });
    await confirm.getByText(/archive, c\.txt/).waitFor();
    await assertAccessible(page, 'the bulk delete confirmation');
    await confirm.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('alert').waitFor();
    const left = await journeyOf.panel.api<{ data: { name: string }[] }>(
      'GET',
      '/api/servers/world/files?path=archive',
      undefined,
      admin,
    );
    assert.deepEqual(left.data.map((entry) => entry.name).sort(), ['a.txt', 'b.txt']);

    await page.reload();
    await list(page).waitFor();
    await page.getByLabel('Select archive', { exact: true }).check();
    await selection(page).getByRole('button', { name: 'Delete selected' }).click();
    await page
      .getByRole('group', { name: 'Delete 1 entry?' })
      .getByRole('button', { name: 'Delete selected' })
      .click();
    await page.getByText('Deleted 1 entry').waitFor();
    await page.getByText('This folder is empty').waitFor();
    assertClean();
  });

  describe('screenshots', () => {
    it('has entries to show', async () => {
      await folder('plugins');
      for (const name of ['server.properties', 'whitelist.json', 'latest.log'])
        await put(name, `${name}\n`);
    });
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await page.goto('/servers/world/files');
          await page.getByLabel('Select latest.log', { exact: true }).check();
          await page.getByLabel('Select whitelist.json', { exact: true }).check();
          await selection(page).getByRole('button', { name: 'Delete selected' }).click();
          await page.getByRole('group', { name: 'Delete 2 entries?' }).waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          if (viewport === PHONE) {
            await page.evaluate(() => {
              document.querySelector('[aria-label="Selection"]')?.scrollIntoView();
            });
          }
          await screenshot(page, 'server-files-bulk', viewport, colorScheme);
          await assertAccessible(page, `the bulk selection, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
