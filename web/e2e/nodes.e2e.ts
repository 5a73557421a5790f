/**
 * Nodes journey (issue 30; docs/nodes.md), against real Docker engines standing in for remote
 * nodes (test/helpers/docker-nodes.ts: each a dockerd in a network namespace of its own, reached
 * only with mutual TLS). The admin sees `local` online; a form sent empty says what is missing;
 * node-1 is added with its PEM texts pasted, first with a CA that did not sign its engine's
 * certificate (the engine's reason at the top of the form, every field kept), then with the right
 * CA chosen as a file; it shows online with the engine's own version, goes into maintenance, gets
 * a memory capacity, and is removed after the confirmation. No PEM text is in any answer, nor on
 * the page once added. A user sees no Nodes link, and the API's refusal at /nodes. The page at
 * 1280×800 and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { makeTestCa } from '../../test/helpers/certificates.js';
import { dockerNodesForTests } from '../../test/helpers/docker-nodes.js';
import { screenshot, scrollToTop } from './helpers/browser.js';
import {
  assertAccessible,
  assertFits,
  journey,
  register,
  screenshots,
  signIn,
} from './helpers/journey.js';

const engines = await dockerNodesForTests(2);

interface ListedNode {
  name: string;
  maintenance: boolean;
  memoryBytes: number | null;
  health: { status: string };
}

describe('nodes', { skip: engines.ok ? false : engines.why }, () => {
  let admin = '';
  const files = mkdtempSync(path.join(tmpdir(), 'panel-nodes-e2e-'));
  const wrongCa = makeTestCa({ name: 'Not the nodes CA' });
  const run = journey({
    setUp: async (started) => {
      admin = await register(started, 'admin');
      await register(started, 'player');
    },
  });
  const { tab } = run;
  after(() => {
    rmSync(files, { recursive: true, force: true });
    wrongCa.remove();
  });
  const nodes = () => {
    assert.ok(engines.ok);
    return engines.nodes;
  };
  const listed = async () =>
    (await run.panel.api<{ data: ListedNode[] }>('GET', '/api/admin/nodes', undefined, admin)).data;
  const card = (page: Page, name: string): Locator =>
    page.getByRole('region', { name: 'Node list' }).getByRole('listitem', { name, exact: true });

  it('adds a node over mutual TLS: a wrong CA refused in words, then online, then removed', async () => {
    const [node] = nodes();
    assert.ok(node);
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Nodes' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Nodes' }).waitFor();
    const local = card(page, 'local');
    await local.getByText('Online', { exact: true }).waitFor();
    await local.getByText('This machine').waitFor();
    await page.getByText('No other node yet').waitFor();
    await assertAccessible(page, 'the nodes page');

    // Sent empty: what is missing is said under each field, and nothing is sent.
    const form = page.getByRole('form', { name: 'New node' });
    await form.getByRole('button', { name: 'Add node' }).click();
    await form.getByText('Enter a name for the node').waitFor();
    await form.getByText('Paste the CA certificate (ca.pem), or choose its file').waitFor();
    assert.equal(
      await form.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'),
      'true',
    );

    // The PEM texts pasted, but a CA that did not sign the engine's certificate.
    await form.getByLabel('Name', { exact: true }).fill(node.name);
    await form.getByLabel('Docker host').fill(node.dockerHost);
    assert.equal(
      await form.getByRole('radio', { name: /Mutual TLS/ }).isChecked(),
      true,
      'tcp:// chooses mutual TLS',
    );
    const ca = form.getByLabel('CA certificate', { exact: true });
    await ca.fill(wrongCa.caPem.toString());
    await form.getByLabel('Client certificate', { exact: true }).fill(node.tls.cert);
    await form.getByLabel('Client key', { exact: true }).fill(node.tls.key);
    await form.getByLabel('Public address').fill(node.address);

    // A name the API refuses: its rule in words, under the name.
    const name = form.getByLabel('Name', { exact: true });
    await name.fill('Node One');
    await form.getByRole('button', { name: 'Add node' }).click();
    await form.getByText(/^Use lower-case letters \(a to z\), digits and dashes/).waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    await form.getByText('Not added: see the fields marked above.').waitFor();
    await name.fill(node.name);

    await form.getByRole('button', { name: 'Add node' }).click();
    const top = form.getByRole('alert').filter({ hasText: 'cannot be used' });
    await top.getByText(/is not signed by the CA given \(ca\); nothing was saved/).waitFor();
    await form.getByText('Not added: see why at the top of the form.').waitFor();
    // Nothing is lost: every field as typed.
    assert.equal(await form.getByLabel('Name', { exact: true }).inputValue(), node.name);
    assert.equal(await form.getByLabel('Docker host').inputValue(), node.dockerHost);
    assert.equal(await ca.inputValue(), wrongCa.caPem.toString());
    assert.equal(await form.getByLabel('Client key', { exact: true }).inputValue(), node.tls.key);
    assert.equal(await form.getByLabel('Public address').inputValue(), node.address);
    assert.deepEqual(
      (await listed()).map((each) => each.name),
      ['local'],
      'nothing saved',
    );
    await assertAccessible(page, 'the engine refusal');

    // The right CA, chosen as a file: its text fills the field.
    const caFile = path.join(files, 'ca.pem');
    writeFileSync(caFile, node.tls.ca);
    await form.getByLabel('Or choose ca.pem').setInputFiles(caFile);
    await until(
      async () => (await ca.inputValue()) === node.tls.ca,
      'the file read into the field',
    );
    await form.getByRole('button', { name: 'Add node' }).click();
    await form.getByText(`Node ${node.name} added`).waitFor();
    assert.equal(await ca.inputValue(), '', 'the form starts again');
    assert.equal(await form.getByLabel('Client key', { exact: true }).inputValue(), '');

    // Online, with the engine's own version.
    const added = card(page, node.name);
    const version = (await node.docker.version()).Version;
    await added.getByText('Online', { exact: true }).waitFor();
    await added.getByText(`Docker ${version}`, { exact: false }).waitFor();
    await added.getByText('Mutual TLS').waitFor();
    await added.getByText(node.dockerHost).waitFor();
    await added.getByText('Not counted (0 B allocated)').first().waitFor();
    assert.equal(await page.getByText('No other node yet').count(), 0);

    // The certificates and key are in no answer and nowhere on the page.
    const keyBody = node.tls.key.split('\n')[1] ?? '';
    assert.ok(keyBody.length > 20);
    const answer = JSON.stringify(
      await run.panel.api('GET', `/api/admin/nodes/${node.name}`, undefined, admin),
    );
    assert.ok(!answer.includes(keyBody) && !answer.includes('BEGIN'), 'no PEM text answered');
    assert.ok(!(await page.content()).includes(keyBody), 'no key on the page');

    // Maintenance, saved as it is switched.
    await added.getByRole('switch', { name: `Maintenance of ${node.name}` }).check();
    await added.getByText('Maintenance', { exact: true }).waitFor();
    await until(
      async () => (await listed()).find((each) => each.name === node.name)?.maintenance === true,
      'maintenance to be saved',
    );

    // Its settings: a memory capacity with overallocation, and a bar against it.
    await added.getByRole('button', { name: `Edit settings of ${node.name}` }).click();
    const settings = added.getByRole('form', { name: `Settings of ${node.name}` });
    await settings.getByLabel('Memory for servers').fill('8');
    await settings.getByLabel('Memory overallocation').fill('25');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await added.getByRole('meter', { name: `Memory allocated on ${node.name}` }).waitFor();
    await added.getByText('0 B of 10 GiB').waitFor();
    await added.getByText('8 GiB + 25 % overallocation').waitFor();
    assert.equal(
      (await listed()).find((each) => each.name === node.name)?.memoryBytes,
      8 * 2 ** 30,
    );
    await assertAccessible(page, 'a node added');

    // Removed, once confirmed.
    await added.getByRole('button', { name: `Remove ${node.name}` }).click();
    const confirm = added.getByRole('group', { name: `Remove ${node.name}?` });
    await confirm.getByText('Nothing on the machine is touched').waitFor();
    await confirm.getByRole('button', { name: 'Remove node' }).click();
    await added.waitFor({ state: 'detached' });
    assert.deepEqual(
      (await listed()).map((each) => each.name),
      ['local'],
    );
    assert.equal(
      await local.getByRole('button', { name: 'Remove local' }).count(),
      0,
      'local is not offered for removal',
    );
    assertClean();
  });

  it('is not offered to a user, and refused to one who opens it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    assert.equal(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Nodes' })
        .count(),
      0,
    );
    await page.goto('/nodes');
    await page.getByRole('heading', { level: 1, name: 'Nodes' }).waitFor();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByRole('form', { name: 'New node' }).count(), 0);
    assertClean();
  });

  it('shows a second node for the screenshots', async () => {
    const [, second] = nodes();
    assert.ok(second);
    await run.panel.api(
      'POST',
      '/api/admin/nodes',
      {
        name: second.name,
        dockerHost: second.dockerHost,
        tls: second.tls,
        publicAddress: second.address,
        memoryBytes: 16 * 2 ** 30,
        diskBytes: 200 * 2 ** 30,
        diskOverallocatePercent: 10,
      },
      admin,
    );
  });

  screenshots(tab, async (page, viewport, colorScheme) => {
    const [, second] = nodes();
    assert.ok(second);
    await signIn(page, 'admin');
    await page.goto('/nodes');
    await card(page, second.name).getByText('Online', { exact: true }).waitFor();
    await card(page, 'local').getByText('Online', { exact: true }).waitFor();
    await assertFits(page, viewport, 'the nodes page');
    await assertAccessible(page, `the nodes page, ${colorScheme}`);
    await screenshot(page, 'nodes', viewport, colorScheme);
    await scrollToTop(page.getByRole('heading', { level: 2, name: 'Add a node' }));
    await screenshot(page, 'nodes-add', viewport, colorScheme);
  });
});

/** Waits for `condition`, asked every 100 ms, at most 10 s. */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; !(await condition()); attempt += 1) {
    assert.ok(attempt < 100, `${what} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
