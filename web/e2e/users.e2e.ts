/**
 * Users page journeys: the admin filters the list, gives a user servers and sees the API's
 * answer, is refused demoting or deleting the last admin (the API's message), confirms or cancels
 * a deletion; the journey: an admin's changes seen in the other user's session (servers
 * given and taken away, banned, made support, who then reads the list without controls); a user
 * opening /users by its address gets the API's refusal; the page at 1280×800 and 375×812, light
 * and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

const userList = (page: Page) => page.getByRole('region', { name: 'User list' });
const row = (page: Page, username: string) =>
  userList(page).getByRole('article', { name: username, exact: true });

/** Opens the Users page from the main navigation. */
async function openUsers(page: Page) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await page.waitForURL('**/users');
  await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
}

/** Opens a user's editor from their row. */
async function edit(page: Page, username: string) {
  const item = row(page, username);
  await item.getByRole('button', { name: 'Edit', exact: true }).click();
  await item.getByLabel('Role', { exact: true }).waitFor();
  return item;
}

describe('users', () => {
  const { tab } = journey({
    setUp: async (panel) => {
      const admin = await register(panel, 'admin');
      await register(panel, 'player');
      await register(panel, 'helper');
      await register(panel, 'guest');
      await register(panel, 'leaver');
      await panel.api('PUT', '/api/users/helper/role', { role: 'support' }, admin);
      for (const name of ['survival', 'creative']) {
        await panel.api('POST', '/api/servers/create', { name, startCommand: '/bin/cat' }, admin);
      }
      await panel.api('PUT', '/api/users/helper/servers', { servers: ['creative'] }, admin);
    },
  });

  it('lets the admin filter the list and give a user servers', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openUsers(page);
    await page.getByText('5 users', { exact: true }).waitFor();
    await row(page, 'helper').getByText('support', { exact: true }).waitFor();
    await row(page, 'helper').getByText('creative', { exact: true }).waitFor();
    await row(page, 'admin').getByText('Every server (admin)').waitFor();
    await assertAccessible(page, 'the users list');

    const filter = page.getByLabel('Filter', { exact: true });
    await filter.fill('creative');
    await page.getByText('1 of 5 users', { exact: true }).waitFor();
    assert.equal(await userList(page).getByRole('article').count(), 1);
    await filter.fill('nobody-like-this');
    await userList(page).getByText('No user matches “nobody-like-this”').waitFor();
    await filter.fill('');
    await page.getByText('5 users', { exact: true }).waitFor();

    const player = await edit(page, 'player');
    const save = player.getByRole('button', { name: 'Save servers', exact: true });
    // Nothing changed yet: nothing to save.
    assert.equal(await save.isEnabled(), false);
    const servers = player.getByRole('group', { name: 'Servers' });
    assert.equal(await servers.getByRole('checkbox').count(), 2);
    await assertAccessible(page, 'editing a user');
    await servers.getByLabel('survival', { exact: true }).check();
    await save.click();
    await player.getByRole('status').getByText('Servers set: survival').waitFor();
    await player.locator('dd').getByText('survival', { exact: true }).waitFor();
    // The API holds it: a reload shows the same.
    await page.reload();
    await row(page, 'player').locator('dd').getByText('survival', { exact: true }).waitFor();
    assertClean();
  });

  it("shows the API's message when the last admin would be demoted or deleted", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openUsers(page);
    const admin = await edit(page, 'admin');
    await admin.getByText('you', { exact: true }).waitFor();
    await admin.getByLabel('Role', { exact: true }).selectOption('user');
    await admin.getByText('This is your own account: you will lose the admin pages.').waitFor();
    await admin.getByRole('button', { name: 'Save role', exact: true }).click();
    await admin
      .getByRole('alert')
      .getByText('The last admin cannot be demoted or deleted')
      .waitFor();
    await assertAccessible(page, 'a refused role change');

    const deleteUser = admin.getByRole('button', { name: 'Delete user', exact: true });
    await deleteUser.click();
    const confirm = admin.getByRole('group', { name: 'Delete admin?' });
    await confirm.waitFor();
    // The confirmation takes the focus on its safe answer, and gives it back when cancelled.
    assert.equal(
      await confirm
        .getByRole('button', { name: 'Cancel', exact: true })
        .evaluate((button) => button === document.activeElement),
      true,
    );
    await assertAccessible(page, 'the delete confirmation');
    await page.keyboard.press('Enter');
    await confirm.waitFor({ state: 'detached' });
    assert.equal(await deleteUser.evaluate((button) => button === document.activeElement), true);

    await deleteUser.click();
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await confirm
      .getByRole('alert')
      .getByText('The last admin cannot be demoted or deleted')
      .waitFor();
    await assertAccessible(page, 'a refused deletion');
    // Still an admin, still listed.
    await page.reload();
    await row(page, 'admin').getByText('admin', { exact: true }).first().waitFor();
    await page.getByText('5 users', { exact: true }).waitFor();
    assertClean();
  });

  it('deletes a user after the confirmation', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openUsers(page);
    const leaver = await edit(page, 'leaver');
    await leaver.getByRole('button', { name: 'Delete user', exact: true }).click();
    await leaver
      .getByRole('group', { name: 'Delete leaver?' })
      .getByRole('button', { name: 'Delete', exact: true })
      .click();
    await page.getByRole('status').getByText('User deleted: leaver').waitFor();
    await row(page, 'leaver').waitFor({ state: 'detached' });
    await page.getByText('4 users', { exact: true }).waitFor();
    assertClean();
  });

  it("shows the admin's changes in the other user's session", async () => {
    const admin = await tab();
    const guest = await tab();
    await signIn(admin.page, 'admin');
    await signIn(guest.page, 'guest');
    await guest.page.getByText('No servers yet').waitFor();
    // A plain user has no Users page in the navigation.
    const guestNav = guest.page.getByRole('navigation', { name: 'Main' });
    await guestNav.getByRole('link', { name: 'Profile' }).waitFor();
    assert.equal(await guestNav.getByRole('link', { name: 'Users' }).count(), 0);

    // Given a server: the guest's list shows it once fetched again (here a reload).
    await openUsers(admin.page);
    const editor = await edit(admin.page, 'guest');
    const creative = editor.getByRole('group', { name: 'Servers' }).getByLabel('creative');
    await creative.check();
    await editor.getByRole('button', { name: 'Save servers', exact: true }).click();
    await editor.getByRole('status').getByText('Servers set: creative').waitFor();
    await guest.page.reload();
    await guest.page.getByRole('link', { name: 'creative', exact: true }).click();
    await guest.page.waitForURL('**/servers/creative');
    await guest.page.getByRole('status').getByText('Connected', { exact: true }).waitFor();

    // Taken away: the open server page says so on its own.
    await creative.uncheck();
    await editor.getByRole('button', { name: 'Save servers', exact: true }).click();
    await editor.getByRole('status').getByText('Servers set: no servers').waitFor();
    await guest.page
      .getByRole('alert')
      .getByText('Your access to this server was removed')
      .first()
      .waitFor();

    // Banned: the guest's next request shows the banned page.
    const role = editor.getByLabel('Role', { exact: true });
    await role.selectOption('banned');
    await editor.getByRole('button', { name: 'Save role', exact: true }).click();
    await editor.getByRole('status').getByText('Role changed: guest is now banned').waitFor();
    await guestNav.getByRole('link', { name: 'Servers' }).click();
    await guest.page.getByRole('heading', { name: 'This account is banned' }).waitFor();

    // Made support: the Users page is there, read-only.
    await role.selectOption('support');
    await editor.getByRole('button', { name: 'Save role', exact: true }).click();
    await editor.getByRole('status').getByText('Role changed: guest is now support').waitFor();
    await guest.page.reload();
    await openUsers(guest.page);
    await guest.page
      .getByText('Support can see every account; only an administrator can change roles')
      .waitFor();
    await row(guest.page, 'player').getByText('survival', { exact: true }).waitFor();
    assert.equal(await userList(guest.page).getByRole('button').count(), 0);
    assert.equal(await guest.page.getByLabel('Role').count(), 0);
    await assertAccessible(guest.page, 'the users list, read-only for support');
    admin.assertClean();
    guest.assertClean();
  });

  it("gives a plain user the API's refusal at /users", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await page.goto('/users');
    await page.getByRole('alert').getByText('Your role does not allow this').waitFor();
    assert.equal(await page.getByLabel('Filter').count(), 0);
    await assertAccessible(page, 'the users page refused');
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab(viewport, colorScheme);
        await signIn(page, 'admin');
        await openUsers(page);
        await edit(page, 'player');
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
        await page.evaluate(() => {
          window.scrollTo(0, 0);
        });
        await screenshot(page, 'users', viewport, colorScheme);
        await assertAccessible(page, `the users page, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
