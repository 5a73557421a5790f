/**
 * SSH keys journey: a key made by ssh-keygen is pasted on the profile page, named by its comment
 * until a name is typed, shown with the fingerprint `ssh-keygen -l` prints, refused a second
 * time and deleted after a confirmation; a short RSA key is refused with the API's reason next to
 * the field. While the panel's SFTP server is off, the profile says so and a server's Files tab
 * shows no SFTP address. The section at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot, scrollToTop } from './helpers/browser.js';
import {
  PASSWORD,
  assertAccessible,
  assertFits,
  ownerJourney,
  screenshots,
  signIn,
} from './helpers/journey.js';

const section = (page: Page) => page.getByRole('region', { name: 'SSH keys' });
const form = (page: Page) => page.getByRole('form', { name: 'Add an SSH key' });
const keyRow = (page: Page, name: string) =>
  section(page).getByRole('list', { name: 'SSH keys' }).getByRole('listitem', { name });

interface Made {
  readonly line: string;
  readonly fingerprint: string;
}

describe('SSH keys', () => {
  let dir = '';
  const keys = new Map<string, Made>();
  /** A key pair made by ssh-keygen: its .pub line and the fingerprint `ssh-keygen -l` prints. */
  const keygen = (name: string, ...flags: string[]): Made => {
    const file = path.join(dir, name);
    execFileSync('ssh-keygen', ['-q', ...flags, '-N', '', '-C', 'alice@laptop', '-f', file]);
    const printed = execFileSync('ssh-keygen', ['-l', '-f', `${file}.pub`], { encoding: 'utf8' });
    return {
      line: readFileSync(`${file}.pub`, 'utf8').trim(),
      fingerprint: printed.split(' ')[1] ?? '',
    };
  };
  const made = (name: string): Made => {
    const key = keys.get(name);
    assert.ok(key, `no key ${name}`);
    return key;
  };
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ssh-keys-e2e-'));
    keys.set('ed25519', keygen('ed25519', '-t', 'ed25519'));
    keys.set('rsa1024', keygen('rsa1024', '-t', 'rsa', '-b', '1024'));
    for (const viewport of [DESKTOP, PHONE]) {
      for (const scheme of ['light', 'dark']) {
        keys.set(
          `${viewport.width}-${scheme}`,
          keygen(`${viewport.width}-${scheme}`, '-t', 'ed25519'),
        );
      }
    }
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const journeyOf = ownerJourney('alice', { world: 'World' });
  const { tab } = journeyOf;

  /** Pastes `key`, names it, confirms with the password and adds it. */
  async function addKey(page: Page, name: string, key: string) {
    await form(page).getByLabel('Public key').fill(key);
    await form(page).getByLabel('Name').fill(name);
    await form(page).getByLabel('Your password').fill(PASSWORD);
    await form(page).getByRole('button', { name: 'Add SSH key' }).click();
  }

  it('adds a key, shows its fingerprint, and deletes it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    await page.getByRole('link', { name: 'Profile' }).click();
    await section(page).getByText('No SSH keys yet').waitFor();
    await section(page).getByText('SFTP is off on this panel').waitFor();
    await assertAccessible(page, 'the profile without SSH keys');

    // A short RSA key: the API's reason, next to the field.
    await addKey(page, 'old', made('rsa1024').line);
    const publicKey = form(page).getByLabel('Public key');
    await form(page).getByText('This RSA key has 1024 bits').waitFor();
    assert.equal(await publicKey.getAttribute('aria-invalid'), 'true');
    await assertAccessible(page, 'a key refused for its size');
    await section(page).getByText('No SSH keys yet').waitFor();

    // The name follows the pasted key's comment until one is typed.
    await form(page).getByLabel('Name').fill('');
    await publicKey.fill(made('ed25519').line);
    assert.equal(await form(page).getByLabel('Name').inputValue(), 'alice@laptop');
    await addKey(page, 'laptop', made('ed25519').line);
    const { fingerprint } = made('ed25519');
    await form(page).getByRole('status').getByText(fingerprint).waitFor();
    const row = keyRow(page, 'laptop');
    await row.getByText(fingerprint, { exact: true }).waitFor();
    await row.getByText('Ed25519', { exact: true }).waitFor();
    await row.getByText('Never', { exact: true }).waitFor();
    assert.equal(await publicKey.inputValue(), '', 'the form is cleared');
    await assertAccessible(page, 'the profile with an SSH key');

    // The same key again is told next to the field.
    await addKey(page, 'again', made('ed25519').line);
    await form(page).getByText('This key is on your account already').waitFor();
    assert.equal(await publicKey.getAttribute('aria-invalid'), 'true');

    await row.getByRole('button', { name: 'Delete laptop' }).click();
    await row.getByRole('group', { name: 'Delete laptop?' }).waitFor();
    await assertAccessible(page, 'the delete confirmation');
    await row.getByRole('button', { name: 'Delete key' }).click();
    await section(page).getByText('No SSH keys yet').waitFor();
    // The key is gone for the API too (a session's token: keys are managed in sessions only).
    const session = await journeyOf.panel.api<{ access_token: string }>('POST', '/api/auth/login', {
      username: 'alice',
      password: PASSWORD,
    });
    const listed = await journeyOf.panel.api<{ data: unknown[] }>(
      'GET',
      '/api/profile/ssh-keys',
      undefined,
      session.access_token,
    );
    assert.deepEqual(listed.data, []);
    assertClean();
  });

  it("shows no SFTP address on a server's files while SFTP is off", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    const asked = page.waitForResponse((response) => response.url().endsWith('/api/sftp'));
    await page.goto('/servers/world/files');
    await page.getByRole('heading', { name: 'Files' }).waitFor();
    const sftp = await asked;
    assert.deepEqual(((await sftp.json()) as { data: unknown }).data, {
      enabled: false,
      port: null,
      hostKeyFingerprint: null,
    });
    assert.equal(await page.getByRole('group', { name: 'Connect with SFTP' }).count(), 0);
    assert.equal(await page.getByText('Connect with SFTP').count(), 0);
    assertClean();
  });

  screenshots(tab, async (page, viewport, colorScheme) => {
    await signIn(page, 'alice');
    await page.goto('/profile');
    const key = made(`${viewport.width}-${colorScheme}`);
    await addKey(page, `desktop ${viewport.width} ${colorScheme}`, key.line);
    await form(page).getByRole('status').getByText(key.fingerprint).waitFor();
    await scrollToTop(section(page).getByRole('heading', { name: 'SSH keys' }));
    await assertFits(page, viewport, 'the SSH keys');
    await screenshot(page, 'profile-ssh-keys', viewport, colorScheme);
    await assertAccessible(page, `the SSH keys, ${colorScheme}`);
  });
});
