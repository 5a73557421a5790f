/**
 * Accounts an admin manages (issue 26, point 4): the admin adds a user with a one-time link
 * (refusals said next to their field first), the link opened in another browser sets the password
 * and lands signed in, and the same link again says it was used; the admin sets another user's
 * password, whose open session goes to sign-in at its next step; the admin turns off a user's
 * two-factor sign-in and that user signs in with the password alone; a reset link for an account
 * with two-factor sign-in asks for the code after the password. The Users page's new forms and
 * the set-password page at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot, storedSession } from './helpers/browser.js';
import type { E2ePanel } from './helpers/panel.js';
import { assertAccessible, journey, PASSWORD, register, signIn } from './helpers/journey.js';

const userList = (page: Page) => page.getByRole('region', { name: 'User list' });
const row = (page: Page, username: string) =>
  userList(page).getByRole('article', { name: username, exact: true });
const addUser = (page: Page) => page.getByRole('region', { name: 'Add user' });

async function openUsers(page: Page) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await page.waitForURL('**/users');
  await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
}

async function edit(page: Page, username: string) {
  const item = row(page, username);
  await item.getByRole('button', { name: 'Edit', exact: true }).click();
  await item.getByLabel('Role', { exact: true }).waitFor();
  return item;
}

/** The code of `secret` for the 30-second step `offset` steps from now. */
function codeOf(secret: string, offset = 0): string {
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
  return totp.generate({ timestamp: Date.now() + offset * 30_000 });
}

/** Registers `username` and turns two-factor sign-in on through the API; answers its secret. */
async function withTwoFactor(panel: E2ePanel, username: string): Promise<string> {
  const token = await register(panel, username);
  const { data } = await panel.api<{ data: { secret: string } }>(
    'POST',
    '/api/profile/2fa/setup',
    { password: PASSWORD },
    token,
  );
  await panel.api('POST', '/api/profile/2fa/enable', { code: codeOf(data.secret) }, token);
  return data.secret;
}

/** Adds `username` with a link through the form; answers the link as the page shows it. */
async function addWithLink(page: Page, username: string): Promise<string> {
  const section = addUser(page);
  await section.getByRole('button', { name: 'Add user', exact: true }).click();
  await section.getByLabel('Username', { exact: true }).fill(username);
  await section.getByRole('button', { name: 'Add user', exact: true }).click();
  const shown = section.getByRole('group', { name: `Link for ${username} to set a password` });
  await shown.waitFor();
  return (await shown.locator('code').textContent()) ?? '';
}

