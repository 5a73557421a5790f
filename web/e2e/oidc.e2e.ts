/**
 * Signing in through OpenID Connect in the browser, against a real provider (the `oidc-provider`
 * package, with its development login and consent pages) running in this process: the button on
 * the sign-in page, the provider's pages, back to the panel signed in with the token nowhere in
 * the address bar or history; and, where registration is closed, a newcomer refused with the
 * reason shown.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';
import { assertAccessible, journey, register } from './helpers/journey.js';
import { freePort } from './helpers/panel.js';

const CLIENT_ID = 'game-panel';
const CLIENT_SECRET = 'e2e-client-secret';

/** The provider's HTTP server, listening before the panel starts so its issuer is known. */
const server = http.createServer();

/** Mounts a provider whose one client is a panel at `panelUrl`; any login name is accepted. */
async function mountProvider(issuer: string, panelUrl: string): Promise<void> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'e2e-key', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${panelUrl}/api/auth/oidc/test/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['e2e-provider-cookie-key'] },
    claims: { openid: ['sub'], profile: ['preferred_username'] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: `sub-${id}`, preferred_username: id }),
    }),
  });
  const handle = provider.callback();
  server.removeAllListeners('request');
  server.on('request', (request, response) => {
    void handle(request, response);
  });
}

/** Through the provider's development pages: any login name, any password, then consent. */
async function signInAtProvider(page: Page, login: string) {
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** The panel's settings for a provider at `issuer`, the panel itself at a port chosen here. */
async function panelEnv(extra: Record<string, string>) {
  const port = await freePort();
  const panelUrl = `http://127.0.0.1:${port}`;
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await mountProvider(issuer, panelUrl);
  return {
    PORT: String(port),
    PUBLIC_URL: panelUrl,
    OIDC_PROVIDERS: JSON.stringify([
      { id: 'test', name: 'Test IdP', issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    ]),
    ...extra,
  };
}

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('OpenID Connect sign-in', () => {
  let env: Record<string, string> = {};
  before(async () => {
    env = await panelEnv({});
  });
  const { tab } = journey({
    env: () => env,
    setUp: async (panel) => {
      await register(panel, 'admin');
    },
  });

  it('signs a newcomer in through the provider, with the token left nowhere', async () => {
    const { page, assertClean } = await tab();
    await page.goto('/sign-in');
    await signInAtProvider(page, 'steve');
    await page.waitForURL('**/servers');
    const header = page.getByRole('banner');
    await header.getByText('steve', { exact: true }).waitFor();
    await header.getByText('user', { exact: true }).waitFor();
    assert.ok(!page.url().includes('access_token'), page.url());
    assert.equal(await page.evaluate(() => window.location.hash), '');
    await assertAccessible(page, 'the servers page after a provider sign-in');

    // A reload keeps the session; signing out and in again finds the same account.
    await page.reload();
    await header.getByText('steve', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL('**/sign-in');
    // The provider remembers its own session: no login form this time, at most its consent.
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    const consent = page.getByRole('button', { name: 'Continue' });
    await Promise.race([
      page.waitForURL('**/servers').catch(() => undefined),
      consent.waitFor().catch(() => undefined),
    ]);
    if (await consent.isVisible()) await consent.click();
    await page.waitForURL('**/servers');
    await header.getByText('steve', { exact: true }).waitFor();
    assertClean();
  });
});

describe('OpenID Connect sign-in where registration is closed', () => {
  let env: Record<string, string> = {};
  before(async () => {
    env = await panelEnv({ REGISTRATION: 'closed' });
  });
  const { tab } = journey({ env: () => env });

  it('refuses a newcomer and says why on the sign-in page', async () => {
    const { page, assertClean } = await tab();
    await page.goto('/sign-in');
    await signInAtProvider(page, 'stranger');
    await page.waitForURL('**/sign-in');
    await page
      .getByRole('status')
      .getByText('Registration is closed on this panel, and no account is linked to that sign-in')
      .waitFor();
    assert.equal(await page.evaluate(() => window.location.hash), '');
    assertClean();
  });
});
