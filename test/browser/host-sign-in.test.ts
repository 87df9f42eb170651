/**
 * One sign-in for every host (design.md §4.16) in Chromium, which resolves `*.localhost` to
 * loopback itself: signed in on app.localhost, a person opens x.apps.localhost and lands on its page
 * without seeing the provider; logging out on one host, the other asks to sign in again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import { startHostSignInGateway, type HostSignInGateway } from '../support/host-sign-in-gateways.js';
import { headerValues, type Echo } from '../support/upstream.js';
import { account } from '../hosts/host-flows.js';

const USER = account('browser-hosts');

/** What an app's own sign-out button does: posts the host session's CSRF token as `_csrf` to the host's logout. */
const SIGN_OUT = `(async () => {
  const { csrfToken } = await (await fetch('/.gatehouse/csrf-token')).json();
  const form = Object.assign(document.createElement('form'), { method: 'POST', action: '/.gatehouse/logout' });
  form.append(Object.assign(document.createElement('input'), { type: 'hidden', name: '_csrf', value: csrfToken }));
  document.body.append(form);
  form.submit();
})()`;

let gw: HostSignInGateway;
let browser: Browser;

before(async () => {
  [gw, browser] = await Promise.all([startHostSignInGateway('embedded', [USER]), launchBrowser()]);
});
after(async () => {
  await browser?.close();
  await gw?.close();
});

/** The echo upstream's answer the page shows. */
async function echoed(page: Page): Promise<Echo> {
  return JSON.parse((await page.locator('body').textContent()) ?? '{}') as Echo;
}

test('in Chromium: signed in on one host, another opens without the provider; logged out on it, the first asks to sign in again', { timeout: 120_000 }, async () => {
  const app = (path: string) => `${gw.hostOrigin('app.localhost')}${path}`;
  const wild = (path: string) => `${gw.hostOrigin('x.apps.localhost')}${path}`;
  const context = await browser.newContext();
  const visited: string[] = [];
  context.on('request', (request) => visited.push(request.url()));
  const page = await context.newPage();

  await page.goto(app('/page?x=1'));
  assert.ok(page.url().startsWith(gw.idp.issuer), `at the provider: ${page.url()}`);
  await page.locator('#email').fill(USER.email);
  await page.locator('#password').fill(USER.password);
  await page.locator('button[type=submit]').click();
  await page.locator('button[type=submit]').click(); // consent
  await page.waitForURL(app('/page?x=1'));
  const onApp = await echoed(page);
  assert.equal(onApp.url, '/app/page?x=1');
  assert.deepEqual(headerValues(onApp, 'x-forwarded-user'), [USER.sub]);

  const mark = visited.length;
  await page.goto(wild('/'));
  await page.waitForURL(wild('/'));
  assert.deepEqual(headerValues(await echoed(page), 'x-forwarded-user'), [USER.sub]);
  assert.deepEqual(visited.slice(mark).filter((url) => url.startsWith(gw.idp.issuer)), [], 'the provider is not seen');
  const hostOnly = (await context.cookies()).filter((cookie) => cookie.name === 'gw_session');
  assert.deepEqual(hostOnly.map((cookie) => cookie.domain).sort(), ['app.localhost', new URL(gw.publicUrl).hostname, 'x.apps.localhost'].sort());

  await page.evaluate(SIGN_OUT);
  await page.waitForURL(`${gw.publicUrl}/`);

  await page.goto(app('/page?x=2'));
  await page.locator('#email').waitFor();
  assert.ok(page.url().startsWith(gw.idp.issuer), `asked to sign in again: ${page.url()}`);
  await context.close();
});
