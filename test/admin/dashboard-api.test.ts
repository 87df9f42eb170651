import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import type { SignedIn } from '../support/sessions.js';
import type { ApiResponse } from '../support/api-client.js';

/** interface.md §4.3, §2.3 and §2.5 through the running gateway; each describe starts its own gateway. */

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function assertError(response: ApiResponse, status: number, error: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.json.error, error);
}

/** A fresh gateway with an admin session (`admin`) and a non-admin one (`member`). */
function useGateway() {
  let member: SignedIn;
  const env = useAdminSession({ admin: { sub: 'ada-sub' } }, async (env) => {
    member = await env.signIn({ sub: 'max-sub', isAdmin: false });
  });
  return Object.defineProperty(env, 'member', { get: () => member }) as typeof env & { readonly member: SignedIn };
}

/** Creates `count` services at /s1, /s2, …, asserting 201. */
async function createServices(state: ReturnType<typeof useGateway>, count: number): Promise<{ id: string }[]> {
  const services = [];
  for (let n = 1; n <= count; n++) {
    const response = await state.call('POST', '/api/services', {
      as: state.admin,
      json: { name: `S${n}`, path: `/s${n}`, targetUrl: 'http://127.0.0.1:9' },
    });
    assert.equal(response.status, 201, response.text);
    services.push(response.json);
  }
  return services;
}

describe('GET /dashboard/stats', () => {
  const state = useGateway();

  it('200 with zero counts and no activity on a fresh gateway', async () => {
    const response = await state.call('GET', '/dashboard/stats', { as: state.admin });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { totalServices: 0, enabledServices: 0, disabledServices: 0, recentActivity: [] });
  });

  it('counts services by state and shows the newest 10 audit entries, newest first', async () => {
    const services = await createServices(state, 10);
    for (const service of services.slice(0, 3)) {
      const toggled = await state.call('PATCH', `/api/services/${service.id}/toggle`, { as: state.admin, json: { enabled: false } });
      assert.equal(toggled.status, 200);
    }
    const response = await state.call('GET', '/dashboard/stats', { as: state.admin });
    assert.equal(response.status, 200);
    const { recentActivity, ...counts } = response.json;
    assert.deepEqual(counts, { totalServices: 10, enabledServices: 7, disabledServices: 3 });
    assert.equal(recentActivity.length, 10);
    assert.deepEqual(
      recentActivity.map((e: { action: string }) => e.action),
      [...Array(3).fill('SERVICE_DISABLED'), ...Array(7).fill('SERVICE_CREATED')],
    );
    for (const entry of recentActivity) {
      assert.deepEqual(Object.keys(entry).sort(), ['action', 'id', 'timestamp', 'user_id']);
      assert.equal(entry.user_id, 'ada-sub');
      assert.match(entry.timestamp, ISO);
    }
    const ids = recentActivity.map((e: { id: number }) => e.id);
    assert.deepEqual(ids, [...ids].sort((a, b) => b - a));
  });

  it('401 without a session and 403 for a non-admin', async () => {
    assertError(await state.call('GET', '/dashboard/stats'), 401, 'Not authenticated');
    assertError(await state.call('GET', '/dashboard/stats', { as: state.member }), 403, 'Admin access required');
  });

  it('405 with Allow: GET for other methods', async () => {
    const response = await state.call('POST', '/dashboard/stats', { as: state.admin, json: {} });
    assertError(response, 405, 'Method not allowed');
    assert.equal(response.headers.allow, 'GET');
  });
});

describe('GET /dashboard/logs', () => {
  const state = useGateway();

  it('200 { logs: [], total: 0 } on a fresh gateway', async () => {
    const response = await state.call('GET', '/dashboard/logs', { as: state.admin });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { logs: [], total: 0 });
  });

  it('lists audit records newest first in the interface.md §2.3 shape, with the total of all records', async () => {
    const [service] = await createServices(state, 3);
    const updated = await state.call('PUT', `/api/services/${service!.id}`, { as: state.admin, json: { name: 'Renamed' } });
    assert.equal(updated.status, 200);
    const deleted = await state.call('DELETE', `/api/services/${service!.id}`, { as: state.admin });
    assert.equal(deleted.status, 204);

    const response = await state.call('GET', '/dashboard/logs', { as: state.admin });
    assert.equal(response.status, 200);
    assert.equal(response.json.total, 5);
    const logs = response.json.logs;
    assert.deepEqual(logs.map((l: { action: string }) => l.action), ['SERVICE_DELETED', 'SERVICE_UPDATED', 'SERVICE_CREATED', 'SERVICE_CREATED', 'SERVICE_CREATED']);
    const [deletion, update] = logs;
    assert.deepEqual(Object.keys(deletion).sort(), ['action', 'details', 'id', 'ip_address', 'service_id', 'timestamp', 'user_id']);
    assert.equal(deletion.service_id, service!.id);
    assert.equal(deletion.user_id, 'ada-sub');
    assert.equal(deletion.ip_address, '127.0.0.1');
    assert.match(deletion.timestamp, ISO);
    assert.equal(typeof deletion.details, 'string');
    assert.equal(JSON.parse(deletion.details).service.path, '/s1');
    assert.deepEqual(JSON.parse(update.details), { name: 'Renamed', path: '/s1', changes: { name: { before: 'S1', after: 'Renamed' } } });
  });

  it('pages with limit and offset; total stays the count of all records', async () => {
    const all = (await state.call('GET', '/dashboard/logs', { as: state.admin })).json;
    const page = await state.call('GET', '/dashboard/logs?limit=2&offset=1', { as: state.admin });
    assert.equal(page.status, 200);
    assert.equal(page.json.total, all.total);
    assert.deepEqual(page.json.logs, all.logs.slice(1, 3));
    const beyond = await state.call('GET', `/dashboard/logs?offset=${all.total}`, { as: state.admin });
    assert.deepEqual(beyond.json, { logs: [], total: all.total });
  });

  for (const [query, message] of [
    ['limit=0', 'limit must be an integer from 1 to 1000'],
    ['limit=1001', 'limit must be an integer from 1 to 1000'],
    ['limit=ten', 'limit must be an integer from 1 to 1000'],
    ['limit=', 'limit must be an integer from 1 to 1000'],
    ['offset=-5', 'offset must be an integer of 0 or more'],
    ['offset=2.5', 'offset must be an integer of 0 or more'],
  ] as const) {
    it(`400 for ${query}`, async () => {
      assertError(await state.call('GET', `/dashboard/logs?${query}`, { as: state.admin }), 400, message);
    });
  }

  it('401 without a session and 403 for a non-admin', async () => {
    assertError(await state.call('GET', '/dashboard/logs'), 401, 'Not authenticated');
    assertError(await state.call('GET', '/dashboard/logs', { as: state.member }), 403, 'Admin access required');
  });
});
