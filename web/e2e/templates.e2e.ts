/**
 * Templates journeys: the admin imports an egg (pasted, PTDL_v2, running the stand-in game
 * server with a {{MOTD}} variable and an install script), sees it listed with its warning,
 * creates a server from it with a variable value, watches it install in the console, starts it;
 * a broken egg shows the API's 400 message; the server's Settings show its variables and
 * allocations; a failed install offers Install and Mark installed; deleting a template in use
 * shows the API's 409 message; the page at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { seeInConsole } from './helpers/console.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';

function egg(startCommand: string, overrides: Record<string, unknown> = {}) {
  return {
    meta: { version: 'PTDL_v2' },
    uuid: `e2e-${Math.random().toString(36).slice(2)}`,
    name: 'Fixture game',
    author: 'e2e@example.com',
    description: 'The stand-in game server, with a message of the day',
    docker_images: { Node: 'example/node:20' },
    startup: `${startCommand} --motd {{MOTD}}`,
    config: {
      files: '{}',
      startup: JSON.stringify({ done: 'Done!' }),
      logs: '{}',
      stop: 'stop',
      // Not supported by the panel: the import says so in a warning.
      extends: 'parent-egg',
    },
    file_denylist: ['secret.txt'],
    scripts: {
      installation: {
        script: 'echo installing; echo ok > /mnt/server/installed.txt',
        container: 'debian',
        entrypoint: 'sh',
      },
    },
    variables: [
      {
        name: 'Message of the day',
        description: 'Shown to players as they join',
        env_variable: 'MOTD',
        default_value: 'hello',
        user_viewable: true,
        user_editable: true,
        rules: 'required|string|max:20',
      },
    ],
    ...overrides,
  };
}

const templateList = (page: Page) => page.getByRole('region', { name: 'Template list' });
const serverList = (page: Page) => page.getByRole('region', { name: 'Server list' });

async function pasteEgg(page: Page, text: string) {
  const form = page.getByRole('region', { name: 'Import an egg' });
  await form.getByLabel('Egg text').fill(text);
  await form.getByRole('button', { name: 'Import', exact: true }).click();
}

describe('templates', () => {
  let admin = '';
  const journeyOf = gameServerJourney(async (panel) => {
    admin = await register(panel, 'admin');
    await register(panel, 'player');
  });
  const { fixture, tab } = journeyOf;

  it('imports an egg, shows its warning, and lists it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Templates' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Templates' }).waitFor();
    await templateList(page).getByRole('list').waitFor();
    await assertAccessible(page, 'the templates page');

    await pasteEgg(page, JSON.stringify(egg(fixture.startCommand), null, 2));
    await page.getByRole('status').getByText('Imported Fixture game').waitFor();
    await page
      .getByRole('region', { name: 'Import warnings' })
      .getByText(/config\.extends/)
      .waitFor();
    const row = templateList(page).getByRole('listitem').filter({ hasText: 'Fixture game' });
    await row.getByText('PTDL_v2', { exact: true }).waitFor();
    await row.getByText('Yes', { exact: true }).waitFor();
    await row.getByText('The stand-in game server, with a message of the day').waitFor();
    assert.equal(await page.getByLabel('Egg text').inputValue(), '', 'the form is empty again');
    await assertAccessible(page, 'the templates page after an import');
    assertClean();
  });

  it("shows the API's message for a broken egg", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/templates');
    await pasteEgg(page, JSON.stringify({ meta: { version: 'PTDL_v9' }, name: 'Broken' }));
    await page
      .getByRole('alert')
      .getByText(/meta\.version/)
      .waitFor();
    // YAML that is no mapping: the egg parser's own words, naming the document.
    await pasteEgg(page, '- just\n- a list\n');
    await page.getByRole('alert').getByText(/^\$: /).waitFor();
    assert.equal(
      await templateList(page).getByRole('listitem').filter({ hasText: 'Broken' }).count(),
      0,
    );
    assertClean();
  });

  it('creates a server from the template, installs it, and starts it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    const form = page.getByRole('region', { name: 'Create server' });
    await form.getByLabel('Template', { exact: true }).selectOption({ label: 'Fixture game' });
    const motd = form.getByLabel('Message of the day');
    await motd.waitFor();
    assert.equal(await motd.inputValue(), 'hello', 'prefilled with the default');
    await form.getByText('Shown to players as they join').waitFor();
    assert.equal(await form.getByLabel('Start command').count(), 0, 'the template gives it');

    // A value the variable's rules refuse: the API's message names it.
    await form.getByLabel('Name', { exact: true }).fill('fixture');
    await motd.fill('a message of the day far too long');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText(/MOTD|Message of the day/)
      .waitFor();
    await assertAccessible(page, 'the create form with a template');

    await motd.fill('HelloE2E');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await page.getByRole('status').getByText('Created fixture').waitFor();
    const row = serverList(page).getByRole('listitem').filter({ hasText: 'fixture' });
    await row.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'fixture' }).waitFor();
    await seeInConsole(page, 'installing');
    await page.getByText('Stopped', { exact: true }).waitFor();
    assert.equal(await page.getByRole('region', { name: /installed|Install/ }).count(), 0);

    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByText('Running', { exact: true }).waitFor();
    await seeInConsole(page, 'Done! pid=');

    // The value given at creation is the variable's value now.
    await page
      .getByRole('navigation', { name: 'Server sections' })
      .getByRole('link', { name: 'Settings' })
      .click();
    const variables = page.getByRole('region', { name: 'Variables' });
    const field = variables.getByLabel('Message of the day');
    await field.waitFor();
    assert.equal(await field.inputValue(), 'HelloE2E');
    await field.fill('x'.repeat(30));
    await variables.getByRole('button', { name: 'Save variables' }).click();
    await variables
      .getByRole('alert')
      .getByText(/MOTD|Message of the day/)
      .waitFor();
    await field.fill('Welcome');
    await variables.getByRole('button', { name: 'Save variables' }).click();
    await variables.getByRole('status').getByText('Variables saved').waitFor();

    const allocations = page.getByRole('region', { name: 'Allocations' });
    await allocations.getByRole('button', { name: 'Add allocation' }).click();
    await allocations.getByLabel('Primary port').fill('27015');
    await allocations.getByRole('button', { name: 'Save allocations' }).click();
    await allocations.getByRole('status').getByText('Allocations saved').waitFor();
    await page.getByRole('region', { name: 'Reinstall' }).waitFor();
    await assertAccessible(page, 'the settings of a template server');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped', { exact: true }).waitFor();
    assertClean();
  });

  it('offers Install and Mark installed after a failed install', async () => {
    const { panel } = journeyOf;
    const imported = await panel.api<{ data: { id: string } }>(
      'POST',
      '/api/templates/import',
      egg(fixture.startCommand, {
        name: 'Failing install',
        scripts: {
          installation: { script: 'echo trying; exit 4', container: 'debian', entrypoint: 'sh' },
        },
      }),
      admin,
    );
    await panel.api(
      'POST',
      '/api/servers/create',
      { name: 'failing', template: imported.data.id },
      admin,
    );
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/failing');
    const install = page.getByRole('region', { name: 'Install failed (exit code 4)' });
    await install.waitFor();
    await seeInConsole(page, 'trying');
    // Starting is refused while not installed, in the API's words.
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /install/i })
      .first()
      .waitFor();
    await assertAccessible(page, 'a server whose install failed');
    await install.getByRole('button', { name: 'Mark installed' }).click();
    await install.waitFor({ state: 'detached' });
    assertClean();
  });

  it('refuses to delete a template in use, with the API message', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/templates');
    const row = templateList(page).getByRole('listitem').filter({ hasText: 'Fixture game' });
    await row.getByRole('button', { name: 'Delete Fixture game' }).click();
    const confirm = row.getByRole('group', { name: 'Delete Fixture game?' });
    await confirm.getByRole('button', { name: 'Delete template' }).click();
    await confirm
      .getByRole('alert')
      .getByText(/fixture/)
      .waitFor();
    await assertAccessible(page, 'a refused template deletion');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await confirm.count(), 0);
    assertClean();
  });

  it('shows a user the list read-only, without the nav link', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    assert.equal(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Templates' })
        .count(),
      0,
    );
    await page.goto('/templates');
    await templateList(page).getByText('Fixture game').waitFor();
    await page.getByText('Only an administrator can import and delete templates.').waitFor();
    assert.equal(await page.getByRole('region', { name: 'Import an egg' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Delete/ }).count(), 0);
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab(viewport, colorScheme);
        await signIn(page, 'admin');
        await page.goto('/templates');
        await templateList(page).getByText('Fixture game').waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
        await screenshot(page, 'templates', viewport, colorScheme);
        await assertAccessible(page, `the templates page, ${colorScheme}`);

        await page.goto('/servers/fixture/settings');
        await page
          .getByRole('region', { name: 'Variables' })
          .getByLabel('Message of the day')
          .waitFor();
        const settingsWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(settingsWidth <= viewport.width, `no sideways scrolling (${settingsWidth} px)`);
        await page.getByRole('region', { name: 'Variables' }).scrollIntoViewIfNeeded();
        await screenshot(page, 'server-variables', viewport, colorScheme);
        await assertAccessible(page, `the variables and allocations, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
