import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { browse, CookieJar } from '../support/browserless-login.js';
import { DEMO_USERS } from '../support/identity-provider.js';
import { headerValues, type Echo } from '../support/upstream.js';
import { createService } from '../support/api-client.js';

// Its tests sign in administrators of their own.
const env = useAdminSession({ provider: true, upstream: true, admin: false });

async function profile(cookie: string | undefined) {
  const response = await request(`${env.gw.origin}/auth/profile`, { headers: cookie ? { cookie } : {} });
  return { status: response.statusCode, body: (await response.body.json()) as { user?: Record<string, unknown>; error?: string } };
}

function sessionCookie(jar: CookieJar): string | undefined {
  const value = jar.get('gw_session', env.gw.origin);
  return value === undefined ? undefined : `gw_session=${value}`;
}

async function auditActions(): Promise<Array<{ action: string; user_id: string | null; details: string }>> {
  const admin = await env.signIn();
  const response = await request(`${env.gw.origin}/dashboard/logs?limit=1000`, { headers: { cookie: admin.cookie } });
  return ((await response.body.json()) as { logs: Array<{ action: string; user_id: string | null; details: string }> }).logs;
}

test('GET /auth/login → 302 to the authorization endpoint with PKCE S256, state, nonce and form_post', async () => {
  const response = await request(`${env.gw.origin}/auth/login`);
  assert.equal(response.statusCode, 302);
  const location = new URL(String(response.headers.location));
  assert.equal(location.origin, env.idp.issuer);
  const params = location.searchParams;
  assert.equal(params.get('client_id'), 'gatehouse-test');
  assert.equal(params.get('response_type'), 'code');
  assert.equal(params.get('code_challenge_method'), 'S256');
  assert.match(params.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  assert.ok((params.get('state') ?? '').length >= 32);
  assert.ok((params.get('nonce') ?? '').length >= 32);
  assert.equal(params.get('response_mode'), 'form_post');
  assert.equal(params.get('redirect_uri'), `${env.gw.origin}/auth/callback`);
  assert.equal(params.get('scope'), 'openid profile email');
  const setCookie = String(response.headers['set-cookie']);
  assert.match(setCookie, /^gw_oidc=/);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /Secure/, 'loopback http is a secure context: the cookie survives a cross-site form_post');
  assert.match(setCookie, /SameSite=None/);
  assert.doesNotMatch(setCookie, new RegExp(params.get('code_challenge')!), 'the verifier stays server-side');
  await response.body.dump();
});

test('login through the provider (form_post): 302 to returnTo, session cookie, profile, audit USER_LOGIN', async () => {
  const result = await env.login('admin@example.com', { returnTo: '/echo/page?x=1' });
  assert.equal(result.status, 302);
  assert.equal(result.finalLocation, '/echo/page?x=1');
  const cookie = sessionCookie(result.jar);
  assert.ok(cookie, 'gw_session set');
  const stored = result.jar.all().find((c) => c.name === 'gw_session')!;
  assert.equal(stored.httpOnly, true);
  assert.equal(stored.sameSite, 'lax');
  assert.equal(stored.path, '/');

  const me = await profile(cookie);
  assert.equal(me.status, 200);
  assert.deepEqual(me.body, { user: { sub: 'demo-admin', name: 'Ada Admin', email: 'admin@example.com', isAdmin: true } });
  const login = (await auditActions()).find((entry) => entry.action === 'USER_LOGIN' && entry.user_id === 'demo-admin');
  assert.ok(login, 'USER_LOGIN audited');
});

test('without returnTo the login lands on /', async () => {
  const result = await env.login('user@example.com');
  assert.equal(result.finalLocation, '/');
});

test('a non-admin gets a session without admin rights', async () => {
  const result = await env.login('user@example.com');
  const cookie = sessionCookie(result.jar)!;
  assert.equal((await profile(cookie)).body.user?.isAdmin, false);
  const api = await request(`${env.gw.origin}/api/services`, { headers: { cookie } });
  assert.equal(api.statusCode, 403);
  assert.deepEqual(await api.body.json(), { error: 'Admin access required' });
});

test('a wrong password at the provider creates no session', async () => {
  const result = await env.login('admin@example.com', { password: 'not-the-password' });
  assert.equal(result.finalLocation, null);
  assert.equal(sessionCookie(result.jar), undefined);
});

test('open-redirect attempts in returnTo land on this origin', async () => {
  const normalisingToOtherHost = ['/.//evil.example', '/a/..//evil.example/x', '/%2e//evil.example', '/./\\evil.example'];
  for (const hostile of ['//evil.example/x', '/\\evil.example', 'https://evil.example/', 'javascript:alert(1)', '/\t/evil.example', 'http:/evil.example', ...normalisingToOtherHost]) {
    const result = await env.login('user@example.com', { returnTo: hostile });
    assert.equal(result.status, 302);
    assert.equal(result.finalLocation, '/', `returnTo ${JSON.stringify(hostile)}`);
  }
});

