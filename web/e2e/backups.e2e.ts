/**
 * Backups tab journey: a backup made from the tab is listed done with its size and downloads as
 * a .tar.gz; a locked one cannot be deleted until unlocked; a restore is refused (the API's
 * message) while the server runs and, once it is stopped, brings a changed file's old content
 * back; the settings are saved and read back; the tab at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';

const createForm = (page: Page) => page.getByRole('form', { name: 'Create backup' });
const backupRow = (page: Page, name: string) =>
  page.getByRole('list', { name: 'Backups' }).getByRole('listitem', { name });

/** Waits for a power button of the server's header to be enabled (the status it needs). */
async function enabled(page: Page, name: string) {
  await page
    .getByRole('button', { name, exact: true })
    .and(page.locator(':enabled'))
    .waitFor({ timeout: 30_000 });
}

async function openBackups(page: Page, server: string) {
  await page.goto(`/servers/${server}/backups`);
  await page.getByRole('heading', { level: 2, name: 'Backups', exact: true }).waitFor();
}

describe('backups', () => {
  let admin = '';
  const journeyOf = gameServerJourney(async (panel) => {
    admin = await register(panel, 'admin');
    await panel.api(
      'POST',
      '/api/servers/create',
      { name: 'world', displayName: 'World', startCommand: fixture.startCommand },
      admin,
    );
  });
  const { fixture, tab } = journeyOf;
  const writeNotes = (content: string) =>
    journeyOf.panel.api(
      'PUT',
      '/api/servers/world/files/content?path=notes.txt',
      { content },
      admin,
    );
  const readNotes = async () =>
    (
      await journeyOf.panel.api<{ data: { content: string } }>(
        'GET',
        '/api/servers/world/files/content?path=notes.txt',
        undefined,
        admin,
      )
    ).data.content;

  it('makes a backup, downloads it, locks it against deletion, then deletes it', async () => {
    const { page, assertClean } = await tab();
    await writeNotes('first words\n');
    await signIn(page, 'admin');
    await page.goto('/servers/world');
    await page
      .getByRole('navigation', { name: 'Server sections' })
      .getByRole('link', { name: 'Backups' })
      .click();
    await page.waitForURL('**/servers/world/backups');
    await page.getByText('No backups yet').waitFor();
    await assertAccessible(page, 'the empty backups tab');

    await createForm(page).getByLabel('Name', { exact: true }).fill('before the update');
    await createForm(page).getByLabel('Leave out', { exact: true }).fill('logs/\n*.tmp');
    await createForm(page).getByRole('button', { name: 'Create backup' }).click();
    await page.getByText('Backup before the update started').waitFor();
    const row = backupRow(page, 'before the update');
    await row.getByText('Done', { exact: true }).waitFor({ timeout: 30_000 });
    assert.match((await row.getByText(/^\d+(\.\d+)? (B|KiB|MiB)$/).textContent()) ?? '', /B$/);
    await row.getByText('Server stopped: consistent').waitFor();
    assert.equal(await createForm(page).getByLabel('Name', { exact: true }).inputValue(), '');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('button', { name: 'Download before the update' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /\.tar\.gz$/);

    await row.getByRole('button', { name: 'Lock before the update' }).click();
    await row.getByText('Locked', { exact: true }).waitFor();
    const remove = row.getByRole('button', { name: 'Delete before the update' });
    assert.equal(await remove.isDisabled(), true, 'a locked backup cannot be deleted');
    await row.getByText(/unlock it to delete it/).waitFor();
    // The API refuses too, whatever a page shows.
    const listed = await journeyOf.panel.api<{ data: { id: string }[] }>(
      'GET',
      '/api/servers/world/backups',
      undefined,
      admin,
    );
    const id = listed.data[0]?.id ?? '';
    await assert.rejects(
      journeyOf.panel.api('DELETE', `/api/servers/world/backups/${id}`, undefined, admin),
      /409|locked/i,
    );
    await assertAccessible(page, 'a locked backup');

    await row.getByRole('button', { name: 'Unlock before the update' }).click();
    await row.getByText('Locked', { exact: true }).waitFor({ state: 'detached' });
    await remove.click();
    const confirm = row.getByRole('group', { name: 'Delete before the update?' });
    await assertAccessible(page, 'the delete confirmation');
    await confirm.getByRole('button', { name: 'Delete backup' }).click();
    await page.getByText('No backups yet').waitFor();
    assertClean();
  });

  it('restores a backup once the server is stopped, bringing the old content back', async () => {
    const { page, assertClean } = await tab();
    await writeNotes('the old content\n');
    await signIn(page, 'admin');
    await openBackups(page, 'world');
    await createForm(page).getByLabel('Name', { exact: true }).fill('known good');
    await createForm(page).getByRole('button', { name: 'Create backup' }).click();
    const row = backupRow(page, 'known good');
    await row.getByText('Done', { exact: true }).waitFor({ timeout: 30_000 });
    await writeNotes('the new content\n');

    // Running, the server's files cannot be replaced: the API's refusal is shown.
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await enabled(page, 'Stop');
    await row.getByRole('button', { name: 'Restore known good' }).click();
    const confirm = row.getByRole('group', { name: 'Restore known good?' });
    await confirm.getByText(/files are replaced/).waitFor();
    await confirm.getByText(/must be stopped first; stop it/).waitFor();
    await confirm.getByRole('button', { name: 'Restore backup' }).click();
    await confirm
      .getByRole('alert')
      .getByText(/Stop the server first/)
      .waitFor();
    await assertAccessible(page, 'a refused restore');
    await confirm.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await enabled(page, 'Start');
    await row.getByRole('button', { name: 'Restore known good' }).click();
    await confirm.getByRole('button', { name: 'Restore backup' }).click();
    await row.getByText('Restore started; its outcome shows under Last restore').waitFor();
    await row.getByText('Restored', { exact: true }).waitFor({ timeout: 30_000 });
    assert.equal(await readNotes(), 'the old content\n');
    assertClean();
  });

  it('saves the backup settings', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openBackups(page, 'world');
    const form = page.getByRole('form', { name: 'Backup settings' });
    await form.getByLabel('Keep the newest', { exact: true }).fill('abc');
    await form.getByRole('button', { name: 'Save backup settings' }).click();
    await form.getByText('A whole number, or empty for none').waitFor();
    assert.equal(
      await form.getByLabel('Keep the newest', { exact: true }).getAttribute('aria-invalid'),
      'true',
    );
    await form.getByLabel('Keep the newest', { exact: true }).fill('5');
    await form.getByLabel('Delete older than', { exact: true }).fill('30');
    await form.getByLabel('Commands before the backup', { exact: true }).fill('save-off\nsave-all');
    await form.getByLabel('Commands after the backup', { exact: true }).fill('save-on');
    await form.getByLabel('Saved line', { exact: true }).fill('Saved the game');
    await form.getByLabel('Wait for the saved line', { exact: true }).fill('20');
    await form.getByLabel('Most backups', { exact: true }).fill('10');
    await form.getByLabel('Most space', { exact: true }).fill('512');
    await form.getByRole('button', { name: 'Save backup settings' }).click();
    await form.getByText('Backup settings saved').waitFor();
    await assertAccessible(page, 'the saved backup settings');

    const saved = await journeyOf.panel.api<{ data: Record<string, unknown> }>(
      'GET',
      '/api/servers/world/backup-settings',
      undefined,
      admin,
    );
    assert.deepEqual(saved.data, {
      keepLast: 5,
      keepDays: 30,
      maxCount: 10,
      maxBytes: 512 * 1024 * 1024,
      beforeCommands: ['save-off', 'save-all'],
      afterCommands: ['save-on'],
      savedLine: 'Saved the game',
      waitSeconds: 20,
      // Who set the save commands: a backup types them in this name.
      commandsBy: 'admin',
    });
    await page.getByText(/typed in the name of whoever set them \(now admin\)/).waitFor();
    await page.reload();
    assert.equal(await form.getByLabel('Keep the newest', { exact: true }).inputValue(), '5');
    assert.equal(await form.getByLabel('Most space', { exact: true }).inputValue(), '512');
    assertClean();
  });

  it('offers Back up as a schedule task, whose run makes a backup', async () => {
    const { page, assertClean } = await tab();
    const count = async () =>
      (
        await journeyOf.panel.api<{ data: unknown[] }>(
          'GET',
          '/api/servers/world/backups',
          undefined,
          admin,
        )
      ).data.length;
    const before = await count();
    await signIn(page, 'admin');
    await page.goto('/servers/world/schedules');
    const form = page.getByRole('form', { name: 'Create schedule' });
    await form.getByLabel('Name', { exact: true }).fill('nightly backup');
    await form.getByLabel('Cron expression', { exact: true }).fill('0 4 * * *');
    await form.getByLabel('Task 1 action', { exact: true }).selectOption('backup');
    assert.equal(await form.getByLabel('Task 1 command', { exact: true }).count(), 0);
    await form.getByRole('button', { name: 'Create schedule' }).click();
    const row = page.getByRole('listitem', { name: 'nightly backup' });
    await row.getByText('backup', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Run now: nightly backup' }).click();
    await row.getByText('OK', { exact: true }).waitFor({ timeout: 30_000 });
    assert.equal(await count(), before + 1);
    assertClean();
  });

  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await openBackups(page, 'world');
          await backupRow(page, 'known good').waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          if (viewport === PHONE) {
            const tabs = await page.evaluate(() => {
              const nav = document.querySelector('nav[aria-label="Server sections"]');
              nav?.scrollIntoView();
              return { scroll: nav?.scrollWidth ?? 0, client: nav?.clientWidth ?? 0 };
            });
            assert.ok(tabs.scroll <= tabs.client, `every tab in sight (${JSON.stringify(tabs)})`);
          }
          await screenshot(page, 'server-backups', viewport, colorScheme);
          await assertAccessible(page, `the backups tab, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
