/**
 * Template friction journeys (issue 27): the create form marks the port required for a template
 * whose start-up uses one and fills in the next free port of SERVER_PORT_RANGE, refusing an
 * emptied port next to the field; the file editor says which keys of minetest.conf the template
 * rewrites at every start and from which variables, to the admin and to a user who may only
 * read files; Minetest's console tab says the game reads no console input instead of offering a
 * command box. At 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

const createForm = (page: Page) => page.getByRole('region', { name: 'Create server' });
const rewrites = (page: Page) =>
  page.getByRole('region', { name: 'The template rewrites these keys before every start' });

describe('template friction', () => {
  let admin = '';
  const friction = journey({
    env: () => ({ SERVER_PORT_RANGE: '42000-42010' }),
    setUp: async (panel) => {
      admin = await register(panel, 'admin');
      await register(panel, 'reader');
    },
  });
  const { tab } = friction;

  it('requires a port for Minetest, offers the next free one, and says so next to the field', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    const form = createForm(page);
    const port = form.getByLabel('Port', { exact: true });
    // Without a template the port is optional, and the next free one is offered.
    await form.getByText(/Optional: the primary port.*42000 is the next free one/).waitFor();
    assert.equal(await port.inputValue(), '');
    assert.equal(await port.getAttribute('aria-required'), 'false');

    await form.getByLabel('Template', { exact: true }).selectOption({ label: 'Minetest (Debian)' });
    await form.getByLabel('Server name').waitFor();
    await form.getByText(/^Required: the template's start-up or config files use/).waitFor();
    assert.equal(await port.getAttribute('aria-required'), 'true');
    assert.equal(await port.inputValue(), '42000', 'the next free port, filled in');
    await assertAccessible(page, 'the create form with a template that needs a port');

    // Emptied, the form says why next to the field and sends nothing.
    await form.getByLabel('Name', { exact: true }).fill('mt');
    await port.fill('');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await form
      .getByText("Enter a port: the template's start-up uses one (42000 is free)")
      .waitFor();
    assert.equal(await port.getAttribute('aria-invalid'), 'true');
    await form.getByRole('button', { name: 'Use 42000' }).click();
    assert.equal(await port.inputValue(), '42000');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await page.getByRole('status').getByText('Created mt').waitFor();

    // The next one is offered for the next server.
    await form.getByLabel('Template', { exact: true }).selectOption({ label: 'Minetest (Debian)' });
    await form.getByLabel('Server name').waitFor();
    await form.getByText(/42001 is the next free one/).waitFor();
    assert.equal(await port.inputValue(), '42001');
    assertClean();
  });

  it('shows above minetest.conf the keys the template rewrites, and from which variables', async () => {
    const { panel } = friction;
    // The install made minetest.conf.
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const config = await panel.api<{ data: { install: { state: string } } }>(
        'GET',
        '/api/servers/mt/config',
        undefined,
        admin,
      );
      if (config.data.install.state === 'installed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/mt/files/minetest.conf?edit');
    const note = rewrites(page);
    await note.waitFor();
    await note.getByText('A change to them here is undone at the next start:').waitFor();
    const items = note.getByRole('listitem');
    await items
      .filter({ hasText: 'lines starting with server_name' })
      .getByText(/Server name \(SERVER_NAME\)/)
      .waitFor();
    await items
      .filter({ hasText: 'lines starting with port' })
      .getByText(/the server's primary port \(SERVER_PORT\)/)
      .waitFor();
    await items
      .filter({ hasText: 'max_users' })
      .getByText(/Maximum players \(MAX_USERS\)/)
      .waitFor();
    await note.getByRole('link', { name: 'Settings' }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).waitFor();
    await assertAccessible(page, 'the editor with the rewritten keys');
    assertClean();
  });

  it('shows the note to a user who may only read files, without the Settings link', async () => {
    const { panel } = friction;
    await panel.api('PUT', '/api/servers/mt/users/reader', { permissions: ['files.read'] }, admin);
    const { page, assertClean } = await tab();
    await signIn(page, 'reader');
    await page.goto('/servers/mt/files/minetest.conf?edit');
    const note = rewrites(page);
    await note.getByText(/Server name \(SERVER_NAME\)/).waitFor();
    await note
      .getByText('Someone with the settings permission can change the variables instead.')
      .waitFor();
    assert.equal(await note.getByRole('link', { name: 'Settings' }).count(), 0);
    // Read-only for them: the note is all they may do about it.
    assert.equal(await page.getByRole('button', { name: 'Save', exact: true }).count(), 0);
    assertClean();
  });

  it("says on Minetest's console tab that the game reads no console input", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/mt');
    await page
      .getByRole('note')
      .getByText(/This game reads no console input \(its template, Minetest \(Debian\), says so\)/)
      .waitFor();
    assert.equal(await page.getByLabel('Command', { exact: true }).count(), 0);
    await assertAccessible(page, 'the console of a game that reads no input');
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab(viewport, colorScheme);
        await signIn(page, 'admin');
        await page.goto('/servers/mt/files/minetest.conf?edit');
        await rewrites(page)
          .getByText(/Server name/)
          .waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
        await screenshot(page, 'editor-rewritten-keys', viewport, colorScheme);
        await assertAccessible(page, `the editor's note, ${colorScheme}`);

        await page.goto('/servers');
        const form = createForm(page);
        await form
          .getByLabel('Template', { exact: true })
          .selectOption({ label: 'Minetest (Debian)' });
        await form.getByText(/^Required: the template's start-up/).waitFor();
        const formWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(formWidth <= viewport.width, `no sideways scrolling (${formWidth} px)`);
        await form.getByLabel('Port', { exact: true }).scrollIntoViewIfNeeded();
        await screenshot(page, 'create-form-port', viewport, colorScheme);
        await assertAccessible(page, `the create form's port, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
