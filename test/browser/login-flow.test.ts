import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { test } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { headerValues, type Echo } from '../support/upstream.js';

const SCREENSHOTS = new URL('../../../test-output/', import.meta.url).pathname;

// The gateway at localhost and the provider at 127.0.0.1 are two sites: the provider's form_post
// back to the gateway is a cross-site POST, as with a real identity provider.
const env = useAdminSession({ provider: true, gatewayHost: 'localhost', upstream: true, browser: true, admin: false }, async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
});

test('in Chromium: sign in as the admin, create and use a service with the API, disable it, read the logs, sign out', async () => {
  const page = await env.browser.newPage();
  const base = env.gw.gateway.config.publicUrl.origin;

  await page.goto(`${base}/`);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.locator('#login').click();
  await page.locator('#email').fill('admin@example.com');
  await page.locator('#password').fill('admin-password');
  await page.locator('button[type=submit]').click();
  await page.locator('button[type=submit]').click(); // consent
  await page.waitForURL(`${base}/`);
  assert.equal(await page.locator('#user-name').textContent(), 'Ada Admin');
  await page.screenshot({ path: `${SCREENSHOTS}home-signed-in.png`, fullPage: true });

  /** Calls the gateway's API from the page, as the page's own scripts would (cookies included). */
  const api = async (method: string, path: string, body?: unknown) => {
    const meta = page.locator('meta[name="csrf-token"]');
    const token = (await meta.count()) > 0 ? await meta.getAttribute('content') : null;
    return page.evaluate(
      async ([method, path, body, token]) => {
        const headers: Record<string, string> = { 'x-csrf-token': token ?? '' };
        if (body !== undefined) headers['content-type'] = 'application/json';
        const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: response.status, body: (await response.json()) as Record<string, any> };
      },
      [method, path, body, token] as const,
    );
  };

  const profile = await api('GET', '/auth/profile');
  assert.deepEqual(profile.body.user, { sub: 'demo-admin', name: 'Ada Admin', email: 'admin@example.com', isAdmin: true });

  const created = await api('POST', '/api/services', { name: 'Browser echo', path: '/browser-echo', targetUrl: env.upstream.origin });
  assert.equal(created.status, 201);
  assert.equal(created.body.requireAuth, true);

  await page.goto(`${base}/browser-echo/hello?x=1`);
  const echoed = JSON.parse((await page.locator('body').textContent()) ?? '{}') as Echo;
  assert.equal(echoed.url, '/hello?x=1');
  assert.deepEqual(headerValues(echoed, 'x-forwarded-user'), ['demo-admin']);
  assert.doesNotMatch(headerValues(echoed, 'cookie').join('; '), /gw_session/);

  await page.goto(`${base}/`);
  assert.equal((await api('PATCH', `/api/services/${created.body.id}/toggle`, { enabled: false })).status, 200);
  assert.deepEqual(await api('GET', '/browser-echo/hello'), { status: 503, body: { error: 'Service is disabled' } });

  // Access-log records are batched (about every 100 ms): wait until both requests are stored.
  let logs = await api('GET', `/api/services/${created.body.id}/logs`);
  while (logs.body.total < 2) logs = await api('GET', `/api/services/${created.body.id}/logs`);
  assert.deepEqual(logs.body.logs.map((log: { status_code: number }) => log.status_code), [503, 200]);
  const audit = await api('GET', '/dashboard/logs');
  assert.deepEqual(audit.body.logs.slice(0, 3).map((entry: { action: string }) => entry.action), ['SERVICE_DISABLED', 'SERVICE_CREATED', 'USER_LOGIN']);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(`${base}/`);
  assert.match((await page.locator('main').textContent()) ?? '', /You are not signed in/);
  assert.equal((await api('GET', '/auth/profile')).status, 401);
});
