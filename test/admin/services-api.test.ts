import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { useAdminSession } from '../support/admin-session.js';
import type { SignedIn } from '../support/sessions.js';
import { apiClient, type ApiResponse } from '../support/api-client.js';
import { defaultPool } from './pool-fields.js';

/** interface.md §4.2 and §7 through the running gateway's public listener (design.md §5 for the open points). */

let member: SignedIn;
let counter = 0;

const env = useAdminSession({ upstream: true }, async (env) => {
  member = await env.signIn({ sub: 'member-sub', name: 'Max Member', email: 'max@example.com', isAdmin: false });
});

/** A valid create body with a path no other test uses. */
function newServiceBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return { name: `Service ${counter}`, path: `/svc-${counter}`, targetUrl: env.upstream.origin, ...overrides };
}

async function createService(overrides: Record<string, unknown> = {}) {
  const response = await env.call('POST', '/api/services', { as: env.admin, json: newServiceBody(overrides) });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

function assertError(response: ApiResponse, status: number, error: string): void {
  assert.equal(response.status, status, response.text);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  assert.equal(response.json.error, error);
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /api/services', () => {
  it('201 with the service object (interface.md §2.1), enabled, requireAuth defaulting to true', async () => {
    const body = newServiceBody({ description: 'An echo' });
    const response = await env.call('POST', '/api/services', { as: env.admin, json: body });
    assert.equal(response.status, 201, response.text);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.equal(response.headers['cache-control'], 'no-store');
    const service = response.json;
    assert.match(service.id, UUID);
    assert.match(service.createdAt, ISO);
    assert.deepEqual(service, {
      id: service.id,
      name: body.name,
      path: body.path,
      targetUrl: body.targetUrl,
      requireAuth: true,
      description: 'An echo',
      enabled: true,
      createdAt: service.createdAt,
      updatedAt: service.createdAt,
      access: null,
      forwardAuthorization: false,
      ...defaultPool(env.upstream.origin),
    });
    assert.equal(response.headers.location, `/api/services/${service.id}`);
  });

  it('stores the service: GET /api/services/:id returns it', async () => {
    const created = await createService({ requireAuth: false });
    const response = await env.call('GET', `/api/services/${created.id}`, { as: env.admin });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, created);
  });

  for (const missing of ['name', 'path', 'targetUrl']) {
    it(`400 "Missing required fields: name, path, targetUrl" without ${missing}`, async () => {
      const body = newServiceBody();
      delete body[missing];
      assertError(await env.call('POST', '/api/services', { as: env.admin, json: body }), 400, 'Missing required fields: name, path, targetUrl');
    });
  }

  it('400 with per-field reasons for invalid values, naming every bad field', async () => {
    const response = await env.call('POST', '/api/services', {
      as: env.admin,
      json: { name: ' ', path: 'no-slash', targetUrl: 'ftp://example.com', requireAuth: 'yes', description: 5 },
    });
    assert.equal(response.status, 400);
    assert.match(response.json.error, /^Invalid service: name must not be empty; path must start with \//);
    assert.deepEqual(response.json.fields, {
      name: 'must not be empty',
      path: 'must start with /',
      targetUrl: 'must be an absolute http:, https: or h2c: URL with a host',
      requireAuth: 'must be a boolean',
      description: 'must be a string',
    });
  });

  const badValues: [string, unknown, string][] = [
    ['path', '/orders/', 'must not end with /'],
    ['path', '/a/../b', 'must not contain a . or .. segment'],
    ['path', '/api/services', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['path', '/auth', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['path', '/dashboard/x', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['path', '/.gatehouse', "must not be or sit under /.gatehouse (the gateway's on every host)"],
    ['path', '/.GateHouse/x', "must not be or sit under /.gatehouse (the gateway's on every host)"],
    ['path', '/a b', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['path', `/${'p'.repeat(200)}`, 'must be at most 200 characters'],
    ['targetUrl', 'http://user:pw@example.com', 'must not contain user info'],
    ['targetUrl', 'http://example.com/?q=1', 'must not contain a query'],
    ['targetUrl', 'http://example.com/#f', 'must not contain a fragment'],
    ['targetUrl', 'example.com', 'must be an absolute http:, https: or h2c: URL with a host'],
    ['name', 'n'.repeat(101), 'must be at most 100 characters'],
    ['description', 'd'.repeat(1001), 'must be at most 1000 characters'],
  ];
  for (const [field, value, reason] of badValues) {
    it(`400 when ${field} is ${JSON.stringify(value).slice(0, 30)}: ${reason}`, async () => {
      const response = await env.call('POST', '/api/services', { as: env.admin, json: newServiceBody({ [field]: value }) });
      assertError(response, 400, `Invalid service: ${field} ${reason}`);
      assert.deepEqual(response.json.fields, { [field]: reason });
    });
  }

  it('400 naming unknown fields', async () => {
    const response = await env.call('POST', '/api/services', { as: env.admin, json: newServiceBody({ foo: 1, bar: 2 }) });
    assertError(response, 400, 'Unknown fields: foo, bar');
    assert.deepEqual(response.json.fields, { foo: 'unknown field', bar: 'unknown field' });
  });

  it('400 when the body is JSON but not an object', async () => {
    assertError(await env.call('POST', '/api/services', { as: env.admin, json: [newServiceBody()] }), 400, 'Body must be a JSON object');
  });

  it('400 Invalid JSON body', async () => {
    const response = await env.call('POST', '/api/services', { as: env.admin, body: '{"name": ', contentType: 'application/json' });
    assertError(response, 400, 'Invalid JSON body');
  });

  it('415 without a JSON Content-Type', async () => {
    const body = JSON.stringify(newServiceBody());
    assertError(await env.call('POST', '/api/services', { as: env.admin, body, contentType: 'text/plain' }), 415, 'Content-Type must be application/json');
    assertError(await env.call('POST', '/api/services', { as: env.admin, body }), 415, 'Content-Type must be application/json');
  });

  it('413 for a body over 1 MiB', async () => {
    const json = newServiceBody({ description: 'd'.repeat(1024 * 1024) });
    assertError(await env.call('POST', '/api/services', { as: env.admin, json }), 413, 'Request body too large');
  });

  it('409 Path already in use, and the first service is untouched', async () => {
    const first = await createService();
    const response = await env.call('POST', '/api/services', { as: env.admin, json: newServiceBody({ path: first.path }) });
    assertError(response, 409, 'Path already in use');
    const list = (await env.call('GET', '/api/services', { as: env.admin })).json;
    assert.deepEqual(list.filter((s: { path: string }) => s.path === first.path), [first]);
  });

  it('409 Path already in use for a path that differs only in case', async () => {
    const first = await createService();
    const response = await env.call('POST', '/api/services', { as: env.admin, json: newServiceBody({ path: first.path.toUpperCase() }) });
    assertError(response, 409, 'Path already in use');
    const list = (await env.call('GET', '/api/services', { as: env.admin })).json;
    assert.deepEqual(list.filter((s: { path: string }) => s.path.toLowerCase() === first.path), [first]);
  });

  it('401 Not authenticated without a session', async () => {
    assertError(await env.call('POST', '/api/services', { json: newServiceBody(), csrf: 'anything' }), 401, 'Not authenticated');
  });

  it('403 Admin access required for a non-admin session', async () => {
    assertError(await env.call('POST', '/api/services', { as: member, json: newServiceBody() }), 403, 'Admin access required');
  });

  it('403 Invalid CSRF token when the token is missing or wrong, creating nothing', async () => {
    const body = newServiceBody();
    assertError(await env.call('POST', '/api/services', { as: env.admin, json: body, csrf: null }), 403, 'Invalid CSRF token');
    assertError(await env.call('POST', '/api/services', { as: env.admin, json: body, csrf: 'wrong' }), 403, 'Invalid CSRF token');
    assertError(await env.call('POST', '/api/services', { as: env.admin, json: body, csrf: member.csrfToken }), 403, 'Invalid CSRF token');
    const list = (await env.call('GET', '/api/services', { as: env.admin })).json;
    assert.equal(list.some((s: { path: string }) => s.path === body.path), false);
  });
});

describe('GET /api/services', () => {
  it('200 with an array of every service, ordered by path', async () => {
    const b = await createService({ path: `/list-b-${counter}` });
    const a = await createService({ path: `/list-a-${counter}` });
    const response = await env.call('GET', '/api/services', { as: env.admin });
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(response.json));
    const paths = response.json.map((s: { path: string }) => s.path);
    assert.deepEqual(paths, [...paths].sort());
    assert.deepEqual(response.json.find((s: { id: string }) => s.id === a.id), a);
    assert.deepEqual(response.json.find((s: { id: string }) => s.id === b.id), b);
  });

  it('401 without a session and 403 for a non-admin', async () => {
    assertError(await env.call('GET', '/api/services'), 401, 'Not authenticated');
    assertError(await env.call('GET', '/api/services', { as: member }), 403, 'Admin access required');
  });

  it('405 with Allow for a method the path does not have', async () => {
    const response = await env.call('PATCH', '/api/services', { as: env.admin, json: {} });
    assertError(response, 405, 'Method not allowed');
    assert.deepEqual(String(response.headers.allow).split(/,\s*/).sort(), ['GET', 'POST']);
  });
});

describe('GET /api/services/:id', () => {
  it('404 Service not found for an unknown UUID and for a non-UUID id', async () => {
    assertError(await env.call('GET', `/api/services/${crypto.randomUUID()}`, { as: env.admin }), 404, 'Service not found');
    assertError(await env.call('GET', '/api/services/not-a-uuid', { as: env.admin }), 404, 'Service not found');
  });

  it('401 without a session and 403 for a non-admin', async () => {
    const service = await createService();
    assertError(await env.call('GET', `/api/services/${service.id}`), 401, 'Not authenticated');
    assertError(await env.call('GET', `/api/services/${service.id}`, { as: member }), 403, 'Admin access required');
  });
});

describe('PUT /api/services/:id', () => {
  it('200 with the updated service; read-only fields are ignored', async () => {
    const service = await createService();
    await sleep(5);
    const response = await env.call('PUT', `/api/services/${service.id}`, {
      as: env.admin,
      json: { name: 'Renamed', requireAuth: false, targetUrl: `${env.upstream.origin}/base`, id: 'x', createdAt: 'y', updatedAt: 'z' },
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.json, {
      ...service,
      name: 'Renamed',
      requireAuth: false,
      targetUrl: `${env.upstream.origin}/base`,
      targets: [{ url: `${env.upstream.origin}/base`, weight: 1 }],
      updatedAt: response.json.updatedAt,
    });
    assert.ok(response.json.updatedAt > service.updatedAt);
    assert.deepEqual((await env.call('GET', `/api/services/${service.id}`, { as: env.admin })).json, response.json);
  });

  it('200 and no change for an empty object', async () => {
    const service = await createService();
    const response = await env.call('PUT', `/api/services/${service.id}`, { as: env.admin, json: {} });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, service);
  });

  it('400 with field reasons, and for unknown fields', async () => {
    const service = await createService();
    const bad = await env.call('PUT', `/api/services/${service.id}`, { as: env.admin, json: { path: '/api', enabled: 'no' } });
    assertError(bad, 400, 'Invalid service: path must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json); enabled must be a boolean');
    const unknown = await env.call('PUT', `/api/services/${service.id}`, { as: env.admin, json: { colour: 'red' } });
    assertError(unknown, 400, 'Unknown fields: colour');
    assert.deepEqual((await env.call('GET', `/api/services/${service.id}`, { as: env.admin })).json, service);
  });

  it('409 when moving to a path in use, in any case', async () => {
    const a = await createService();
    const b = await createService();
    assertError(await env.call('PUT', `/api/services/${b.id}`, { as: env.admin, json: { path: a.path } }), 409, 'Path already in use');
    assertError(await env.call('PUT', `/api/services/${b.id}`, { as: env.admin, json: { path: a.path.toUpperCase() } }), 409, 'Path already in use');
  });

  it('404 for an unknown service', async () => {
    assertError(await env.call('PUT', `/api/services/${crypto.randomUUID()}`, { as: env.admin, json: { name: 'x' } }), 404, 'Service not found');
  });

  it('400 Invalid JSON body and 415 for a non-JSON body', async () => {
    const service = await createService();
    assertError(await env.call('PUT', `/api/services/${service.id}`, { as: env.admin, body: '{', contentType: 'application/json' }), 400, 'Invalid JSON body');
    assertError(await env.call('PUT', `/api/services/${service.id}`, { as: env.admin, body: 'name=x', contentType: 'application/x-www-form-urlencoded' }), 415, 'Content-Type must be application/json');
  });

  it('401, 403 non-admin, 403 without CSRF token', async () => {
    const service = await createService();
    const path = `/api/services/${service.id}`;
    assertError(await env.call('PUT', path, { json: { name: 'x' } }), 401, 'Not authenticated');
    assertError(await env.call('PUT', path, { as: member, json: { name: 'x' } }), 403, 'Admin access required');
    assertError(await env.call('PUT', path, { as: env.admin, json: { name: 'x' }, csrf: null }), 403, 'Invalid CSRF token');
    assertError(await env.call('PUT', path, { as: env.admin, json: { name: 'x' }, csrf: 'wrong' }), 403, 'Invalid CSRF token');
    assert.deepEqual((await env.call('GET', path, { as: env.admin })).json, service);
  });
});

describe('DELETE /api/services/:id', () => {
  it('204 with no body; the service is gone', async () => {
    const service = await createService();
    const response = await env.call('DELETE', `/api/services/${service.id}`, { as: env.admin });
    assert.equal(response.status, 204);
    assert.equal(response.text, '');
    assertError(await env.call('GET', `/api/services/${service.id}`, { as: env.admin }), 404, 'Service not found');
    assertError(await env.call('DELETE', `/api/services/${service.id}`, { as: env.admin }), 404, 'Service not found');
  });

  it('401, 403 non-admin, 403 without or with a wrong CSRF token, keeping the service', async () => {
    const service = await createService();
    const path = `/api/services/${service.id}`;
    assertError(await env.call('DELETE', path), 401, 'Not authenticated');
    assertError(await env.call('DELETE', path, { as: member }), 403, 'Admin access required');
    assertError(await env.call('DELETE', path, { as: env.admin, csrf: null }), 403, 'Invalid CSRF token');
    assertError(await env.call('DELETE', path, { as: env.admin, csrf: 'wrong' }), 403, 'Invalid CSRF token');
    assert.equal((await env.call('GET', path, { as: env.admin })).status, 200);
  });
});

describe('PATCH /api/services/:id/toggle', () => {
  it('200 with the updated service, disabling and enabling', async () => {
    const service = await createService();
    const off = await env.call('PATCH', `/api/services/${service.id}/toggle`, { as: env.admin, json: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.json, { ...service, enabled: false, updatedAt: off.json.updatedAt });
    const on = await env.call('PATCH', `/api/services/${service.id}/toggle`, { as: env.admin, json: { enabled: true } });
    assert.equal(on.status, 200);
    assert.equal(on.json.enabled, true);
  });

  it('400 when enabled is missing or not a boolean', async () => {
    const service = await createService();
    const missing = await env.call('PATCH', `/api/services/${service.id}/toggle`, { as: env.admin, json: {} });
    assertError(missing, 400, 'Invalid toggle body: enabled is required');
    assert.deepEqual(missing.json.fields, { enabled: 'is required' });
    const wrong = await env.call('PATCH', `/api/services/${service.id}/toggle`, { as: env.admin, json: { enabled: 'false' } });
    assertError(wrong, 400, 'Invalid toggle body: enabled must be a boolean');
  });

  it('404 for an unknown service', async () => {
    assertError(await env.call('PATCH', `/api/services/${crypto.randomUUID()}/toggle`, { as: env.admin, json: { enabled: false } }), 404, 'Service not found');
  });

  it('401, 403 non-admin, 403 without CSRF token, leaving the service enabled', async () => {
    const service = await createService();
    const path = `/api/services/${service.id}/toggle`;
    assertError(await env.call('PATCH', path, { json: { enabled: false } }), 401, 'Not authenticated');
    assertError(await env.call('PATCH', path, { as: member, json: { enabled: false } }), 403, 'Admin access required');
    assertError(await env.call('PATCH', path, { as: env.admin, json: { enabled: false }, csrf: null }), 403, 'Invalid CSRF token');
    assert.equal((await env.call('GET', `/api/services/${service.id}`, { as: env.admin })).json.enabled, true);
  });

  it('405 with Allow: PATCH for other methods', async () => {
    const service = await createService();
    const response = await env.call('GET', `/api/services/${service.id}/toggle`, { as: env.admin });
    assertError(response, 405, 'Method not allowed');
    assert.equal(response.headers.allow, 'PATCH');
  });
});

describe('GET /api/services/:id/logs', () => {
  /** Polls the logs endpoint until `total` reaches `count` (records are batched, design.md §3.9). */
  async function waitForLogs(id: string, count: number): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const response = await env.call('GET', `/api/services/${id}/logs`, { as: env.admin });
      if (response.json.total >= count) return;
      await sleep(50);
    }
    assert.fail(`access logs of ${id} did not reach ${count}`);
  }

  it('200 { logs: [], total: 0 } for a service without traffic', async () => {
    const service = await createService();
    const response = await env.call('GET', `/api/services/${service.id}/logs`, { as: env.admin });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { logs: [], total: 0 });
  });

  it('lists proxied requests newest first in the interface.md §2.2 shape, paged by limit and offset', async () => {
    const service = await createService({ requireAuth: false });
    for (const n of [1, 2, 3]) {
      const proxied = await env.call('GET', `${service.path}/item-${n}?q=${n}`);
      assert.equal(proxied.status, 200, proxied.text);
    }
    await waitForLogs(service.id, 3);

    const all = await env.call('GET', `/api/services/${service.id}/logs`, { as: env.admin });
    assert.equal(all.status, 200);
    assert.equal(all.json.total, 3);
    assert.deepEqual(all.json.logs.map((l: { path: string }) => l.path), [3, 2, 1].map((n) => `${service.path}/item-${n}?q=${n}`));
    const [newest] = all.json.logs;
    assert.deepEqual(Object.keys(newest).sort(), ['count', 'host', 'id', 'ip_address', 'method', 'path', 'path_truncated', 'protocol', 'request_id', 'response_time_ms', 'service_id', 'span_id', 'status_code', 'target', 'timestamp', 'trace_id', 'user_id']);
    assert.equal(newest.count, 1, 'one request');
    assert.equal(newest.path_truncated, false);
    assert.equal(typeof newest.id, 'number');
    assert.equal(newest.service_id, service.id);
    assert.equal(newest.method, 'GET');
    assert.equal(newest.status_code, 200);
    assert.equal(Number.isInteger(newest.response_time_ms), true);
    assert.match(newest.timestamp, ISO);

    const page = await env.call('GET', `/api/services/${service.id}/logs?limit=2&offset=1`, { as: env.admin });
    assert.equal(page.json.total, 3);
    assert.deepEqual(page.json.logs, all.json.logs.slice(1, 3));
  });

  for (const [query, field, message] of [
    ['limit=0', 'limit', 'limit must be an integer from 1 to 1000'],
    ['limit=1001', 'limit', 'limit must be an integer from 1 to 1000'],
    ['limit=abc', 'limit', 'limit must be an integer from 1 to 1000'],
    ['limit=1.5', 'limit', 'limit must be an integer from 1 to 1000'],
    ['offset=-1', 'offset', 'offset must be an integer of 0 or more'],
    ['offset=', 'offset', 'offset must be an integer of 0 or more'],
  ] as const) {
    it(`400 for ${query}`, async () => {
      const service = await createService();
      const response = await env.call('GET', `/api/services/${service.id}/logs?${query}`, { as: env.admin });
      assertError(response, 400, message);
      assert.equal(typeof response.json.fields[field], 'string');
    });
  }

  it('404 for an unknown service', async () => {
    assertError(await env.call('GET', `/api/services/${crypto.randomUUID()}/logs`, { as: env.admin }), 404, 'Service not found');
  });

  it('401 without a session and 403 for a non-admin', async () => {
    const service = await createService();
    assertError(await env.call('GET', `/api/services/${service.id}/logs`), 401, 'Not authenticated');
    assertError(await env.call('GET', `/api/services/${service.id}/logs`, { as: member }), 403, 'Admin access required');
  });
});

describe('access policies and bearer forwarding through the API (design.md §4.7)', () => {
  it('POST stores the policy normalised; POST, GET (one and all) and PUT answer access and forwardAuthorization', async () => {
    const created = await createService({
      access: { groups: [' ops ', 'ops'], emails: ['Ann@Example.COM'], emailDomains: ['Example.org'] },
      forwardAuthorization: true,
    });
    const policy = { groups: ['ops'], emails: ['ann@example.com'], emailDomains: ['example.org'], subjects: [] };
    assert.deepEqual(created.access, policy);
    assert.equal(created.forwardAuthorization, true);
    assert.deepEqual((await env.call('GET', `/api/services/${created.id}`, { as: env.admin })).json, created);
    const listed = (await env.call('GET', '/api/services', { as: env.admin })).json as Array<Record<string, unknown>>;
    assert.deepEqual(listed.find((service) => service.id === created.id), created);
    assert.ok(listed.every((service) => 'access' in service && typeof service.forwardAuthorization === 'boolean'), 'every service has both fields');
    const cleared = await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: { access: { groups: [] }, forwardAuthorization: false } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(cleared.json.access, null);
    assert.equal(cleared.json.forwardAuthorization, false);
  });

  it('400 naming each bad part of a policy in fields, creating nothing', async () => {
    const before = (await env.call('GET', '/api/services', { as: env.admin })).json.length;
    const body = newServiceBody({ access: { emailDomains: ['ann@example.org'], emails: [''], groups: [42], teams: ['x'] }, forwardAuthorization: 'yes' });
    const response = await env.call('POST', '/api/services', { as: env.admin, json: body });
    assert.equal(response.status, 400);
    assert.deepEqual(response.json.fields, {
      'access.emailDomains': 'must be a domain without @ (got "ann@example.org")',
      'access.emails': 'must not contain an empty entry',
      'access.groups': 'must contain only strings',
      'access.teams': 'unknown field',
      forwardAuthorization: 'must be a boolean',
    });
    assertError(await env.call('POST', '/api/services', { as: env.admin, json: newServiceBody({ access: 'ops' }) }), 400, 'Invalid service: access must be an object or null');
    assert.equal((await env.call('GET', '/api/services', { as: env.admin })).json.length, before);
  });

  it('400 fields.access for a policy without requireAuth, on POST and on a PUT that turns requireAuth off', async () => {
    const open = await env.call('POST', '/api/services', { as: env.admin, json: newServiceBody({ requireAuth: false, access: { groups: ['ops'] } }) });
    assertError(open, 400, 'Invalid service: access needs requireAuth');
    assert.deepEqual(open.json.fields, { access: 'needs requireAuth' });
    const created = await createService({ access: { subjects: ['s-1'] } });
    const turnedOff = await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: { requireAuth: false } });
    assertError(turnedOff, 400, 'Invalid service: access needs requireAuth');
    assert.deepEqual(turnedOff.json.fields, { access: 'needs requireAuth' });
    assert.deepEqual((await env.call('GET', `/api/services/${created.id}`, { as: env.admin })).json, created);
  });

  it('the audit log records the policy before and after', async () => {
    const created = await createService({ access: { groups: ['ops'] } });
    await env.call('PUT', `/api/services/${created.id}`, { as: env.admin, json: { access: { groups: ['ops', 'dev'] } } });
    const logs = (await env.call('GET', '/dashboard/logs?limit=5', { as: env.admin })).json.logs as Array<{ action: string; service_id: string; details: string }>;
    const updated = logs.find((entry) => entry.action === 'SERVICE_UPDATED' && entry.service_id === created.id);
    assert.ok(updated);
    assert.deepEqual(JSON.parse(updated.details).changes, {
      access: {
        before: { groups: ['ops'], emails: [], emailDomains: [], subjects: [] },
        after: { groups: ['ops', 'dev'], emails: [], emailDomains: [], subjects: [] },
      },
    });
  });
});

describe('the admin-port API', () => {
  it('serves the same service endpoints', async () => {
    const adminPort = apiClient(env.gw.adminUrl);
    const created = await adminPort('POST', '/api/services', { as: env.admin, json: newServiceBody() });
    assert.equal(created.status, 201, created.text);
    const fetched = await env.call('GET', `/api/services/${created.json.id}`, { as: env.admin });
    assert.deepEqual(fetched.json, created.json);
  });
});
