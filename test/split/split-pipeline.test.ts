import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { headerPadding, openRawConnection, rawRequest } from '../support/raw-connection.js';
import { MAX_HEADER_FIELDS } from '../../shared/http/request-head.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';

let serviceId: string;

// TRUST_PROXY=loopback: each test speaks for its own client address in X-Forwarded-For, so
// one test's requests never count against another's limit.
const env = useAdminSession({ topology: 'split', env: { RATE_LIMIT_GENERAL: '40/1m', TRUST_PROXY: 'loopback' }, upstream: true }, async (env) => {
  serviceId = await env.split.createService(env.admin, { name: 'Echo', path: '/echo', targetUrl: env.upstream.origin, requireAuth: false });
  await eventually('the route on both proxies', async () => (await Promise.all(env.split.proxies.map((p) => statusOf(`${p.url}/echo/`)))).every((s) => s === 200));
});

test('the general limit is shared: the limit+1-th request across both proxies gets 429', async () => {
  const [a, b] = env.split.proxies;
  const client = { 'x-forwarded-for': '203.0.113.7' };
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++) statuses.push(await statusOf(`${(i % 2 ? a : b).url}/echo/n${i}`, client));
  assert.ok(statuses.every((status) => status === 200), statuses.join(','));
  assert.equal(await statusOf(`${a.url}/echo/over`, client), 429);
  assert.equal(await statusOf(`${b.url}/echo/over`, client), 429);
  assert.equal(await statusOf(`${a.url}/echo/other-client`, { 'x-forwarded-for': '203.0.113.8' }), 200);
});

test('no access-log record lost or duplicated across a proxy SIGTERM right after traffic', async () => {
  const fresh = await env.split.startProxy();
  try {
    const served = await Promise.all(
      Array.from({ length: 300 }, (_, i) => statusOf(`${fresh.url}/echo/burst-${i}`, { 'x-forwarded-for': `198.51.100.${i % 250}` })),
    );
    assert.ok(served.every((status) => status === 200));
    assert.equal(await fresh.process.stop('SIGTERM'), 0);
    const burstCount = async () => {
      const page = await request(`${env.split.adminUrl}/api/services/${serviceId}/logs?limit=1000`, { headers: { cookie: env.admin.cookie } });
      return ((await page.body.json()) as { logs: Array<{ path: string }> }).logs.filter((log) => log.path.startsWith('/echo/burst-')).length;
    };
    await eventually('every record of the stopped proxy stored', async () => (await burstCount()) >= 300);
    const page = await request(`${env.split.adminUrl}/api/services/${serviceId}/logs?limit=1000`, { headers: { cookie: env.admin.cookie } });
    const logs = ((await page.body.json()) as { logs: Array<{ path: string }> }).logs;
    const burst = logs.filter((log) => log.path.startsWith('/echo/burst-'));
    assert.equal(new Set(burst.map((log) => log.path)).size, 300);
    assert.equal(burst.length, 300, 'no duplicates');
  } finally {
    await fresh.process.stop();
  }
});

test('a flood of 15 KB paths over the limit costs the access log one record per address and minute with its count; allowed requests keep one each, cut to 2,048 bytes', async () => {
  const fresh = await env.split.startProxy();
  const client = { 'x-forwarded-for': '203.0.113.60' };
  const long = 'A'.repeat(15_000);
  try {
    const statuses: number[] = [];
    for (let wave = 0; wave < 10; wave++) {
      statuses.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => statusOf(`${fresh.url}/echo/flood-${wave * 50 + i}-${long}`, client)))));
    }
    assert.equal(statuses.filter((status) => status === 200).length, 40);
    assert.equal(statuses.filter((status) => status === 429).length, 460);
    const metrics = await (await request(`${fresh.internalUrl}/metrics`)).body.text();
    assert.match(metrics, new RegExp(`gatehouse_rate_limited_requests_total\\{service="${serviceId}"\\} 460$`, 'm'), 'each refusal counted at once');
    assert.equal(await fresh.process.stop('SIGTERM'), 0); // ships the minute's summary
    type Log = { path: string; status_code: number; count: number; path_truncated: boolean };
    const floodLogs = async () => {
      const page = await request(`${env.split.adminUrl}/api/services/${serviceId}/logs?limit=1000`, { headers: { cookie: env.admin.cookie } });
      return ((await page.body.json()) as { logs: Log[] }).logs.filter((log) => log.path.startsWith('/echo/flood-'));
    };
    await eventually('the summary stored', async () => (await floodLogs()).some((log) => log.status_code === 429));
    const logs = await floodLogs();
    const allowed = logs.filter((log) => log.status_code === 200);
    assert.equal(allowed.length, 40);
    assert.ok(allowed.every((log) => log.count === 1 && log.path_truncated && log.path.length === 2049 && log.path.endsWith('A…')));
    const summaries = logs.filter((log) => log.status_code === 429);
    assert.ok(summaries.length <= 2, `${summaries.length} summaries: one per minute the flood spanned`);
    assert.equal(summaries.reduce((sum, log) => sum + log.count, 0), 460);
    assert.ok(summaries.every((log) => log.path_truncated && log.path.length === 2049));
  } finally {
    await fresh.process.stop();
  }
});

