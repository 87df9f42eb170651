import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, logoutThroughProvider } from '../support/browserless-login.js';
import { startGatewayWithProvider } from '../support/gateway-with-provider.js';

const env = useAdminSession({ provider: true, upstream: true }, async (env) => {
  await env.createService({ name: 'Private', path: '/private', targetUrl: env.upstream.origin, requireAuth: true });
});

async function status(path: string, cookie: string): Promise<number> {
  const response = await request(`${env.gw.origin}${path}`, { headers: { cookie } });
  await response.body.dump();
  return response.statusCode;
}

test('logout: 302 to the end_session_endpoint with id_token_hint, cookie cleared, USER_LOGOUT audited', async () => {
  const jar = new CookieJar();
  await env.login('user@example.com', { jar });
  const cookie = `gw_session=${jar.get('gw_session', env.gw.origin)}`;
  assert.equal(await status('/private/x', cookie), 200);

  const response = await request(`${env.gw.origin}/auth/logout`, { headers: { cookie } });
  assert.equal(response.statusCode, 302);
  const location = new URL(String(response.headers.location));
  assert.equal(location.origin, env.idp.issuer);
  assert.ok(location.searchParams.get('id_token_hint'));
  assert.equal(location.searchParams.get('post_logout_redirect_uri'), `${env.gw.origin}/`);
  assert.match(String(response.headers['set-cookie']), /^gw_session=; Max-Age=0/);
  await response.body.dump();

  const admin = await env.signIn();
  const logs = await request(`${env.gw.origin}/dashboard/logs`, { headers: { cookie: admin.cookie } });
  const entries = ((await logs.body.json()) as { logs: Array<{ action: string; user_id: string }> }).logs;
  assert.ok(entries.some((entry) => entry.action === 'USER_LOGOUT' && entry.user_id === 'demo-user'));
});

test('a session cookie replayed after logout is refused everywhere', async () => {
  const jar = new CookieJar();
  await env.login('admin@example.com', { jar });
  const cookie = `gw_session=${jar.get('gw_session', env.gw.origin)}`;
  assert.equal(await status('/auth/profile', cookie), 200);
  const result = await logoutThroughProvider({ logoutUrl: `${env.gw.origin}/auth/logout`, jar });
  assert.equal(new URL(result.url).pathname, '/', 'the provider sends the browser back to the gateway');
  assert.equal(jar.get('gw_session', env.gw.origin), undefined);

  assert.equal(await status('/auth/profile', cookie), 401);
  assert.equal(await status('/api/services', cookie), 401);
  assert.equal(await status('/private/x', cookie), 401);
});

test('logout without a session: 302 to / (idempotent)', async () => {
  const response = await request(`${env.gw.origin}/auth/logout`);
  assert.equal(response.statusCode, 302);
  assert.equal(response.headers.location, '/');
  await response.body.dump();
});

test('an issuer without end_session_endpoint: logout redirects to /', async () => {
  const plain = await startGatewayWithProvider({}, { endSession: false });
  try {
    const jar = new CookieJar();
    await plain.login('user@example.com', { jar });
    const cookie = `gw_session=${jar.get('gw_session', plain.gw.origin)}`;
    const response = await request(`${plain.gw.origin}/auth/logout`, { headers: { cookie } });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/');
    await response.body.dump();
    const after = await request(`${plain.gw.origin}/auth/profile`, { headers: { cookie } });
    assert.equal(after.statusCode, 401);
    await after.body.dump();
  } finally {
    await plain.close();
  }
});

test('a GET from another site does not sign out: it answers a page whose form posts with the token', async () => {
  const user = await env.signIn({ sub: 'cross-site-target', isAdmin: false });
  for (const site of ['cross-site', 'same-site']) {
    const response = await request(`${env.gw.origin}/auth/logout`, { headers: { cookie: user.cookie, 'sec-fetch-site': site } });
    assert.equal(response.statusCode, 200, site);
    assert.equal(response.headers['set-cookie'], undefined, 'the session cookie is kept');
    const page = await response.body.text();
    assert.match(page, new RegExp(`<form class="logout" method="post" action="/auth/logout"><input type="hidden" name="_csrf" value="${user.csrfToken}">`));
  }
  assert.equal(await status('/auth/profile', user.cookie), 200, 'still signed in');
});

test('a GET from the gateway\'s own pages or a typed address signs out', async () => {
  for (const site of ['same-origin', 'none']) {
    const user = await env.signIn({ sub: `get-${site}`, isAdmin: false });
    const response = await request(`${env.gw.origin}/auth/logout`, { headers: { cookie: user.cookie, 'sec-fetch-site': site } });
    assert.equal(response.statusCode, 302, site);
    await response.body.dump();
    assert.equal(await status('/auth/profile', user.cookie), 401, site);
  }
});

test('POST /auth/logout needs the session\'s CSRF token, as a form field or X-CSRF-Token', async () => {
  const user = await env.signIn({ sub: 'post-logout', isAdmin: false });
  const post = (body: string, headers: Record<string, string> = {}) =>
    request(`${env.gw.origin}/auth/logout`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });
  const forged = await post('_csrf=not-the-token');
  assert.equal(forged.statusCode, 403);
  assert.deepEqual(await forged.body.json(), { error: 'Invalid CSRF token' });
  const tokenless = await post('');
  assert.equal(tokenless.statusCode, 403);
  await tokenless.body.dump();
  assert.equal(await status('/auth/profile', user.cookie), 200, 'a forged logout changes nothing');

  const form = await post(new URLSearchParams({ _csrf: user.csrfToken }).toString());
  assert.equal(form.statusCode, 302);
  assert.match(String(form.headers['set-cookie']), /^gw_session=; Max-Age=0/);
  await form.body.dump();
  assert.equal(await status('/auth/profile', user.cookie), 401);

  const other = await env.signIn({ sub: 'post-logout-header', isAdmin: false });
  const header = await request(`${env.gw.origin}/auth/logout`, { method: 'POST', headers: { cookie: other.cookie, 'x-csrf-token': other.csrfToken } });
  assert.equal(header.statusCode, 302);
  await header.body.dump();
  assert.equal(await status('/auth/profile', other.cookie), 401);
});
