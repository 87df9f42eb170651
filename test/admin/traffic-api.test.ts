import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AccessLogStore } from '../../admin/access-log/access-log-store.js';
import type { Database } from '../../admin/database.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';
import { apiClient, type ApiResponse } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn, type SignedIn } from '../support/sessions.js';

/** design.md §4.6: `GET /dashboard/traffic` and the per-minute rollups behind it. */

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
type Counts = Record<(typeof CLASSES)[number], number>;

let gw: TestGateway;
let admin: SignedIn;
let call: ReturnType<typeof apiClient>;

before(async () => {
  gw = await startTestGateway();
  admin = await signIn(gw);
  call = apiClient(gw.origin);
});
after(() => gw.close());

async function createService(path: string, targetUrl = 'http://127.0.0.1:9'): Promise<string> {
  const response = await call('POST', '/api/services', { as: admin, json: { name: path, path, targetUrl } });
  assert.equal(response.status, 201, response.text);
  return response.json.id;
}

const traffic = (query: string) => call('GET', `/dashboard/traffic${query}`, { as: admin });

/** Requests per step and status class counted straight from the raw access log, for [from, to). */
function rawCounts(db: Database, serviceId: string | null, series: ApiResponse['json']): Counts[] {
  const from = Date.parse(series.from);
  const step = series.stepSeconds * 1000;
  const rows = db
    .prepare(
      `SELECT CAST((timestamp - ?) / ? AS INTEGER) AS slot, min(max(status_code / 100, 1), 5) AS class, count(*) AS n FROM access_logs
       WHERE timestamp >= ? AND timestamp < ? ${serviceId ? 'AND service_id = ?' : ''} GROUP BY slot, class`,
    )
    .all(from, step, from, Date.parse(series.to), ...(serviceId ? [serviceId] : [])) as { slot: number; class: number; n: number }[];
  const counts = series.points.map(() => ({ '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }));
  for (const row of rows) counts[row.slot]![`${row.class}xx` as keyof Counts] = row.n;
  return counts;
}

const pointCounts = (series: ApiResponse['json']): Counts[] =>
  series.points.map((p: Counts) => Object.fromEntries(CLASSES.map((c) => [c, p[c]])) as Counts);

describe('GET /dashboard/traffic', () => {
  let a: string;
  let b: string;
  const now = Date.now();

  before(async () => {
    a = await createService('/traffic-a');
    b = await createService('/traffic-b');
    const records: AccessLogEntry[] = [];
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
    const store = new AccessLogStore(gw.gateway.db);
    store.insertBatch(records.slice(0, 250));
    // At-least-once delivery: the whole batch again, and an overlapping one; nothing counts twice.
    store.insertBatch(records.slice(0, 250));
    store.insertBatch(records.slice(200));
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
        assert.deepEqual(pointCounts(series), rawCounts(gw.gateway.db, serviceId, series), `${range} ${serviceId ?? 'all'}`);
        for (const point of series.points) {
          assert.equal(point.requests, CLASSES.reduce((sum, c) => sum + point[c], 0));
          assert.equal(point.p50 === null, point.requests === 0);
        }
        assert.ok(series.points.some((p: { requests: number }) => p.requests > 0));
      }
    }
  });

  it('the rollup table equals the raw records grouped by service, minute and status class', () => {
    const db = gw.gateway.db;
    const raw = db
      .prepare(
        `SELECT service_id, minute, sum(c1) AS c1, sum(c2) AS c2, sum(c3) AS c3, sum(c4) AS c4, sum(c5) AS c5 FROM (
           SELECT service_id, timestamp / 60000 AS minute, status_code < 200 AS c1, status_code / 100 = 2 AS c2,
             status_code / 100 = 3 AS c3, status_code / 100 = 4 AS c4, status_code >= 500 AS c5 FROM access_logs
           UNION ALL
           SELECT '*', timestamp / 60000, status_code < 200, status_code / 100 = 2, status_code / 100 = 3,
             status_code / 100 = 4, status_code >= 500 FROM access_logs)
         GROUP BY service_id, minute ORDER BY service_id, minute`,
      )
      .all();
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
    new AccessLogStore(gw.gateway.db).insertBatch(records);
    const series = (await traffic(`?serviceId=${serviceId}`)).json;
    const point = series.points.find((p: { time: string }) => Date.parse(p.time) === minute);
    // 1..100 ms, evenly spread: the exact p50 and p95 are 50 and 95, and both are bucket bounds apart.
    assert.deepEqual({ requests: point.requests, p50: point.p50, p95: point.p95 }, { requests: 100, p50: 50, p95: 95 });
  });

  it('counts traffic that really went through the proxy, 503s of a disabled service included', async () => {
    const upstream: EchoUpstream = await startEchoUpstream();
    try {
      const id = await createService('/through-proxy', upstream.origin);
      const anonymous = apiClient(gw.origin);
      for (let i = 0; i < 6; i++) assert.equal((await anonymous('GET', `/through-proxy/${i}`, { as: admin })).status, 200);
      await call('PATCH', `/api/services/${id}/toggle`, { as: admin, json: { enabled: false } });
      for (let i = 0; i < 2; i++) assert.equal((await anonymous('GET', '/through-proxy/off', { as: admin })).status, 503);
      // Records are batched off the request path: wait until all eight are stored.
      while ((await call('GET', `/api/services/${id}/logs`, { as: admin })).json.total < 8);
      const series = (await traffic(`?serviceId=${id}`)).json;
      const sum = (c: string) => series.points.reduce((n: number, p: Record<string, number>) => n + p[c]!, 0);
      assert.deepEqual({ requests: sum('requests'), ok: sum('2xx'), unavailable: sum('5xx') }, { requests: 8, ok: 6, unavailable: 2 });
      assert.deepEqual(pointCounts(series), rawCounts(gw.gateway.db, id, series));
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
    assert.equal((await call('GET', '/dashboard/traffic')).status, 401);
    const member = await signIn(gw, { sub: 'member', isAdmin: false });
    assert.equal((await call('GET', '/dashboard/traffic', { as: member })).status, 403);
  });
});
