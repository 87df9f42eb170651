/**
 * design.md §4.5 in a real browser: a proxied app's page, on the public origin, tries everything a
 * script can to act with the admin's session, while the admin is signed in on both origins. Both
 * are on one host (127.0.0.1, two ports): cookies ignore ports, so the browser attaches the admin
 * origin's cookies to the script's requests, and the CSRF token and the origin are the only walls.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { closeServer, listen } from '../support/listen.js';
import { startGatewayWithProvider } from '../support/gateway-with-provider.js';
import { createService } from '../support/api-client.js';
import { signIn } from '../support/sessions.js';

/** What the hostile page tries; each step records what it could see. Runs in the page. */
const ATTACK = `
const admin = new URLSearchParams(location.search).get('admin');
const results = {};
const attempt = async (name, run) => { try { results[name] = await run(); } catch (error) { results[name] = 'blocked: ' + error.name; } };
const json = { 'content-type': 'application/json' };
const service = (name) => JSON.stringify({ name, path: '/' + name, targetUrl: 'http://127.0.0.1:9' });
(async () => {
  const publicToken = (await (await fetch('/auth/csrf-token')).json()).csrfToken;
  await attempt('publicApi', async () => (await fetch('/api/services', { method: 'POST', headers: { ...json, 'x-csrf-token': publicToken }, body: service('via-public') })).status);
  await attempt('readAdminToken', async () => (await (await fetch(admin + '/auth/csrf-token', { credentials: 'include' })).json()).csrfToken);
  await attempt('adminApiWithPublicToken', async () => (await fetch(admin + '/api/services', { method: 'POST', credentials: 'include', headers: { ...json, 'x-csrf-token': publicToken }, body: service('with-public-token') })).status);
  await attempt('adminApiNoCors', async () => (await fetch(admin + '/api/services', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: service('no-cors') })).type);
  await attempt('adminLogoutGet', async () => (await fetch(admin + '/auth/logout', { mode: 'no-cors', credentials: 'include' })).type);
  await attempt('readAdminPage', async () => (await (await fetch(admin + '/dashboard', { credentials: 'include' })).text()).length);
  const frame = document.createElement('iframe');
  frame.name = 'sink';
  document.body.append(frame);
  const form = document.createElement('form');
  form.method = 'post';
  form.action = admin + '/auth/logout';
  form.target = 'sink';
  form.innerHTML = '<input type="hidden" name="_csrf" value="' + publicToken + '">';
  document.body.append(form);
  const posted = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
  form.submit();
  await posted;
  await attempt('readFramedResult', async () => frame.contentDocument.body.innerText);
  window.attackResults = results;
})();
`;

let app: Server;

// The administrator's session is the admin origin's (env.gw.adminUrl, ADMIN_URL).
const env = useAdminSession({ provider: true, adminOrigin: true, browser: true }, async (env) => {
  app = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>A proxied app</title><body><script>${ATTACK}</script></body>`);
  });
  const appPort = await listen(app, 0, '127.0.0.1');
  await env.createService({ name: 'App', path: '/app', targetUrl: `http://127.0.0.1:${appPort}`, requireAuth: false });
});
after(async () => {
  if (app) await closeServer(app);
});

test('in Chromium: a public page cannot create, change or read anything through the admin origin', async () => {
  const publicSession = await env.signIn();
  const context = await env.browser.newContext();
  const cookie = (header: string) => {
    const [name, value] = header.split('=') as [string, string];
    return { name, value, domain: '127.0.0.1', path: '/', httpOnly: true, sameSite: 'Lax' as const };
  };
  await context.addCookies([cookie(publicSession.cookie), cookie(env.admin.cookie)]);
  const page = await context.newPage();
  await page.goto(`${env.gw.origin}/app/?admin=${encodeURIComponent(env.gw.adminUrl)}`);
  const results = (await (await page.waitForFunction(() => (globalThis as { attackResults?: unknown }).attackResults)).jsonValue()) as Record<string, unknown>;

  assert.equal(results.publicApi, 404, 'the public origin has no admin API');
  assert.match(String(results.readAdminToken), /^blocked/, 'the admin origin\'s token cannot be read cross-origin');
  assert.match(String(results.adminApiWithPublicToken), /^blocked/, 'a custom header needs a preflight, which is not granted');
  assert.equal(results.adminApiNoCors, 'opaque');
  assert.match(String(results.readAdminPage), /^blocked/);
  assert.match(String(results.readFramedResult), /^blocked/, 'the framed answer is another origin\'s');

  const profile = await request(`${env.gw.adminUrl}/auth/profile`, { headers: { cookie: env.admin.cookie } });
  assert.equal(profile.statusCode, 200, 'the admin is still signed in on the admin origin');
  await profile.body.dump();
  const list = await request(`${env.gw.adminUrl}/api/services`, { headers: { cookie: env.admin.cookie } });
  assert.deepEqual(((await list.body.json()) as Array<{ path: string }>).map((s) => s.path), ['/app'], 'nothing was created');
  const audit = await request(`${env.gw.adminUrl}/dashboard/logs`, { headers: { cookie: env.admin.cookie } });
  const actions = ((await audit.body.json()) as { logs: Array<{ action: string }> }).logs.map((entry) => entry.action);
  assert.deepEqual(actions, ['SERVICE_CREATED'], 'the only change is the setup\'s');
  await context.close();
});

test('in Chromium, without ADMIN_URL (the single origin the interface defines): the same page creates a service, the risk README names', async () => {
  const single = await startGatewayWithProvider();
  try {
    const admin = await signIn(single.gw);
    const appUrl = `http://127.0.0.1:${(app.address() as { port: number }).port}`;
    await createService(single.gw.origin, admin, { name: 'App', path: '/app', targetUrl: appUrl, requireAuth: false });
    const context = await env.browser.newContext();
    const [name, value] = admin.cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/', httpOnly: true, sameSite: 'Lax' }]);
    const page = await context.newPage();
    await page.goto(`${single.gw.origin}/app/?admin=${encodeURIComponent(single.gw.adminUrl)}`);
    const results = (await (await page.waitForFunction(() => (globalThis as { attackResults?: unknown }).attackResults)).jsonValue()) as Record<string, unknown>;
    assert.equal(results.publicApi, 201);
    await context.close();
  } finally {
    await single.close();
  }
});
