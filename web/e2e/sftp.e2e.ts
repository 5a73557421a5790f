/**
 * SFTP journey, with the panel's SFTP server on (docs/sftp.md): the profile shows the host key
 * fingerprint OpenSSH's own `ssh-keyscan` and `ssh-keygen -l` print for that port; a server's
 * Files tab shows `sftp://<user>.<server>@<host>:<port>`, copies it, and OpenSSH's `sftp`, given
 * that very address and the password, uploads a file the tab lists after a reload. The host key
 * and the address at 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { sftpBatchTo } from '../../test/helpers/sftp-batch.js';
import { screenshot, scrollToTop } from './helpers/browser.js';
import {
  PASSWORD,
  assertAccessible,
  assertFits,
  ownerJourney,
  screenshots,
  signIn,
} from './helpers/journey.js';

const hostKey = (page: Page) =>
  page.getByRole('region', { name: 'SSH keys' }).getByRole('group', { name: 'SFTP host key' });
const sftpLine = (page: Page) => page.getByRole('group', { name: 'Connect with SFTP' });
const fileList = (page: Page) => page.getByRole('list', { name: /^Content of/ });

/** The fingerprint of the Ed25519 host key at 127.0.0.1:`port`, as OpenSSH's tools print it. */
function scannedFingerprint(port: number): string {
  const scanned = execFileSync('ssh-keyscan', ['-p', String(port), '-t', 'ed25519', '127.0.0.1'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  assert.match(scanned, /ssh-ed25519 /, 'ssh-keyscan read an Ed25519 host key');
  // `256 SHA256:… [127.0.0.1]:port (ED25519)`
  const printed = execFileSync('ssh-keygen', ['-l', '-f', '-'], {
    input: scanned,
    encoding: 'utf8',
  });
  const fingerprint = printed.split(' ')[1] ?? '';
  assert.match(fingerprint, /^SHA256:/);
  return fingerprint;
}

async function openFiles(page: Page) {
  await page.goto('/servers/world/files');
  await page.getByRole('heading', { name: 'Files', exact: true }).waitFor();
}

describe('SFTP', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sftp-e2e-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const journeyOf = ownerJourney('alice', { world: 'World' }, { sftp: true });
  const { tab } = journeyOf;
  const sftpPort = () => {
    const port = journeyOf.panel.sftpPort;
    assert.ok(port !== null, 'the panel runs SFTP');
    return port;
  };

  it("shows the host key's fingerprint that OpenSSH sees", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    await page.getByRole('link', { name: 'Profile' }).click();
    await hostKey(page).waitFor();
    assert.equal(
      (await hostKey(page).locator('code').textContent())?.trim(),
      scannedFingerprint(sftpPort()),
    );
    assert.equal(await page.getByText('SFTP is off on this panel').count(), 0);
    await assertAccessible(page, 'the profile with the SFTP host key');
    assertClean();
  });

  it('shows the address on the Files tab, and sftp uploads through it', async () => {
    const { page, context, assertClean } = await tab();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: journeyOf.panel.url,
    });
    await signIn(page, 'alice');
    await openFiles(page);
    await page.getByText('This folder is empty').waitFor();
    const shown = (await sftpLine(page).locator('code').textContent())?.trim() ?? '';
    assert.equal(shown, `sftp://alice.world@127.0.0.1:${sftpPort()}`);
    await assertAccessible(page, 'the Files tab with the SFTP address');

    await sftpLine(page).getByRole('button', { name: 'Copy the SFTP address' }).click();
    await sftpLine(page).getByRole('status').getByText('Copied').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown);

    // The address as shown, on sftp's command line: OpenSSH reads sftp:// addresses itself.
    writeFileSync(path.join(dir, 'motd.txt'), 'Welcome to World\n');
    const run = await sftpBatchTo([shown], { password: PASSWORD }, ['put motd.txt'], dir);
    assert.equal(run.code, 0, `sftp uploaded:\n${run.stdout}\n${run.stderr}`);

    await page.reload();
    await fileList(page).getByRole('link', { name: 'motd.txt', exact: true }).waitFor();
    const read = await journeyOf.panel.api<{ data: { content: string } }>(
      'GET',
      '/api/servers/world/files/content?path=motd.txt',
      undefined,
      journeyOf.token(),
    );
    assert.equal(read.data.content, 'Welcome to World\n');
    assertClean();
  });

  screenshots(tab, async (page, viewport, colorScheme) => {
    await signIn(page, 'alice');
    await page.goto('/profile');
    await hostKey(page).waitFor();
    await scrollToTop(page.getByRole('heading', { name: 'SSH keys' }));
    await assertFits(page, viewport, 'the SFTP host key');
    await screenshot(page, 'profile-sftp-host-key', viewport, colorScheme);
    await assertAccessible(page, `the SFTP host key, ${colorScheme}`);

    await openFiles(page);
    await sftpLine(page).waitFor();
    await scrollToTop(page.getByRole('heading', { name: 'Files', exact: true }));
    await assertFits(page, viewport, 'the SFTP address');
    await screenshot(page, 'files-sftp', viewport, colorScheme);
    await assertAccessible(page, `the SFTP address, ${colorScheme}`);
  });
});
