/**
 * Archives in the Files tab: a file compressed into `<name>.zip` beside it, the 409 of a second
 * compression shown, the zip moved into a folder and extracted there, and a file that only
 * looks like an archive refused with the API's message.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

const list = (page: Page) => page.getByRole('list', { name: /^Content of/ });
const row = (page: Page, name: string) =>
  list(page)
    .getByRole('listitem')
    .filter({ has: page.getByRole('link', { name, exact: true }) });
const names = (page: Page) => list(page).getByRole('link').allTextContents();

async function create(page: Page, kind: 'file' | 'folder', name: string) {
  const label = kind === 'file' ? 'File' : 'Folder';
  await page.getByRole('button', { name: `New ${kind}`, exact: true }).click();
  await page.getByLabel(`${label} name`).fill(name);
  await page.getByRole('button', { name: `Create ${kind}`, exact: true }).click();
  await row(page, kind === 'folder' ? `${name}/` : name).waitFor();
}

describe('archives', () => {
  const { tab } = journey({
    setUp: async (panel) => {
      const admin = await register(panel, 'admin');
      await panel.api(
        'POST',
        '/api/servers/create',
        { name: 'world', startCommand: '/bin/cat' },
        admin,
      );
    },
  });

  it('compresses a file, extracts the zip into a folder, refuses a fake archive', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/world/files');
    await page.getByText('This folder is empty').waitFor();
    await create(page, 'folder', 'unpacked');
    await create(page, 'file', 'notes.txt');

    await row(page, 'notes.txt').getByRole('button', { name: 'Compress notes.txt' }).click();
    await row(page, 'notes.txt.zip').waitFor();
    await row(page, 'notes.txt').getByText('Compressed into notes.txt.zip').waitFor();
    await row(page, 'notes.txt').getByRole('button', { name: 'Compress notes.txt' }).click();
    await row(page, 'notes.txt')
      .getByRole('alert')
      .getByText(/already exists/)
      .waitFor();
    await assertAccessible(page, 'a refused compression');

    await row(page, 'notes.txt.zip').getByRole('button', { name: 'Move', exact: true }).click();
    await page.getByLabel('Move notes.txt.zip to').fill('unpacked');
    await page.locator('form').getByRole('button', { name: 'Move', exact: true }).click();
    await row(page, 'unpacked/').getByRole('link').click();
    await row(page, 'notes.txt.zip').waitFor();
    await row(page, 'notes.txt.zip').getByRole('button', { name: 'Extract notes.txt.zip' }).click();
    await row(page, 'notes.txt').waitFor();
    assert.deepEqual(await names(page), ['notes.txt', 'notes.txt.zip']);

    await create(page, 'file', 'broken.tar.gz');
    await row(page, 'broken.tar.gz').getByRole('button', { name: 'Extract broken.tar.gz' }).click();
    await row(page, 'broken.tar.gz').getByRole('alert').waitFor();
    assert.ok(
      ((await row(page, 'broken.tar.gz').getByRole('alert').textContent()) ?? '').length > 0,
    );
    await assertAccessible(page, 'a refused extraction');
    assertClean();
  });
});
