import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { useAdminSession } from '../support/admin-session.js';
import { signInAtProvider } from '../support/browser.js';

/**
 * design.md §4.7 in Chromium: an administrator sets a service's access policy in the console form
 * (the API's reasons beside each list), and a signed-in user the policy refuses gets the 403 page
 * naming the service and their account, whose sign-out link signs them out.
 */

/** The parts of the page's DOM that evaluated functions touch (tests compile without the DOM library). */
declare const document: { activeElement: { id: string } | null };

const SCREENSHOTS = new URL('../../../test-output/', import.meta.url).pathname;

const env = useAdminSession({ provider: true, gatewayHost: 'localhost', upstream: true, browser: true, admin: false }, async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
});


/** A new browser context whose pages fail the test on any script error. */
async function newContext(errors: string[]): Promise<BrowserContext> {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.on('page', (page) => page.on('pageerror', (error) => errors.push(error.message)));
  return context;
}

test('in Chromium: the console form sets an access policy, the API’s reasons beside each list, and the service page shows it', async () => {
  const errors: string[] = [];
  const context = await newContext(errors);
  const page = await context.newPage();
  await page.goto(`${env.publicUrl}/dashboard/services/new`);
  await signInAtProvider(page, 'admin@example.com', 'admin-password');
  await page.waitForURL(`${env.publicUrl}/dashboard/services/new`);

  await page.getByLabel('Name').fill('Payroll');
  await page.getByLabel('Path').fill('/payroll');
  await page.getByLabel('Target URL').fill(env.upstream.origin);
  await page.getByLabel('Groups').fill('gatehouse-admins\n\n  finance  ');
  await page.getByLabel('Email domains').fill('ops@example.org');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.locator('#access-emailDomains-error').waitFor();
  assert.equal(await page.locator('#access-emailDomains-error').textContent(), 'Email domains must be a domain without @ (got "ops@example.org").');
  assert.equal(await page.getByLabel('Email domains').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'access-emailDomains', 'focus moves to the list to fix');
  await page.screenshot({ path: `${SCREENSHOTS}console-policy-validation.png`, fullPage: true });

  // A policy needs sign-in: the reason is shown on the policy as a whole, focus on its first list.
  await page.getByLabel('Email domains').fill('Example.ORG');
  await page.getByLabel('Sign-in required').uncheck();
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.locator('#access-error').waitFor();
  assert.equal(await page.locator('#access-error').textContent(), 'An access policy needs requireAuth.');
  assert.equal(await page.locator('#access-emailDomains-error').isHidden(), true, 'the earlier reason is cleared');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'access-groups');

  await page.getByLabel('Sign-in required').check();
  await page.getByLabel("Forward the caller's bearer token to the target").check();
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.waitForURL(/\/dashboard\/services\/[0-9a-f-]{36}$/);
  const policy = page.locator('[data-access-policy] li');
  assert.deepEqual(await policy.allTextContents(), ['Groups: gatehouse-admins, finance', 'Email domains: example.org']);
  assert.match((await page.locator('.summary').textContent()) ?? '', /Bearer token\s*Forwarded to the target/);

  // Edit: the lists come back one entry per line; emptying them all lets any signed-in user in.
  await page.getByRole('link', { name: 'Edit Payroll' }).click();
  assert.equal(await page.getByLabel('Groups').inputValue(), 'gatehouse-admins\nfinance');
  assert.equal(await page.getByLabel('Email domains').inputValue(), 'example.org');
  assert.equal(await page.getByLabel("Forward the caller's bearer token to the target").isChecked(), true);
  await page.getByLabel('Groups').fill('');
  await page.getByLabel('Email domains').fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved “Payroll”.').waitFor();
  assert.deepEqual(await policy.allTextContents(), ['Any signed-in user']);

  await page.goto(`${env.publicUrl}/dashboard/audit`);
  const updated = page.locator('.audit-table tbody tr').first();
  assert.match((await updated.textContent()) ?? '', /Who may use it:\s*before: Groups: gatehouse-admins, finance; Email domains: example\.org\s*→\s*after: Any signed-in user/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('in Chromium: a signed-in user the policy refuses gets a 403 page naming the service and the account; its link signs out', async () => {
  const admin = await newContext([]);
  const adminPage = await admin.newPage();
  await adminPage.goto(`${env.publicUrl}/auth/login-page`);
  await signInAtProvider(adminPage, 'admin@example.com', 'admin-password');
  await adminPage.waitForURL(`${env.publicUrl}/`);
  const created = await adminPage.evaluate(
    async ([targetUrl]) => {
      const { csrfToken } = (await (await fetch('/auth/csrf-token')).json()) as { csrfToken: string };
      const body = { name: 'Admins’ tools', path: '/admin-tools', targetUrl, access: { groups: ['gatehouse-admins'] } };
      const response = await fetch('/api/services', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken }, body: JSON.stringify(body) });
      return response.status;
    },
    [env.upstream.origin] as const,
  );
  assert.equal(created, 201);
  assert.equal((await adminPage.goto(`${env.publicUrl}/admin-tools/`))?.status(), 200, 'the admin is in the group');
  await admin.close();

  const errors: string[] = [];
  const context = await newContext(errors);
  const page = await context.newPage();
  await page.goto(`${env.publicUrl}/admin-tools/reports`);
  await signInAtProvider(page, 'user@example.com', 'user-password');
  await page.waitForURL(`${env.publicUrl}/admin-tools/reports`);
  assert.equal((await page.reload())?.status(), 403);
  assert.equal(await page.title(), 'Access denied · Gatehouse');
  assert.equal(await page.locator('#service').textContent(), 'Admins’ tools');
  assert.equal(await page.locator('#account').textContent(), 'user@example.com');
  await page.screenshot({ path: `${SCREENSHOTS}access-denied.png`, fullPage: true });

  await page.getByRole('link', { name: 'Sign out' }).click();
  await page.waitForURL(`${env.publicUrl}/`);
  assert.match((await page.locator('main').textContent()) ?? '', /You are not signed in/);
  assert.equal((await page.goto(`${env.publicUrl}/admin-tools/reports`))?.status(), 401, 'signed out: the sign-in page again');
  assert.deepEqual(errors, []);
  await context.close();
});
