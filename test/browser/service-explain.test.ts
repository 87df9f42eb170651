import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { useAdminSession } from '../support/admin-session.js';

/**
 * "Who can reach this?" on a service's page in Chromium (design.md §4.18): the form takes a path,
 * a method and a caller, and the page shows the deciding rule and its sentence; with JavaScript
 * off as well as on, and the answer survives the page's live refresh.
 */

let serviceId = '';
const env = useAdminSession({ upstream: true, browser: true }, async (env) => {
  serviceId = await env.createService({
    name: 'Hooked',
    path: '/hooked',
    targetUrl: env.upstream.origin,
    requireAuth: true,
    access: { groups: ['staff'], emails: [], emailDomains: [], subjects: [] },
    rules: [
      { paths: ['/hooks/*'], methods: ['POST'], action: 'public' },
      { paths: ['/internal'], action: 'deny' },
    ],
  });
});

/** A context of `browser` signed in as the administrator (the session cookie set straight), collecting script errors. */
async function signedInContext(browser: Browser, javaScriptEnabled: boolean): Promise<{ context: BrowserContext; errors: string[] }> {
  const context = await browser.newContext({ javaScriptEnabled, viewport: { width: 1280, height: 900 } });
  const [name, value] = env.admin.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: env.publicUrl, httpOnly: true, sameSite: 'Lax' }]);
  const errors: string[] = [];
  context.on('page', (page) => page.on('pageerror', (error) => errors.push(error.message)));
  return { context, errors };
}

for (const javaScriptEnabled of [true, false]) {
  test(`in Chromium${javaScriptEnabled ? '' : ' without JavaScript'}: asking who can reach a path shows the deciding rule and why`, async () => {
    const { context, errors } = await signedInContext(env.browser, javaScriptEnabled);
    const page = await context.newPage();
    await page.goto(`${env.publicUrl}/dashboard/services/${serviceId}`);
    const form = page.locator('form[data-explain-form]');
    await form.getByLabel('Request path').fill('/hooked/Internal/x');
    await form.getByRole('button', { name: 'Explain' }).click();
    await page.locator('[data-explanation]').waitFor();
    assert.equal(await page.locator('[data-explanation]').getAttribute('data-outcome'), 'deny');
    assert.equal(await page.locator('[data-deciding-rule]').textContent(), 'deny /internal');
    assert.equal(await page.locator('[data-reason]').textContent(), 'Rule 2 (deny /internal) matches: 403 Access denied for everyone, signed in or not.');
    assert.match(page.url(), /who-path=%2Fhooked%2FInternal%2Fx/, 'the answer is a link');

    await form.getByLabel('Request path').fill('/hooked/reports');
    await form.getByLabel('Request method').fill('POST');
    await form.getByLabel('Subject').fill('ann');
    await form.getByLabel('Groups').fill('visitors, staff');
    await form.getByRole('button', { name: 'Explain' }).click();
    await page.waitForURL(/who-groups=visitors/);
    assert.equal(await page.locator('[data-explanation]').getAttribute('data-outcome'), 'allowed');
    assert.equal(await page.locator('[data-deciding-rule]').count(), 0, 'no rule decides: the service does');
    assert.equal(
      await page.locator('[data-reason]').textContent(),
      'No rule matches, and the service lets this caller in: one of their groups is on the access list.',
    );
    assert.equal(await form.getByLabel('Groups').inputValue(), 'visitors, staff', 'the question stays in the form');
    if (javaScriptEnabled) {
      // the page refreshes its live regions from the same URL: the answer is still there after one
      await page.evaluate(() => (globalThis as unknown as { gatehouse: { refresh(o: { force: boolean }): Promise<void> } }).gatehouse.refresh({ force: true }));
      assert.equal(await page.locator('[data-explanation]').getAttribute('data-outcome'), 'allowed');
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
}
