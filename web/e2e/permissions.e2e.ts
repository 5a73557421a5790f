/**
 * Per-server permissions in the UI: someone with only files.read sees the files read-only and no
 * Start, Console, Settings or People, and reads why at a tab's URL; an owner holding `users`
 * invites a friend on the People tab (never beyond their own permissions), changes and removes
 * them, sees the server's owner marked and without controls, and gets the same answer inviting a
 * name that is no account; the People tab at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

const OWNER = ['console.read', 'console.write', 'power', 'files.read', 'files.write', 'users'];

const sections = (page: Page) => page.getByRole('navigation', { name: 'Server sections' });

async function openPeople(page: Page) {
  await page.goto('/servers/world/people');
  await page.getByRole('heading', { level: 2, name: 'People' }).waitFor();
  await page.getByRole('list', { name: 'People' }).waitFor();
}

describe('permissions', () => {
  let admin = '';
  const journeyOf = journey({
    setUp: async (panel) => {
      admin = await register(panel, 'admin');
      for (const name of ['boss', 'owner', 'viewer', 'friend', 'helper']) {
        await register(panel, name);
      }
      await panel.api(
        'POST',
        '/api/servers/create',
        { name: 'world', displayName: 'World', startCommand: '/bin/cat', owner: 'boss' },
        admin,
      );
      await panel.api(
        'PUT',
        '/api/servers/world/files/content?path=motd.txt',
        { content: 'Welcome to the world\n' },
        admin,
      );
      const grant = (username: string, permissions: string[]) =>
        panel.api('PUT', `/api/servers/world/users/${username}`, { permissions }, admin);
      await grant('owner', OWNER);
      await grant('viewer', ['files.read']);
      await grant('helper', ['files.read', 'settings']);
    },
  });
  const { tab } = journeyOf;

  it('shows someone with only files.read the files, read-only, and nothing else', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'viewer');
    await page.goto('/servers/world');
    await page.getByRole('heading', { level: 1, name: 'World' }).waitFor();
    await page.getByText("You don't have permission to start or stop this server.").waitFor();
    assert.equal(await page.getByRole('button', { name: 'Start', exact: true }).count(), 0);
    await page.getByText(/You don't have permission to read the console/).waitFor();
    assert.deepEqual(await sections(page).getByRole('link').allTextContents(), ['Stats', 'Files']);
    await assertAccessible(page, 'a server without console.read');

    await sections(page).getByRole('link', { name: 'Files' }).click();
    await page.getByRole('link', { name: 'motd.txt' }).waitFor();
    await page.getByText(/Read-only: you don't have permission to change files/).waitFor();
    for (const name of ['Upload', 'New file', 'New folder', 'Delete', 'Rename']) {
      assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, name);
    }
    assert.equal(await page.getByLabel('Upload', { exact: true }).count(), 0);
    assert.equal(await page.getByRole('checkbox').count(), 0, 'nothing to select');
    await page.getByRole('button', { name: 'Download', exact: true }).waitFor();
    await assertAccessible(page, 'the read-only files');

    await page.getByRole('link', { name: 'motd.txt' }).click();
    await page.getByText(/Read-only: you don't have permission to change files/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Save', exact: true }).count(), 0);

    for (const [tabPath, what] of [
      ['settings', 'change the settings'],
      ['backups', 'see the backups'],
      ['schedules', 'see the schedules'],
      ['people', 'see or invite its people'],
    ] as const) {
      await page.goto(`/servers/world/${tabPath}`);
      await page.getByText(`You don't have permission to ${what} on this server.`).waitFor();
    }
    await assertAccessible(page, 'a tab without its permission');
    assertClean();
  });

  it('lets an owner with users invite a friend, change and remove them', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'owner');
    await page.goto('/servers/world');
    await page.getByRole('button', { name: 'Start', exact: true }).waitFor();
    await sections(page).getByRole('link', { name: 'People' }).click();
    await page.getByRole('list', { name: 'People' }).waitFor();
    assert.equal(await sections(page).getByRole('link', { name: 'Settings' }).count(), 0);

    // Owner lacks settings: cannot grant it, nor change the helper who holds it.
    assert.equal(await page.getByRole('checkbox', { name: 'Invite: settings' }).isDisabled(), true);
    assert.equal(await page.getByRole('checkbox', { name: 'Invite: power' }).isDisabled(), false);
    const helper = page.getByRole('listitem', { name: 'helper' });
    await helper.getByText(/helper holds permissions you don't/).waitFor();
    assert.equal(
      await helper.getByRole('checkbox', { name: 'helper: files.read' }).isDisabled(),
      true,
    );
    assert.equal(await helper.getByRole('button', { name: 'Remove helper' }).count(), 0);

    // The server's owner: marked, holding everything, with nothing to change or remove.
    const boss = page.getByRole('listitem', { name: 'boss' });
    await boss.getByText('boss owns this server and holds every permission on it').waitFor();
    await boss.getByText('owner', { exact: true }).waitFor();
    assert.equal(await boss.getByRole('checkbox').count(), 0);
    assert.equal(await boss.getByRole('button').count(), 0);

    // A name that is no account gets the same answer as any other, and nobody is added.
    const invite = page.getByRole('form', { name: 'Invite someone' });
    await invite.getByLabel('Username').fill('nobody-here');
    await invite.getByRole('button', { name: 'Invite' }).click();
    await invite.getByText(/Invitation for nobody-here done/).waitFor();
    assert.equal(await page.getByRole('listitem', { name: 'nobody-here' }).count(), 0);

    await invite.getByLabel('Username').fill('friend');
    assert.equal(
      await invite.getByRole('checkbox', { name: 'Invite: console.read' }).isChecked(),
      true,
    );
    await invite.getByRole('checkbox', { name: 'Invite: files.write' }).check();
    await invite.getByRole('button', { name: 'Invite' }).click();
    await invite.getByText(/Invitation for friend done/).waitFor();
    const friend = page.getByRole('listitem', { name: 'friend' });
    assert.equal(
      await friend.getByRole('checkbox', { name: 'friend: files.write' }).isChecked(),
      true,
    );
    assert.equal(await friend.getByRole('checkbox', { name: 'friend: power' }).isChecked(), false);
    await assertAccessible(page, 'the People tab');

    await friend.getByRole('checkbox', { name: 'friend: power' }).check();
    await friend.getByRole('checkbox', { name: 'friend: files.write' }).uncheck();
    await friend.getByRole('button', { name: 'Save friend' }).click();
    await page
      .getByRole('listitem', { name: 'friend' })
      .getByText('Permissions of friend saved')
      .waitFor();
    const listed = await journeyOf.panel.api<{
      data: { username: string; permissions: string[] }[];
    }>('GET', '/api/servers/world/users', undefined, admin);
    assert.deepEqual(listed.data.find((person) => person.username === 'friend')?.permissions, [
      'console.read',
      'power',
      'files.read',
    ]);

    await friend.getByRole('button', { name: 'Remove friend' }).click();
    const confirm = friend.getByRole('group', { name: 'Remove friend?' });
    await assertAccessible(page, 'the remove confirmation');
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await friend.waitFor({ state: 'detached' });
    assertClean();
  });

  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'owner');
          await openPeople(page);
          await page.getByRole('listitem', { name: 'viewer' }).waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          if (viewport === PHONE) {
            await page.evaluate(() => {
              document.querySelector('nav[aria-label="Server sections"]')?.scrollIntoView();
            });
          }
          await screenshot(page, 'server-people', viewport, colorScheme);
          await assertAccessible(page, `the People tab, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
