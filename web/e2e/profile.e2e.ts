/**
 * Profile page journeys: a user reads their statistics, is refused a rename with a wrong
 * password or a taken name (the API's messages), renames and stays signed in under the new name;
 * changes the password after a mismatch, a too-short one and a wrong current one are refused,
 * and this tab stays signed in with the fresh token while a browser signed in before is sent
 * back to sign-in on its next request; the page at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot, storedSession } from './helpers/browser.js';
import { PASSWORD, assertAccessible, journey, register, signIn } from './helpers/journey.js';

const NEW_PASSWORD = 'battery staple horse';

async function openProfile(page: Page) {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Profile' })
    .click();
  await page.waitForURL('**/profile');
  await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
}

/** Signs in on the sign-in page the app sent us to; it returns to the page it came from. */
async function signInAgain(page: Page, username: string, password: string, back: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`**${back}`);
}

/** The value shown for a statistic, by its term. */
const stat = (page: Page, term: string) =>
  page
    .getByRole('region', { name: 'Your account' })
    .locator('div', { has: page.getByRole('term').getByText(term, { exact: true }) })
    .getByRole('definition');

describe('profile', () => {
  const { tab } = journey({
    setUp: async (panel) => {
      const admin = await register(panel, 'admin');
      await register(panel, 'player');
      await register(panel, 'someone');
      await panel.api(
        'POST',
        '/api/servers/create',
        { name: 'survival', startCommand: '/bin/cat' },
        admin,
      );
      await panel.api('PUT', '/api/users/player/servers', { servers: ['survival'] }, admin);
    },
  });

  it('shows the statistics and renames the account', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await openProfile(page);
    assert.equal(await stat(page, 'Username').textContent(), 'player');
    assert.equal(await stat(page, 'Role').textContent(), 'user');
    assert.equal(await stat(page, 'Servers you can reach').textContent(), '1');
    assert.equal(await stat(page, 'Tickets opened').textContent(), '0');
    assert.equal(await stat(page, 'Signs in with').textContent(), 'Password');
    assert.notEqual(await stat(page, 'Last password sign-in').textContent(), 'Never');
    await assertAccessible(page, 'the profile page');

    const rename = page.getByRole('region', { name: 'Change username' });
    const submit = rename.getByRole('button', { name: 'Change username', exact: true });
    await rename.getByLabel('New username').fill('player2');
    await rename.getByLabel('Current password').fill('not my password');
    await submit.click();
    await rename.getByRole('alert').getByText('The current password is wrong').waitFor();
    await assertAccessible(page, 'a refused rename');

    await rename.getByLabel('New username').fill('Admin');
    await rename.getByLabel('Current password').fill(PASSWORD);
    await submit.click();
    await rename.getByRole('alert').getByText('That username is taken').waitFor();

    await rename.getByLabel('New username').fill('player2');
    await submit.click();
    await rename.getByRole('status').getByText('Username changed: you are now player2').waitFor();
    const header = page.getByRole('banner');
    await header.getByText('player2', { exact: true }).waitFor();
    await stat(page, 'Username').getByText('player2', { exact: true }).waitFor();
    // The session holds the new name: a reload keeps it, and the old name signs in no more.
    await page.reload();
    await header.getByText('player2', { exact: true }).waitFor();
    assert.match((await storedSession(page)) ?? '', /"username":"player2"/);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL('**/sign-in');
    await signInAgain(page, 'player2', PASSWORD, '/profile');
    await stat(page, 'Username').getByText('player2', { exact: true }).waitFor();
    assertClean();
  });

  it('changes the password: this tab stays signed in, another browser is signed out', async () => {
    const { page, assertClean } = await tab();
    const other = await tab();
    await signIn(page, 'someone');
    await signIn(other.page, 'someone');
    // The other browser waits on a page that asks nothing by itself (the servers list polls).
    await openProfile(other.page);
    await openProfile(page);
    const before = await storedSession(page);

    // An API key, which the password change offers to revoke (ticked by default).
    const keys = page.getByRole('region', { name: 'API keys' });
    const keyForm = page.getByRole('form', { name: 'New API key' });
    await keyForm.getByLabel('Key name').fill('old script');
    await keyForm.getByLabel('Your password').fill(PASSWORD);
    await keyForm.getByRole('button', { name: 'Create API key' }).click();
    await page.getByRole('button', { name: 'Done, I have stored it' }).click();
    await keys.getByRole('listitem', { name: 'old script' }).waitFor();

    const form = page.getByRole('region', { name: 'Change password' });
    const revokeKeys = form.getByRole('checkbox', { name: 'Also revoke my 1 API key' });
    assert.equal(await revokeKeys.isChecked(), true);
    const fill = async (current: string, next: string, confirmation: string) => {
      await form.getByLabel('Current password', { exact: true }).fill(current);
      await form.getByLabel('New password', { exact: true }).fill(next);
      await form.getByLabel('Confirm new password', { exact: true }).fill(confirmation);
      await form.getByRole('button', { name: 'Change password', exact: true }).click();
    };
    await fill(PASSWORD, NEW_PASSWORD, 'battery staple horses');
    await form
      .getByRole('alert')
      .getByText('The new password and its confirmation differ')
      .waitFor();
    await fill(PASSWORD, 'abc', 'abc');
    await form
      .getByRole('alert')
      .getByText(/new_password/)
      .waitFor();
    await fill('not my password', NEW_PASSWORD, NEW_PASSWORD);
    await form.getByRole('alert').getByText('The current password is wrong').waitFor();
    await assertAccessible(page, 'a refused password change');

    await fill(PASSWORD, NEW_PASSWORD, NEW_PASSWORD);
    await form
      .getByRole('status')
      .getByText('Password changed; earlier tokens are revoked. This browser stays signed in')
      .waitFor();
    await form.getByRole('status').getByText('One API key was revoked.').waitFor();
    await keys.getByText('No API keys yet').waitFor();
    assert.equal(await revokeKeys.count(), 0, 'no key left to offer to revoke');
    // The fresh token replaced the old one at once.
    const tokenOf = (stored: string | null) =>
      (JSON.parse(stored ?? '{}') as { token?: string }).token;
    const after = await storedSession(page);
    assert.ok(tokenOf(after) !== undefined);
    assert.notEqual(tokenOf(after), tokenOf(before));
    assert.equal(await form.getByLabel('New password', { exact: true }).inputValue(), '');

    // This tab goes on working, reloads included.
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Servers' })
      .click();
    await page.getByText('No servers yet').waitFor();
    await page.reload();
    await page.getByText('No servers yet').waitFor();
    assert.match(page.url(), /\/servers$/);

    // The browser signed in before: its next request is refused and it is back at sign-in.
    await other.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Servers' })
      .click();
    await other.page.waitForURL('**/sign-in');
    await other.page.getByText('Your session has ended; sign in again').waitFor();
    // The old password is gone; the new one signs in, back to the page it was on.
    await signInAgain(other.page, 'someone', NEW_PASSWORD, '/servers');
    assertClean();
    other.assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab(viewport, colorScheme);
        await signIn(page, 'admin');
        await openProfile(page);
        await stat(page, 'Username').getByText('admin', { exact: true }).waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
        await screenshot(page, 'profile', viewport, colorScheme);
        await assertAccessible(page, `the profile page, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
