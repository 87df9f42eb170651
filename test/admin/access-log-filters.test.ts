import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { useAdminSession } from '../support/admin-session.js';
import type { ApiResponse } from '../support/api-client.js';

/** design.md §4.6: the filters of `GET /api/services/:id/logs` through the running gateway. */

const T0 = Date.parse('2025-03-01T12:00:00.000Z');

// The records are dated March 2025: keep every day, or the writer would count them expired.
let serviceId: string;
let otherId: string;

/** Record `n`: one second after T0 per n, cycling status, method, path and user. */
function record(n: number, service: string, overrides: Partial<AccessLogEntry> = {}): AccessLogEntry {
  return {
    eventId: randomUUID(),
    serviceId: service,
    userId: n % 3 === 0 ? null : `user-${n % 3}`,
    path: `/shop/${n % 2 === 0 ? 'cart' : 'orders'}/${n}?page=${n}`,
    method: ['GET', 'POST', 'DELETE'][n % 3]!,
    statusCode: [200, 201, 302, 404, 503][n % 5]!,
    responseTimeMs: n,
    ipAddress: '192.0.2.7',
    timestamp: T0 + n * 1000,
    ...overrides,
  };
}

/** The `response_time_ms` (= n) of each record of a logs answer, in order. */
const ns = (response: ApiResponse): number[] => response.json.logs.map((log: { response_time_ms: number }) => log.response_time_ms);
const logs = (query: string) => env.call('GET', `/api/services/${serviceId}/logs${query}`, { as: env.admin });
/** What the filter should return: records 1..30 that pass `keep`, newest first. */
const expected = (keep: (n: number) => boolean) => Array.from({ length: 30 }, (_, i) => 30 - i).filter(keep);

const env = useAdminSession({ env: { ACCESS_LOG_RETENTION_DAYS: '36500' } }, async (env) => {
  const create = (path: string) =>
    env.call('POST', '/api/services', { as: env.admin, json: { name: path, path, targetUrl: 'http://127.0.0.1:9' } });
  serviceId = (await create('/shop')).json.id;
  otherId = (await create('/other')).json.id;
  // Stored as if the data plane had shipped them; resolves once committed (then readable).
  const writer = env.gw.gateway.accessLogWriter;
  await writer.store(batchOf(Array.from({ length: 30 }, (_, i) => record(i + 1, serviceId))));
  await writer.store(batchOf(Array.from({ length: 10 }, (_, i) => record(i + 1, otherId))));
  assert.deepEqual({ stored: writer.totals.stored, expired: writer.totals.expired }, { stored: 40, expired: 0 });
});

