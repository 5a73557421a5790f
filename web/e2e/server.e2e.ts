/**
 * Server page journeys: the admin creates a server that runs the repository's stand-in game
 * server, opens its page, starts it, sees its coloured lines arrive in the console, sends
 * commands and sees their answers, walks the command history, stops it and sees the status
 * change; a command to a stopped server shows the panel's refusal; a server deleted, or access
 * to it taken away, while its page is open says so; the page at 1280×800 and 375×812, light and
 * dark.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { seeInConsole, sendCommand, terminal } from './helpers/console.js';
import { assertAccessible, gameServerJourney, register, signIn } from './helpers/journey.js';

describe('server page', () => {
  let admin = '';
  const journeyOf = gameServerJourney(async (panel) => {
    admin = await register(panel, 'admin');
  });
  const { fixture } = journeyOf;
  const { tab } = journeyOf;

  it('restarts a server, and kills one while its stop waits for a server that ignores it', async () => {
    const { page, assertClean } = await tab();
    await journeyOf.panel.api(
      'POST',
      '/api/servers/create',
      {
        name: 'stubborn',
        displayName: 'Stubborn',
        startCommand: `${fixture.startCommand} --ignore-term`,
        stopCommand: 'please stop',
        stopTimeoutSeconds: 60,
      },
      admin,
    );
    await signIn(page, 'admin');
    await page.goto('/servers/stubborn');
    await page.getByRole('heading', { level: 1, name: 'Stubborn' }).waitFor();
    const button = (name: string) => page.getByRole('button', { name, exact: true });
    assert.equal(await button('Restart').isEnabled(), false, 'nothing to restart');
    assert.equal(await button('Kill').isEnabled(), false, 'nothing to kill');
    await button('Start').click();
    await page.getByText('Running', { exact: true }).waitFor();
    await seeInConsole(page, 'Done! pid=');

    // Kill is the way out of a stop that waits 60 s for a server that ignores its stop command.
    await button('Stop').click();
    await page.getByText('Stopping', { exact: true }).waitFor();
    await seeInConsole(page, 'Unknown command: please stop');
    assert.equal(await button('Kill').isEnabled(), true);
    await button('Kill').click();
    await page.getByText('Stopped', { exact: true }).waitFor();
    await seeInConsole(page, '[panel] killing the server');
    await assertAccessible(page, 'a killed server');

    // Restart: a running server that obeys its stop command is stopped, then started again.
    await journeyOf.panel.api(
      'PUT',
      '/api/servers/stubborn/config',
      { startCommand: fixture.startCommand, stopCommand: 'stop', stopTimeoutSeconds: 10 },
      admin,
    );
    await button('Start').click();
    await page.getByText('Running', { exact: true }).waitFor();
    await button('Restart').click();
    await seeInConsole(page, 'Stopping server');
    // The status may still read Running from before the restart: wait for the second start's line
    // in the console, then for Running.
    await terminal(page)
      .locator('.xterm-rows > div')
      .filter({ hasText: '[panel] started (pid' })
      .nth(1)
      .waitFor();
    await page.getByText('Running', { exact: true }).waitFor();
    await button('Stop').click();
    await page.getByText('Stopped', { exact: true }).waitFor();
    assertClean();
  });

  it('starts a server, shows its coloured output, sends commands and stops it', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    const form = page.getByRole('region', { name: 'Create server' });
    await form.getByLabel('Name', { exact: true }).fill('survival');
    await form.getByLabel('Display name').fill('Survival');
    await form.getByLabel('Start command').fill(fixture.startCommand);
    await form.getByLabel('Stop command').fill('stop');
    await form.getByRole('button', { name: 'Create server', exact: true }).click();
    await page.getByRole('link', { name: 'Survival', exact: true }).click();
    await page.waitForURL('**/servers/survival');

    await page.getByRole('heading', { level: 1, name: 'Survival' }).waitFor();
    const start = page.getByRole('button', { name: 'Start', exact: true });
    const stop = page.getByRole('button', { name: 'Stop', exact: true });
    await page.getByText('Stopped', { exact: true }).waitFor();
    await page.getByRole('status').getByText('Connected', { exact: true }).waitFor();
    assert.equal(await start.isEnabled(), true);
    assert.equal(await stop.isEnabled(), false);

    await start.click();
    await page.getByText('Running', { exact: true }).waitFor();
    await seeInConsole(page, 'Done! pid=');
    await seeInConsole(page, '[status] running');
    assert.equal(await start.isEnabled(), false);
    assert.equal(await stop.isEnabled(), true);

    // ANSI colours: 16-colour classes, and a 24-bit colour set through the CSSOM (the policy
    // allows no style attributes; a violation fails the journey in assertClean).
    await sendCommand(page, 'colour');
    await seeInConsole(page, 'colour: red green blue truecolour');
    const row = terminal(page).locator('.xterm-rows > div').filter({ hasText: 'colour: red' });
    const red = row.locator('span', { hasText: /^red$/ });
    assert.match((await red.getAttribute('class')) ?? '', /xterm-fg-1\b/);
    const colours = await row
      .locator('span')
      .evaluateAll((spans) => spans.map((span) => getComputedStyle(span).color));
    assert.ok(new Set(colours).size >= 4, `four colours at least: ${colours.join(', ')}`);
    assert.equal(
      await row
        .locator('span', { hasText: /^truecolour$/ })
        .evaluate((span) => getComputedStyle(span).color),
      'rgb(255, 140, 0)',
    );

    await sendCommand(page, 'say hello');
    await seeInConsole(page, '[panel] admin> say hello');
    await seeInConsole(page, '[Server] hello');
    assert.equal(await page.getByLabel('Command', { exact: true }).inputValue(), '');

    // ↑ brings back the last commands, ↓ returns to what was being typed.
    const box = page.getByLabel('Command', { exact: true });
    await box.fill('half');
    await box.press('ArrowUp');
    assert.equal(await box.inputValue(), 'say hello');
    await box.press('ArrowUp');
    assert.equal(await box.inputValue(), 'colour');
    await box.press('ArrowDown');
    await box.press('ArrowDown');
    assert.equal(await box.inputValue(), 'half');
    await box.fill('');

    // Find: a match is selected in the terminal; a missing text says so.
    const search = page.getByRole('search');
    await search.getByLabel('Find', { exact: true }).fill('[Server] hello');
    await search.getByRole('button', { name: 'Next', exact: true }).click();
    await terminal(page).locator('.xterm-selection div').first().waitFor();
    assert.equal(await search.getByText('No match').count(), 0);
    await search.getByLabel('Find', { exact: true }).fill('no such text anywhere');
    await search.getByLabel('Find', { exact: true }).press('Enter');
    await search.getByText('No match', { exact: true }).waitFor();

    const stats = page.getByRole('region', { name: 'Stats' });
    for (const term of ['CPU', 'Memory', 'Disk', 'Uptime']) {
      await stats.getByText(term, { exact: true }).waitFor();
    }

    await stop.click();
    await page.getByText('Stopped', { exact: true }).waitFor();
    await seeInConsole(page, 'Stopping server');
    await seeInConsole(page, '[status] stopped');
    await stats.getByText('Last exit', { exact: true }).waitFor();
    await stats.getByText(/^stopped cleanly, /).waitFor();
    assert.equal(await start.isEnabled(), true);
    assert.equal(await stop.isEnabled(), false);

    // A reload keeps the page, the history of the console and the commands typed.
    await page.reload();
    await seeInConsole(page, '[Server] hello');
    await box.press('ArrowUp');
    assert.equal(await box.inputValue(), 'say hello');
    assertClean();
  });

  it("shows the panel's refusal of a command to a stopped server", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/survival');
    await page.getByRole('status').getByText('Connected', { exact: true }).waitFor();
    await sendCommand(page, 'say nobody');
    await page
      .getByRole('alert')
      .getByText(/not running/i)
      .waitFor();
    assertClean();
  });

  it('says so when the server is deleted while its page is open', async () => {
    await journeyOf.panel.api(
      'POST',
      '/api/servers/create',
      { name: 'doomed', startCommand: fixture.startCommand },
      admin,
    );
    const { page, assertClean } = await tab();
    await signIn(page, 'admin');
    await page.goto('/servers/doomed');
    await page.getByRole('status').getByText('Connected', { exact: true }).waitFor();
    await journeyOf.panel.api('DELETE', '/api/servers/doomed', undefined, admin);
    await page.getByRole('alert').getByText('This server was deleted').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Reconnect' }).count(), 0);
    assertClean();
  });

  it('says so when access to the server is taken away while its page is open', async () => {
    await register(journeyOf.panel, 'player');
    await journeyOf.panel.api('PUT', '/api/users/player/servers', { servers: ['survival'] }, admin);
    const { page, assertClean } = await tab();
    await signIn(page, 'player');
    await page.getByRole('link', { name: 'Survival', exact: true }).click();
    await page.getByRole('status').getByText('Connected', { exact: true }).waitFor();
    await journeyOf.panel.api('PUT', '/api/users/player/servers', { servers: [] }, admin);
    await page.getByRole('alert').getByText('Your access to this server was removed').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Reconnect' }).count(), 0);
    assertClean();
  });

  it('opens on a 375 px phone without sideways scrolling', async () => {
    const { page, assertClean } = await tab(PHONE);
    await signIn(page, 'admin');
    await page.getByRole('link', { name: 'Survival', exact: true }).click();
    await seeInConsole(page, '[Server] hello');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `no sideways scrolling (${width} px)`);
    assertClean();
  });

  describe('screenshots', () => {
    before(async () => {
      await journeyOf.panel.api(
        'POST',
        '/api/servers/create',
        {
          name: 'creative',
          displayName: 'Creative world',
          startCommand: fixture.startCommand,
          stopCommand: 'stop',
        },
        admin,
      );
      await journeyOf.panel.api('POST', '/api/servers/creative/start', undefined, admin);
      for (const command of ['say Welcome to the creative world', 'colour', 'list', 'say bye']) {
        await journeyOf.panel.api('POST', '/api/servers/creative/command', { command }, admin);
      }
    });

    for (const viewport of [DESKTOP, PHONE]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
          const { page, assertClean } = await tab(viewport, colorScheme);
          await signIn(page, 'admin');
          await page.goto('/servers/creative');
          await page.getByText('Running', { exact: true }).waitFor();
          await seeInConsole(page, '[Server] bye');
          await page.getByRole('region', { name: 'Stats' }).getByText('Uptime').waitFor();
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width, `no sideways scrolling (${width} px)`);
          await screenshot(page, 'server', viewport, colorScheme);
          await assertAccessible(page, `the server page, ${colorScheme}`);
          assertClean();
        });
      }
    }
  });
});
