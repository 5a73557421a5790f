/**
 * Files tab journeys: uploading two files with their progress, editing one and saving with
 * Ctrl+S, the change still there after a reload, a download compared byte for byte; making,
 * renaming, moving and deleting (with its confirmation), the API's refusal shown, the question
 * before unsaved changes are left, a drop of files onto the list, a cancelled upload that leaves
 * nothing, and the tab on a phone; a file the server's template protects, refused in words to a
 * sub-user.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

const PROPERTIES = 'motd=A Minecraft Server\nmax-players=20\n';
const OPS = '[{"name":"admin","level":4}]\n';

const list = (page: Page) => page.getByRole('list', { name: /^Content of/ });
const row = (page: Page, name: string) =>
  list(page)
    .getByRole('listitem')
    .filter({ has: page.getByRole('link', { name, exact: true }) });
const editorText = (page: Page) => page.getByRole('textbox', { name: /^Content of/ });

async function openFiles(page: Page, folder = '') {
  await page.goto(`/servers/world/files${folder}`);
  await page.getByRole('heading', { name: 'Files', exact: true }).waitFor();
}

async function names(page: Page): Promise<string[]> {
  return list(page).getByRole('link').allTextContents();
}

describe('files', () => {
  let admin = '';
  const journeyOf = journey({
    setUp: async (panel) => {
      admin = await register(panel, 'admin');
      await panel.api(
        'POST',
        '/api/servers/create',
        { name: 'world', startCommand: '/bin/cat' },
        admin,
      );
      // A server whose template protects its start script, and a sub-user who may change files.
      await register(panel, 'member');
      const template = await panel.api<{ data: { id: string } }>(
        'POST',
        '/api/templates/import',
        {
          meta: { version: 'PTDL_v2' },
          name: 'Palworld-like',
          author: 'tests@example.com',
          docker_images: { Debian: 'example/debian:12' },
          file_denylist: ['PalServer.sh'],
          startup: '/bin/cat',
          config: { files: '{}', startup: '{}', logs: '{}', stop: '^C' },
          variables: [],
        },
        admin,
      );
      await panel.api(
        'POST',
        '/api/servers/create',
        { name: 'pal', template: template.data.id },
        admin,
      );
      await panel.api(
        'PUT',
        '/api/servers/pal/files/content?path=PalServer.sh',
        { content: '#!/bin/sh\n' },
        admin,
      );
      await panel.api(
        'PUT',
        '/api/servers/pal/users/member',
        { permissions: ['files.read', 'files.write'] },
        admin,
      );
    },
  });
  const { tab } = journeyOf;

  it('uploads two files with progress, edits one, saves, reloads and downloads it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openFiles(page);
    await page.getByText('This folder is empty').waitFor();
    await assertAccessible(page, 'the empty Files tab');

    await page.getByLabel('Upload', { exact: true }).setInputFiles([
      { name: 'server.properties', mimeType: 'text/plain', buffer: Buffer.from(PROPERTIES) },
      { name: 'ops.json', mimeType: 'application/json', buffer: Buffer.from(OPS) },
    ]);
    for (const name of ['server.properties', 'ops.json']) {
      const bar = page.getByRole('progressbar', { name: `Uploading ${name}` });
      await bar.waitFor();
      const upload = page.getByRole('listitem', { name });
      await upload.getByText('Uploaded').waitFor();
      assert.equal(await bar.getAttribute('value'), await bar.getAttribute('max'));
    }
    await row(page, 'server.properties').waitFor();
    // Folders first, then by name: two files here, by name.
    assert.deepEqual(await names(page), ['ops.json', 'server.properties']);
    await row(page, 'ops.json').getByText('29 B').waitFor();
    await assertAccessible(page, 'the file list with uploads');

    await row(page, 'server.properties').getByRole('link').click();
    await page.waitForURL('**/servers/world/files/server.properties?edit');
    await editorText(page).getByText('max-players=20').waitFor();
    await page.getByRole('status').getByText('Saved').waitFor();
    await assertAccessible(page, 'the editor');

    await editorText(page).click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type('difficulty=hard');
    await page.getByRole('status').getByText('Unsaved changes').waitFor();
    await page.keyboard.press('Control+s');
    await page.getByRole('status').getByText('Saved', { exact: true }).waitFor();

    await page.reload();
    await editorText(page).getByText('difficulty=hard').waitFor();
    const expected = `${PROPERTIES}difficulty=hard`;

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download', exact: true }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'server.properties');
    const file = await download.path();
    assert.equal(await readFile(file, 'utf8'), expected);
    // The link served its one use.
    assert.match(download.url(), /\/api\/downloads\/[\w-]{43}$/);
    const again = await page.request.get(download.url());
    assert.equal(again.status(), 404);
    assertClean();
  });

  it('makes, renames, moves and deletes, and shows what the API refuses', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openFiles(page);
    await row(page, 'ops.json').waitFor();

    await page.getByRole('button', { name: 'New folder', exact: true }).click();
    await page.getByLabel('Folder name').fill('plugins');
    await page.getByRole('button', { name: 'Create folder', exact: true }).click();
    await row(page, 'plugins/').waitFor();

    await page.getByRole('button', { name: 'New file', exact: true }).click();
    await page.getByLabel('File name').fill('ops.json');
    await page.getByRole('button', { name: 'Create file', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText(/already exists/)
      .waitFor();
    await assertAccessible(page, 'a refused creation');
    await page.getByLabel('File name').fill('notes.txt');
    await page.getByRole('button', { name: 'Create file', exact: true }).click();
    await row(page, 'notes.txt').waitFor();
    assert.deepEqual(await names(page), ['plugins/', 'notes.txt', 'ops.json', 'server.properties']);

    await row(page, 'notes.txt').getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByLabel('New name for notes.txt').fill('ops.json');
    await page.locator('form').getByRole('button', { name: 'Rename', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText(/exists/)
      .waitFor();
    await page.getByLabel('New name for notes.txt').fill('readme.txt');
    await page.locator('form').getByRole('button', { name: 'Rename', exact: true }).click();
    await row(page, 'readme.txt').waitFor();

    await row(page, 'readme.txt').getByRole('button', { name: 'Move', exact: true }).click();
    await page.getByLabel('Move readme.txt to').fill('plugins');
    await page.locator('form').getByRole('button', { name: 'Move', exact: true }).click();
    await row(page, 'plugins/').waitFor();
    await list(page)
      .getByRole('link', { name: 'readme.txt', exact: true })
      .waitFor({ state: 'detached' });

    // Into the folder: the breadcrumbs and the URL follow.
    await row(page, 'plugins/').getByRole('link').click();
    await page.waitForURL('**/servers/world/files/plugins');
    await row(page, 'readme.txt').waitFor();
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' });
    assert.equal(await crumbs.locator('[aria-current="page"]').textContent(), 'plugins');
    await page.reload();
    await row(page, 'readme.txt').waitFor();
    await crumbs.getByRole('link', { name: 'Files', exact: true }).click();
    await page.waitForURL('**/servers/world/files');

    await row(page, 'plugins/').getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('group', { name: 'Delete plugins?' });
    await confirm.getByText('and everything in it').waitFor();
    await assertAccessible(page, 'the delete confirmation');
    await confirm.getByRole('button', { name: 'Cancel', exact: true }).click();
    await row(page, 'plugins/').waitFor();
    await row(page, 'plugins/').getByRole('button', { name: 'Delete', exact: true }).click();
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await list(page)
      .getByRole('link', { name: 'plugins/', exact: true })
      .waitFor({ state: 'detached' });
    const listed = await journeyOf.panel.api<{ data: { name: string }[] }>(
      'GET',
      '/api/servers/world/files?path=',
      undefined,
      admin,
    );
    assert.deepEqual(
      listed.data.map((entry) => entry.name),
      ['ops.json', 'server.properties'],
    );
    assertClean();
  });

  it('asks before unsaved changes are left', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    // Opened from the list, so that the browser's back stays within the app.
    await openFiles(page);
    await row(page, 'ops.json').getByRole('link').click();
    await editorText(page).getByText('"admin"').waitFor();
    await editorText(page).click();
    await page.keyboard.type(' ');
    await page.getByRole('status').getByText('Unsaved changes').waitFor();

    await page.getByRole('link', { name: 'Back to the folder' }).click();
    const ask = page.getByRole('alertdialog');
    await ask.getByText('has unsaved changes').waitFor();
    await assertAccessible(page, 'the unsaved-changes question');
    await ask.getByRole('button', { name: 'Stay', exact: true }).click();
    assert.match(page.url(), /ops\.json\?edit$/);
    await page.getByRole('status').getByText('Unsaved changes').waitFor();

    // The browser's back is asked about too.
    await page.goBack();
    await ask.waitFor();
    await ask.getByRole('button', { name: 'Leave', exact: true }).click();
    await page.waitForURL((url) => !url.search.includes('edit'));

    await page.goto('/servers/world/files/ops.json?edit');
    await editorText(page).getByText('"admin"').waitFor();
    assert.equal(await editorText(page).textContent(), OPS.trimEnd(), 'nothing was saved');
    assertClean();
  });

  it('uploads files dropped onto the list, and a cancelled upload leaves nothing', async () => {
    const { page, context, assertClean } = await tab();
    await signIn(page, 'admin');
    await openFiles(page);
    await row(page, 'ops.json').waitFor();

    const zone = page.getByTestId('drop-zone');
    const transfer = await page.evaluateHandle(() => {
      const data = new DataTransfer();
      data.items.add(new File(['dropped\n'], 'dropped.txt', { type: 'text/plain' }));
      return data;
    });
    await zone.dispatchEvent('dragenter', { dataTransfer: transfer });
    await zone.dispatchEvent('dragover', { dataTransfer: transfer });
    await page.getByText('Drop to upload into /').waitFor();
    await zone.dispatchEvent('drop', { dataTransfer: transfer });
    await page.getByRole('listitem', { name: 'dropped.txt' }).getByText('Uploaded').waitFor();
    await row(page, 'dropped.txt').waitFor();

    // A slow line, so that the upload is still under way when it is cancelled.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 64 * 1024,
    });
    await page.getByLabel('Upload', { exact: true }).setInputFiles({
      name: 'big.bin',
      mimeType: 'application/octet-stream',
      buffer: Buffer.alloc(4 * 1024 * 1024, 7),
    });
    const upload = page.getByRole('listitem', { name: 'big.bin' });
    await upload.getByRole('progressbar', { name: 'Uploading big.bin' }).waitFor();
    await upload.getByRole('button', { name: 'Cancel', exact: true }).click();
    await upload.getByText('Cancelled').waitFor();
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await page.reload();
    await row(page, 'dropped.txt').waitFor();
    assert.ok(!(await names(page)).includes('big.bin'));
    const listed = await journeyOf.panel.api<{ data: { name: string }[] }>(
      'GET',
      '/api/servers/world/files?path=',
      undefined,
      admin,
    );
    assert.ok(!listed.data.some((entry) => entry.name.includes('big')));
    assertClean();
  });

  it('tells a sub-user in words that the template protects a file', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'member');
    await page.goto('/servers/pal/files');
    await page.getByRole('heading', { name: 'Files', exact: true }).waitFor();
    const refusal = `PalServer.sh is protected by the template's rule "PalServer.sh"`;

    // Listed as any file; opening it in the editor says why it cannot be.
    await row(page, 'PalServer.sh').getByRole('link').click();
    await page.waitForURL('**/servers/pal/files/PalServer.sh?edit');
    await page.getByRole('alert').getByText(refusal).waitFor();
    assert.equal(await editorText(page).count(), 0);
    await assertAccessible(page, 'a protected file in the editor');

    await page.getByRole('link', { name: 'Back to the folder', exact: true }).click();
    await row(page, 'PalServer.sh').getByRole('button', { name: 'Download', exact: true }).click();
    await row(page, 'PalServer.sh').getByRole('alert').getByText(refusal).waitFor();
    await row(page, 'PalServer.sh').getByRole('button', { name: 'Delete', exact: true }).click();
    await page
      .getByRole('group', { name: 'Delete PalServer.sh?' })
      .getByRole('button', { name: 'Delete', exact: true })
      .click();
    await row(page, 'PalServer.sh').getByRole('alert').getByText(refusal).waitFor();
    await assertAccessible(page, 'a refused delete of a protected file');

    const kept = await journeyOf.panel.api<{ data: { content: string } }>(
      'GET',
      '/api/servers/pal/files/content?path=PalServer.sh',
      undefined,
      admin,
    );
    assert.equal(kept.data.content, '#!/bin/sh\n');
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const scheme of ['light', 'dark'] as const) {
      it(`fits ${viewport.width} px in ${scheme}`, async () => {
        const { page, assertClean } = await tab(viewport, scheme);
        await signIn(page, 'admin');
        await openFiles(page);
        await row(page, 'server.properties').waitFor();
        const sideways = () =>
          page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
        assert.equal(await sideways(), false, 'no sideways scrolling on the list');
        await list(page).scrollIntoViewIfNeeded();
        await screenshot(page, 'files', viewport, scheme);
        if (viewport === PHONE) await assertAccessible(page, 'the list on a phone');

        await row(page, 'server.properties').getByRole('link').click();
        await editorText(page).getByText('difficulty=hard').waitFor();
        assert.equal(await sideways(), false, 'no sideways scrolling in the editor');
        await page.getByRole('button', { name: 'Save', exact: true }).scrollIntoViewIfNeeded();
        await screenshot(page, 'editor', viewport, scheme);
        assertClean();
      });
    }
  }
});
