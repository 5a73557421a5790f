/**
 * Reaching the panel safely, as docs/deploy.md says: a panel serving TLS itself from a
 * certificate of a throwaway CA (openssl) is signed into over https, shows no warning, and a
 * server's live console runs over wss (a command typed, its answer seen). A panel opened over
 * plain http from another machine (a name Chromium resolves to loopback) shows the banner on
 * sign-in and registration, at 1280×800 and 375×812, light and dark; opened on loopback it does
 * not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { makeTestCa, type TestCa } from '../../test/helpers/certificates.js';
import { DESKTOP, PHONE, launchBrowser, openTab, screenshot, type Tab } from './helpers/browser.js';
import { seeInConsole, sendCommand } from './helpers/console.js';
import { gameServerFixture } from './helpers/fixture.js';
import { PASSWORD, assertAccessible, register, signIn } from './helpers/journey.js';
import { startPanel, type E2ePanel } from './helpers/panel.js';

const BANNER =
  'This connection is not encrypted: your password would cross the network in clear. Ask the operator to set up HTTPS (docs/deploy.md).';

describe('a panel serving TLS itself', () => {
  let ca: TestCa;
  const fixture = gameServerFixture();
  let panel: E2ePanel;
  let browser: Browser;
  let admin = '';
  const tabs: Tab[] = [];

  before(async () => {
    ca = makeTestCa();
    const certificate = ca.issue('panel');
    panel = await startPanel(
      {
        TLS_CERT_FILE: certificate.certFile,
        TLS_KEY_FILE: certificate.keyFile,
        SANDBOX_READ_ONLY_PATHS: fixture.folder,
      },
      { ca: ca.caPem },
    );
    browser = await launchBrowser();
    admin = await register(panel, 'admin');
    await panel.api(
      'POST',
      '/api/servers/create',
      { name: 'secure', displayName: 'Secure', startCommand: fixture.startCommand },
      admin,
    );
  });
  after(async () => {
    for (const { context } of tabs) await context.close().catch(() => undefined);
    await browser.close();
    await panel.close();
    fixture.remove();
    ca.remove();
  });

  it('signs in over https and runs the live console over wss', async () => {
    assert.match(panel.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const tab = await openTab(browser, panel.url, { ignoreHTTPSErrors: true });
    tabs.push(tab);
    const { page, assertClean } = tab;
    const sockets: string[] = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));

    await page.goto('/sign-in');
    assert.equal(new URL(page.url()).protocol, 'https:');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    assert.equal(await page.getByText(BANNER).count(), 0, 'no warning over https');
    await signIn(page, 'admin', PASSWORD);

    await page.goto('/servers/secure');
    await page.getByRole('heading', { level: 1, name: 'Secure' }).waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await seeInConsole(page, 'Done! pid=');
    await sendCommand(page, 'say hello over wss');
    await seeInConsole(page, '[Server] hello over wss');
    assert.ok(sockets.length > 0, 'the console opened a socket');
    for (const url of sockets) assert.match(url, /^wss:\/\/127\.0\.0\.1:\d+\/ws\//);

    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped', { exact: true }).waitFor();
    assertClean();
  });
});

describe('a panel reached over plain http', () => {
  let panel: E2ePanel;
  let browser: Browser;
  const tabs: Tab[] = [];
  // A name that is not loopback, resolved by Chromium alone to the panel's loopback address: the
  // page sees what a browser on another machine sees, without the panel leaving loopback.
  const REMOTE_NAME = 'panel.example.test';

  before(async () => {
    panel = await startPanel();
    browser = await launchBrowser([`--host-resolver-rules=MAP ${REMOTE_NAME} 127.0.0.1`]);
  });
  after(async () => {
    for (const { context } of tabs) await context.close().catch(() => undefined);
    await browser.close();
    await panel.close();
  });

  const remoteUrl = () => panel.url.replace('127.0.0.1', REMOTE_NAME);

  it('warns on sign-in and registration when the page came over http from another machine', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const tab = await openTab(browser, remoteUrl(), { viewport, colorScheme });
        tabs.push(tab);
        const { page, assertClean } = tab;
        await page.goto('/sign-in');
        assert.equal(new URL(page.url()).hostname, REMOTE_NAME);
        const banner = page.getByRole('alert').filter({ hasText: BANNER });
        await banner.waitFor();
        assert.equal(await banner.isVisible(), true);
        const box = await banner.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= viewport.width, 'fits the width');
        await assertAccessible(page, `the sign-in page with the banner (${colorScheme})`);
        await screenshot(page, 'sign-in-unencrypted', viewport, colorScheme);

        await page.goto('/register');
        await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
        await page.getByRole('alert').filter({ hasText: BANNER }).waitFor();
        assertClean();
      }
    }
  });

  it('says nothing on loopback, where the password never leaves the machine', async () => {
    const tab = await openTab(browser, panel.url);
    tabs.push(tab);
    const { page, assertClean } = tab;
    await page.goto('/sign-in');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    assert.equal(await page.getByText(BANNER).count(), 0);
    await page.goto('/register');
    await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
    assert.equal(await page.getByText(BANNER).count(), 0);
    assertClean();
  });
});
