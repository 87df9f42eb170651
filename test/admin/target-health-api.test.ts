/**
 * `GET /api/services/:id/health` on the embedded gateway (design.md §4.13 "Reports"): reports published
 * on the gateway's own event bus, as proxy processes publish theirs, read back through the API;
 * the gateway's in-process proxy plane reports too (every 5 s), under this process's name.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TargetHealthEntry } from '../../shared/types.js';
import { useAdminSession } from '../support/admin-session.js';
import { createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { LOCAL_PROXY, nextLocalReport } from '../support/local-proxy-reports.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

const env = useAdminSession();
let paths = 0;

/** A new service on `targetUrl`; its id. */
const newService = (targetUrl: string) => createService(env.gw.origin, env.admin, { name: 'Pool', path: `/pool-${++paths}`, targetUrl, requireAuth: false });

/** Publishes `proxy`'s report of one target of `serviceId`, made `ageMs` ago. */
function publish(proxy: string, serviceId: string, entry: Omit<TargetHealthEntry, 'since'> & { since?: number }, ageMs = 0): Promise<void> {
  const at = Date.now() - ageMs;
  return env.gw.gateway.bus.publishTargetHealth({ proxy, at, services: { [serviceId]: [{ since: at - 5_000, ...entry }] } });
}

/** The service's health as the API answers it, the in-process proxy left out of each target's list. */
async function health(serviceId: string): Promise<any> {
  const answer = await env.call('GET', `/api/services/${serviceId}/health`, { as: env.admin });
  assert.equal(answer.status, 200, answer.text);
  for (const target of answer.json.targets) target.proxies = target.proxies.filter((seen: { proxy: string }) => seen.proxy !== LOCAL_PROXY);
  return answer.json;
}

