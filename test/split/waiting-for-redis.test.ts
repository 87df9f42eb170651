/**
 * Waiting, not crashing (issue 22): a proxy process that cannot reach Redis at start stays up and
 * not ready, its `/readyz` naming what it waits for, retries with backoff, and says why once per
 * reason, never a password; the old one exited after 10 s, into a process manager's restart loop.
 * When Redis comes, it connects.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startGatehouseProcess } from '../support/gatehouse-process.js';
import { startRedis } from '../support/redis.js';

async function readiness(internalUrl: string): Promise<{ status: number; checks: Record<string, boolean> }> {
  const response = await request(`${internalUrl}/readyz`);
  return { status: response.statusCode, checks: ((await response.body.json()) as { checks: Record<string, boolean> }).checks };
}

test('a proxy started while Redis is unreachable stays up, not ready, says why once, and connects when Redis comes', async (t) => {
  const [redisPort, port, internalPort] = [await freePort(), await freePort(), await freePort()];
  const proxy = startGatehouseProcess('proxy/process/main.js', {
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_PASSWORD: 'never-logged-password',
    PORT: String(port),
    INTERNAL_PORT: String(internalPort),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
  });
  const internalUrl = `http://127.0.0.1:${internalPort}`;
  try {
    await eventually('its internal port', async () => (await readiness(internalUrl)).status === 503);
    assert.deepEqual(await readiness(internalUrl), { status: 503, checks: { redis: false, registry: false, 'assertion-keys': false } });
    // The old process gave up after 10 s: this one is still here, with its health endpoint up.
    await sleep(11_000);
    assert.equal(proxy.child.exitCode, null, proxy.output());
    assert.equal((await request(`${internalUrl}/healthz`)).statusCode, 200);
    const warnings = proxy.output().split('\n').filter((line) => line.includes('cannot reach redis'));
    t.diagnostic(`after 11 s: ${warnings.length} warning lines (one per connection, once per reason)`);
    assert.ok(warnings.length >= 1 && warnings.length <= 3, warnings.join('\n'));
    assert.match(warnings[0]!, /ECONNREFUSED/);
    assert.ok(!proxy.output().includes('never-logged-password'));

    const redis = await startRedis(['--port', String(redisPort), '--requirepass', 'never-logged-password']);
    try {
      await eventually('Redis reachable for the proxy', async () => (await readiness(internalUrl)).checks.redis === true, 10_000);
    } finally {
      await redis.stop();
    }
  } finally {
    await proxy.stop();
  }
});