test(`a request of ${MAX_HEADER_FIELDS} header fields passes a proxy and its hand-off to the admin process; one more gets 431`, async () => {
  const port = Number(new URL(env.split.proxies[0].url).port);
  const request = (fields: number) => {
    const lines = ['GET /api/services HTTP/1.1', 'Host: a.example', 'Connection: close', 'X-Forwarded-For: 203.0.113.50', ...headerPadding(fields - 3)];
    return rawRequest(port, `${lines.join('\r\n')}\r\n\r\n`);
  };
  const served = await request(MAX_HEADER_FIELDS);
  assert.equal(served.status, 401, 'the admin process answered, not refused what the hand-off added');
  assert.equal((await request(MAX_HEADER_FIELDS + 1)).status, 431);
});

test('a POST to the admin API with Expect: 100-continue through a proxy gets 100, then the admin process creates the service', async () => {
  const body = JSON.stringify({ name: 'Continued', path: '/continued', targetUrl: env.upstream.origin, requireAuth: false });
  const connection = await openRawConnection(Number(new URL(env.split.proxies[0].url).port));
  try {
    connection.write(
      `POST /api/services HTTP/1.1\r\nHost: a.example\r\nCookie: ${env.admin.cookie}\r\nX-CSRF-Token: ${env.admin.csrfToken}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
    );
    assert.equal((await connection.next({ interim: true })).statusLine, 'HTTP/1.1 100 Continue');
    connection.write(body);
    const created = await connection.next();
    assert.equal(created.status, 201, created.body);
    assert.equal((JSON.parse(created.body) as { path: string }).path, '/continued');
  } finally {
    connection.close();
  }
});

test('the proxy and admin processes refuse to start without REDIS_URL, naming it', () => {
  const env: NodeJS.ProcessEnv = { ...process.env, OIDC_ISSUER: 'http://127.0.0.1:9', OIDC_CLIENT_ID: 'x' };
  delete env.REDIS_URL;
  for (const entry of ['../../proxy/process/main.js', '../../admin/process/main.js']) {
    const run = spawnSync(process.execPath, [new URL(entry, import.meta.url).pathname], { env, encoding: 'utf8' });
    assert.notEqual(run.status, 0, entry);
    assert.match(run.stderr, /REDIS_URL is not set/, entry);
  }
});

test('every process kind refuses two Redis modes at once (a URL and Sentinels, Sentinels and a Cluster), naming both', () => {
  const pairs = [
    [{ REDIS_URL: 'redis://127.0.0.1:9', REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: 'g' }, /REDIS_URL, REDIS_SENTINELS: set one of them, not both/],
    [{ REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: 'g', REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, /REDIS_SENTINELS, REDIS_CLUSTER_NODES: set one of them, not both/],
  ] as const;
  for (const [modes, message] of pairs) {
    const env: NodeJS.ProcessEnv = { ...process.env, OIDC_ISSUER: 'http://127.0.0.1:9', OIDC_CLIENT_ID: 'x', ...modes };
    for (const entry of ['../../proxy/process/main.js', '../../admin/process/main.js', '../../admin/process/embedded-main.js']) {
      const run = spawnSync(process.execPath, [new URL(entry, import.meta.url).pathname], { env, encoding: 'utf8', timeout: 10_000 });
      assert.equal(run.status, 1, entry);
      assert.match(run.stderr, message, entry);
    }
  }
});
