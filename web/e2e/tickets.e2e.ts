/**
 * Tickets journeys, from both sides: a user opens a ticket (wrong inputs first), support finds it
 * by its status, replies and moves it on, the user reads the answer and replies again, a closed
 * ticket refuses a reply, another user's ticket stays hidden, and a list longer than a page.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshot } from './helpers/browser.js';
import { assertAccessible, journey, register, signIn } from './helpers/journey.js';

const ticketList = (page: Page) => page.getByRole('region', { name: 'Ticket list' });
const thread = (page: Page) => page.getByRole('region', { name: 'Thread' });
const replyBox = (page: Page) => page.getByRole('region', { name: 'Reply to the ticket' });

async function openTickets(page: Page) {
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Tickets', exact: true })
    .click();
  await page.waitForURL('**/tickets');
  await page.getByRole('heading', { name: 'Tickets', level: 1 }).waitFor();
}

async function noSidewaysScrolling(page: Page, width: number) {
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scrollWidth <= width, `no sideways scrolling (${scrollWidth} px)`);
}

const TITLE = 'Survival world crashes on start';
const DESCRIPTION =
  'Since this morning the server stops at once.\nThe log ends with:\n<b>java.lang.OutOfMemoryError</b>';

describe('tickets', () => {
  let bobsTicket = 0;
  let alicesTicket = 0;
  const journeyOf = journey({
    setUp: async (panel) => {
      const admin = await register(panel, 'admin');
      await register(panel, 'sam');
      await panel.api('PUT', '/api/users/sam/role', { role: 'support' }, admin);
      await register(panel, 'alice');
      const bob = await register(panel, 'bob');
      await register(panel, 'carol');
      const many = await register(panel, 'many');
      bobsTicket = (
        await panel.api<{ data: { id: number } }>(
          'POST',
          '/api/tickets/create',
          { title: "Bob's private ticket", description: 'Only bob and staff may read this' },
          bob,
        )
      ).data.id;
      // More than a page (20) of tickets, made one after another: newest activity first.
      for (let n = 1; n <= 23; n += 1) {
        await panel.api(
          'POST',
          '/api/tickets/create',
          { title: `Question ${n}`, description: `Question number ${n}` },
          many,
        );
      }
    },
  });

  const { tab } = journeyOf;

  it('shows a user without tickets what to do', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'carol');
    await openTickets(page);
    await ticketList(page).getByText('No tickets yet').waitFor();
    await ticketList(page)
      .getByText(/Open a ticket with "New ticket"/)
      .waitFor();
    await assertAccessible(page, 'the empty tickets list');
    assertClean();
  });

  it("opens a ticket; empty and too long texts show the API's message", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    await openTickets(page);
    await page.getByRole('link', { name: 'New ticket', exact: true }).click();
    await page.waitForURL('**/tickets/new');
    await page.getByText('0 of 200 characters', { exact: false }).waitFor();
    await page.getByText('0 of 65,536 bytes', { exact: false }).waitFor();

    // Empty: the API's schema says what is missing.
    await page.getByRole('button', { name: 'Create ticket', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText(/^body\/title: /)
      .waitFor();
    await assertAccessible(page, 'the new ticket form with an error');

    await page.getByLabel('Title', { exact: true }).fill(TITLE);
    await page.getByLabel('Message', { exact: true }).fill(DESCRIPTION);
    await page.getByRole('button', { name: 'Create ticket', exact: true }).click();
    await page.waitForURL(/\/tickets\/\d+$/);
    alicesTicket = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('heading', { name: TITLE, level: 1 }).waitFor();
    await page.getByText('Pending', { exact: true }).waitFor();
    // Text as text: the markup is shown, not rendered, and the line breaks stay.
    const opening = thread(page).getByRole('article').first();
    assert.equal(await opening.locator('p').innerText(), DESCRIPTION);
    assert.equal(await thread(page).locator('b').count(), 0);
    await opening.getByText('alice', { exact: true }).waitFor();

    // An empty reply and one over the limit: refused by the API, its message shown.
    const reply = replyBox(page).getByLabel('Reply', { exact: true });
    await replyBox(page).getByRole('button', { name: 'Send', exact: true }).click();
    await replyBox(page)
      .getByRole('alert')
      .getByText(/^body\/text: /)
      .waitFor();
    await reply.fill('é'.repeat(33_000));
    await replyBox(page)
      .getByText(/^464 bytes over the limit of 65,536/)
      .waitFor();
    await replyBox(page).getByRole('button', { name: 'Send', exact: true }).click();
    await replyBox(page)
      .getByRole('alert')
      .getByText('The message is 66000 bytes long; at most 65536 bytes (UTF-8) are accepted')
      .waitFor();
    await assertAccessible(page, 'a ticket with a refused reply');

    // Ctrl+Enter sends; the box empties and the message joins the thread.
    await reply.fill('More detail:\nit happens with 2 GB too');
    await reply.press('Control+Enter');
    await thread(page).getByText('it happens with 2 GB too', { exact: false }).waitFor();
    assert.equal(await reply.inputValue(), '');
    assert.equal(await replyBox(page).getByRole('alert').count(), 0);
    // A user has no status control.
    assert.equal(await page.getByRole('button', { name: 'Change status' }).count(), 0);
    assert.equal(await page.getByLabel('Status', { exact: true }).count(), 0);
    await assertAccessible(page, 'a ticket thread');
    assertClean();
  });

  it('support finds it by status, replies and moves it to In progress', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'sam');
    await openTickets(page);
    // Support sees everyone's tickets, alice's (the newest activity) first.
    await ticketList(page).getByRole('link', { name: 'Question 23' }).waitFor();
    const first = ticketList(page).getByRole('listitem').first();
    await first.getByRole('link', { name: TITLE }).waitFor();
    await page.getByLabel('Status', { exact: true }).selectOption('pending');
    await page.waitForURL('**/tickets?status=pending');
    await page.reload();
    assert.equal(await page.getByLabel('Status', { exact: true }).inputValue(), 'pending');
    const item = ticketList(page).getByRole('listitem').filter({ hasText: TITLE });
    await item.getByText('by alice', { exact: false }).waitFor();
    await item.getByText('1 reply', { exact: false }).waitFor();
    await item.getByRole('link', { name: TITLE }).click();
    await page.waitForURL(`**/tickets/${alicesTicket}`);

    await replyBox(page).getByLabel('Reply', { exact: true }).fill('Try giving it 4 GB:\n-Xmx4G');
    await replyBox(page).getByRole('button', { name: 'Send', exact: true }).click();
    await thread(page).getByText('-Xmx4G', { exact: false }).waitFor();

    await page.getByLabel('Status', { exact: true }).selectOption('in_progress');
    await page.getByRole('button', { name: 'Change status', exact: true }).click();
    await thread(page)
      .getByText('sam (support) changed the status from Pending to In progress', { exact: false })
      .waitFor();
    // The badge (the select's option says the same, later in the page).
    await page
      .getByRole('region', { name: TITLE })
      .getByText('In progress', { exact: true })
      .first()
      .waitFor();
    assert.equal(
      await page.getByRole('button', { name: 'Change status', exact: true }).isDisabled(),
      true,
    );

    // No longer pending: the filter shows it under In progress.
    await page.goto('/tickets?status=pending');
    await ticketList(page).getByRole('link', { name: 'Question 23' }).waitFor();
    assert.equal(await ticketList(page).getByRole('link', { name: TITLE }).count(), 0);
    await page.getByLabel('Status', { exact: true }).selectOption('in_progress');
    await ticketList(page).getByRole('link', { name: TITLE }).waitFor();
    assertClean();
  });

  it('the user sees the answer and the status, replies again; closed, a reply is refused', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    await openTickets(page);
    const item = ticketList(page).getByRole('listitem').filter({ hasText: TITLE });
    await item.getByText('In progress', { exact: true }).waitFor();
    await item.getByRole('link', { name: TITLE }).click();
    const answer = thread(page).getByRole('article').filter({ hasText: '-Xmx4G' });
    await answer.getByText('sam', { exact: true }).waitFor();
    await answer.getByText('support', { exact: true }).waitFor();
    await thread(page).getByText('changed the status from Pending to In progress').waitFor();

    const reply = replyBox(page).getByLabel('Reply', { exact: true });
    await reply.fill('Thanks, that worked');
    await replyBox(page).getByRole('button', { name: 'Send', exact: true }).click();
    await thread(page).getByText('Thanks, that worked').waitFor();

    // Support closes it meanwhile; the user's next reply is refused, with the API's reason.
    const { panel } = journeyOf;
    const sam = await panel.api<{ access_token: string }>('POST', '/api/auth/login', {
      username: 'sam',
      password: 'correct horse battery',
    });
    await panel.api(
      'PUT',
      `/api/tickets/${alicesTicket}/status`,
      { status: 'closed' },
      sam.access_token,
    );
    await page.reload();
    await page.getByRole('region', { name: TITLE }).getByText('Closed', { exact: true }).waitFor();
    await replyBox(page).getByText('This ticket is closed', { exact: false }).waitFor();
    await reply.fill('One more thing');
    await reply.press('Control+Enter');
    await replyBox(page)
      .getByRole('alert')
      .getByText('The ticket is closed; reopen it to add messages')
      .waitFor();
    assert.equal(await thread(page).getByText('One more thing').count(), 0);
    assertClean();
  });

  it("keeps another user's ticket hidden, showing the API's message", async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'alice');
    await openTickets(page);
    await ticketList(page).getByRole('link', { name: TITLE }).waitFor();
    assert.equal(await ticketList(page).getByText("Bob's private ticket").count(), 0);
    await page.goto(`/tickets/${bobsTicket}`);
    await page.getByRole('alert').getByText('Ticket not found', { exact: true }).waitFor();
    assert.equal(await page.getByText('Only bob and staff may read this').count(), 0);
    await assertAccessible(page, 'a ticket one may not see');
    await page.goto('/tickets/not-a-number');
    await page
      .getByRole('alert')
      .getByText(/^params\/id: /)
      .waitFor();
    assertClean();
  });

  it('pages through more tickets than a page, the page kept in the URL', async () => {
    const { page, assertClean } = await tab();
    await signIn(page, 'many');
    await openTickets(page);
    const items = ticketList(page).getByRole('listitem');
    await items.first().getByText('Question 23').waitFor();
    assert.equal(await items.count(), 20);
    const pages = page.getByRole('navigation', { name: 'Pages' });
    await pages.getByText('Page 1 of 2').waitFor();
    await pages.getByRole('link', { name: 'Older', exact: true }).click();
    await page.waitForURL('**/tickets?page=2');
    await pages.getByText('Page 2 of 2').waitFor();
    await page.reload();
    await items.first().getByText('Question 3', { exact: true }).waitFor();
    assert.deepEqual(await items.getByRole('link').allInnerTexts(), [
      'Question 3',
      'Question 2',
      'Question 1',
    ]);
    assert.equal(await pages.getByRole('link', { name: 'Older' }).count(), 0);
    await pages.getByRole('link', { name: 'Newer', exact: true }).click();
    await page.waitForURL(/\/tickets$/);
    await items.first().getByText('Question 23').waitFor();
    // A page past the end (the list got shorter) offers the first one.
    await page.goto('/tickets?page=9');
    await ticketList(page).getByText('No tickets on this page').waitFor();
    await ticketList(page).getByRole('link', { name: 'Go to the first page' }).click();
    await items.first().getByText('Question 23').waitFor();
    assertClean();
  });

  for (const viewport of [DESKTOP, PHONE]) {
    for (const colorScheme of ['light', 'dark'] as const) {
      it(`looks right at ${viewport.width}×${viewport.height}, ${colorScheme}`, async () => {
        const { page, assertClean } = await tab(viewport, colorScheme);
        await signIn(page, 'admin');
        await page.goto('/tickets');
        await ticketList(page).getByRole('link', { name: TITLE }).waitFor();
        await noSidewaysScrolling(page, viewport.width);
        await screenshot(page, 'tickets', viewport, colorScheme);
        await assertAccessible(page, `the tickets list, ${colorScheme}`);

        await ticketList(page).getByRole('link', { name: TITLE }).click();
        await thread(page).getByText('Thanks, that worked').waitFor();
        await noSidewaysScrolling(page, viewport.width);
        await screenshot(page, 'ticket', viewport, colorScheme);
        await assertAccessible(page, `a ticket thread, ${colorScheme}`);
        assertClean();
      });
    }
  }
});
