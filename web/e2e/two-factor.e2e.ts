/**
 * Two-factor sign-in journey: a user turns it on in the profile (the code computed from the
 * secret the page shows), keeps the recovery codes, signs out and in with password and code, then
 * with a recovery code; an admin requires it of users and a user without it is sent to the
 * enrolment, sets it up there and reaches the panel. The profile's setup, the admin's control and
 * the enrolment page at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, PASSWORD, register, signIn } from './helpers/journey.js';

/** The code of `secret` for the 30-second step `offset` steps from now. */
function codeOf(secret: string, offset = 0): string {
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
  return totp.generate({ timestamp: Date.now() + offset * 30_000 });
}

const section = (page: Page) => page.getByRole('region', { name: 'Two-factor sign-in' });

/** From the password to the recovery codes; answers the secret and the codes. */
async function enrol(page: Page): Promise<{ secret: string; codes: string[] }> {
  await page
    .getByRole('form', { name: 'Set up two-factor sign-in' })
    .getByLabel('Current password')
    .fill(PASSWORD);
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  const qr = page.getByRole('img', { name: /QR code of the two-factor secret/ });
  await qr.waitFor();
  assert.match((await qr.getAttribute('src')) ?? '', /^data:image\/svg\+xml/);
  const secret =
    (await page
      .getByRole('form', { name: 'Turn on two-factor sign-in' })
      .locator('code')
      .textContent()) ?? '';
  assert.match(secret, /^[A-Z2-7]+=*$/);
  await page.getByLabel('Code from the app').fill(codeOf(secret));
  await page.getByRole('button', { name: 'Turn on', exact: true }).click();
  await page.getByRole('group', { name: 'Your recovery codes' }).waitFor();
  await page.getByText(/Store these now/).waitFor();
  const codes = await page
    .getByRole('list', { name: 'Recovery codes' })
    .getByRole('listitem')
    .allTextContents();
  assert.equal(codes.length, 10);
  return { secret, codes };
}

/** Password, then the second step with `code`, then the panel. */
async function signInWithCode(page: Page, username: string, code: string) {
  await page.goto('/sign-in');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
  await page.getByLabel('Authentication code').fill(code);
  await page.getByRole('button', { name: 'Verify' }).click();
  // Back to the page signed out of (the sign-in page's `from`), or the servers.
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/sign-in');
}

describe('two-factor sign-in', () => {
  const journeyOf = journey({
    setUp: async (panel) => {
      await register(panel, 'admin');
      for (const name of ['alice', 'bob', 'carol']) await register(panel, name);
    },
  });
  const { tab } = journeyOf;

  it('turns it on in the profile, signs in with a code, then with a recovery code', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    await page.getByRole('link', { name: 'Profile' }).click();
    await section(page).getByText('Off.').waitFor();
    await assertAccessible(page, 'the profile with two-factor off');

    const { secret, codes } = await enrol(page);
    await assertAccessible(page, 'the recovery codes');
    await page.getByRole('button', { name: 'I have stored them' }).click();
    await section(page)
      .getByText(/10 recovery codes left/)
      .waitFor();
    await signOut(page);

    // The code of the next step: the one just used to turn it on is good once only.
    await signInWithCode(page, 'alice', codeOf(secret, 1));
    await signOut(page);

    await signInWithCode(page, 'alice', codes[0] ?? '');
    await page.getByRole('link', { name: 'Profile' }).click();
    await section(page)
      .getByText(/9 recovery codes left/)
      .waitFor();
    assertClean();
  });

  it('sends a user to enrolment once an admin requires it of users', async () => {
    const admin = await tab();
    await signIn(admin.page, 'admin');
    await admin.page.getByRole('link', { name: 'Users' }).click();
    const policy = admin.page.getByRole('form', { name: 'Two-factor sign-in' });
    await policy.getByRole('checkbox', { name: 'Users' }).check();
    await assertAccessible(admin.page, 'the two-factor policy');
    await policy.getByRole('button', { name: 'Save two-factor policy' }).click();
    await policy.getByText('Two-factor policy saved').waitFor();
    admin.assertClean();

    const { page, assertClean } = await tab();
    await signIn(page, 'bob');
    await page.getByRole('heading', { level: 1, name: 'Set up two-factor sign-in' }).waitFor();
    await page.getByText(/requires two-factor sign-in of every user account/).waitFor();
    assert.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 0);
    await assertAccessible(page, 'the required enrolment');
    await page.goto('/tickets');
    await page.getByRole('heading', { level: 1, name: 'Set up two-factor sign-in' }).waitFor();

    await enrol(page);
    // The codes stay until put away, though enrolment is done.
    await page.getByRole('button', { name: 'I have stored them' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Tickets' }).waitFor();
    assertClean();
  });

  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const shoot = async (page: Page, name: string, what: string) => {
            const width = await page.evaluate(() => document.documentElement.scrollWidth);
            assert.ok(width <= viewport.width, `${what}: no sideways scrolling (${width} px)`);
            await screenshot(page, name, viewport, colorScheme);
            await assertAccessible(page, `${what}, ${colorScheme}`);
          };
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await page.goto('/profile');
          await page
            .getByRole('form', { name: 'Set up two-factor sign-in' })
            .getByLabel('Current password')
            .fill(PASSWORD);
          await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
          await page.getByRole('img', { name: /QR code/ }).waitFor();
          await section(page).scrollIntoViewIfNeeded();
          await shoot(page, 'profile-two-factor', 'the two-factor setup');

          await page.goto('/users');
          const policy = page.getByRole('form', { name: 'Two-factor sign-in' });
          await policy.scrollIntoViewIfNeeded();
          await shoot(page, 'users-two-factor-policy', 'the two-factor policy');
          assertClean();

          const user = await tab(viewport, colorScheme);
          await signIn(user.page, 'carol');
          await user.page
            .getByRole('heading', { level: 1, name: 'Set up two-factor sign-in' })
            .waitFor();
          await shoot(user.page, 'two-factor-required', 'the required enrolment');
          user.assertClean();
        });
      }
    }
  });
});
