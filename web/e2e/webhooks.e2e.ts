/**
 * Webhooks journey: an admin is refused a URL the panel may not call (the API's message), makes
 * a webhook for a local receiver (allowed by WEBHOOK_ALLOWED_HOSTS), sees its secret once, sends
 * a test ping that the receiver gets signed with that secret and that the history then shows
 * delivered; edits it, rotates its secret and deletes it. The page at 1280×800 and 375×812,
 * light and dark.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A local receiver answering 200 to every POST, keeping what it got. */
function receiver(): { server: Server; received: Received[] } {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString() });
      response.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  return { server, received };
}

const newForm = (page: Page) => page.getByRole('form', { name: 'New webhook' });
const row = (page: Page, name: string) =>
  page.getByRole('region', { name: 'Webhook list' }).getByRole('listitem', { name });

async function waitFor<T>(what: string, find: () => T | undefined): Promise<T> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('webhooks', () => {
  const { server, received } = receiver();
  let port = 0;
  // Registered before the journey's own hook, so the panel starts knowing the receiver's port.
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
  });
  const { tab } = journey({
    env: () => ({ WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}` }),
    setUp: async (panel) => {
      await register(panel, 'admin');
    },
  });
  const hookUrl = () => `http://127.0.0.1:${port}/panel-events`;

  /** Fills and submits the new-webhook form; answers the secret shown once. */
  async function create(page: Page, description: string): Promise<string> {
    await newForm(page).getByLabel('Payload URL').fill(hookUrl());
    await newForm(page).getByLabel('Description').fill(description);
    await newForm(page).getByRole('checkbox', { name: 'Event server.crashed' }).check();
    await newForm(page).getByRole('checkbox', { name: 'Event ticket.created' }).check();
    await newForm(page).getByRole('button', { name: 'Create webhook' }).click();
    const once = page.getByRole('group', { name: `Secret of ${description}` });
    await once.getByText("you won't see it again").waitFor();
    const secret = (await once.locator('code').textContent()) ?? '';
    assert.ok(secret.length >= 16, `a secret (${secret})`);
    return secret;
  }

  it('makes a webhook whose test ping arrives signed and shows delivered', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet').waitFor();
    await assertAccessible(page, 'the empty webhooks page');

    // A private address the configuration does not allow: the API's refusal, in the form.
    await newForm(page).getByLabel('Payload URL').fill('http://10.20.30.40/hook');
    await newForm(page).getByRole('checkbox', { name: 'Event backup.failed' }).check();
    await newForm(page).getByRole('button', { name: 'Create webhook' }).click();
    const refusal = newForm(page).getByRole('alert');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /\S/);
    assert.equal(
      await newForm(page).getByLabel('Payload URL').getAttribute('aria-invalid'),
      'true',
      'the URL is marked as the field refused',
    );
    assert.equal(await page.getByRole('group', { name: /^Secret of/ }).count(), 0);
    await newForm(page).getByRole('checkbox', { name: 'Event backup.failed' }).uncheck();

    const secret = await create(page, 'Alerts');
    await assertAccessible(page, 'the secret shown once');
    await page.getByRole('button', { name: 'Done, I have stored it' }).click();
    const alerts = row(page, 'Alerts');
    await alerts.getByText(hookUrl()).waitFor();
    await alerts.getByText('None yet').waitFor();

    await alerts.getByRole('button', { name: 'Send test to Alerts' }).click();
    await alerts.getByText('Test ping queued').waitFor();
    const ping = await waitFor('the ping', () =>
      received.find((request) => request.headers['x-panel-event'] === 'ping'),
    );
    const timestamp = String(ping.headers['x-panel-timestamp']);
    const expected = createHmac('sha256', secret).update(`${timestamp}.${ping.body}`).digest('hex');
    assert.equal(ping.headers['x-panel-signature'], `sha256=${expected}`);
    assert.equal(ping.headers['content-type'], 'application/json');
    assert.equal((JSON.parse(ping.body) as { event: string }).event, 'ping');

    const history = alerts.getByRole('list', { name: `Deliveries to ${hookUrl()}` });
    await history
      .getByRole('listitem')
      .first()
      .getByText('Delivered', { exact: true })
      .waitFor({ timeout: 20_000 });
    await history.getByText('200', { exact: true }).waitFor();
    await alerts.getByText('Delivered', { exact: true }).first().waitFor();
    await assertAccessible(page, 'a webhook with its deliveries');
    assertClean();
  });

  it('edits a webhook, rotates its secret and deletes it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/webhooks');
    const first = await create(page, 'Ops');
    await page.getByRole('button', { name: 'Done, I have stored it' }).click();

    await row(page, 'Ops').getByRole('button', { name: 'Edit Ops' }).click();
    const edit = page.getByRole('form', { name: 'Edit Ops' });
    await edit.getByLabel('Description').fill('Ops paused');
    await edit.getByRole('checkbox', { name: 'Event ticket.created' }).uncheck();
    await edit.getByLabel('Enabled: send deliveries').uncheck();
    await assertAccessible(page, 'the edit form');
    await edit.getByRole('button', { name: 'Save webhook' }).click();
    const paused = row(page, 'Ops paused');
    await paused.getByText('Disabled', { exact: true }).waitFor();
    assert.equal(await paused.getByText('ticket.created', { exact: true }).count(), 0);

    await paused.getByRole('button', { name: 'Rotate secret of Ops paused' }).click();
    await paused.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    const once = paused.getByRole('group', { name: 'New secret of Ops paused' });
    const second = (await once.locator('code').textContent()) ?? '';
    assert.ok(second.length >= 16 && second !== first, 'a new secret');
    await once.getByRole('button', { name: 'Done, I have stored it' }).click();

    await paused.getByRole('button', { name: 'Delete Ops paused' }).click();
    await paused.getByRole('group', { name: 'Delete Ops paused?' }).waitFor();
    await paused.getByRole('button', { name: 'Delete webhook' }).click();
    await row(page, 'Ops paused').waitFor({ state: 'detached' });
    assertClean();
  });

  describe('screenshots', () => {
    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await page.goto('/webhooks');
          const alerts = row(page, 'Alerts');
          await alerts.getByRole('button', { name: 'Show deliveries of Alerts' }).click();
          await alerts.getByText('Delivered', { exact: true }).first().waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          await alerts.evaluate((item) => {
            item.scrollIntoView();
          });
          await screenshot(page, 'webhooks', viewport, colorScheme);
          await newForm(page).evaluate((form) => {
            form.scrollIntoView();
          });
          await screenshot(page, 'webhooks-form', viewport, colorScheme);
          await assertAccessible(page, `the webhooks page, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
