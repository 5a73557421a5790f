/**
 * Schedules tab journey: a bad cron expression shows the API's message at the field; a good
 * schedule with a command task is listed with its next run; Run now types its command into the
 * running server's console (as `schedule:<name>> …`);
 * the schedule is edited and deleted; the tab at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { seeInConsole } from './helpers/console.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';

const newForm = (page: Page) => page.getByRole('form', { name: 'Create schedule' });

async function openSchedules(page: Page, server: string) {
  await page.goto(`/servers/${server}/schedules`);
  await page.getByRole('heading', { level: 2, name: 'Schedules' }).waitFor();
  await newForm(page).getByLabel('Name', { exact: true }).waitFor();
}

describe('schedules', () => {
  let admin = '';
  const journeyOf = gameServerJourney(async (panel) => {
    admin = await register(panel, 'admin');
    await panel.api(
      'POST',
      '/api/servers/create',
      { name: 'survival', displayName: 'Survival', startCommand: fixture.startCommand },
      admin,
    );
  });
  const { fixture, tab } = journeyOf;

  it('makes, runs, edits and deletes a schedule', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    // The command task needs a running server.
    await page.goto('/servers/survival');
    // A status change is shown live, never in the history: the console must be connected first.
    await page.getByRole('status').getByText('Connected', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await seeInConsole(page, '[status] running');

    await page
      .getByRole('navigation', { name: 'Server sections' })
      .getByRole('link', { name: 'Schedules' })
      .click();
    await page.getByText('No schedules yet').waitFor();
    const form = newForm(page);
    const timezone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    assert.equal(await form.getByLabel('Timezone', { exact: true }).inputValue(), timezone);
    await assertAccessible(page, 'the empty schedules tab');

    await form.getByLabel('Name', { exact: true }).fill('greeting');
    await form.getByLabel('Cron expression', { exact: true }).fill('61 * * * *');
    await form.getByLabel('Task 1 command', { exact: true }).fill('say hello');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await form.getByRole('alert').filter({ hasText: /cron/i }).waitFor();
    assert.equal(
      await form.getByLabel('Cron expression', { exact: true }).getAttribute('aria-invalid'),
      'true',
    );
    await assertAccessible(page, 'a refused cron expression');

    await form.getByLabel('Cron expression', { exact: true }).fill('0 4 * * *');
    await form.getByRole('button', { name: 'Add task' }).click();
    await form.getByLabel('Task 2 action', { exact: true }).selectOption('restart');
    await form.getByRole('button', { name: 'Remove task 2' }).click();
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('status').getByText('Schedule greeting created').waitFor();
    const row = page.getByRole('listitem', { name: 'greeting' });
    await row.getByText('0 4 * * *').waitFor();
    assert.notEqual(await row.locator('dd time').first().getAttribute('datetime'), null);
    await row.getByText('Never').waitFor();
    assert.equal(await form.getByLabel('Name', { exact: true }).inputValue(), '', 'form emptied');

    await row.getByRole('button', { name: 'Run now: greeting' }).click();
    await row.getByText('Run started; its outcome shows under Last run').waitFor();
    await row.getByText('OK', { exact: true }).waitFor({ timeout: 15_000 });
    await page.getByRole('link', { name: 'Console', exact: true }).click();
    await seeInConsole(page, 'schedule:greeting> say hello');

    await page.getByRole('link', { name: 'Schedules', exact: true }).click();
    await row.getByRole('button', { name: 'Edit greeting' }).click();
    const edit = row.getByRole('form', { name: 'Save schedule' });
    assert.equal(
      await edit.getByLabel('Cron expression', { exact: true }).inputValue(),
      '0 4 * * *',
    );
    await edit.getByLabel('Cron expression', { exact: true }).fill('30 5 * * 1');
    await edit.getByLabel('Enabled', { exact: true }).uncheck();
    await assertAccessible(page, 'the edit form');
    await edit.getByRole('button', { name: 'Save schedule' }).click();
    await row.getByText('30 5 * * 1').waitFor();
    await row.getByText('Disabled', { exact: true }).waitFor();
    await row.getByText('None', { exact: true }).waitFor();

    await row.getByRole('button', { name: 'Delete greeting' }).click();
    const confirm = row.getByRole('group', { name: 'Delete greeting?' });
    await assertAccessible(page, 'the delete confirmation');
    await confirm.getByRole('button', { name: 'Delete schedule' }).click();
    await page.getByText('No schedules yet').waitFor();
    const left = await journeyOf.panel.api<{ data: unknown[] }>(
      'GET',
      '/api/servers/survival/schedules',
      undefined,
      admin,
    );
    assert.deepEqual(left.data, []);
    assertClean();
  });

  describe('screenshots', () => {
    it('has schedules to show', async () => {
      await journeyOf.panel.api(
        'POST',
        '/api/servers/survival/schedules',
        {
          name: 'nightly restart',
          cron: '0 4 * * *',
          timezone: 'Europe/Berlin',
          tasks: [
            { action: 'command', payload: 'say Restarting in 5 minutes', delaySeconds: 0 },
            { action: 'restart', delaySeconds: 300 },
          ],
        },
        admin,
      );
    });
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await openSchedules(page, 'survival');
          await page.getByRole('listitem', { name: 'nightly restart' }).waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          if (viewport === PHONE) {
            await page.evaluate(() => {
              document.querySelector('nav[aria-label="Server sections"]')?.scrollIntoView();
            });
          }
          await screenshot(page, 'server-schedules', viewport, colorScheme);
          await assertAccessible(page, `the schedules tab, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
