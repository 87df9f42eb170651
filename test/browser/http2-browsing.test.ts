/**
 * Chromium over HTTP/2 (README "HTTP/2"): a gateway with TLS on `https://localhost`, a browser that
 * signs in through the real identity provider and browses a protected service. Every answer of the
 * gateway comes over `h2` (Chromium's own record of each response, from the DevTools protocol),
 * all of them over one connection, page loads and the sign-in's redirects alike; the page is the
 * target's, with the signed-in user.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createService } from '../support/api-client.js';
import { launchBrowser, signInAtProvider } from '../support/browser.js';
import { freePort } from '../support/free-port.js';
import { startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { signIn } from '../support/sessions.js';
import { makeTestCa } from '../support/test-certificates.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';

let dir: string;
let env: GatewayWithProvider;
let upstream: EchoUpstream;
let browser: Browser;
let origin: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-h2-browser-'));
  const pair = makeTestCa(dir).issue('gateway', ['localhost']);
  const port = await freePort();
  origin = `https://localhost:${port}`;
  upstream = await startEchoUpstream();
  env = await startGatewayWithProvider({ PORT: String(port), PUBLIC_URL: origin, TLS_CERT_FILE: pair.cert, TLS_KEY_FILE: pair.key });
  await createService(env.gw.adminUrl, await signIn(env.gw), { name: 'App', path: '/app', targetUrl: upstream.origin, requireAuth: true });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await env?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('in Chromium: sign in and browse a protected service over h2, on one connection', async () => {
  // The test CA is not the browser's: its certificate is accepted for this context alone.
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  const devtools = await context.newCDPSession(page);
  await devtools.send('Network.enable');
  const answers: Array<{ url: string; protocol: string; connectionId: number }> = [];
  devtools.on('Network.responseReceived', ({ response }) => {
    if (response.url.startsWith(origin)) answers.push({ url: response.url, protocol: String(response.protocol), connectionId: Number(response.connectionId) });
  });

  await page.goto(`${origin}/app/first`);
  await signInAtProvider(page, 'user@example.com', 'user-password');
  await page.waitForURL(`${origin}/app/first`);
  const first = JSON.parse((await page.locator('body').textContent()) ?? '{}') as Echo;
  assert.equal(first.url, '/first');
  assert.deepEqual(headerValues(first, 'x-forwarded-user'), ['demo-user']);

  await page.goto(`${origin}/app/second?page=2`);
  const second = JSON.parse((await page.locator('body').textContent()) ?? '{}') as Echo;
  assert.equal(second.url, '/second?page=2');

  assert.ok(answers.length >= 3, `the gateway answered ${answers.length} times`);
  assert.deepEqual([...new Set(answers.map((answer) => answer.protocol))], ['h2'], 'every answer over HTTP/2');
  assert.equal(new Set(answers.map((answer) => answer.connectionId)).size, 1, 'one connection carried them all');
  await context.close();
});
