import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { useAdminSession } from '../support/admin-session.js';
import { signInAtProvider } from '../support/browser.js';

/**
 * Ending sessions in Chromium, after real sign-ins through the OpenID Provider's forms: a user
 * signs out another of their browsers at /auth/sessions, and an administrator finds a user on the
 * console's Sessions page and signs them out everywhere through the confirmation dialog, after
 * which the user's browsers must sign in again.
 */

/** What each of the user's browsers says it is (the gateway lists sessions by it). */
const LAPTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const PHONE_UA = 'Mozilla/5.0 (Android 14; Mobile; rv:127.0) Gecko/127.0 Firefox/127.0';

const env = useAdminSession({ provider: true, gatewayHost: 'localhost', browser: true, admin: false });


/** A new browser context (`userAgent` when given) whose pages fail the test on any script error. */
async function newContext(errors: string[], userAgent?: string): Promise<BrowserContext> {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, ...(userAgent ? { userAgent } : {}) });
  context.on('page', (page) => page.on('pageerror', (error) => errors.push(error.message)));
  return context;
}

/** Opens /auth/sessions in a new page of `context`, signing in as the demo user on the way. */
async function userSignsIn(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${env.publicUrl}/auth/sessions`);
  const login = new URL(page.url());
  assert.equal(login.pathname, '/auth/login-page');
  assert.equal(login.searchParams.get('returnTo'), '/auth/sessions');
  await signInAtProvider(page, 'user@example.com', 'user-password');
  await page.waitForURL(`${env.publicUrl}/auth/sessions`);
  return page;
}

/** Where `page` lands when it opens /auth/sessions again: that page, or the login page when its session has ended. */
async function reopen(page: Page): Promise<string> {
  await page.goto(`${env.publicUrl}/auth/sessions`);
  return new URL(page.url()).pathname;
}

test('in Chromium: a user signs out another of their browsers at /auth/sessions', async () => {
  const errors: string[] = [];
  const laptop = await newContext(errors, LAPTOP_UA);
  const phone = await newContext(errors, PHONE_UA);
  const laptopPage = await userSignsIn(laptop);
  const phonePage = await userSignsIn(phone);

  // The laptop sees both, itself marked; only the phone has a sign-out button.
  await laptopPage.reload();
  const sessions = laptopPage.getByRole('list', { name: 'Your sessions' }).getByRole('listitem');
  assert.equal(await sessions.count(), 2);
  const own = sessions.filter({ hasText: 'This browser' });
  assert.match((await own.textContent()) ?? '', /Chrome 126 on Windows/);
  assert.equal(await own.getByRole('button').count(), 0);
  const other = sessions.filter({ hasText: 'Firefox 127 on Android' });
  assert.match((await other.textContent()) ?? '', /signed in just now/);

  await other.getByRole('button', { name: 'Sign out this one' }).click();
  await laptopPage.waitForURL(`${env.publicUrl}/auth/sessions?ended=1`);
  await laptopPage.getByRole('status').filter({ hasText: 'Signed out 1 session.' }).waitFor();
  assert.equal(await sessions.count(), 1);
  assert.equal(await laptopPage.getByRole('button', { name: 'Sign out everywhere else' }).count(), 0);

  // The phone must sign in again; the laptop stays signed in.
  assert.equal(await reopen(phonePage), '/auth/login-page');
  assert.equal(await reopen(laptopPage), '/auth/sessions');

  // The page's own sign-out ends this one.
  await laptopPage.getByRole('button', { name: 'Sign out', exact: true }).click();
  await laptopPage.waitForURL(`${env.publicUrl}/`);
  assert.equal(await reopen(laptopPage), '/auth/login-page');

  assert.deepEqual(errors, []);
  await laptop.close();
  await phone.close();
});

test('in Chromium: an admin finds a user on the Sessions page and signs them out everywhere after confirming', async () => {
  const errors: string[] = [];
  const laptop = await newContext(errors, LAPTOP_UA);
  const phone = await newContext(errors, PHONE_UA);
  const laptopPage = await userSignsIn(laptop);
  const phonePage = await userSignsIn(phone);

  const admin = await newContext(errors);
  const page = await admin.newPage();
  await page.goto(`${env.publicUrl}/dashboard`);
  await signInAtProvider(page, 'admin@example.com', 'admin-password');
  await page.waitForURL(`${env.publicUrl}/dashboard`);
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Sessions' }).click();
  await page.waitForURL(`${env.publicUrl}/dashboard/sessions`);
  assert.equal(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Sessions' }).getAttribute('aria-current'), 'page');
  const rows = page.locator('.sessions-table tbody tr');
  await rows.filter({ hasText: 'user@example.com' }).first().waitFor();

  // Search by email: the user's two browsers, the newest first.
  await page.getByLabel('User (email or subject)').fill('user@example.com');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(`${env.publicUrl}/dashboard/sessions?user=user%40example.com`);
  assert.equal(await rows.count(), 2);
  assert.match((await rows.nth(0).textContent()) ?? '', /Uma User[\s\S]*demo-user[\s\S]*Firefox 127 on Android/);
  assert.match((await rows.nth(1).textContent()) ?? '', /Chrome 126 on Windows/);
  assert.equal(await rows.nth(1).locator('[data-label="Browser"] span').first().getAttribute('title'), LAPTOP_UA);

  // Sign out everywhere asks first: Cancel changes nothing.
  const signOut = page.getByRole('button', { name: 'Sign out user@example.com everywhere' });
  await signOut.click();
  const dialog = page.getByRole('dialog');
  assert.match((await dialog.textContent()) ?? '', /Sign user@example\.com out everywhere\?[\s\S]*Every session of user@example\.com ends at once/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await reopen(phonePage), '/auth/sessions');

  await signOut.click();
  await dialog.getByRole('button', { name: 'Sign out everywhere' }).click();
  await page.getByText('Signed user@example.com out everywhere: 2 sessions ended.').waitFor();
  await page.getByText('user@example.com has no live session').waitFor();

  // Both of the user's browsers are sent to the sign-in on their next request; the admin is not.
  assert.equal(await reopen(laptopPage), '/auth/login-page');
  assert.equal(await reopen(phonePage), '/auth/login-page');
  await page.reload();
  assert.equal(new URL(page.url()).pathname, '/dashboard/sessions');

  // The audit log says who ended which sessions, and links the user back to their sessions.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit log' }).click();
  const ended = page.locator('.audit-table tbody tr').filter({ hasText: 'Sessions ended' }).first();
  assert.match((await ended.textContent()) ?? '', /admin@example\.com[\s\S]*2 sessions of user@example\.com, by an administrator/);
  await ended.getByRole('link', { name: 'user@example.com' }).click();
  await page.waitForURL(`${env.publicUrl}/dashboard/sessions?user=demo-user`);

  assert.deepEqual(errors, []);
  await Promise.all([laptop.close(), phone.close(), admin.close()]);
});
