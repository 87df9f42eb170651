/**
 * Target health in split mode (design.md §4.13 "Reports"): a report published through Redis by a bus of
 * another process reaches the admin process's `GET /api/services/:id/health`, beside the reports
 * of the two proxy processes themselves.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, test } from 'node:test';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { RedisEventBus } from '../../shared/backends/redis/event-bus/redis-event-bus.js';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';

const TARGET = 'http://10.2.0.5:8080/app';

let connections: RedisConnections;
let bus: RedisEventBus;

// Registered before the gateway's, so it runs first: this client leaves while Redis still runs.
after(async () => {
  await bus?.close();
  await connections?.close();
});
const env = useAdminSession({ topology: 'split' }, async (env) => {
  connections = new RedisConnections(env.split.redis.url);
  bus = new RedisEventBus(connections);
  await connections.ready(5_000);
});

test("a report published through Redis by another process reaches the admin process's API, beside the proxy processes' own", async () => {
  const id = await env.split.createService(env.admin, { name: 'Pool', path: '/pool', targetUrl: TARGET, requireAuth: false });
  const call = apiClient(env.split.adminUrl);
  const since = Date.UTC(2026, 10, 25, 7, 0, 0);
  const health = async () => {
    // As a proxy does, every few seconds: one PUBLISH may go out before the admin's SUBSCRIBE is confirmed.
    await bus.publishTargetHealth({ proxy: 'other-host:99', at: Date.now(), services: { [id]: [{ url: TARGET, state: 'ejected', since, lastError: 'ECONNREFUSED' }] } });
    const answer = await call('GET', `/api/services/${id}/health`, { as: env.admin });
    assert.equal(answer.status, 200, answer.text);
    return answer.json.targets[0];
  };
  const proxies = [...env.split.proxies.map((proxy) => `${hostname()}:${proxy.process.child.pid}`), 'other-host:99'].sort();
  await eventually('every report to reach the admin process', async () => {
    const seen = (await health()).proxies.map((p: { proxy: string }) => p.proxy);
    return proxies.every((proxy) => seen.includes(proxy));
  }, 15_000, 200);
  const target = await health();
  assert.equal(target.url, TARGET);
  assert.equal(target.weight, 1);
  assert.equal(target.state, 'ejected', 'one proxy ejected it, two find it healthy');
  assert.deepEqual(target.proxies.map((p: { proxy: string }) => p.proxy), proxies, 'ordered by proxy');
  assert.deepEqual(target.proxies.find((p: { proxy: string }) => p.proxy === 'other-host:99'), { proxy: 'other-host:99', state: 'ejected', since: '2026-11-25T07:00:00.000Z', lastError: 'ECONNREFUSED' });
  for (const p of target.proxies.filter((p: { proxy: string }) => p.proxy !== 'other-host:99')) assert.equal(p.state, 'healthy', p.proxy);
});
