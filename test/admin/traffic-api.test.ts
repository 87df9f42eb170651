import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { eventually } from '../support/eventually.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient, type ApiResponse } from '../support/api-client.js';

/** design.md §4.6: `GET /dashboard/traffic` and the per-minute rollups behind it. */

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
type Counts = Record<(typeof CLASSES)[number], number>;

const env = useAdminSession();

async function createService(path: string, targetUrl = 'http://127.0.0.1:9'): Promise<string> {
  const response = await env.call('POST', '/api/services', { as: env.admin, json: { name: path, path, targetUrl } });
  assert.equal(response.status, 201, response.text);
  return response.json.id;
}

const traffic = (query: string) => env.call('GET', `/dashboard/traffic${query}`, { as: env.admin });

/** What the charts count of a record: its service, status and time. */
type Counted = Pick<AccessLogEntry, 'serviceId' | 'statusCode' | 'timestamp'>;

/** A status code's class as the rollups count it: below 200 is 1xx, 500 and above 5xx. */
const classOf = (statusCode: number): keyof Counts => `${Math.min(Math.max(Math.floor(statusCode / 100), 1), 5)}xx` as keyof Counts;

/** Requests per step and status class counted from `records` (each request once), for [from, to). */
function rawCounts(records: readonly Counted[], serviceId: string | null, series: ApiResponse['json']): Counts[] {
  const from = Date.parse(series.from);
  const to = Date.parse(series.to);
  const step = series.stepSeconds * 1000;
  const counts: Counts[] = series.points.map(() => ({ '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }));
  for (const record of records) {
    if (record.timestamp < from || record.timestamp >= to || (serviceId !== null && record.serviceId !== serviceId)) continue;
    counts[Math.floor((record.timestamp - from) / step)]![classOf(record.statusCode)]++;
  }
  return counts;
}

const pointCounts = (series: ApiResponse['json']): Counts[] =>
  series.points.map((p: Counts) => Object.fromEntries(CLASSES.map((c) => [c, p[c]])) as Counts);

describe('GET /dashboard/traffic', () => {
  let a: string;
  let b: string;
  const now = Date.now();
  /** Every distinct record this suite's `before` stored. */
  const records: AccessLogEntry[] = [];

  before(async () => {
    a = await createService('/traffic-a');
    b = await createService('/traffic-b');
    for (let k = 0; k < 400; k++) {
      records.push({
        eventId: randomUUID(),
        serviceId: k % 4 === 0 ? b : a,
        userId: null,
        path: `/traffic/${k}`,
        method: 'GET',
        statusCode: [200, 204, 301, 404, 500, 101, 499][k % 7]!,
        responseTimeMs: (k * 37) % 900,
        ipAddress: '192.0.2.1',
        // Every 37 s back from now, then a few records from earlier today and two days ago.
        timestamp: k < 300 ? now - k * 37_000 : now - (k - 290) * 3_600_000,
      });
    }
    const writer = env.gw.gateway.accessLogWriter;
    await writer.store(batchOf(records.slice(0, 250)));
    // At-least-once delivery: a shipped batch delivered again is recognised (by its first
    // record's event id, design.md §3.9) and counts nothing twice.
    await writer.store(batchOf(records.slice(0, 250)));
    await writer.store(batchOf(records.slice(250)));
    assert.deepEqual({ stored: writer.totals.stored, duplicates: writer.totals.duplicates, expired: writer.totals.expired }, { stored: 400, duplicates: 250, expired: 0 });
  });

  it('range=1h (the default): 60 one-minute points ending with the current minute', async () => {
    const response = await traffic('');
    assert.equal(response.status, 200);
    const series = response.json;
    assert.equal(series.range, '1h');
    assert.equal(series.serviceId, null);
    assert.equal(series.stepSeconds, 60);
    assert.equal(series.points.length, 60);
    assert.equal(Date.parse(series.to) - Date.parse(series.from), 3_600_000);
    assert.ok(Date.parse(series.to) > Date.now() - 1000 && Date.parse(series.to) <= Date.now() + 60_000);
    series.points.forEach((point: { time: string }, i: number) => assert.equal(Date.parse(point.time), Date.parse(series.from) + i * 60_000));
    assert.deepEqual((await traffic('?range=1h')).json.from, series.from);
  });

  it('range=1d: 288 five-minute points', async () => {
    const series = (await traffic('?range=1d')).json;
    assert.equal(series.stepSeconds, 300);
    assert.equal(series.points.length, 288);
    assert.equal(Date.parse(series.to) - Date.parse(series.from), 86_400_000);
  });

  it('each point equals the counts computed from the raw records, overall and per service', async () => {
    for (const range of ['1h', '1d']) {
      for (const serviceId of [null, a, b]) {
        const series = (await traffic(`?range=${range}${serviceId ? `&serviceId=${serviceId}` : ''}`)).json;
        assert.equal(series.serviceId, serviceId);
        assert.deepEqual(pointCounts(series), rawCounts(records, serviceId, series), `${range} ${serviceId ?? 'all'}`);
        for (const point of series.points) {
          assert.equal(point.requests, CLASSES.reduce((sum, c) => sum + point[c], 0));
          assert.equal(point.p50 === null, point.requests === 0);
        }
        assert.ok(series.points.some((p: { requests: number }) => p.requests > 0));
      }
    }
  });

  it('the rollup table equals the raw records grouped by service, minute and status class', () => {
    const db = env.gw.gateway.db;
    // Per service and for all services ('*'), per minute: the records of each class.
    const grouped = new Map<string, { service_id: string; minute: number; c1: number; c2: number; c3: number; c4: number; c5: number }>();
    for (const record of records) {
      const minute = Math.floor(record.timestamp / 60_000);
      for (const service_id of [record.serviceId, '*']) {
        const key = `${service_id} ${minute}`;
        let row = grouped.get(key);
        if (!row) grouped.set(key, (row = { service_id, minute, c1: 0, c2: 0, c3: 0, c4: 0, c5: 0 }));
        row[`c${classOf(record.statusCode)[0]}` as 'c1']++;
      }
    }
    const raw = [...grouped.values()].sort((x, y) => (x.service_id < y.service_id ? -1 : x.service_id > y.service_id ? 1 : x.minute - y.minute));
    const rollups = db
      .prepare(
        `SELECT service_id, minute, count_1xx AS c1, count_2xx AS c2, count_3xx AS c3, count_4xx AS c4, count_5xx AS c5
         FROM access_rollups ORDER BY service_id, minute`,
      )
      .all();
    assert.ok(raw.length > 100);
    assert.deepEqual(rollups, raw);
  });

  it('p50 and p95 come from the latency histogram of the step', async () => {
    const serviceId = await createService('/latency');
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const records = Array.from({ length: 100 }, (_, i) => ({
      eventId: randomUUID(),
      serviceId,
      userId: null,
      path: '/latency',
      method: 'GET',
      statusCode: 200,
      responseTimeMs: i + 1,
      ipAddress: '192.0.2.1',
      timestamp: minute + i,
    }));
    await env.gw.gateway.accessLogWriter.store(batchOf(records));
    const series = (await traffic(`?serviceId=${serviceId}`)).json;
    const point = series.points.find((p: { time: string }) => Date.parse(p.time) === minute);
    // 1..100 ms, evenly spread: the exact p50 and p95 are 50 and 95, and both are bucket bounds apart.
    assert.deepEqual({ requests: point.requests, p50: point.p50, p95: point.p95 }, { requests: 100, p50: 50, p95: 95 });
  });

  it('counts traffic that really went through the proxy, 503s of a disabled service included', async () => {
    const upstream: EchoUpstream = await startEchoUpstream();
    try {
      const id = await createService('/through-proxy', upstream.origin);
      const anonymous = apiClient(env.gw.origin);
      for (let i = 0; i < 6; i++) assert.equal((await anonymous('GET', `/through-proxy/${i}`, { as: env.admin })).status, 200);
      await env.call('PATCH', `/api/services/${id}/toggle`, { as: env.admin, json: { enabled: false } });
      for (let i = 0; i < 2; i++) assert.equal((await anonymous('GET', '/through-proxy/off', { as: env.admin })).status, 503);
      // Records are batched off the request path: wait until all eight are stored.
      let stored: ApiResponse['json'];
      await eventually('the eight records stored', async () => (stored = (await env.call('GET', `/api/services/${id}/logs`, { as: env.admin })).json).total >= 8);
      assert.equal(stored.total, 8);
      const series = (await traffic(`?serviceId=${id}`)).json;
      const sum = (c: string) => series.points.reduce((n: number, p: Record<string, number>) => n + p[c]!, 0);
      assert.deepEqual({ requests: sum('requests'), ok: sum('2xx'), unavailable: sum('5xx') }, { requests: 8, ok: 6, unavailable: 2 });
      // The records the proxy made of these eight requests (their times are the proxy's): as the access-log API lists them.
      const proxied: Counted[] = stored.logs.map((log: { status_code: number; timestamp: string }) => ({ serviceId: id, statusCode: log.status_code, timestamp: Date.parse(log.timestamp) }));
      assert.deepEqual(pointCounts(series), rawCounts(proxied, id, series));
    } finally {
      await upstream.close();
    }
  });

  it('400 on a bad range or serviceId, 404 for an unknown service, and the admin guards', async () => {
    const bad = await traffic('?range=2h');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, { error: 'range must be one of 1h, 1d', fields: { range: 'must be one of 1h, 1d' } });
    const badId = await traffic('?serviceId=not-a-uuid');
    assert.equal(badId.status, 400);
    assert.deepEqual(badId.json.fields, { serviceId: 'must be a service id (a UUID)' });
    assert.equal((await traffic('?range=week&serviceId=x')).json.error, 'range must be one of 1h, 1d; serviceId must be a service id (a UUID)');
    const unknown = await traffic(`?serviceId=${randomUUID()}`);
    assert.deepEqual({ status: unknown.status, body: unknown.json }, { status: 404, body: { error: 'Service not found' } });
    assert.equal((await env.call('GET', '/dashboard/traffic')).status, 401);
    const member = await env.signIn({ sub: 'member', isAdmin: false });
    assert.equal((await env.call('GET', '/dashboard/traffic', { as: member })).status, 403);
  });
});
