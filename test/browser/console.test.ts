import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { useAdminSession } from '../support/admin-session.js';
import { signInAtProvider } from '../support/browser.js';

/**
 * design.md §4.6 in Chromium: the admin console, driven like a person would, after a real sign-in through
 * the OpenID Provider's forms. Screenshots of the main pages go to test-output/.
 */

/** The parts of the page's DOM that evaluated functions touch (tests compile without the DOM library). */
declare const document: {
  activeElement: { id: string; getAttribute(name: string): string | null } | null;
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelector(selector: string): { dataset: Record<string, string | undefined> } | null;
};

const SCREENSHOTS = new URL('../../../test-output/', import.meta.url).pathname;

const env = useAdminSession({ provider: true, gatewayHost: 'localhost', upstream: true, browser: true, admin: false }, async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
});


/** A new browser context whose pages fail the test on any script error. */
async function newContext(errors: string[], viewport = { width: 1280, height: 900 }): Promise<BrowserContext> {
  const context = await env.browser.newContext({ viewport });
  context.on('page', (page) => page.on('pageerror', (error) => errors.push(error.message)));
  return context;
}

const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });

test('in Chromium: an admin signs in to the console and creates, uses, filters, toggles, edits and deletes a service', async () => {
  const errors: string[] = [];
  const context = await newContext(errors);
  const page = await context.newPage();

  // Anonymous: sent to the login page, and back to the console after signing in.
  await page.goto(`${env.publicUrl}/dashboard`);
  const loginUrl = new URL(page.url());
  assert.equal(loginUrl.pathname, '/auth/login-page');
  assert.equal(loginUrl.searchParams.get('returnTo'), '/dashboard');
  await signInAtProvider(page, 'admin@example.com', 'admin-password');
  await page.waitForURL(`${env.publicUrl}/dashboard`);
  await page.getByText('No services yet.').waitFor();
  const token = await page.locator('meta[name="csrf-token"]').getAttribute('content');
  assert.ok(token && token.length > 20);

  // Create: a bad path gets the API's message next to the field; a good one creates the service.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'New service' }).click();
  assert.equal(await page.locator('form[data-service-form] input[name="_csrf"]').inputValue(), token);
  await page.getByLabel('Name').fill('Console echo');
  await page.getByLabel('Path').fill('console-echo');
  await page.getByLabel('Target URL').fill(env.upstream.origin);
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.locator('#path-error').waitFor();
  assert.equal(await page.locator('#path-error').textContent(), 'Path must start with /.');
  assert.equal(await page.getByLabel('Path').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'path', 'focus moves to the field to fix');
  await screenshot(page, 'console-form-validation');
  await page.getByLabel('Path').fill('/console-echo');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.waitForURL(/\/dashboard\/services\/[0-9a-f-]{36}$/);
  await page.getByText('Created “Console echo”.').waitFor();
  const serviceUrl = page.url();

  // Traffic through the proxy, in another tab of the same browser: the rows appear without a reload.
  const visitor = await context.newPage();
  await visitor.goto(`${env.publicUrl}/console-echo/hello?from=console`);
  assert.equal(JSON.parse((await visitor.locator('body').textContent()) ?? '{}').url, '/hello?from=console');
  assert.equal(await visitor.evaluate(() => fetch('/console-echo/submit', { method: 'POST', body: 'x' }).then((r) => r.status)), 200);
  const rows = page.locator('.log-table tbody tr');
  await rows.filter({ hasText: '/console-echo/hello?from=console' }).waitFor();
  await rows.filter({ hasText: '/console-echo/submit' }).waitFor();
  assert.match((await rows.first().textContent()) ?? '', /POST/, 'newest first');

  // A 3,000-character path takes one line, cut with an ellipsis; opened, it shows whole (as stored:
  // its first 2,048 bytes, said to be cut).
  await visitor.goto(`${env.publicUrl}/console-echo/${'x'.repeat(3000)}`);
  const longRow = rows.filter({ hasText: '(cut when stored)' });
  await longRow.waitFor();
  const summary = longRow.locator('details.long-path summary');
  const closed = await summary.boundingBox();
  assert.ok(closed && closed.height < 40, `one line: ${closed?.height}px`);
  assert.equal(await summary.evaluate((el) => (el as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth > (el as unknown as { clientWidth: number }).clientWidth), true, 'cut by the browser');
  await summary.click();
  const opened = await summary.boundingBox();
  assert.ok(opened && opened.height > 5 * closed.height, `opened: ${opened?.height}px`);
  assert.equal(((await summary.textContent()) ?? '').trim(), `/console-echo/${'x'.repeat(2048 - '/console-echo/'.length)}…`);
  await screenshot(page, 'console-long-path');
  await summary.click(); // closed and left, so the log keeps updating
  await summary.evaluate((el) => (el as unknown as { blur(): void }).blur());

  // Filter: by method, then by a status class nothing has.
  await page.getByLabel('Method', { exact: true }).fill('post');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/[?&]method=post/);
  assert.equal(await rows.count(), 1);
  assert.match((await rows.first().textContent()) ?? '', /\/console-echo\/submit/);
  assert.doesNotMatch(page.url(), /status=|path=|user=|from=|to=/, 'empty filters stay out of the URL');
  await page.getByLabel('Status', { exact: true }).selectOption('4xx');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('No requests match these filters.').waitFor();
  await page.getByRole('link', { name: 'Clear filters' }).click();
  await rows.nth(1).waitFor();

  // Disable in one click: the proxy answers 503, and that request is logged too.
  await page.getByRole('button', { name: 'Disable Console echo' }).click();
  await page.getByRole('button', { name: 'Enable Console echo' }).waitFor();
  await page.getByText('Disabled “Console echo”.').waitFor();
  assert.equal((await visitor.goto(`${env.publicUrl}/console-echo/while-disabled`))?.status(), 503);
  await rows.filter({ hasText: '/console-echo/while-disabled' }).waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('5xx');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(/status=5xx/);
  assert.equal(await rows.count(), 1);
  assert.match((await rows.first().textContent()) ?? '', /503/);
  await screenshot(page, 'console-service-filtered');

  // Enable again, with the keyboard: the focus stays on the (relabelled) button.
  await page.getByRole('button', { name: 'Enable Console echo' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Disable Console echo' }).waitFor();
  await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Disable Console echo');

  // Edit: the form starts filled in; the change is audited with before and after.
  await page.getByRole('link', { name: 'Edit Console echo' }).click();
  assert.equal(await page.getByLabel('Target URL').inputValue(), env.upstream.origin);
  await page.getByLabel('Description').fill('Echoes every request');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL(serviceUrl);
  await page.getByText('Saved “Console echo”.').waitFor();
  await screenshot(page, 'console-service');

  // Charts: the overview draws the traffic with data points, and keeps it current.
  await page.goto(`${env.publicUrl}/dashboard`);
  await page.waitForFunction(() => Number(document.querySelector('[data-chart="requests"]')?.dataset.total) >= 3);
  assert.equal(await page.locator('[data-chart="requests"] canvas').count(), 1);
  assert.ok(Number(await page.locator('[data-chart="latency"]').getAttribute('data-points')) >= 1);
  assert.match((await page.locator('[data-chart-summary]').textContent()) ?? '', /requests in the last hour/);
  await page.getByRole('button', { name: 'Last day' }).click();
  await page.getByText('Requests per 5 minutes, by status class').waitFor();
  await page.getByRole('button', { name: 'Last hour' }).click();
  await page.getByText('Requests per minute, by status class').waitFor();
  assert.match((await page.locator('[data-stat="requests"]').textContent()) ?? '', /^[3-9]$/);
  await screenshot(page, 'console-overview');

  // Delete: the dialog names the service; Cancel keeps it, confirming removes it.
  await page.getByRole('button', { name: 'Delete Console echo' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  assert.match((await dialog.textContent()) ?? '', /Delete “Console echo”\?[\s\S]*\/console-echo/);
  await screenshot(page, 'console-delete-dialog');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await page.locator('.services-table tbody tr').count(), 1);
  await page.getByRole('button', { name: 'Delete Console echo' }).click();
  await dialog.getByRole('button', { name: 'Delete “Console echo”' }).click();
  await page.getByText('Deleted “Console echo”.').waitFor();
  await page.getByText('No services yet.').waitFor();

  // Audit log: every action, who did it, and the update's before and after.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit log' }).click();
  const actions = await page.locator('.audit-table tbody th').allTextContents();
  assert.deepEqual(actions, ['Service deleted', 'Service updated', 'Service enabled', 'Service disabled', 'Service created', 'Signed in']);
  const updated = page.locator('.audit-table tbody tr').nth(1);
  assert.match((await updated.textContent()) ?? '', /Description:\s*before: \(empty\)\s*→\s*after: Echoes every request/);
  assert.match((await updated.textContent()) ?? '', /admin@example\.com/);
  const time = page.locator('.audit-table time').first();
  assert.match((await time.getAttribute('title')) ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  await screenshot(page, 'console-audit');

  // On a phone: the overview and the audit log fit the width, without sideways scrolling.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const path of ['/dashboard', '/dashboard/audit']) {
    await page.goto(`${env.publicUrl}${path}`);
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(scroll <= client, `${path} is ${scroll}px wide in a ${client}px viewport`);
    await screenshot(page, `console-phone-${path === '/dashboard' ? 'overview' : 'audit'}`);
  }

  assert.deepEqual(errors, []);
  await context.close();
});

test('in Chromium: a signed-in non-admin gets a 403 page that says why', async () => {
  const errors: string[] = [];
  const context = await newContext(errors);
  const page = await context.newPage();
  await page.goto(`${env.publicUrl}/dashboard/audit`);
  await signInAtProvider(page, 'user@example.com', 'user-password');
  await page.waitForURL(`${env.publicUrl}/dashboard/audit`);
  assert.match((await page.locator('main').textContent()) ?? '', /signed in as Uma User \(user@example\.com\), but this account is not an administrator/);
  assert.equal((await page.reload())?.status(), 403);
  await screenshot(page, 'console-forbidden');
  assert.deepEqual(errors, []);
  await context.close();
});
