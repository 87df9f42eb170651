/**
 * Stopping is bounded whatever Redis does (README, "Stopping"): with Redis frozen (its host gone
 * without closing connections) or killed, SIGTERM stops a 2-worker proxy (primary and workers),
 * a single-process proxy and the admin process with exit code 0 within the documented bounds, and
 * the workers log how many access-log records they could not ship. The tests run in order on one
 * topology: the first resumes Redis, the second kills it for good.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { request } from 'undici';
import { PRIMARY_STOP_DEADLINE_MS } from '../../proxy/process/proxy-primary.js';
import { STOP_DEADLINE_MS } from '../../shared/graceful-stop.js';
import { useAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { childPids, processGone, statusOf, type GatehouseProcess } from '../support/gatehouse-process.js';
import type { ProxyProcess } from '../support/split-gateway.js';

const env = useAdminSession({ topology: 'split', upstream: true }, async (env) => {
  await env.split.createService(env.admin, { name: 'Echo', path: '/echo', targetUrl: env.upstream.origin, requireAuth: false });
});

/** A 2-worker proxy whose route works and whose first access-log record has reached Redis. */
async function startTwoWorkers(): Promise<{ proxy: ProxyProcess; workers: number[] }> {
  const proxy = await env.split.startProxy({ PROXY_WORKERS: '2' });
  await eventually('the route on the new proxy', async () => (await statusOf(`${proxy.url}/echo/`)) === 200);
  await eventually('its record shipped', async () => shippedRecords(await (await request(`${proxy.internalUrl}/metrics`)).body.text()) === 1);
  return { proxy, workers: childPids(proxy.process.child.pid!) };
}

function shippedRecords(metrics: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith('gatehouse_access_log_records_shipped_total '));
  return Number(line?.split(' ').pop());
}

/** `count` proxied GETs, each on its own connection (so both workers get some); all must be 200. */
async function trafficWhileRedisIsGone(proxy: ProxyProcess, count: number): Promise<void> {
  for (let i = 0; i < count; i++) assert.equal(await statusOf(`${proxy.url}/echo/while-gone-${i}`, { connection: 'close' }), 200);
}

/** Sends SIGTERM and waits for the exit: its code and how long it took, in ms. */
async function stopTimed(process: GatehouseProcess): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const code = await process.stop('SIGTERM');
  return { code, ms: Date.now() - started };
}

/** The records the workers said they dropped, summed over their "stopped" log lines. */
function droppedInLog(output: string): number {
  const stops = output
    .split('\n')
    .filter((line) => line.includes('access-log records were dropped'))
    .map((line) => JSON.parse(line) as { dropped: number });
  return stops.reduce((sum, line) => sum + line.dropped, 0);
}

async function assertTwoWorkerStop(t: TestContext, proxy: ProxyProcess, workers: number[], recordsWhileGone: number): Promise<void> {
  const { code, ms } = await stopTimed(proxy.process);
  t.diagnostic(`2-worker proxy stopped in ${ms} ms`);
  assert.equal(code, 0, proxy.process.output());
  assert.ok(ms < PRIMARY_STOP_DEADLINE_MS, `stopped in ${ms} ms`);
  assert.equal(workers.length, 2);
  for (const pid of workers) assert.ok(processGone(pid), `worker ${pid} exited before its primary`);
  assert.equal(droppedInLog(proxy.process.output()), recordsWhileGone, proxy.process.output());
}

test('Redis frozen: SIGTERM stops a 2-worker proxy, a single-process proxy and the admin process within the bounds, exit 0, dropped records logged', async (t) => {
  const { proxy, workers } = await startTwoWorkers();
  env.split.redis.pause();
  try {
    await trafficWhileRedisIsGone(proxy, 10);
    await assertTwoWorkerStop(t, proxy, workers, 10);
    for (const [name, process] of [['single-process proxy', env.split.proxies[0].process], ['admin process', env.split.admin]] as const) {
      const { code, ms } = await stopTimed(process);
      t.diagnostic(`${name} stopped in ${ms} ms`);
      assert.equal(code, 0, process.output());
      assert.ok(ms < STOP_DEADLINE_MS, `stopped in ${ms} ms`);
    }
  } finally {
    env.split.redis.resume();
  }
});

test('Redis killed: SIGTERM stops a 2-worker proxy and a single-process proxy within the bounds, exit 0, and the workers log the records produced after the kill as dropped', async (t) => {
  const { proxy, workers } = await startTwoWorkers();
  await env.split.redis.kill();
  await trafficWhileRedisIsGone(proxy, 12);
  await assertTwoWorkerStop(t, proxy, workers, 12);
  const { code, ms } = await stopTimed(env.split.proxies[1].process);
  t.diagnostic(`single-process proxy stopped in ${ms} ms`);
  assert.equal(code, 0);
  assert.ok(ms < STOP_DEADLINE_MS, `stopped in ${ms} ms`);
});