describe('GET /api/services/:id/logs filters', () => {
  it('without filters: every record of the service, newest first', async () => {
    const response = await logs('');
    assert.equal(response.status, 200);
    assert.equal(response.json.total, 30);
    assert.deepEqual(ns(response), expected(() => true));
    assert.equal(response.json.partial, undefined);
  });

  it('status=<class> keeps that status class; total counts the matches', async () => {
    for (const [status, codes] of [['2xx', [200, 201]], ['3xx', [302]], ['4xx', [404]], ['5xx', [503]]] as const) {
      const response = await logs(`?status=${status}`);
      assert.equal(response.status, 200);
      const want = expected((n) => (codes as readonly number[]).includes([200, 201, 302, 404, 503][n % 5]!));
      assert.deepEqual(ns(response), want, status);
      assert.equal(response.json.total, want.length);
    }
    assert.deepEqual(ns(await logs('?status=5XX')), expected((n) => n % 5 === 4), 'the class is case-insensitive');
  });

  it('method matches case-insensitively', async () => {
    assert.deepEqual(ns(await logs('?method=post')), expected((n) => n % 3 === 1));
    assert.deepEqual(ns(await logs('?method=PATCH')), []);
  });

  it('path matches a substring of the path with its query, case-sensitively', async () => {
    assert.deepEqual(ns(await logs('?path=%2Fcart%2F')), expected((n) => n % 2 === 0));
    assert.deepEqual(ns(await logs('?path=page%3D1')), expected((n) => String(n).startsWith('1')));
    assert.deepEqual(ns(await logs('?path=CART')), []);
    assert.deepEqual(ns(await logs('?path=%25')), [], 'no LIKE wildcards: % is a literal character');
  });

  it('user matches a subject exactly', async () => {
    assert.deepEqual(ns(await logs('?user=user-1')), expected((n) => n % 3 === 1));
    assert.deepEqual(ns(await logs('?user=user')), []);
  });

  it('from is inclusive, to exclusive; offsets and bare dates are understood', async () => {
    const at = (n: number) => new Date(T0 + n * 1000).toISOString();
    assert.deepEqual(ns(await logs(`?from=${at(25)}`)), [30, 29, 28, 27, 26, 25]);
    assert.deepEqual(ns(await logs(`?to=${at(3)}`)), [2, 1]);
    assert.deepEqual(ns(await logs(`?from=${at(10)}&to=${at(13)}`)), [12, 11, 10]);
    assert.deepEqual(ns(await logs('?from=2025-03-01T13:00:10%2B01:00&to=2025-03-01T12:00:12Z')), [11, 10], '+01:00 offset');
    assert.equal((await logs('?from=2025-03-01&to=2025-03-02')).json.total, 30);
    assert.equal((await logs('?from=2025-03-02')).json.total, 0);
  });

  it('filters combine, page with limit and offset, and only see the service’s own records', async () => {
    const want = expected((n) => n % 3 === 1 && n % 2 === 0 && n >= 5);
    const query = `?method=POST&path=cart&from=${new Date(T0 + 5000).toISOString()}`;
    const first = await logs(`${query}&limit=2`);
    assert.deepEqual(ns(first), want.slice(0, 2));
    assert.equal(first.json.total, want.length);
    assert.deepEqual(ns(await logs(`${query}&limit=2&offset=2`)), want.slice(2, 4));
    const other = await env.call('GET', `/api/services/${otherId}/logs?status=2xx`, { as: env.admin });
    assert.deepEqual(ns(other), [10, 6, 5, 1]);
  });

  it('empty parameters do not filter (as a GET form sends them)', async () => {
    const response = await logs('?status=&method=&path=&user=&from=&to=');
    assert.equal(response.status, 200);
    assert.equal(response.json.total, 30);
  });

  it('400 naming each bad parameter, with fields', async () => {
    const cases: [string, Record<string, string>][] = [
      ['?status=6xx', { status: 'must be one of 2xx, 3xx, 4xx, 5xx' }],
      ['?status=200', { status: 'must be one of 2xx, 3xx, 4xx, 5xx' }],
      ['?method=GE%20T', { method: 'must be an HTTP method (a token of at most 32 characters, such as GET)' }],
      ['?from=yesterday', { from: 'must be an ISO 8601 date-time with a time zone, such as 2025-01-31T09:00:00Z' }],
      ['?from=2025-03-01T12:00:00', { from: 'must be an ISO 8601 date-time with a time zone, such as 2025-01-31T09:00:00Z' }],
      ['?to=2025-02-30', { to: 'must be an ISO 8601 date-time with a time zone, such as 2025-01-31T09:00:00Z' }],
      ['?from=2025-03-02&to=2025-03-01', { to: 'must be after from' }],
      [`?path=${'x'.repeat(2049)}`, { path: 'must be at most 2048 characters' }],
      [`?user=${'u'.repeat(256)}`, { user: 'must be at most 255 characters' }],
    ];
    for (const [query, fields] of cases) {
      const response = await logs(query);
      assert.equal(response.status, 400, query);
      assert.deepEqual(response.json.fields, fields, query);
      const [name, rule] = Object.entries(fields)[0]!;
      assert.equal(response.json.error, `${name} ${rule}`, query);
    }
    const both = await logs('?status=oops&method=%3F');
    assert.equal(both.status, 400);
    assert.match(both.json.error, /^status must be one of 2xx, 3xx, 4xx, 5xx; method must be an HTTP method/);
    const pagingToo = await logs('?status=6xx&limit=0&offset=-1');
    assert.equal(pagingToo.status, 400);
    assert.deepEqual(Object.keys(pagingToo.json.fields).sort(), ['limit', 'offset', 'status'], 'paging and filters are named together');
  });

  it('filters keep the endpoint’s guards: 401, 403, 404', async () => {
    assert.equal((await env.call('GET', `/api/services/${serviceId}/logs?status=2xx`)).status, 401);
    const member = await env.signIn({ sub: 'member', isAdmin: false });
    assert.equal((await env.call('GET', `/api/services/${serviceId}/logs?status=2xx`, { as: member })).status, 403);
    assert.equal((await env.call('GET', `/api/services/${randomUUID()}/logs?status=2xx`, { as: env.admin })).status, 404);
  });
});