describe('accounts', () => {
  let eveSecret = '';
  const accounts = journey({
    setUp: async (started) => {
      const admin = await register(started, 'admin');
      await register(started, 'bob');
      await withTwoFactor(started, 'carol');
      eveSecret = await withTwoFactor(started, 'eve');
      // A reset link for an account with two-factor sign-in, made through the API.
      await started.api('PUT', '/api/users/eve/password', { link: true }, admin);
    },
  });
  const { tab } = accounts;

  it('adds a user with a link, who sets a password and lands signed in', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openUsers(page);
    const section = addUser(page);
    await section.getByRole('button', { name: 'Add user', exact: true }).click();
    const username = section.getByLabel('Username', { exact: true });
    await username.waitFor();
    await assertAccessible(page, 'the add user form');

    // Refusals are said under the field, in words: the form's own, then the API's.
    const submit = section.getByRole('button', { name: 'Add user', exact: true });
    await submit.click();
    await section.getByText('Enter a username', { exact: true }).waitFor();
    assert.equal(await username.getAttribute('aria-invalid'), 'true');
    await username.fill('da na');
    await submit.click();
    await section
      .getByText('Use 3 to 32 letters (A to Z), digits, or _ . - without spaces')
      .waitFor();
    await username.fill('Admin');
    await submit.click();
    await section.getByText('That username is taken', { exact: true }).waitFor();
    await section.getByLabel('Set a password now').check();
    await section.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await section.getByLabel('Confirm password', { exact: true }).fill('something else');
    await username.fill('dana');
    await submit.click();
    await section.getByText('The password and its confirmation differ', { exact: true }).waitFor();
    await assertAccessible(page, 'the add user form with its refusals');
    await section.getByLabel('Send them a link to set it').check();
    await submit.click();

    const shown = section.getByRole('group', { name: 'Link for dana to set a password' });
    await shown.waitFor();
    await shown.getByText(/won.t see it again/).waitFor();
    const link = (await shown.locator('code').textContent()) ?? '';
    assert.match(link, new RegExp(`^${accounts.panel.url}/set-password#token=[^&\\s]+$`));
    const token = new URL(link).hash.slice('#token='.length);
    await section.getByText('dana was added as user.').waitFor();
    await row(page, 'dana').getByText('No password yet', { exact: true }).waitFor();
    await assertAccessible(page, 'the link shown once');
    await shown.getByRole('button', { name: 'Done, I have sent it' }).click();
    await shown.waitFor({ state: 'detached' });

    // Another browser: the link's page, its token never in an address the browser asks for.
    const dana = await tab();
    const asked: string[] = [];
    dana.page.on('request', (request) => asked.push(request.url()));
    await dana.page.goto(link);
    await dana.page.getByRole('heading', { level: 1, name: 'Set a password for dana' }).waitFor();
    assert.equal(dana.page.url(), `${accounts.panel.url}/set-password`, 'the fragment is gone');
    await assertAccessible(dana.page, 'the set-password page');
    await dana.page.getByLabel('New password', { exact: true }).fill('short');
    await dana.page.getByLabel('Confirm new password').fill('shorter');
    await dana.page.getByRole('button', { name: 'Set password and sign in' }).click();
    await dana.page.getByText('The password and its confirmation differ').waitFor();
    await dana.page.getByLabel('Confirm new password').fill('short');
    await dana.page.getByRole('button', { name: 'Set password and sign in' }).click();
    await dana.page.getByText('Too short: at least 6 characters').waitFor();
    await dana.page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await dana.page.getByLabel('Confirm new password').fill(PASSWORD);
    await dana.page.getByRole('button', { name: 'Set password and sign in' }).click();
    await dana.page.waitForURL('**/servers');
    await dana.page.getByRole('navigation', { name: 'Main' }).waitFor();
    assert.match((await storedSession(dana.page)) ?? '', /"username":"dana"/);
    assert.deepEqual(
      asked.filter((url) => url.includes(token)),
      [],
      'no request carried the token in its address',
    );
    // Back does not bring the token back either: the entry was replaced.
    assert.equal(
      await dana.page.evaluate(() => window.location.hash),
      '',
      'no fragment on the page left signed in',
    );

    // The same link again, in a third browser: used.
    const again = await tab();
    await again.page.goto(link);
    await again.page.getByRole('heading', { level: 1, name: 'This link cannot be used' }).waitFor();
    await again.page.getByRole('alert').waitFor();
    await again.page.getByText(/Each link works once, for 24 hours/).waitFor();
    await assertAccessible(again.page, 'a used link');

    // Without any link at all.
    await again.page.goto('/set-password');
    await again.page.getByRole('heading', { level: 1, name: 'No link to use' }).waitFor();

    // The admin's list now shows dana's password.
    await page.reload();
    await row(page, 'dana').getByText('Password', { exact: true }).waitFor();
    assertClean();
    dana.assertClean();
    again.assertClean();
  });

  it("sets a user's password, which sends their open session to sign-in", async () => {
    const bob = await tab();
    await signIn(bob.page, 'bob');
    const admin = await tab();
    await signIn(admin.page, 'admin');
    await openUsers(admin.page);
    const editor = await edit(admin.page, 'bob');
    await editor.getByRole('button', { name: 'Reset password', exact: true }).click();
    const form = editor.getByRole('form', { name: 'Reset the password of bob' });
    await form.getByText('This signs bob out everywhere and revokes their API keys.').waitFor();
    await assertAccessible(admin.page, 'the reset password form');
    await form.getByLabel('Set a new password now').check();
    await form.getByLabel('Password', { exact: true }).fill('bobs new password');
    await form.getByLabel('Confirm password', { exact: true }).fill('bobs new password');
    await form.getByRole('button', { name: 'Set the password' }).click();
    await editor.getByText('Password set: bob is signed out everywhere.').waitFor();

    // Bob's next step goes to sign-in, saying why; the new password lets him in.
    await bob.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Tickets' })
      .click();
    await bob.page.waitForURL('**/sign-in');
    await bob.page.getByText('Your session has ended; sign in again').waitFor();
    await bob.page.getByLabel('Username').fill('bob');
    await bob.page.getByLabel('Password').fill('bobs new password');
    await bob.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // Back to the page he was going to.
    await bob.page.waitForURL('**/tickets');

    // A link instead: shown the same way, and it replaces any earlier one.
    await editor.getByRole('button', { name: 'Reset password', exact: true }).click();
    await form.getByRole('button', { name: 'Make the link' }).click();
    const shown = editor.getByRole('group', { name: 'Link for bob to set a password' });
    await shown.waitFor();
    assert.match((await shown.locator('code').textContent()) ?? '', /\/set-password#token=/);
    await assertAccessible(admin.page, 'a reset link shown once');
    admin.assertClean();
    bob.assertClean();
  });

  it('turns off two-factor sign-in, and the person signs in with the password alone', async () => {
    const answer = await accounts.panel.api<Record<string, unknown>>('POST', '/api/auth/login', {
      username: 'carol',
      password: PASSWORD,
    });
    assert.equal(answer.two_factor_required, true, 'carol needs a code to begin with');

    const admin = await tab();
    await signIn(admin.page, 'admin');
    await openUsers(admin.page);
    await row(admin.page, 'carol').getByText('Password + two-factor', { exact: true }).waitFor();
    // Nobody without it is offered to turn it off.
    const bob = await edit(admin.page, 'bob');
    assert.equal(await bob.getByRole('button', { name: 'Turn off two-factor' }).count(), 0);
    await bob.getByRole('button', { name: 'Close', exact: true }).click();

    const carol = await edit(admin.page, 'carol');
    await carol.getByRole('button', { name: 'Turn off two-factor', exact: true }).click();
    const confirm = carol.getByRole('group', { name: 'Turn off two-factor sign-in for carol?' });
    await confirm.getByText(/sign in with their password alone/).waitFor();
    await assertAccessible(admin.page, 'the two-factor confirmation');
    await confirm.getByRole('button', { name: 'Turn off two-factor', exact: true }).click();
    await carol.getByText('Two-factor sign-in is off for carol.').waitFor();
    await row(admin.page, 'carol').getByText('Password', { exact: true }).waitFor();

    const { page, assertClean } = await tab();
    // The helper waits for the servers page: a code asked for would never get there.
    await signIn(page, 'carol');
    admin.assertClean();
    assertClean();
  });

  it('asks for the code after the password when the account has two-factor sign-in', async () => {
    // The link made in setUp is shown to nobody; a new one is made here through the page.
    const admin = await tab();
    await signIn(admin.page, 'admin');
    await openUsers(admin.page);
    const editor = await edit(admin.page, 'eve');
    await editor.getByRole('button', { name: 'Reset password', exact: true }).click();
    await editor.getByRole('button', { name: 'Make the link' }).click();
    const shown = editor.getByRole('group', { name: 'Link for eve to set a password' });
    const link = (await shown.locator('code').textContent()) ?? '';

    const { page, assertClean } = await tab();
    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: 'Set a password for eve' }).waitFor();
    await page.getByLabel('New password', { exact: true }).fill('eves new password');
    await page.getByLabel('Confirm new password').fill('eves new password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Two-factor sign-in' }).waitFor();
    await page.getByText(/Your password is set/).waitFor();
    await assertAccessible(page, 'the code after a set password');
    // The code of the next step: the one that turned it on is good once only.
    await page.getByLabel('Authentication code').fill(codeOf(eveSecret, 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL('**/servers');
    assert.match((await storedSession(page)) ?? '', /"username":"eve"/);
    admin.assertClean();
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const shoot = async (page: Page, name: string, what: string) => {
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `${what}: no sideways scrolling (${width} px)`);
          await screenshot(page, name, viewport, colorScheme);
          await assertAccessible(page, `${what}, ${colorScheme}`);
        };
        const name = `shot-${viewport.width}-${colorScheme}`;
        const admin = await tab(viewport, colorScheme);
        await signIn(admin.page, 'admin');
        await openUsers(admin.page);
        const link = await addWithLink(admin.page, name);
        await addUser(admin.page).scrollIntoViewIfNeeded();
        await shoot(admin.page, 'users-add-link', 'the link shown once');

        await admin.page
          .getByRole('group', { name: `Link for ${name} to set a password` })
          .getByRole('button', { name: 'Done, I have sent it' })
          .click();
        // Opened, not sent: dana (who set hers in the first journey) keeps it.
        const editor = await edit(admin.page, 'dana');
        await editor.getByRole('button', { name: 'Reset password', exact: true }).click();
        await editor.getByLabel('Set a new password now').check();
        const form = editor.getByRole('form', { name: 'Reset the password of dana' });
        await form.scrollIntoViewIfNeeded();
        await shoot(admin.page, 'users-reset-password', 'the reset password form');

        const person = await tab(viewport, colorScheme);
        await person.page.goto(link);
        await person.page
          .getByRole('heading', { level: 1, name: `Set a password for ${name}` })
          .waitFor();
        await shoot(person.page, 'set-password', 'the set-password page');
        admin.assertClean();
        person.assertClean();
      });
    }
  }
});
