/**
 * Sign-in page journeys: the first account, wrong passwords and the login limit, sign-out, a
 * session that ended elsewhere, a banned account, and the OpenID Connect callback fragment.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  DESKTOP,
  PHONE,
  launchBrowser,
  openTab,
  screenshot,
  storedSession,
  type Tab,
} from './helpers/browser.js';
import { assertAccessible } from './helpers/journey.js';
import { startPanel, type E2ePanel } from './helpers/panel.js';

interface Token {
  access_token: string;
  username: string;
  role: string;
}

const PASSWORD = 'correct horse battery';

async function signIn(page: Page, username: string, password: string) {
  await page.goto('/sign-in');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe('sign-in', () => {
  let panel: E2ePanel;
  let browser: Browser;
  const tabs: Tab[] = [];
  const tab = async (options?: Parameters<typeof openTab>[2]) => {
    const opened = await openTab(browser, panel.url, options);
    tabs.push(opened);
    return opened;
  };

  before(async () => {
    // Two failures on one account from one address, then 429: the limit, reached quickly.
    panel = await startPanel({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '2' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser.close();
    await panel.close();
  });

  it('lets the first person register, as admin, and sign out again', async () => {
    const { page, assertClean } = await tab();
    await page.goto('/');
    await page.waitForURL('**/sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL('**/register');
    await page.getByLabel('Username').fill('alex');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account', exact: true }).click();
    await page.waitForURL('**/servers');
    const header = page.getByRole('banner');
    await header.getByText('alex', { exact: true }).waitFor();
    await header.getByText('admin', { exact: true }).waitFor();
    assert.match((await storedSession(page)) ?? '', /"role":"admin"/);

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL('**/sign-in');
    assert.equal(await storedSession(page), null);
    await page.goto('/servers');
    await page.waitForURL('**/sign-in');
    assertClean();
  });

  it("shows the API's message for a wrong password, and the wait once refused", async () => {
    // Its own account: the refusal holds that account for this address until the window ends.
    await panel.api('POST', '/api/auth/register', { username: 'sam', password: PASSWORD });
    const { page, assertClean } = await tab();
    await signIn(page, 'sam', 'not the password');
    const alert = page.getByRole('alert');
    await alert.getByText('Wrong username or password').waitFor();
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await alert.getByText('Wrong username or password').waitFor();
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await alert
      .getByText(/^Too many failed logins; try again later \(wait \d+ minutes\)$/)
      .waitFor();
    assert.equal(await storedSession(page), null);
    assertClean();
  });

  it('returns to sign-in, saying why, when the session ended elsewhere (401)', async () => {
    const { page, assertClean } = await tab();
    await page.goto('/sign-in');
    await page.evaluate(() => {
      window.localStorage.setItem(
        'game-panel.session',
        JSON.stringify({ token: 'revoked.token.value', username: 'alex', role: 'admin' }),
      );
    });
    await page.goto('/servers');
    await page.waitForURL('**/sign-in');
    await page.getByRole('status').getByText('Your session has ended; sign in again').waitFor();
    assert.equal(await storedSession(page), null);
    assertClean();
  });

  it('shows a banned account one page saying so', async () => {
    await panel.api('POST', '/api/auth/register', { username: 'mallory', password: PASSWORD });
    const admin = await panel.api<Token>('POST', '/api/auth/login', {
      username: 'alex',
      password: PASSWORD,
    });
    await panel.api('PUT', '/api/users/mallory/role', { role: 'banned' }, admin.access_token);
    const { page, assertClean } = await tab();
    await signIn(page, 'mallory', PASSWORD);
    await page.getByRole('heading', { name: 'This account is banned' }).waitFor();
    await assertAccessible(page, 'the banned page');
    assert.equal(await page.getByRole('navigation').count(), 0);
    assert.equal(await page.getByRole('heading', { name: 'Servers' }).count(), 0);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL('**/sign-in');
    assertClean();
  });

  it('takes the token of a provider sign-in from the fragment, leaving it nowhere', async () => {
    const token = await panel.api<Token>('POST', '/api/auth/login', {
      username: 'alex',
      password: PASSWORD,
    });
    const { page, assertClean } = await tab();
    await page.goto(
      `/sign-in#access_token=${token.access_token}&token_type=bearer&username=alex&role=admin`,
    );
    await page.waitForURL('**/servers');
    await page.getByRole('heading', { name: 'Servers' }).waitFor();
    assert.ok(!page.url().includes('access_token'), page.url());
    assert.equal(await page.evaluate(() => window.location.hash), '');
    // The entry that held the token was replaced: going back leaves the panel altogether.
    await page.goBack();
    assert.ok(!page.url().includes('access_token'), page.url());

    await page.goto('/sign-in#error=access_denied');
    // Signed in already, so on to the servers; the fragment is gone all the same.
    await page.waitForURL('**/servers');
    assert.ok(!page.url().includes('error='), page.url());
    assertClean();
  });

  it('shows a failed provider sign-in on the sign-in page', async () => {
    const { page, assertClean } = await tab();
    await page.goto('/sign-in#error=registration_closed');
    await page
      .getByRole('status')
      .getByText('Registration is closed on this panel, and no account is linked to that sign-in')
      .waitFor();
    assert.equal(await page.evaluate(() => window.location.hash), '');
    assertClean();
  });

  it('offers no registration where it is closed, and says so on /register', async () => {
    const closed = await startPanel({ REGISTRATION: 'closed' });
    try {
      const { page, assertClean } = await openTab(browser, closed.url);
      // The link would show once the API answered: wait for the answer and two frames, then look.
      const answered = page.waitForResponse((response) =>
        response.url().endsWith('/api/auth/registration'),
      );
      await page.goto('/sign-in');
      await answered;
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
      assert.equal(await page.getByRole('link', { name: 'Create an account' }).count(), 0);
      await page.goto('/register');
      await page.getByText('Registration is closed on this panel.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create account' }).count(), 0);
      assert.equal(await page.getByLabel('Username').count(), 0);
      await assertAccessible(page, 'the closed registration page');
      assert.equal(await storedSession(page), null);
      assertClean();
      await page.context().close();
    } finally {
      await closed.close();
    }
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab({ viewport, colorScheme });
        await page.goto('/sign-in');
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
        await screenshot(page, 'sign-in', viewport, colorScheme);
        await assertAccessible(page, `the sign-in page, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