describe('GET /api/services/:id/health', () => {
  it("a new service's target is unknown, with no proxy, until a report names it; then the gateway's own proxy plane reports it healthy", async () => {
    await nextLocalReport(env.gw.gateway.bus);
    const id = await newService('http://127.0.0.1:9/app');
    const fresh = await env.call('GET', `/api/services/${id}/health`, { as: env.admin });
    assert.equal(fresh.status, 200);
    assert.deepEqual(fresh.json, { targets: [{ url: 'http://127.0.0.1:9/app', weight: 1, state: 'unknown', proxies: [] }] });
    await eventually('the in-process proxy to report the target', async () => (await env.call('GET', `/api/services/${id}/health`, { as: env.admin })).json.targets[0].proxies.length > 0);
    const reported = (await env.call('GET', `/api/services/${id}/health`, { as: env.admin })).json.targets[0];
    assert.equal(reported.state, 'healthy');
    assert.deepEqual(reported.proxies.map(({ proxy, state, lastError }: any) => ({ proxy, state, lastError })), [{ proxy: LOCAL_PROXY, state: 'healthy', lastError: null }]);
    assert.match(reported.proxies[0].since, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("each proxy's view, ordered by proxy, times in ISO 8601 UTC; the overall state by the rule", async () => {
    const id = await newService('http://10.0.0.1:8080');
    const since = Date.UTC(2026, 10, 25, 9, 30, 0);
    await publish('web-2:40', id, { url: 'http://10.0.0.1:8080', state: 'ejected', since, lastError: 'ECONNREFUSED' });
    await publish('web-1:12', id, { url: 'http://10.0.0.1:8080', state: 'healthy', since, lastError: null });
    await publish('web-3:7', id, { url: 'http://10.0.0.1:8080', state: 'unhealthy', since, lastError: 'status 503' });
    assert.deepEqual(await health(id), {
      targets: [
        {
          url: 'http://10.0.0.1:8080',
          weight: 1,
          state: 'unhealthy',
          proxies: [
            { proxy: 'web-1:12', state: 'healthy', since: '2026-11-25T09:30:00.000Z', lastError: null },
            { proxy: 'web-2:40', state: 'ejected', since: '2026-11-25T09:30:00.000Z', lastError: 'ECONNREFUSED' },
            { proxy: 'web-3:7', state: 'unhealthy', since: '2026-11-25T09:30:00.000Z', lastError: 'status 503' },
          ],
        },
      ],
    });
    await publish('web-4:1', id, { url: 'http://10.0.0.1:8080', state: 'ejected', lastError: 'timeout' });
    assert.equal((await health(id)).targets[0].state, 'ejected', 'two ejected, one unhealthy');
    for (const proxy of ['web-2:40', 'web-3:7', 'web-4:1']) await publish(proxy, id, { url: 'http://10.0.0.1:8080', state: 'healthy', lastError: 'timeout' });
    const healed = (await health(id)).targets[0];
    assert.equal(healed.state, 'healthy');
    assert.deepEqual(healed.proxies.map((seen: any) => seen.lastError), [null, 'timeout', 'timeout', 'timeout'], 'the latest error stays after recovery');
  });

  it("a pool's targets in the registry's order with their weights, each with its own proxies and state", async () => {
    await nextLocalReport(env.gw.gateway.bus);
    const id = await createService(env.gw.origin, env.admin, {
      name: 'Weighted',
      path: `/pool-${++paths}`,
      targets: [{ url: 'http://10.0.0.9:8080', weight: 5 }, { url: 'http://10.0.0.8:8080' }, { url: 'http://10.0.0.7:8080', weight: 2 }],
      requireAuth: false,
    });
    const at = Date.now();
    await env.gw.gateway.bus.publishTargetHealth({
      proxy: 'web-1:12',
      at,
      services: {
        [id]: [
          { url: 'http://10.0.0.7:8080', state: 'unhealthy', since: at, lastError: 'timeout' },
          { url: 'http://10.0.0.9:8080', state: 'ejected', since: at, lastError: 'ECONNRESET' },
        ],
      },
    });
    const targets = (await health(id)).targets.map(({ url, weight, state, proxies }: any) => ({ url, weight, state, proxies: proxies.map((p: any) => p.proxy) }));
    assert.deepEqual(targets, [
      { url: 'http://10.0.0.9:8080', weight: 5, state: 'ejected', proxies: ['web-1:12'] },
      { url: 'http://10.0.0.8:8080', weight: 1, state: 'unknown', proxies: [] },
      { url: 'http://10.0.0.7:8080', weight: 2, state: 'unhealthy', proxies: ['web-1:12'] },
    ]);
  });

  it("a report made more than a minute ago is dropped; a proxy's next report replaces its last", async () => {
    const id = await newService('http://10.0.0.2:8080');
    await publish('stale:1', id, { url: 'http://10.0.0.2:8080', state: 'ejected', lastError: 'ECONNRESET' }, 61_000);
    await publish('live:2', id, { url: 'http://10.0.0.2:8080', state: 'ejected', lastError: 'ECONNRESET' }, 59_000);
    assert.deepEqual((await health(id)).targets[0].proxies.map((seen: any) => seen.proxy), ['live:2']);
    await publish('live:2', id, { url: 'http://10.0.0.2:8080', state: 'healthy', lastError: null });
    assert.deepEqual((await health(id)).targets[0].proxies.map((seen: any) => seen.state), ['healthy']);
    await publish('live:2', id, { url: 'http://10.0.0.2:8080', state: 'unhealthy', lastError: null }, 1_000);
    assert.deepEqual((await health(id)).targets[0].proxies.map((seen: any) => seen.state), ['healthy'], 'an older report delivered late is ignored');
  });

  it('an unknown or malformed id: 404 Service not found, as GET /api/services/:id answers', async () => {
    for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
      const [health, service] = await Promise.all([env.call('GET', `/api/services/${id}/health`, { as: env.admin }), env.call('GET', `/api/services/${id}`, { as: env.admin })]);
      assert.deepEqual([health.status, health.json], [404, { error: 'Service not found' }]);
      assert.deepEqual([health.status, health.json], [service.status, service.json]);
    }
  });

  it("needs an administrator: 401 without credentials, 403 for a user's session, 200 with a read API token", async () => {
    const id = await newService('http://10.0.0.3:8080');
    const anonymous = await env.call('GET', `/api/services/${id}/health`);
    assert.deepEqual([anonymous.status, anonymous.json], [401, { error: 'Not authenticated' }]);
    const member = await env.signIn({ sub: 'member-sub', email: 'max@example.com', isAdmin: false });
    const refused = await env.call('GET', `/api/services/${id}/health`, { as: member });
    assert.deepEqual([refused.status, refused.json], [403, { error: 'Admin access required' }]);
    const token = await env.call('POST', '/api/tokens', { as: env.admin, json: { name: 'Monitoring', scope: 'read' } });
    assert.equal(token.status, 201, token.text);
    const viaToken = await env.call('GET', `/api/services/${id}/health`, { authorization: `Bearer ${token.json.secret}` });
    assert.equal(viaToken.status, 200);
    assert.equal(viaToken.headers['cache-control'], 'no-store');
  });
});
