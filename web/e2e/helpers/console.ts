/** The console of a server's page, as a person reads and types into it. */
import type { Page } from 'playwright-core';

export const terminal = (page: Page) => page.getByRole('region', { name: 'Console', exact: true });

/** Waits until the terminal shows `text` on one of its rows. */
export async function seeInConsole(page: Page, text: string): Promise<void> {
  await terminal(page).locator('.xterm-rows > div').filter({ hasText: text }).first().waitFor();
}

/** Types `command` into the command box and presses Enter. */
export async function sendCommand(page: Page, command: string): Promise<void> {
  const box = page.getByLabel('Command', { exact: true });
  await box.fill(command);
  await box.press('Enter');
}
