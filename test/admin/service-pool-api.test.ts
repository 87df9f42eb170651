/**
 * The pool's service fields (design.md §4.13) through the admin API of a running gateway: every service answer (POST,
 * GET one and list, PUT, toggle, export) carries `targets`, `loadBalancing`, `healthCheck`,
 * `outlierDetection` and `retries`, defaults filled in; bad values answer 400 with `fields`; a
 * registry document round-trips them, and one from before pools still applies.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { DEFAULT_HEALTH_CHECK, defaultPool } from './pool-fields.js';

const env = useAdminSession();

const pool = {
  targets: [
    { url: 'http://127.0.0.1:9/a', weight: 5 },
    { url: 'http://127.0.0.1:9/b', weight: 1 },
  ],
  loadBalancing: 'client_ip',
  healthCheck: { path: '/healthz', intervalSeconds: 30, timeoutMs: 5000, healthyThreshold: 1, unhealthyThreshold: 5, expectStatus: 200 },
  outlierDetection: { maxFails: 10, windowSeconds: 60, ejectSeconds: 300 },
  retries: 3,
};

/** Creates a service; resolves with the answer's JSON. */
async function create(body: Record<string, unknown>) {
  const response = await env.call('POST', '/api/services', { as: env.admin, json: { requireAuth: false, ...body } });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

describe('every service answer carries the pool', () => {
  it('a service created with targetUrl only: the one target and every default, in POST, GET, the list, PUT, toggle and export', async () => {
    const created = await create({ name: 'Plain', path: '/pool-plain', targetUrl: 'http://127.0.0.1:9' });
    const pooled = { ...defaultPool('http://127.0.0.1:9'), targetUrl: 'http://127.0.0.1:9' };
    assert.deepEqual({ ...created, ...pooled }, created, 'POST');
    assert.deepEqual((await env.call('GET', `/api/services/${created.id}`, { as: env.admin })).json, created, 'GET');
    assert.deepEqual((await env.call('GET', '/api/services', { as: env.admin })).json.find((s: { id: string }) => s.id === created.id), created, 'list');
    const renamed = (await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: { name: 'Plain 2' } })).json;
    assert.deepEqual(renamed, { ...created, name: 'Plain 2', updatedAt: renamed.updatedAt }, 'PUT');
    const toggled = (await env.call('PATCH', `/api/services/${created.id}/toggle`, { as: env.admin, json: { enabled: false } })).json;
    assert.deepEqual(toggled, { ...renamed, enabled: false, updatedAt: toggled.updatedAt }, 'toggle');
    const entry = (await env.call('GET', '/api/services/export', { as: env.admin })).json.services.find((s: { id: string }) => s.id === created.id);
    assert.deepEqual({ ...entry, ...pooled }, entry, 'export');
  });

  it('a service created with a pool answers it as given, the health check and outlier detection complete', async () => {
    const created = await create({ name: 'Pooled', path: '/pool-full', ...pool, healthCheck: { path: '/healthz' }, outlierDetection: { ejectSeconds: 300 } });
    assert.equal(created.targetUrl, 'http://127.0.0.1:9/a');
    assert.deepEqual(created.targets, pool.targets);
    assert.equal(created.loadBalancing, 'client_ip');
    assert.deepEqual(created.healthCheck, { ...DEFAULT_HEALTH_CHECK, path: '/healthz' });
    assert.deepEqual(created.outlierDetection, { maxFails: 3, windowSeconds: 10, ejectSeconds: 300 });
    assert.equal(created.retries, 3);
    assert.deepEqual((await env.call('GET', `/api/services/${created.id}`, { as: env.admin })).json, created);
  });
});

