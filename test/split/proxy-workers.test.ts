/**
 * `npm run start:proxy` and PROXY_WORKERS (README, "Workers that die"): one process when it is
 * 1; a node:cluster primary with N workers on one port otherwise, which exits 1 when a worker cannot
 * start, replaces (and counts) a worker that dies after starting, sums the workers' metrics and
 * stops them all gracefully.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { childPids, startGatehouseProcess, statusOf } from '../support/gatehouse-process.js';
import type { ProxyProcess } from '../support/split-gateway.js';

let serviceId: string;

const env = useAdminSession({ topology: 'split', upstream: true }, async (env) => {
  serviceId = await env.split.createService(env.admin, { name: 'Echo', path: '/echo', targetUrl: env.upstream.origin, requireAuth: false });
});

async function json(url: string): Promise<{ status: number; body: any }> {
  const response = await request(url);
  return { status: response.statusCode, body: await response.body.json() };
}

/** `gatehouse_requests_total` of the echo service's 2xx, from a /metrics text. */
function served2xx(metrics: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`gatehouse_requests_total{service="${serviceId}",status_class="2xx"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** `count` GETs, each on a connection of its own (so node:cluster deals them out to the workers). */
async function fetchAll(proxy: ProxyProcess, count: number, tag: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => statusOf(`${proxy.url}/echo/${tag}-${i}`, { connection: 'close' })),
  );
}

async function storedWithTag(tag: string): Promise<string[]> {
  const page = await request(`${env.split.adminUrl}/api/services/${serviceId}/logs?limit=1000`, { headers: { cookie: env.admin.cookie } });
  const { logs } = (await page.body.json()) as { logs: Array<{ path: string }> };
  return logs.map((log) => log.path).filter((path) => path.startsWith(`/echo/${tag}-`));
}

test('PROXY_WORKERS=1: the data plane is a single process, its readiness is Redis, the registry and the assertion keys', async () => {
  const [proxy] = env.split.proxies;
  assert.deepEqual(childPids(proxy.process.child.pid!), []);
  const ready = await json(`${proxy.internalUrl}/readyz`);
  assert.deepEqual(ready, { status: 200, body: { status: 'ready', checks: { redis: true, registry: true, 'assertion-keys': true } } });
  assert.equal(await statusOf(`${proxy.internalUrl}/elsewhere`), 404);
});

for (const workers of ['1', '2']) {
  test(`PROXY_WORKERS=${workers}: a proxy whose PORT is taken exits 1 at once, naming the port, and restarts nothing`, async () => {
    const taken = new URL(env.split.proxies[0].url).port;
    const child = startGatehouseProcess('proxy/process/main.js', { ...env.split.env, PORT: taken, INTERNAL_PORT: '0', PROXY_WORKERS: workers });
    assert.equal(await child.exited, 1);
    assert.match(child.output(), new RegExp(`gatehouse proxy: failed to start: PORT ${taken}: .*EADDRINUSE`));
    assert.doesNotMatch(child.output(), /starting another/);
  });
}

/** `gatehouse_worker_restarts_total` from a /metrics text (undefined when absent). */
function workerRestarts(metrics: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith('gatehouse_worker_restarts_total '));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

test('PROXY_WORKERS=2: two workers share the port, their metrics are summed, a dead worker is replaced and counted, SIGTERM stops both with every record shipped', async () => {
  const proxy = await env.split.startProxy({ PROXY_WORKERS: '2' });
  try {
    const primary = proxy.process.child.pid!;
    const workers = childPids(primary);
    assert.equal(workers.length, 2);
    assert.deepEqual((await json(`${proxy.internalUrl}/readyz`)).body.checks, { redis: true, workers: true });
    await eventually('the route on the new proxy', async () => (await statusOf(`${proxy.url}/echo/`)) === 200);

    assert.ok((await fetchAll(proxy, 60, 'before')).every((status) => status === 200));
    const metrics = await (await request(`${proxy.internalUrl}/metrics`)).body.text();
    assert.equal(served2xx(metrics), 61, 'the 60 requests dealt out to both workers, plus the one 200 that ended the wait for the route');
    assert.equal(workerRestarts(metrics), 0);
    process.kill(workers[0]!, 'SIGKILL');
    await eventually('a replacement worker', async () => {
      const now = childPids(primary);
      return now.length === 2 && !now.includes(workers[0]!);
    });
    await eventually('both workers ready again', async () => (await statusOf(`${proxy.internalUrl}/readyz`)) === 200);
    assert.equal(workerRestarts(await (await request(`${proxy.internalUrl}/metrics`)).body.text()), 1);
    assert.match(proxy.process.output(), /proxy worker died; starting another/);
    assert.ok((await fetchAll(proxy, 60, 'after')).every((status) => status === 200));
    assert.equal(await proxy.process.stop('SIGTERM'), 0);
    await eventually('the records of both workers stored', async () => (await storedWithTag('after')).length >= 60);
    const after = await storedWithTag('after');
    assert.equal(new Set(after).size, 60, 'each request of the second burst once');
    assert.equal(after.length, 60, 'no duplicates');
  } finally {
    await proxy.process.stop();
  }
});
