/**
 * API keys journey: a key made on the profile page is shown once, works as a Bearer token for a
 * script (and is refused key management), shows its last use, and once revoked is refused with
 * 401; making one asks for the password, a wrong one told next to its field; a key limited to one server and one permission reaches only that; an expiry in the past is
 * refused with the API's message. The section at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { screenshot, scrollToTop } from './helpers/browser.js';
import {
  PASSWORD,
  assertAccessible,
  assertFits,
  ownerJourney,
  screenshots,
  signIn,
} from './helpers/journey.js';

const section = (page: Page) => page.getByRole('region', { name: 'API keys' });
const form = (page: Page) => page.getByRole('form', { name: 'New API key' });
const keyRow = (page: Page, name: string) =>
  section(page).getByRole('list', { name: 'API keys' }).getByRole('listitem', { name });

/** Fills the form's name and password, submits, and answers the token the page shows once. */
async function createKey(page: Page, name: string): Promise<string> {
  await form(page).getByLabel('Key name').fill(name);
  await form(page).getByLabel('Your password').fill(PASSWORD);
  await form(page).getByRole('button', { name: 'Create API key' }).click();
  const once = page.getByRole('group', { name: `Token of the key ${name}` });
  await once.waitFor();
  await once.getByText("you won't see it again").waitFor();
  const token = (await once.locator('code').textContent()) ?? '';
  assert.match(token, /^gpk_/);
  return token;
}

describe('API keys', () => {
  const journeyOf = ownerJourney('admin', { world: 'world', lobby: 'lobby' });
  const { tab } = journeyOf;
  /** A request of a script with `token` as its Bearer: the status and the parsed body. */
  const call = async (token: string, path: string) => {
    const response = await fetch(`${journeyOf.panel.url}${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('makes a key that works as a Bearer token until it is revoked', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.getByRole('link', { name: 'Profile' }).click();
    await section(page).getByText('No API keys yet').waitFor();
    await assertAccessible(page, 'the profile without API keys');

    // The password first: a wrong one is told next to its field, and no key is made.
    await form(page).getByLabel('Key name').fill('deploy');
    await form(page).getByLabel('Your password').fill('not my password');
    await form(page).getByRole('button', { name: 'Create API key' }).click();
    const password = form(page).getByLabel('Your password');
    await form(page).getByText('The password is wrong').waitFor();
    assert.equal(await password.getAttribute('aria-invalid'), 'true');
    await assertAccessible(page, 'a key refused for a wrong password');
    assert.equal(await page.getByRole('group', { name: /^Token of the key/ }).count(), 0);
    await section(page).getByText('No API keys yet').waitFor();

    const token = await createKey(page, 'deploy');
    await assertAccessible(page, 'the token shown once');
    const me = await call(token, '/api/auth/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.username, 'admin');
    const servers = await call(token, '/api/servers');
    assert.equal(servers.status, 200);
    assert.equal((servers.body.data as unknown[]).length, 2);
    const keys = await call(token, '/api/profile/api-keys');
    assert.equal(keys.status, 403);
    assert.equal(keys.body.code, 'SESSION_REQUIRED');

    await page.getByRole('button', { name: 'Done, I have stored it' }).click();
    assert.equal(await page.getByText(token).count(), 0, 'the token is gone once put away');
    await page.reload();
    const row = keyRow(page, 'deploy');
    await row.getByText(token.slice(0, 10)).waitFor();
    await row.getByText('All your servers').waitFor();
    await row.getByText('All your permissions').waitFor();
    await row.getByText(/from 127\.0\.0\.1/).waitFor();

    await row.getByRole('button', { name: 'Revoke deploy' }).click();
    await row.getByRole('group', { name: 'Revoke deploy?' }).waitFor();
    await assertAccessible(page, 'the revoke confirmation');
    await row.getByRole('button', { name: 'Revoke key' }).click();
    await section(page).getByText('No API keys yet').waitFor();
    assert.equal((await call(token, '/api/auth/me')).status, 401);
    assertClean();
  });

  it('limits a key to one server and one permission, and refuses a past expiry', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/profile');
    await form(page).getByLabel('Key name').fill('too late');
    await form(page).getByLabel('Expires on').fill('2020-01-01');
    await form(page).getByLabel('Your password').fill(PASSWORD);
    await form(page).getByRole('button', { name: 'Create API key' }).click();
    await form(page).getByRole('alert').waitFor();
    assert.equal(await page.getByRole('group', { name: /^Token of the key/ }).count(), 0);

    await form(page).getByLabel('Key name').fill('world files');
    await form(page).getByLabel('Expires on').fill('2099-12-31');
    await form(page).getByRole('radio', { name: 'Only these servers' }).check();
    await form(page).getByRole('checkbox', { name: 'Key server: world' }).check();
    await form(page).getByRole('radio', { name: 'Only these permissions' }).check();
    await form(page).getByRole('checkbox', { name: 'Key: files.read' }).check();
    await assertAccessible(page, 'the API key form with its scope');
    const token = await createKey(page, 'world files');

    const servers = await call(token, '/api/servers');
    assert.deepEqual(
      (servers.body.data as { name: string }[]).map((server) => server.name),
      ['world'],
    );
    assert.equal((await call(token, '/api/servers/world/files')).status, 200);
    assert.equal((await call(token, '/api/servers/lobby/files')).status, 403);
    const row = keyRow(page, 'world files');
    await row.getByText('files.read', { exact: true }).waitFor();
    await row.getByText('world', { exact: true }).waitFor();
    await row.getByText(/2099/).waitFor();
    assertClean();
  });

  screenshots(tab, async (page, viewport, colorScheme) => {
    await signIn(page, 'admin');
    await page.goto('/profile');
    await form(page).getByRole('radio', { name: 'Only these permissions' }).check();
    await form(page).getByRole('checkbox', { name: 'Key: console.read' }).check();
    await createKey(page, `shot ${viewport.width} ${colorScheme}`);
    await scrollToTop(section(page).getByRole('heading', { name: 'API keys' }));
    await assertFits(page, viewport, 'the API keys');
    await screenshot(page, 'profile-api-keys', viewport, colorScheme);
    await scrollToTop(section(page).getByRole('list', { name: 'API keys' }));
    await screenshot(page, 'profile-api-key-list', viewport, colorScheme);
    await assertAccessible(page, `the API keys, ${colorScheme}`);
  });
});
