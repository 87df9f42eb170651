/**
 * design.md §4.5: with ADMIN_URL set, the console and the admin API live on their own origin, with
 * their own sign-in and session cookie, and the public origin (shared with every proxied app)
 * serves neither. Both origins here are on one host (127.0.0.1, two ports), the hardest case:
 * cookies ignore ports, so the browser sends each origin's cookies to the other.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { DEMO_USERS } from '../support/identity-provider.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';
import { freePort } from '../support/free-port.js';
import { startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { createService } from '../support/api-client.js';
import { signIn, type SignedIn } from '../support/sessions.js';

let env: GatewayWithProvider;
let upstream: EchoUpstream;
let adminOrigin: string;
let publicOrigin: string;
let admin: SignedIn;

before(async () => {
  const adminPort = await freePort();
  adminOrigin = `http://127.0.0.1:${adminPort}`;
  env = await startGatewayWithProvider({ ADMIN_PORT: String(adminPort), ADMIN_URL: adminOrigin });
  publicOrigin = env.gw.origin;
  upstream = await startEchoUpstream();
  admin = await signIn(env.gw, {}, 'admin');
  await createService(`${adminOrigin}`, admin, { name: 'App', path: '/app', targetUrl: upstream.origin, requireAuth: false });
});
after(async () => {
  await env.close();
  await upstream.close();
});

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const response = await request(url, { method: (init.method ?? 'GET') as 'GET', headers: init.headers, body: init.body });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text };
}

test('the public origin serves no admin API and no console: 404 Service not found, console pages redirect to ADMIN_URL', async () => {
  const publicAdmin = await signIn(env.gw);
  for (const cookie of [admin.cookie, publicAdmin.cookie]) {
    for (const path of ['/api/services', '/dashboard/stats', '/dashboard/logs', '/api/services/x/logs']) {
      const response = await call(`${publicOrigin}${path}`, { headers: { cookie } });
      assert.equal(response.status, 404, path);
      assert.equal(response.text, '{"error":"Service not found"}', path);
    }
    const write = await call(`${publicOrigin}/api/services`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': publicAdmin.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Evil', path: '/evil', targetUrl: upstream.origin }),
    });
    assert.equal(write.status, 404);
  }
  const page = await call(`${publicOrigin}/dashboard/services/new?x=1`, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 302);
  assert.equal(page.headers.location, `${adminOrigin}/dashboard/services/new?x=1`);
  const list = await call(`${adminOrigin}/api/services`, { headers: { cookie: admin.cookie } });
  assert.deepEqual((JSON.parse(list.text) as Array<{ path: string }>).map((s) => s.path), ['/app'], 'nothing was created');
});

test('the admin origin takes only its own session; the public one takes only its own', async () => {
  const publicAdmin = await signIn(env.gw);
  assert.equal((await call(`${adminOrigin}/api/services`, { headers: { cookie: publicAdmin.cookie } })).status, 401);
  const adminId = admin.cookie.split('=')[1]!;
  const transplanted = await call(`${adminOrigin}/api/services`, { headers: { cookie: `gw_session=${adminId}` } });
  assert.equal(transplanted.status, 401, 'an admin-origin session id in the public cookie is not read there');
  const onPublic = await call(`${publicOrigin}/auth/profile`, { headers: { cookie: `gw_session=${adminId}` } });
  assert.equal(onPublic.status, 401, 'an admin-origin session does not sign anyone in on the public origin');
  const proxied = JSON.parse((await call(`${publicOrigin}/app/x`, { headers: { cookie: `gw_session=${adminId}` } })).text) as Echo;
  assert.deepEqual(headerValues(proxied, 'x-forwarded-user'), [], 'nor at a proxied service');
});

test('a proxied app never receives the admin origin\'s cookies, which the browser sends it (same host)', async () => {
  const seen = JSON.parse((await call(`${publicOrigin}/app/x`, { headers: { cookie: `${admin.cookie}; gw_admin_oidc=k; app=1` } })).text) as Echo;
  assert.deepEqual(headerValues(seen, 'cookie'), ['app=1']);
});

test('no response of the admin origin grants CORS, preflight or not', async () => {
  const preflight = await call(`${adminOrigin}/api/services`, {
    method: 'OPTIONS',
    headers: { origin: publicOrigin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrf-token, content-type', cookie: admin.cookie },
  });
  const credentialed = await call(`${adminOrigin}/api/services`, { headers: { origin: publicOrigin, cookie: admin.cookie } });
  for (const response of [preflight, credentialed]) {
    assert.deepEqual(Object.keys(response.headers).filter((name) => name.startsWith('access-control-')), []);
  }
  assert.notEqual(preflight.status, 204);
});

test('sign-in on the admin origin: its own callback, its own cookie, back to the console; / is the console', async () => {
  const start = await call(`${adminOrigin}/auth/login?returnTo=/dashboard`);
  assert.equal(new URL(String(start.headers.location)).searchParams.get('redirect_uri'), `${adminOrigin}/auth/callback`);
  assert.match(String(start.headers['set-cookie']), /^gw_admin_oidc=/);
  const publicStart = await call(`${publicOrigin}/auth/login`);
  assert.equal(new URL(String(publicStart.headers.location)).searchParams.get('redirect_uri'), `${publicOrigin}/auth/callback`);

  const user = DEMO_USERS.find((candidate) => candidate.email === 'admin@example.com')!;
  const jar = new CookieJar();
  const result = await loginThroughProvider({ loginUrl: `${adminOrigin}/auth/login?returnTo=/dashboard`, email: user.email, password: user.password, jar });
  assert.equal(result.status, 302, result.body);
  assert.equal(result.finalLocation, '/dashboard');
  const sessionId = jar.get('gw_admin_session', adminOrigin);
  assert.ok(sessionId);
  assert.equal(jar.get('gw_session', adminOrigin), undefined, 'no public-origin session came with it');
  const services = await call(`${adminOrigin}/api/services`, { headers: { cookie: `gw_admin_session=${sessionId}` } });
  assert.equal(services.status, 200);

  const home = await call(`${adminOrigin}/`, { headers: { cookie: `gw_admin_session=${sessionId}` } });
  assert.equal(home.status, 302);
  assert.equal(home.headers.location, '/dashboard');

  const csrf = JSON.parse((await call(`${adminOrigin}/auth/csrf-token`, { headers: { cookie: `gw_admin_session=${sessionId}` } })).text) as { csrfToken: string };
  const logout = await call(`${adminOrigin}/auth/logout`, { method: 'POST', headers: { cookie: `gw_admin_session=${sessionId}`, 'x-csrf-token': csrf.csrfToken } });
  assert.equal(logout.status, 302);
  assert.equal(new URL(String(logout.headers.location)).searchParams.get('post_logout_redirect_uri'), `${adminOrigin}/`);
  assert.match(String(logout.headers['set-cookie']), /^gw_admin_session=; Max-Age=0/);
});

test('the public home page links to the console on ADMIN_URL', async () => {
  const publicAdmin = await signIn(env.gw);
  const home = await call(`${publicOrigin}/`, { headers: { cookie: publicAdmin.cookie } });
  assert.match(home.text, new RegExp(`href="${adminOrigin}/dashboard"`));
});

test('the console links services to the public origin', async () => {
  const overview = await call(`${adminOrigin}/dashboard`, { headers: { cookie: admin.cookie, accept: 'text/html' } });
  assert.equal(overview.status, 200);
  assert.match(overview.text, new RegExp(`href="${publicOrigin}/app/"`));
});