describe('changes through PUT', () => {
  it('targetUrl alone replaces the pool; targets alone move targetUrl; each pool field changes, audited with before and after', async () => {
    const created = await create({ name: 'Edited', path: '/pool-edited', ...pool });
    const single = await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: { targetUrl: 'http://127.0.0.1:9/c' } });
    assert.equal(single.status, 200, single.text);
    assert.deepEqual(single.json.targets, [{ url: 'http://127.0.0.1:9/c', weight: 1 }]);
    const audit = async () => JSON.parse((await env.call('GET', '/dashboard/logs?limit=1', { as: env.admin })).json.logs[0].details);
    assert.deepEqual((await audit()).changes, {
      targetUrl: { before: 'http://127.0.0.1:9/a', after: 'http://127.0.0.1:9/c' },
      targets: { before: pool.targets, after: [{ url: 'http://127.0.0.1:9/c', weight: 1 }] },
    });

    const changes = { targets: [...pool.targets].reverse(), loadBalancing: 'round_robin', healthCheck: null, outlierDetection: {}, retries: 0 };
    const updated = await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: changes });
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual(updated.json, {
      ...single.json,
      targetUrl: 'http://127.0.0.1:9/b',
      targets: changes.targets,
      loadBalancing: 'round_robin',
      healthCheck: null,
      outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 },
      retries: 0,
      updatedAt: updated.json.updatedAt,
    });
    assert.deepEqual(Object.keys((await audit()).changes), ['targetUrl', 'targets', 'loadBalancing', 'healthCheck', 'outlierDetection', 'retries']);
  });

  it('what a GET answered, sent back changed, agrees with itself; a targetUrl changed without targets is refused', async () => {
    const created = await create({ name: 'Round trip', path: '/pool-round-trip', ...pool });
    const fetched = (await env.call('GET', `/api/services/${created.id}`, { as: env.admin })).json;
    assert.equal((await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: { ...fetched, retries: 4 } })).json.retries, 4);
    const refused = await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: { ...fetched, targetUrl: 'http://127.0.0.1:9/z' } });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.json, {
      error: 'Invalid service: targetUrl must be the first target\'s url ("http://127.0.0.1:9/a")',
      fields: { targetUrl: 'must be the first target\'s url ("http://127.0.0.1:9/a")' },
    });
  });
});

describe('refusals', () => {
  it('400 with every bad field named, nothing created', async () => {
    const before = (await env.call('GET', '/api/services', { as: env.admin })).json.length;
    const response = await env.call('POST', '/api/services', {
      as: env.admin,
      json: { name: 'Bad', path: '/pool-bad', targets: [{ url: 'http://127.0.0.1:9', weight: 0 }], loadBalancing: 'sticky', healthCheck: { intervalSeconds: 1 }, outlierDetection: null, retries: -1 },
    });
    assert.equal(response.status, 400);
    assert.deepEqual(response.json.fields, {
      targets: 'weight must be an integer from 1 to 100 (got 0)',
      loadBalancing: 'must be one of round_robin, least_requests, client_ip, cookie',
      healthCheck: 'timeoutMs must be below intervalSeconds × 1000',
      outlierDetection: 'must be an object',
      retries: 'must be an integer from 0 to 5',
    });
    assert.equal((await env.call('GET', '/api/services', { as: env.admin })).json.length, before);
  });

  it('neither targetUrl nor targets: the exact missing-fields message', async () => {
    const response = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'None', path: '/pool-none', retries: 2 } });
    assert.equal(response.status, 400);
    assert.deepEqual(response.json, { error: 'Missing required fields: name, path, targetUrl', fields: { targetUrl: 'is required' } });
  });
});

describe('the registry document', () => {
  it('export → apply plans nothing; a changed pool is planned and applied as a diff; a document from before pools means one target', async () => {
    const created = await create({ name: 'Declared', path: '/pool-declared', ...pool });
    const exported = (await env.call('GET', '/api/services/export', { as: env.admin })).json;
    const again = await env.call('POST', '/api/services/apply?dryRun=true', { as: env.admin, json: exported });
    assert.deepEqual(again.json.update, []);

    const declared = exported.services.map((s: { path: string }) => (s.path === '/pool-declared' ? { ...s, targets: [{ url: 'http://127.0.0.1:9/a', weight: 9 }], retries: 5 } : s));
    const applied = await env.call('POST', '/api/services/apply', { as: env.admin, json: { version: 1, services: declared } });
    assert.equal(applied.status, 200, applied.text);
    assert.deepEqual(applied.json.update, [
      {
        path: '/pool-declared',
        id: created.id,
        name: 'Declared',
        changes: { targets: { before: pool.targets, after: [{ url: 'http://127.0.0.1:9/a', weight: 9 }] }, retries: { before: 3, after: 5 } },
      },
    ]);

    const old = exported.services.map(({ id, name, path, targetUrl, requireAuth, description, enabled, access, forwardAuthorization }: Record<string, unknown>) => ({
      id,
      name,
      path,
      targetUrl,
      requireAuth,
      description,
      enabled,
      access,
      forwardAuthorization,
    }));
    const fromBefore = await env.call('POST', '/api/services/apply', { as: env.admin, json: { version: 1, services: old } });
    assert.equal(fromBefore.status, 200, fromBefore.text);
    assert.ok(fromBefore.json.update.some((u: { path: string }) => u.path === '/pool-declared'), fromBefore.text);
    assert.ok(fromBefore.json.unchanged.includes('/pool-plain'), 'a service of one target with the defaults is as such a document says');
    for (const service of (await env.call('GET', '/api/services', { as: env.admin })).json) {
      assert.deepEqual({ ...service, ...defaultPool(service.targetUrl) }, service, service.path);
    }
  });
});
