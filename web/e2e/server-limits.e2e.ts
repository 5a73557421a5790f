/**
 * Resource limit journeys: the admin sets a memory and a CPU limit in the Settings tab's
 * Resources section, saves, and sees them after a reload; values the API refuses show its
 * message at their field; a user who is not an admin sees the limits read-only; a running
 * server's use shows against its limits ("… of 256 MiB", meters with names and text) on the
 * server page and in the Stats tab, and its runtime cannot change (409, at the field); a server
 * that allocates past its memory limit is ended by the kernel (cgroup) and its page says "Out of
 * memory"; starts the API refuses (over the disk quota: 409; a Docker runtime it cannot reach:
 * 503) show its message by the Start button; the new states at 1280×800 and 375×812, light and
 * dark.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { seeInConsole, sendCommand } from './helpers/console.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';

const MIB = 1024 * 1024;
const field = (page: Page, label: string) => page.getByLabel(label, { exact: true });
const save = (page: Page) => page.getByRole('button', { name: 'Save', exact: true });
const meter = (page: Page, what: string) =>
  page.getByRole('meter', { name: `${what} use`, exact: true });

async function openSettings(page: Page, server: string) {
  await page.goto(`/servers/${server}/settings`);
  await page.getByRole('group', { name: 'Resources' }).waitFor();
}

interface Config {
  data: { limits: Record<string, number | null>; runtime: string; image: string | null };
}

describe('server limits', () => {
  let admin = '';
  const journeyOf = gameServerJourney(
    async (panel) => {
      admin = await register(panel, 'admin');
      for (const [name, displayName] of [
        ['survival', 'Survival'],
        ['hungry', 'Hungry'],
        ['full', 'Full'],
        ['boxed', 'Boxed'],
      ] as const) {
        await panel.api(
          'POST',
          '/api/servers/create',
          { name, displayName, startCommand: fixture.startCommand, stopCommand: 'stop' },
          admin,
        );
      }
      // No Docker engine behind this socket: a docker server's start is refused with 503.
    },
    { DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
  );
  const { fixture, tab } = journeyOf;
  const config = (server: string) =>
    journeyOf.panel.api<Config>('GET', `/api/servers/${server}/config`, undefined, admin);

  it('saves a memory and a CPU limit and shows them after a reload', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openSettings(page, 'survival');
    assert.equal(await field(page, 'Memory limit').inputValue(), '', 'no limit yet');
    assert.equal(await field(page, 'Runtime').inputValue(), 'process');
    await assertAccessible(page, 'the Resources section');

    await field(page, 'Memory limit').fill('256');
    await field(page, 'CPU limit').fill('150');
    await save(page).click();
    await page.getByRole('status').getByText('Saved', { exact: true }).waitFor();

    await page.reload();
    await page.getByRole('group', { name: 'Resources' }).waitFor();
    assert.equal(await field(page, 'Memory limit').inputValue(), '256');
    assert.equal(await field(page, 'CPU limit').inputValue(), '150');
    // Every server has a process limit: the panel's default, 512, unless the admin changed it.
    assert.equal(await field(page, 'Process limit').inputValue(), '512');
    const saved = await config('survival');
    assert.deepEqual(saved.data.limits, {
      memoryBytes: 256 * MIB,
      cpuPercent: 150,
      pids: 512,
      diskBytes: null,
    });

    // Only what changed is sent: the process limit alone.
    await field(page, 'Process limit').fill('64');
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/config')),
      save(page).click(),
    ]);
    assert.deepEqual(request.postDataJSON(), { limits: { pids: 64 } });
    await page.getByRole('status').getByText('Saved', { exact: true }).waitFor();
    assert.equal((await config('survival')).data.limits.pids, 64);
    assertClean();
  });

  it("shows the API's refusal of a limit at its field", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await openSettings(page, 'survival');
    await field(page, 'Memory limit').fill('1');
    await save(page).click();
    await page.getByText('must be >= 8388608 (8 MiB), or null', { exact: true }).waitFor();
    assert.equal(await field(page, 'Memory limit').getAttribute('aria-invalid'), 'true');
    await page.getByRole('alert').getByText('Not saved: see the fields marked above').waitFor();
    await assertAccessible(page, 'the Resources section with a refused limit');

    // The API stops at the first refused field: the next one shows once that one is mended.
    await field(page, 'Memory limit').fill('256');
    await field(page, 'Process limit').fill('2.5');
    await save(page).click();
    await page.getByText('must be integer, or null', { exact: true }).waitFor();
    assert.equal(await field(page, 'Process limit').getAttribute('aria-invalid'), 'true');
    // Text that is no number never reaches the API.
    await field(page, 'Process limit').fill('lots');
    await save(page).click();
    await page
      .getByText('Enter a number, or leave it empty for no limit', { exact: true })
      .waitFor();

    // Docker without an image: the API's word, at the image.
    await page.getByRole('button', { name: 'Discard changes', exact: true }).click();
    await field(page, 'Runtime').selectOption('docker');
    await save(page).click();
    await page.getByText('the docker runtime needs an image', { exact: true }).waitFor();
    assert.equal(await field(page, 'Image').getAttribute('aria-invalid'), 'true');

    const saved = await config('survival');
    assert.equal(saved.data.limits.memoryBytes, 256 * MIB, 'nothing saved');
    assert.equal(saved.data.runtime, 'process');
    assertClean();
  });

  it('shows the limits read-only to a user who is not an admin', async () => {
    await register(journeyOf.panel, 'player');
    await journeyOf.panel.api(
      'PUT',
      '/api/users/player/servers',
      { servers: ['survival', 'hungry'] },
      admin,
    );
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await openSettings(page, 'survival');
    for (const label of [
      'Memory limit',
      'CPU limit',
      'Process limit',
      'Disk limit',
      'Runtime',
      'Image',
    ]) {
      assert.equal(await field(page, label).isEditable(), false, `${label} is read-only`);
    }
    assert.equal(await field(page, 'Memory limit').inputValue(), '256');
    assert.equal(await field(page, 'Runtime').inputValue(), 'Process');
    await page.getByText('Only an admin can change them.', { exact: false }).waitFor();
    await assertAccessible(page, 'the Resources section, read-only');
    assertClean();
  });

  it('shows the use against the limits while the server runs, and keeps its runtime', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/survival/stats');
    await page.getByText('Its limits: CPU 150 %, memory 256 MiB, 64 processes.').waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const memory = page.getByRole('region', { name: 'CPU and memory' }).getByRole('meter', {
      name: 'Memory use',
    });
    await memory.waitFor();
    assert.equal(await memory.getAttribute('max'), String(256 * MIB));
    // The first reading may come before the server holds any memory: wait for one that does.
    const region = page.getByRole('region', { name: 'CPU and memory' });
    await region.getByText(/^[\d.]+ MiB of 256 MiB$/).waitFor();
    assert.match((await memory.getAttribute('aria-valuetext')) ?? '', /^[\d.]+ MiB of 256 MiB$/);
    await region.getByText(/^[\d.]+ % of 150 %$/).waitFor();
    await region.getByText(/^\d+ of 64$/).waitFor();
    // The server page's summary says the same; disk has no limit, so no meter and no "of".
    const summary = page.getByRole('region', { name: 'Stats', exact: true });
    await summary.getByText(/^[\d.]+ MiB of 256 MiB$/).waitFor();
    assert.equal(await summary.getByRole('meter').count(), 3, 'CPU, memory and processes');
    assert.equal(await meter(page, 'Disk').count(), 0);
    await assertAccessible(page, 'the stats tab with limits');

    // The runtime changes only while the server is stopped: the API's 409, at the runtime.
    await page
      .getByRole('navigation', { name: 'Server sections' })
      .getByRole('link', { name: 'Settings', exact: true })
      .click();
    await page.getByRole('group', { name: 'Resources' }).waitFor();
    await field(page, 'Runtime').selectOption('docker');
    await field(page, 'Image').fill('alpine:3');
    await save(page).click();
    await page.getByText('Stop the server before changing its runtime', { exact: true }).waitFor();
    assert.equal(await field(page, 'Runtime').getAttribute('aria-invalid'), 'true');
    assert.equal((await config('survival')).data.runtime, 'process');
    await page.getByRole('button', { name: 'Discard changes', exact: true }).click();
    assertClean();
  });

  it('says "Out of memory" when the kernel ends a server at its memory limit', async () => {
    await journeyOf.panel.api(
      'PUT',
      '/api/servers/hungry/config',
      { limits: { memoryBytes: 128 * MIB } },
      admin,
    );
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/hungry');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('status').getByText('Connected', { exact: true }).waitFor();
    await seeInConsole(page, 'Done!');
    await sendCommand(page, 'alloc 400');
    await page.getByText('Out of memory', { exact: true }).waitFor({ timeout: 30_000 });
    await page.getByText('Crashed', { exact: true }).waitFor();
    const notice = page.getByRole('alert').filter({ hasText: 'Out of memory:' });
    await notice
      .getByText(/the kernel ended the server at its memory limit\. The limit is now 128 MiB\./)
      .waitFor();
    await notice.getByRole('link', { name: 'memory limit in Settings' }).waitFor();
    await seeInConsole(page, 'the server ran out of memory');
    await page.getByText(/^out of memory \(/).waitFor();
    await assertAccessible(page, 'the server page, out of memory');

    await page.getByRole('link', { name: 'Stats', exact: true }).click();
    await page
      .getByText('The server ran out of memory: the kernel ended it at its limit.', { exact: true })
      .waitFor();
    await page.getByRole('link', { name: 'Console', exact: true }).click();

    // A user who is not an admin is told whom to ask.
    const other = await tab();
    await signIn(other.page, 'player');
    await other.page.goto('/servers/hungry');
    await other.page
      .getByText('Ask an admin to raise its memory limit, then start it again.')
      .waitFor();
    other.assertClean();

    await notice.getByRole('link', { name: 'memory limit in Settings' }).click();
    await page.waitForURL('**/servers/hungry/settings');
    assert.equal(await field(page, 'Memory limit').inputValue(), '128');
    assertClean();
  });

  it("shows the API's refusals of a start by the Start button", async () => {
    await journeyOf.panel.api(
      'PUT',
      '/api/servers/full/files/content?path=world.dat',
      { content: 'x'.repeat(4096) },
      admin,
    );
    await journeyOf.panel.api(
      'PUT',
      '/api/servers/full/config',
      { limits: { diskBytes: 1024 } },
      admin,
    );
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/full/stats');
    await page
      .getByRole('region', { name: 'Disk' })
      .getByText(/ of 1 KiB$/)
      .waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    const answer = await fetch(`${journeyOf.panel.url}/api/servers/full/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    assert.equal(answer.status, 409);
    const body = (await answer.json()) as { code: string; message: string };
    assert.equal(body.code, 'OVER_QUOTA');
    assert.equal(await refusal.textContent(), body.message);
    await assertAccessible(page, 'a refused start');

    // Docker chosen in Settings; its runtime cannot be reached here: the API's 503, by Start.
    await openSettings(page, 'boxed');
    await field(page, 'Runtime').selectOption('docker');
    await field(page, 'Image').fill('alpine:3');
    await save(page).click();
    await page.getByRole('status').getByText('Saved', { exact: true }).waitFor();
    assert.deepEqual(
      { runtime: (await config('boxed')).data.runtime, image: (await config('boxed')).data.image },
      { runtime: 'docker', image: 'alpine:3' },
    );
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    const unavailable = await fetch(`${journeyOf.panel.url}/api/servers/boxed/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    assert.equal(unavailable.status, 503);
    const reason = (await unavailable.json()) as { code: string; message: string };
    assert.equal(reason.code, 'RUNTIME_UNAVAILABLE');
    await page.getByRole('alert').getByText(reason.message, { exact: true }).waitFor();
    assertClean();
  });

  describe('screenshots', () => {
    before(async () => {
      await journeyOf.panel.api(
        'POST',
        '/api/servers/survival/command',
        { command: 'alloc 60' },
        admin,
      );
    });

    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          const fits = async () => {
            const width = await page.evaluate(() => document.documentElement.scrollWidth);
            assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          };

          await openSettings(page, 'survival');
          await fits();
          await page.evaluate(() => {
            document.querySelector('fieldset')?.scrollIntoView();
          });
          await screenshot(page, 'server-resources', viewport, colorScheme);
          await assertAccessible(page, `the Resources section, ${colorScheme}`);

          await page.goto('/servers/survival/stats');
          await meter(page, 'Memory').first().waitFor();
          await page.waitForFunction(
            () =>
              Number(
                document
                  .querySelector('[aria-label="Memory use over the last 5 minutes"]')
                  ?.getAttribute('data-samples'),
              ) > 3,
            undefined,
            { timeout: 60_000 },
          );
          await fits();
          if (viewport === PHONE) {
            await page.evaluate(() => {
              document.querySelector('nav[aria-label="Server sections"]')?.scrollIntoView();
            });
          }
          await screenshot(page, 'server-limits', viewport, colorScheme);
          await assertAccessible(page, `the stats tab with limits, ${colorScheme}`);

          await page.goto('/servers/hungry');
          await page.getByText('Out of memory', { exact: true }).waitFor();
          await fits();
          await screenshot(page, 'server-oom', viewport, colorScheme);
          await assertAccessible(page, `the server page, out of memory, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
