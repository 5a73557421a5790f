/**
 * Egg features journeys (docs/templates.md, "What eggs' features promise"): a server made from an
 * egg with `features: ["eula"]` runs the stand-in game, which asks for the Minecraft EULA until
 * eula.txt says true. A user with files.write and power presses Start, is asked to accept the
 * EULA (a dialog, with the link), puts it off, comes back to it and accepts: eula.txt is written
 * and the server runs. A reader without those permissions is told who can accept it. A user with
 * settings chooses another of the template's images on the Settings tab. The dialog at 1280×800
 * and 375×812, light and dark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { seeInConsole } from './helpers/console.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';
import type { E2ePanel } from './helpers/panel.js';

const IMAGES = {
  'Java 21': 'ghcr.io/pterodactyl/yolks:java_21',
  'Java 17': 'ghcr.io/pterodactyl/yolks:java_17',
  'Java 8': 'ghcr.io/pterodactyl/yolks:java_8',
};

function egg(startCommand: string) {
  return {
    meta: { version: 'PTDL_v2' },
    uuid: `e2e-features-${Math.random().toString(36).slice(2)}`,
    name: 'Minecraft-like',
    author: 'e2e@example.com',
    description: 'The stand-in game server, asking for the EULA as Minecraft does',
    features: ['eula', 'java_version', 'pid_limit'],
    docker_images: IMAGES,
    startup: `${startCommand} --eula`,
    config: { files: '{}', startup: JSON.stringify({ done: 'Done!' }), logs: '{}', stop: 'stop' },
    scripts: { installation: { script: '', container: 'debian', entrypoint: 'bash' } },
    variables: [],
  };
}

const eulaDialog = (page: Page) => page.getByRole('dialog', { name: 'Accept the Minecraft EULA?' });

async function waitForStatus(panel: E2ePanel, token: string, server: string, status: string) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const stats = await panel.api<{ data: { status: string } }>(
      'GET',
      `/api/servers/${server}/stats`,
      undefined,
      token,
    );
    if (stats.data.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${server} never became ${status}`);
}

async function eulaFile(panel: E2ePanel, token: string, server: string): Promise<string> {
  const file = await panel.api<{ data: { content: string } }>(
    'GET',
    `/api/servers/${server}/files/content?path=eula.txt`,
    undefined,
    token,
  );
  return file.data.content;
}

describe('egg features', () => {
  let admin = '';
  const journeyOf = gameServerJourney(async (panel) => {
    admin = await register(panel, 'admin');
    await register(panel, 'player');
    await register(panel, 'reader');
    const template = await panel.api<{ data: { id: string } }>(
      'POST',
      '/api/templates/import',
      egg(fixture.startCommand),
      admin,
    );
    const grants: [string, string, string[]][] = [
      ['mc', 'player', ['console.read', 'files.write', 'power']],
      ['mc', 'reader', ['console.read']],
      ['looks', 'player', ['console.read', 'files.write', 'power']],
      ['java', 'player', ['settings']],
    ];
    for (const name of ['mc', 'looks', 'java']) {
      await panel.api(
        'POST',
        '/api/servers/create',
        {
          name,
          template: template.data.id,
          ...(name === 'java' ? { runtime: 'docker' } : {}),
        },
        admin,
      );
    }
    for (const [server, username, permissions] of grants) {
      await panel.api('PUT', `/api/servers/${server}/users/${username}`, { permissions }, admin);
    }
  });
  const { fixture, tab } = journeyOf;

  it('asks for the EULA when the game does, and runs the server once it is accepted', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await page.goto('/servers/mc');
    await page.getByRole('region', { name: 'Console', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();

    // The game prints its EULA line and ends: the page asks at once.
    const dialog = eulaDialog(page);
    await dialog.waitFor();
    // The safe answer has the focus: a stray Enter never accepts the agreement.
    assert.equal(
      await dialog
        .getByRole('button', { name: 'Not now', exact: true })
        .evaluate((button) => button === document.activeElement),
      true,
    );
    const link = dialog.getByRole('link', { name: /Minecraft EULA/ });
    assert.equal(await link.getAttribute('href'), 'https://aka.ms/MinecraftEULA');
    assert.equal(await link.getAttribute('target'), '_blank');
    await seeInConsole(page, 'You need to agree to the EULA in order to run the server');
    await seeInConsole(page, '[panel] the game runs only once the Minecraft EULA');
    await assertAccessible(page, 'the EULA dialog');

    // Put off: the console says what waits, and the dialog comes back on asking.
    await dialog.getByRole('button', { name: 'Not now', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('The game runs only once the Minecraft EULA is accepted.').waitFor();
    assert.equal(await eulaFile(journeyOf.panel, admin, 'mc'), 'eula=false\n');

    // A reader without files.write and power is told who can accept it, and is not asked.
    const reader = await tab();
    await signIn(reader.page, 'reader');
    await reader.page.goto('/servers/mc');
    await reader.page
      .getByText(/Someone with the files\.write and power permissions on this server can accept it/)
      .waitFor();
    assert.equal(await eulaDialog(reader.page).count(), 0);
    assert.equal(await reader.page.getByRole('button', { name: 'Review the EULA' }).count(), 0);
    reader.assertClean();

    await page.getByRole('button', { name: 'Review the EULA', exact: true }).click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'I accept', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page
      .getByRole('status')
      .getByText(/Minecraft EULA accepted/)
      .waitFor();
    await seeInConsole(page, 'Done!');
    await page.getByText('Running', { exact: true }).waitFor();
    assert.match(await eulaFile(journeyOf.panel, admin, 'mc'), /^eula=true$/m);
    assert.equal(
      await page.getByText('The game runs only once the Minecraft EULA is accepted.').count(),
      0,
    );
    await journeyOf.panel.api('POST', '/api/servers/mc/stop', undefined, admin);
    assertClean();
  });

  it("chooses another of the template's images on the Settings tab", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await page.goto('/servers/java/settings');
    const section = page.getByRole('region', { name: 'Container image' });
    const select = section.getByLabel('Image of the template', { exact: true });
    await select.waitFor();
    assert.equal(await select.inputValue(), IMAGES['Java 21']);
    const use = section.getByRole('button', { name: 'Use this image', exact: true });
    assert.equal(await use.isEnabled(), false, 'nothing chosen yet');
    await assertAccessible(page, 'the image choice');

    await select.selectOption({ label: `Java 8 (${IMAGES['Java 8']})` });
    await use.click();
    await section
      .getByRole('status')
      .getByText(/Image saved/)
      .waitFor();
    // The settings above show the saved image too (read-only for a user).
    assert.equal(await page.getByLabel('Image', { exact: true }).inputValue(), IMAGES['Java 8']);
    const config = await journeyOf.panel.api<{ data: { image: string } }>(
      'GET',
      '/api/servers/java/config',
      undefined,
      admin,
    );
    assert.equal(config.data.image, IMAGES['Java 8']);

    await page.reload();
    await select.waitFor();
    assert.equal(await select.inputValue(), IMAGES['Java 8']);
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`asks at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab(viewport, colorScheme);
        // The game asked before the page opened: the console's notice comes with its history.
        await journeyOf.panel.api('POST', '/api/servers/looks/start', undefined, admin);
        await waitForStatus(journeyOf.panel, admin, 'looks', 'crashed');
        await signIn(page, 'player');
        await page.goto('/servers/looks');
        await eulaDialog(page).waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
        await screenshot(page, 'eula', viewport, colorScheme);
        await assertAccessible(page, `the EULA dialog, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
