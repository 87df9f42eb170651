import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { signIn } from './support/sessions.js';

let gw: TestGateway;

before(async () => {
  gw = await startTestGateway();
});
after(() => gw.close());

async function get(path: string, headers: Record<string, string> = {}, base = gw.origin) {
  const response = await request(`${base}${path}`, { headers });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

async function createService(admin: { cookie: string; csrfToken: string }, body: Record<string, unknown>) {
  const response = await request(`${gw.origin}/api/services`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  assert.equal(response.statusCode, 201, text);
  return JSON.parse(text) as { id: string };
}

async function updateService(admin: { cookie: string; csrfToken: string }, id: string, body: Record<string, unknown>) {
  const response = await request(`${gw.origin}/api/services/${id}`, {
    method: 'PUT',
    headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.statusCode, 200, await response.body.text());
}

test('home page for a visitor: sign-in link and the enabled services only', async () => {
  const admin = await signIn(gw);
  await createService(admin, { name: 'Wiki <internal>', path: '/wiki', targetUrl: 'http://127.0.0.1:9', requireAuth: true });
  const hidden = await createService(admin, { name: 'Old app', path: '/old', targetUrl: 'http://127.0.0.1:9' });
  const toggled = await request(`${gw.origin}/api/services/${hidden.id}/toggle`, {
    method: 'PATCH',
    headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify({ enabled: false }),
  });
  assert.equal(toggled.statusCode, 200);
  await toggled.body.dump();

  const home = await get('/');
  assert.equal(home.status, 200);
  assert.match(String(home.headers['content-type']), /^text\/html/);
  assert.match(home.text, /You are not signed in/);
  assert.match(home.text, /href="\/auth\/login-page"/);
  assert.match(home.text, /Wiki &lt;internal&gt;/, 'names are HTML-escaped');
  assert.match(home.text, /href="\/wiki\/"/, 'services are linked at their prefix plus /');
  assert.doesNotMatch(home.text, /Old app/);
  assert.doesNotMatch(home.text, /csrf-token/);
});

test('home page for a signed-in admin: who they are, sign-out, admin links, CSRF meta tag', async () => {
  const admin = await signIn(gw, { name: 'Ada Admin' });
  const home = await get('/', { cookie: admin.cookie });
  assert.match(home.text, /Signed in as <strong id="user-name">Ada Admin<\/strong>/);
  assert.match(home.text, new RegExp(`<form class="logout" method="post" action="/auth/logout"><input type="hidden" name="_csrf" value="${admin.csrfToken}">`));
  assert.match(home.text, /href="\/api\/services"/);
  assert.match(home.text, new RegExp(`<meta name="csrf-token" content="${admin.csrfToken}">`));
});

test('home page for a signed-in non-admin has no admin links', async () => {
  const user = await signIn(gw, { sub: 'u1', name: 'Uma', isAdmin: false });
  const home = await get('/', { cookie: user.cookie });
  assert.match(home.text, /Signed in as/);
  assert.doesNotMatch(home.text, /href="\/api\/services"/);
});

test('home page lists a service with an access policy only to the callers it lets in, and to admins, from its change on', async () => {
  const admin = await signIn(gw);
  const policy = { groups: ['finance'], emails: [], emailDomains: [], subjects: [] };
  const ledger = await createService(admin, { name: 'Ledger', path: '/ledger', targetUrl: 'http://127.0.0.1:9', requireAuth: true, access: policy });
  await createService(admin, { name: 'Handbook', path: '/handbook', targetUrl: 'http://127.0.0.1:9', requireAuth: true });
  const lists = async (cookie?: string) => {
    const home = await get('/', cookie ? { cookie } : {});
    return { ledger: home.text.includes('href="/ledger/"'), handbook: home.text.includes('href="/handbook/"') };
  };
  assert.deepEqual(await lists(), { ledger: false, handbook: true }, 'a visitor');
  const outsider = await signIn(gw, { sub: 'u-out', name: 'Otto', isAdmin: false, groups: ['sales'] });
  assert.deepEqual(await lists(outsider.cookie), { ledger: false, handbook: true }, 'a caller the policy refuses');
  const member = await signIn(gw, { sub: 'u-in', name: 'Fay', isAdmin: false, groups: ['finance'] });
  assert.deepEqual(await lists(member.cookie), { ledger: true, handbook: true }, 'a caller the policy lets in');
  assert.deepEqual(await lists(admin.cookie), { ledger: true, handbook: true }, 'an admin');

  await updateService(admin, ledger.id, { access: { ...policy, groups: ['sales'] } });
  assert.deepEqual(await lists(outsider.cookie), { ledger: true, handbook: true }, 'at once, a caller the changed policy lets in');
  assert.deepEqual(await lists(member.cookie), { ledger: false, handbook: true }, 'at once, a caller the changed policy refuses');
  await updateService(admin, ledger.id, { access: null });
  assert.deepEqual(await lists(), { ledger: true, handbook: true }, 'a visitor, once the policy is gone');
});

test('login page links to /auth/login and carries a safe returnTo', async () => {
  const page = await get('/auth/login-page?returnTo=%2Fwiki%2Fpage%3Fq%3D1');
  assert.equal(page.status, 200);
  assert.match(page.text, /href="\/auth\/login\?returnTo=%2Fwiki%2Fpage%3Fq%3D1"/);
  const hostile = await get('/auth/login-page?returnTo=https%3A%2F%2Fevil.example');
  assert.match(hostile.text, /href="\/auth\/login\?returnTo=%2F"/);
});

test("/favicon.ico with no service at /: the gateway's icon, cached, on both ports", async () => {
  for (const base of [gw.origin, gw.adminUrl]) {
    const icon = await request(`${base}/favicon.ico`);
    assert.equal(icon.statusCode, 200, base);
    assert.equal(icon.headers['content-type'], 'image/x-icon');
    assert.equal(icon.headers['cache-control'], 'public, max-age=86400');
    const body = Buffer.from(await icon.body.arrayBuffer());
    assert.deepEqual([...body.subarray(0, 6)], [0, 0, 1, 0, 1, 0], 'an ICO file with one image');
    assert.equal(body.length, Number(icon.headers['content-length']));
    const etag = String(icon.headers.etag);
    const again = await request(`${base}/favicon.ico`, { headers: { 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    await again.body.dump();
  }
});

test('/favicon.ico is not counted against the general rate limit', async () => {
  const limited = await startTestGateway({ RATE_LIMIT_GENERAL: '2/15m' });
  try {
    for (let i = 0; i < 4; i++) assert.equal((await get('/favicon.ico', {}, limited.origin)).status, 200);
    assert.equal((await get('/auth/login-page', {}, limited.origin)).status, 200, 'the limit is still all there');
  } finally {
    await limited.close();
  }
});

test('unknown gateway route → 404 Not found; wrong method → 405 with Allow', async () => {
  const missing = await get('/api/nothing-here');
  assert.equal(missing.status, 404);
  assert.deepEqual(JSON.parse(missing.text), { error: 'Not found' });
  const wrong = await request(`${gw.origin}/auth/profile`, { method: 'DELETE' });
  assert.equal(wrong.statusCode, 405);
  assert.equal(wrong.headers.allow, 'GET');
  assert.deepEqual(await wrong.body.json(), { error: 'Method not allowed' });
});

test('the admin port serves the same API', async () => {
  const admin = await signIn(gw);
  const viaAdminPort = await get('/auth/profile', { cookie: admin.cookie }, gw.adminUrl);
  assert.equal(viaAdminPort.status, 200);
  assert.equal(JSON.parse(viaAdminPort.text).user.sub, admin.user.sub);
});

test('an unexpected failure → 500 Internal server error, nothing internal revealed', async () => {
  const dedicated = await startTestGateway();
  try {
    const admin = await signIn(dedicated);
    dedicated.gateway.db.exec('DROP TABLE audit_logs');
    const response = await request(`${dedicated.origin}/dashboard/logs`, { headers: { cookie: admin.cookie } });
    assert.equal(response.statusCode, 500);
    assert.deepEqual(await response.body.json(), { error: 'Internal server error' });
  } finally {
    await dedicated.close();
  }
});

test('general limit at the spec default: 100 requests per 15 minutes per client IP, then 429', async () => {
  const limited = await startTestGateway({ RATE_LIMIT_GENERAL: '100/15m' });
  try {
    for (let i = 0; i < 100; i++) assert.equal((await get('/auth/login-page', {}, limited.origin)).status, 200);
    const refused = await get('/auth/login-page', {}, limited.origin);
    assert.equal(refused.status, 429);
    assert.deepEqual(JSON.parse(refused.text), { error: 'Too many requests, please try again later' });
    assert.equal(refused.headers['ratelimit-limit'], '100');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`);
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      assert.equal((await get(path, {}, limited.adminUrl)).status, 200, `${path} is exempt from rate limits`);
    }
  } finally {
    await limited.close();
  }
});
