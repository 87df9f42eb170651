/**
 * design.md §3.4, §3.5 and §3.7 in Chromium: unmodified apps under a prefix, used the way a person does.
 * A static site served by `python3 -m http.server` whose page loads its script relatively; an
 * Express 5 app that sets a cookie without `Path` beside a service that shows the cookies it gets;
 * and the gateway's own pages (disabled service, sign-in required, the icon).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { useAdminSession } from '../support/admin-session.js';
import { startCookieSettingApp, type CookieSettingApp } from '../support/cookie-setting-app.js';
import { startPythonFileServer, type PythonFileServer } from '../support/python-file-server.js';
import { headerValues, type Echo } from '../support/upstream.js';

/** A static single-page app: `app.js`, linked relatively, writes where it ran into the page. */
const SITE = {
  'index.html':
    '<!doctype html><html><head><title>Static app</title><script src="app.js" defer></script></head>' +
    '<body><p id="status">app.js did not run</p></body></html>',
  'app.js': "document.getElementById('status').textContent = 'app.js ran at ' + location.pathname;\n",
};

/** Loads `/favicon.ico` as an image in the page; resolves with its width, or -1 when it does not decode. */
const ICON_WIDTH = `new Promise((resolve) => {
  const image = new Image();
  image.onload = () => resolve(image.naturalWidth);
  image.onerror = () => resolve(-1);
  image.src = '/favicon.ico';
})`;

let site: PythonFileServer;
let cookieApp: CookieSettingApp;
let context: BrowserContext;
/** Responses of 400 and above that a page received, as `status url`. */
const failures: string[] = [];

const env = useAdminSession({ upstream: true, browser: true }, async (env) => {
  [site, cookieApp] = await Promise.all([startPythonFileServer(SITE), startCookieSettingApp('A')]);
  const create = async (path: string, targetUrl: string, requireAuth = false) => {
    const created = await env.call('POST', '/api/services', { as: env.admin, json: { name: path, path, targetUrl, requireAuth } });
    assert.equal(created.status, 201, created.text);
    return created.json.id as string;
  };
  await create('/spa', site.origin);
  await create('/a', cookieApp.origin);
  await create('/b', env.upstream.origin);
  await create('/locked', env.upstream.origin, true);
  const off = await create('/off', env.upstream.origin);
  assert.equal((await env.call('PATCH', `/api/services/${off}/toggle`, { as: env.admin, json: { enabled: false } })).status, 200);
  context = await env.browser.newContext();
  context.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
  });
});
after(async () => {
  await Promise.all([site?.close(), cookieApp?.close()]);
});

test('opening /spa ends at /spa/, and the script the page links relatively runs', async () => {
  const page = await context.newPage();
  failures.length = 0;
  await page.goto(`${env.gw.origin}/spa?tab=2`);
  assert.equal(page.url(), `${env.gw.origin}/spa/?tab=2`);
  await page.locator('#status', { hasText: 'app.js ran at /spa/' }).waitFor();
  assert.deepEqual(failures, [], 'every resource of the page loaded');
  await page.close();
});

test('a cookie an app sets without Path is sent back to that app, never to another service', async () => {
  const page = await context.newPage();
  await page.goto(`${env.gw.origin}/a`);
  assert.equal(page.url(), `${env.gw.origin}/a/`);
  // The request to exactly /a (its default cookie path is /, RFC 6265 §5.1.4) is the one that leaked.
  assert.equal(await page.evaluate(() => fetch('/a', { method: 'POST' }).then((response) => response.status)), 200);
  const stored = (await context.cookies()).filter((cookie) => cookie.name === 'visited');
  assert.deepEqual(stored.map((cookie) => [cookie.value, cookie.path]), [['A', '/a']]);

  await page.goto(`${env.gw.origin}/a/cookies`);
  assert.equal(await page.locator('body').textContent(), 'visited=A');
  await page.goto(`${env.gw.origin}/b/`);
  const atB = JSON.parse((await page.locator('body').textContent()) ?? '{}') as Echo;
  assert.deepEqual(headerValues(atB, 'cookie'), [], 'no cookie of /a reaches /b');
  await page.close();
});

test("the gateway's pages for people: a disabled service, a sign-in, the icon", async () => {
  const page = await context.newPage();
  const disabled = await page.goto(`${env.gw.origin}/off/`);
  assert.equal(disabled?.status(), 503);
  assert.equal(await page.title(), 'Service disabled · Gatehouse');
  await page.getByRole('heading', { name: 'Service disabled' }).waitFor();
  await page.getByRole('link', { name: 'Gatehouse' }).waitFor();
  // The icon decodes as an image in the page that the browser would show it beside.
  assert.equal(await page.evaluate(ICON_WIDTH), 16);

  const locked = await page.goto(`${env.gw.origin}/locked/x?y=1`);
  assert.equal(locked?.status(), 401);
  assert.equal(await page.title(), 'Sign in required · Gatehouse');
  const signInLink = page.getByRole('link', { name: 'Sign in' });
  assert.equal(await signInLink.getAttribute('href'), `/auth/login?returnTo=${encodeURIComponent('/locked/x?y=1')}`);
  await page.close();
});