test('a pre-set session cookie is replaced at login, and the old session no longer works', async () => {
  const earlier = await env.signIn({ sub: 'someone-else', isAdmin: false });
  const jar = new CookieJar();
  jar.store(`${earlier.cookie}; Path=/`, env.gw.origin);
  const result = await env.login('admin@example.com', { jar });
  const fresh = sessionCookie(result.jar)!;
  assert.notEqual(fresh, earlier.cookie);
  assert.equal((await profile(fresh)).body.user?.sub, 'demo-admin');
  assert.equal((await profile(earlier.cookie)).status, 401);

  const planted = new CookieJar();
  planted.store('gw_session=attacker-chosen-value-aaaaaaaaaaaaaaaaaaaaaaaaaaaaa; Path=/', env.gw.origin);
  const second = await env.login('user@example.com', { jar: planted });
  assert.notEqual(sessionCookie(second.jar), 'gw_session=attacker-chosen-value-aaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
  assert.equal((await profile(sessionCookie(second.jar))).status, 200);
});

test('two tabs sent to sign in at once: both logins complete, the older one first', async () => {
  const jar = new CookieJar();
  const start = async (returnTo: string) => {
    const url = `${env.gw.origin}/auth/login?returnTo=${encodeURIComponent(returnTo)}`;
    const response = await request(url, { headers: { cookie: jar.header(url, { method: 'GET' }) } });
    jar.store(response.headers['set-cookie'], url);
    await response.body.dump();
    return String(response.headers.location);
  };
  const [first, second] = [await start('/first'), await start('/second')];
  const user = DEMO_USERS.find((candidate) => candidate.email === 'user@example.com')!;
  const credentials = { email: user.email, password: user.password };
  const finished = await browse(first, jar, credentials, env.gw.origin);
  assert.equal(finished.status, 302, finished.body);
  assert.equal(finished.finalLocation, '/first');
  const later = await browse(second, jar, credentials, env.gw.origin);
  assert.equal(later.status, 302, later.body);
  assert.equal(later.finalLocation, '/second');
  assert.equal((await profile(sessionCookie(jar))).body.user?.email, 'user@example.com');
});

test('a forged state creates no session and is audited as LOGIN_FAILED', async () => {
  const start = await request(`${env.gw.origin}/auth/login`);
  const transactionCookie = String(start.headers['set-cookie']).split(';')[0]!;
  await start.body.dump();
  const forged = await request(`${env.gw.origin}/auth/callback`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: transactionCookie },
    body: new URLSearchParams({ code: 'stolen-code', state: 'forged-state' }).toString(),
  });
  assert.equal(forged.statusCode, 400);
  assert.doesNotMatch(String(forged.headers['set-cookie'] ?? ''), /gw_session=[^;]/);
  assert.match(await forged.body.text(), /expired or was already used/);
  const failure = (await auditActions()).find((entry) => entry.action === 'LOGIN_FAILED' && /expired or was already used/.test(entry.details));
  assert.ok(failure, 'LOGIN_FAILED audited with its reason');
});

test('GET /auth/profile and /auth/csrf-token need a session', async () => {
  assert.deepEqual(await profile(undefined), { status: 401, body: { error: 'Not authenticated' } });
  const token = await request(`${env.gw.origin}/auth/csrf-token`);
  assert.equal(token.statusCode, 401);
  await token.body.dump();
});

test('the CSRF token from /auth/csrf-token authorises admin writes of that session only', async () => {
  const result = await env.login('admin@example.com');
  const cookie = sessionCookie(result.jar)!;
  const tokenResponse = await request(`${env.gw.origin}/auth/csrf-token`, { headers: { cookie } });
  const { csrfToken } = (await tokenResponse.body.json()) as { csrfToken: string };
  const other = await env.signIn();
  const create = (token: string) =>
    request(`${env.gw.origin}/api/services`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Echo', path: `/csrf-${token.slice(0, 6).replace(/[^A-Za-z0-9]/g, 'x')}`, targetUrl: env.upstream.origin }),
    });
  const refused = await create(other.csrfToken);
  assert.equal(refused.statusCode, 403);
  assert.deepEqual(await refused.body.json(), { error: 'Invalid CSRF token' });
  const accepted = await create(csrfToken);
  assert.equal(accepted.statusCode, 201);
  await accepted.body.dump();
});

test('signed in through the provider, a protected service sees the identity headers but not the cookie', async () => {
  const admin = await env.signIn();
  await createService(`${env.gw.origin}`, admin, { name: 'Private echo', path: '/private', targetUrl: env.upstream.origin, requireAuth: true });

  const anonymous = await request(`${env.gw.origin}/private/hello`);
  assert.equal(anonymous.statusCode, 401);
  await anonymous.body.dump();

  const result = await env.login('user@example.com', { returnTo: '/private/hello' });
  assert.equal(result.finalLocation, '/private/hello');
  const cookie = sessionCookie(result.jar)!;
  const response = await request(`${env.gw.origin}/private/hello`, { headers: { cookie: `${cookie}; theme=dark` } });
  assert.equal(response.statusCode, 200);
  const echoed = (await response.body.json()) as Echo;
  assert.deepEqual(headerValues(echoed, 'x-forwarded-user'), ['demo-user']);
  assert.deepEqual(headerValues(echoed, 'x-forwarded-email'), ['user@example.com']);
  assert.deepEqual(headerValues(echoed, 'cookie'), ['theme=dark']);
});
