import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (apt package `chromium`); `.ci/run` installs it where missing. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Launches headless Chromium the way this machine allows: as root it needs `--no-sandbox`, and with
 * no network beyond localhost the background services must be off or they flood refused connections.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Signs in at the test identity provider's login and consent forms, from a page that shows the
 * gateway's login page (its `#login` link).
 */
export async function signInAtProvider(page: Page, email: string, password: string): Promise<void> {
  await page.locator('#login').click();
  await page.locator('#email').fill(email);
  await page.locator('#password').fill(password);
  await page.locator('button[type=submit]').click();
  await page.locator('button[type=submit]').click(); // consent
}

/**
 * Opens the console's new-service form in a fresh 1280×900 context of `browser`, signed in as the
 * demo admin at `publicUrl`'s provider; `errors` collects the messages of every script error its
 * pages throw (a test ends by asserting there were none).
 */
export async function openNewServiceForm(browser: Browser, publicUrl: string): Promise<{ page: Page; errors: string[] }> {
  const errors: string[] = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.on('page', (page) => page.on('pageerror', (error) => errors.push(error.message)));
  const page = await context.newPage();
  await page.goto(`${publicUrl}/dashboard/services/new`);
  await signInAtProvider(page, 'admin@example.com', 'admin-password');
  await page.waitForURL(`${publicUrl}/dashboard/services/new`);
  return { page, errors };
}
