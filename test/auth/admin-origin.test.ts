/**
 * design.md §4.5: with ADMIN_URL set, the console and the admin API live on their own origin, with
 * their own sign-in and session cookie, and the public origin (shared with every proxied app)
 * serves neither. Both origins here are on one host (127.0.0.1, two ports), the hardest case:
 * cookies ignore ports, so the browser sends each origin's cookies to the other.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { DEMO_USERS } from '../support/identity-provider.js';
import { headerValues, type Echo } from '../support/upstream.js';

// The administrator's session is the admin origin's (env.gw.adminUrl, ADMIN_URL); env.gw.origin is the public one.
const env = useAdminSession({ provider: true, adminOrigin: true, upstream: true }, async (env) => {
  await env.createService({ name: 'App', path: '/app', targetUrl: env.upstream.origin, requireAuth: false });
});

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const response = await request(url, { method: (init.method ?? 'GET') as 'GET', headers: init.headers, body: init.body });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text };
}

test('the public origin serves no admin API and no console: 404 Service not found, console pages redirect to ADMIN_URL', async () => {
  const publicAdmin = await env.signIn();
  for (const cookie of [env.admin.cookie, publicAdmin.cookie]) {
    for (const path of ['/api/services', '/dashboard/stats', '/dashboard/logs', '/api/services/x/logs']) {
      const response = await call(`${env.gw.origin}${path}`, { headers: { cookie } });
      assert.equal(response.status, 404, path);
      assert.equal(response.text, '{"error":"Service not found"}', path);
    }
    const write = await call(`${env.gw.origin}/api/services`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': publicAdmin.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Evil', path: '/evil', targetUrl: env.upstream.origin }),
    });
    assert.equal(write.status, 404);
  }
  const page = await call(`${env.gw.origin}/dashboard/services/new?x=1`, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 302);
  assert.equal(page.headers.location, `${env.gw.adminUrl}/dashboard/services/new?x=1`);
  const list = await call(`${env.gw.adminUrl}/api/services`, { headers: { cookie: env.admin.cookie } });
  assert.deepEqual((JSON.parse(list.text) as Array<{ path: string }>).map((s) => s.path), ['/app'], 'nothing was created');
});

test('the admin origin takes only its own session; the public one takes only its own', async () => {
  const publicAdmin = await env.signIn();
  assert.equal((await call(`${env.gw.adminUrl}/api/services`, { headers: { cookie: publicAdmin.cookie } })).status, 401);
  const adminId = env.admin.cookie.split('=')[1]!;
  const transplanted = await call(`${env.gw.adminUrl}/api/services`, { headers: { cookie: `gw_session=${adminId}` } });
  assert.equal(transplanted.status, 401, 'an admin-origin session id in the public cookie is not read there');
  const onPublic = await call(`${env.gw.origin}/auth/profile`, { headers: { cookie: `gw_session=${adminId}` } });
  assert.equal(onPublic.status, 401, 'an admin-origin session does not sign anyone in on the public origin');
  const proxied = JSON.parse((await call(`${env.gw.origin}/app/x`, { headers: { cookie: `gw_session=${adminId}` } })).text) as Echo;
  assert.deepEqual(headerValues(proxied, 'x-forwarded-user'), [], 'nor at a proxied service');
});

test('a proxied app never receives the admin origin\'s cookies, which the browser sends it (same host)', async () => {
  const seen = JSON.parse((await call(`${env.gw.origin}/app/x`, { headers: { cookie: `${env.admin.cookie}; gw_admin_oidc=k; app=1` } })).text) as Echo;
  assert.deepEqual(headerValues(seen, 'cookie'), ['app=1']);
});

test('no response of the admin origin grants CORS, preflight or not', async () => {
  const preflight = await call(`${env.gw.adminUrl}/api/services`, {
    method: 'OPTIONS',
    headers: { origin: env.gw.origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrf-token, content-type', cookie: env.admin.cookie },
  });
  const credentialed = await call(`${env.gw.adminUrl}/api/services`, { headers: { origin: env.gw.origin, cookie: env.admin.cookie } });
  for (const response of [preflight, credentialed]) {
    assert.deepEqual(Object.keys(response.headers).filter((name) => name.startsWith('access-control-')), []);
  }
  assert.notEqual(preflight.status, 204);
});

test('sign-in on the admin origin: its own callback, its own cookie, back to the console; / is the console', async () => {
  const start = await call(`${env.gw.adminUrl}/auth/login?returnTo=/dashboard`);
  assert.equal(new URL(String(start.headers.location)).searchParams.get('redirect_uri'), `${env.gw.adminUrl}/auth/callback`);
  assert.match(String(start.headers['set-cookie']), /^gw_admin_oidc=/);
  const publicStart = await call(`${env.gw.origin}/auth/login`);
  assert.equal(new URL(String(publicStart.headers.location)).searchParams.get('redirect_uri'), `${env.gw.origin}/auth/callback`);

  const user = DEMO_USERS.find((candidate) => candidate.email === 'admin@example.com')!;
  const jar = new CookieJar();
  const result = await loginThroughProvider({ loginUrl: `${env.gw.adminUrl}/auth/login?returnTo=/dashboard`, email: user.email, password: user.password, jar });
  assert.equal(result.status, 302, result.body);
  assert.equal(result.finalLocation, '/dashboard');
  const sessionId = jar.get('gw_admin_session', env.gw.adminUrl);
  assert.ok(sessionId);
  assert.equal(jar.get('gw_session', env.gw.adminUrl), undefined, 'no public-origin session came with it');
  const services = await call(`${env.gw.adminUrl}/api/services`, { headers: { cookie: `gw_admin_session=${sessionId}` } });
  assert.equal(services.status, 200);

  const home = await call(`${env.gw.adminUrl}/`, { headers: { cookie: `gw_admin_session=${sessionId}` } });
  assert.equal(home.status, 302);
  assert.equal(home.headers.location, '/dashboard');

  const csrf = JSON.parse((await call(`${env.gw.adminUrl}/auth/csrf-token`, { headers: { cookie: `gw_admin_session=${sessionId}` } })).text) as { csrfToken: string };
  const logout = await call(`${env.gw.adminUrl}/auth/logout`, { method: 'POST', headers: { cookie: `gw_admin_session=${sessionId}`, 'x-csrf-token': csrf.csrfToken } });
  assert.equal(logout.status, 302);
  assert.equal(new URL(String(logout.headers.location)).searchParams.get('post_logout_redirect_uri'), `${env.gw.adminUrl}/`);
  assert.match(String(logout.headers['set-cookie']), /^gw_admin_session=; Max-Age=0/);
});

test('the public home page links to the console on ADMIN_URL', async () => {
  const publicAdmin = await env.signIn();
  const home = await call(`${env.gw.origin}/`, { headers: { cookie: publicAdmin.cookie } });
  assert.match(home.text, new RegExp(`href="${env.gw.adminUrl}/dashboard"`));
});

test('the console links services to the public origin', async () => {
  const overview = await call(`${env.gw.adminUrl}/dashboard`, { headers: { cookie: env.admin.cookie, accept: 'text/html' } });
  assert.equal(overview.status, 200);
  assert.match(overview.text, new RegExp(`href="${env.gw.origin}/app/"`));
});
