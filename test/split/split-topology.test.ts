import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { statusOf } from '../support/gatehouse-process.js';

const env = useAdminSession({ topology: 'split', upstream: true });

async function api(base: string, method: string, path: string, body?: unknown) {
  const response = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: { cookie: env.admin.cookie, 'x-csrf-token': env.admin.csrfToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, body: text ? JSON.parse(text) : undefined };
}

/** Waits until both proxies answer `path` with `status`; returns the ms it took (must be < 1 s). */
async function seenByBoth(path: string, status: number, headers: Record<string, string> = {}): Promise<number> {
  return eventually(`${path} → ${status} on both proxies`, async () => {
    const statuses = await Promise.all(env.split.proxies.map((proxy) => statusOf(`${proxy.url}${path}`, headers)));
    return statuses.every((got) => got === status);
  }, 5_000, 10);
}

test('a service created, changed, disabled and deleted through one proxy is seen by both within 1 s', async () => {
  const [a] = env.split.proxies;
  const created = await api(a.url, 'POST', '/api/services', { name: 'Echo', path: '/echo', targetUrl: env.upstream.origin, requireAuth: false });
  assert.equal(created.status, 201);
  assert.ok((await seenByBoth('/echo/x', 200)) < 1000);

  assert.equal((await api(a.url, 'PUT', `/api/services/${created.body.id}`, { path: '/moved' })).status, 200);
  assert.ok((await seenByBoth('/moved/x', 200)) < 1000);
  assert.equal(await statusOf(`${env.split.proxies[1].url}/echo/x`), 404);

  assert.equal((await api(a.url, 'PATCH', `/api/services/${created.body.id}/toggle`, { enabled: false })).status, 200);
  assert.ok((await seenByBoth('/moved/x', 503)) < 1000);

  assert.equal((await api(a.url, 'DELETE', `/api/services/${created.body.id}`)).status, 204);
  assert.ok((await seenByBoth('/moved/x', 404)) < 1000);
});

test('a session made through one proxy works on the other; logout on one revokes it on the other within 1 s', async () => {
  const [a, b] = env.split.proxies;
  const created = await api(a.url, 'POST', '/api/services', { name: 'Private', path: '/private', targetUrl: env.upstream.origin, requireAuth: true });
  assert.equal(created.status, 201);
  await seenByBoth('/private/x', 401);

  const jar = new CookieJar();
  const login = await loginThroughProvider({ loginUrl: `${a.url}/auth/login?returnTo=%2Fprivate%2Fx`, email: 'user@example.com', password: 'user-password', jar });
  assert.equal(login.finalLocation, '/private/x');
  const cookie = jar.header(`${b.url}/private/x`);
  assert.equal(await statusOf(`${b.url}/private/x`, { cookie }), 200);
  assert.equal(await statusOf(`${a.url}/private/x`, { cookie }), 200);

  assert.equal(await statusOf(`${a.url}/auth/logout`, { cookie }), 302);
  const revokedIn = await eventually('the session revoked on proxy B', async () => (await statusOf(`${b.url}/private/x`, { cookie })) === 401, 5_000, 10);
  assert.ok(revokedIn < 1000, `revoked on the other proxy after ${revokedIn} ms`);
});

test('gateway-owned paths through either proxy reach the admin process; the public port has no health endpoints', async () => {
  const [a, b] = env.split.proxies;
  for (const proxy of [a, b]) {
    const profile = await request(`${proxy.url}/auth/profile`, { headers: { cookie: env.admin.cookie } });
    assert.equal(profile.statusCode, 200);
    assert.equal(((await profile.body.json()) as { user: { sub: string } }).user.sub, 'admin-sub');
    assert.equal(await statusOf(`${proxy.url}/metrics`), 404);
    assert.equal(await statusOf(`${proxy.internalUrl}/healthz`), 200);
  }
  const metrics = await request(`${a.internalUrl}/metrics`);
  const text = await metrics.body.text();
  assert.match(text, /gatehouse_requests_total\{service="[^"]+",status_class="2xx"\} \d+/);
  assert.match(text, /gatehouse_request_duration_seconds_bucket/);
  assert.match(text, /gatehouse_access_log_records_shipped_total \d+/);
  assert.equal(await statusOf(`${env.split.adminUrl}/readyz`), 200);
});

test('a proxy counts a refusing target per service on INTERNAL_PORT; the admin process shows no data-plane series, only its storing of the access log', async () => {
  const [a] = env.split.proxies;
  const id = await env.split.createService(env.admin, { name: 'Refusing', path: '/refusing', targetUrl: `http://127.0.0.1:${await freePort()}`, requireAuth: false });
  await seenByBoth('/refusing/x', 503);
  const proxyMetrics = await (await request(`${a.internalUrl}/metrics`)).body.text();
  assert.match(proxyMetrics, new RegExp(`^gatehouse_upstream_errors_total\\{service="${id}",kind="unavailable"\\} [1-9]`, 'm'));

  const adminMetrics = await (await request(`${env.split.adminUrl}/metrics`)).body.text();
  assert.match(adminMetrics, /^process_resident_memory_bytes \d+/m);
  assert.doesNotMatch(adminMetrics, /gatehouse_(requests_total|request_duration_seconds|upstream_errors_total|access_log_records_(shipped|dropped))/);
  assert.match(adminMetrics, /^gatehouse_access_log_records_stored_total \d+/m);
  assert.match(adminMetrics, /^gatehouse_access_log_disk_bytes \d+/m);
});

test('admin process down: gateway-owned paths get 503, proxied traffic is unaffected', async () => {
  const [a, b] = env.split.proxies;
  const created = await api(a.url, 'POST', '/api/services', { name: 'Still up', path: '/still-up', targetUrl: env.upstream.origin, requireAuth: false });
  assert.equal(created.status, 201);
  await seenByBoth('/still-up/', 200);

  assert.equal(await env.split.admin.stop('SIGTERM'), 0);
  for (const proxy of [a, b]) {
    const profile = await request(`${proxy.url}/auth/profile`, { headers: { cookie: env.admin.cookie } });
    assert.equal(profile.statusCode, 503);
    assert.deepEqual(await profile.body.json(), { error: 'Service unavailable' });
    assert.equal(await statusOf(`${proxy.url}/still-up/page`), 200);
  }
});
