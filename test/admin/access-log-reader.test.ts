/**
 * The access log's reading side (AccessLogReader.listForService) over day files: every filter
 * (status class, method as the API's query gives it, path substring, user, from/to, also cutting a
 * minute in the middle) returns exactly the matching records newest first with an exact total;
 * the row-by-row filters (method, path, user) examine the newest RESIDUAL_SCAN_LIMIT candidates and
 * say `partial` when there are more; and totals come from the per-minute counts, whatever the
 * log holds (speed itself is measured in bench/, not here).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { parseAccessLogQuery, type AccessLogFilter } from '../../admin/access-log/reading/access-log-filter.js';
import { RESIDUAL_SCAN_LIMIT, type AccessLogPage } from '../../admin/access-log/reading/access-log-page.js';
import { dayPath, listDays } from '../../admin/access-log/day-files.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { tempDatabase, type TempDatabase } from '../support/temp-database.js';

const SERVICE = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const MIDNIGHT = Date.parse('2025-03-02T00:00:00.000Z');
const MINUTE = 60_000;

/** What a page should hold: `records` (newest first) that pass `filter`, paged; `response_time_ms` is each record's number. */
function expectedPage(records: readonly AccessLogEntry[], filter: AccessLogFilter, limit: number, offset: number): { ns: number[]; total: number } {
  const matches = records.filter(
    (r) =>
      (filter.statusClass === undefined || Math.floor(r.statusCode / 100) === filter.statusClass) &&
      (filter.method === undefined || r.method === filter.method) &&
      (filter.pathContains === undefined || r.path.includes(filter.pathContains)) &&
      (filter.userId === undefined || r.userId === filter.userId) &&
      (filter.from === undefined || r.timestamp >= filter.from) &&
      (filter.to === undefined || r.timestamp < filter.to),
  );
  return { ns: matches.slice(offset, offset + limit).map((r) => r.responseTimeMs), total: matches.length };
}

const ns = (page: AccessLogPage) => page.logs.map((log) => log.response_time_ms);
/** The filter the API reads from a query string such as `status=5xx&method=get`. */
const query = (text: string) => parseAccessLogQuery(new URLSearchParams(text)).filter;

describe('filters', () => {
  // 600 records of SERVICE, one a second from 5 minutes before midnight to 5 minutes after, and
  // 120 of OTHER among them; status, method, user and path cycle. A third of the paths are
  // distinct (stored inline), the others repeat (stored through each day's dictionary).
  let t: TempDatabase;
  const newestFirst: AccessLogEntry[] = [];

  const record = (n: number, serviceId: string): AccessLogEntry => ({
    eventId: `${serviceId}-${n}`,
    serviceId,
    userId: n % 4 === 0 ? null : `user-${n % 4}`,
    path: `/shop/${n % 2 === 0 ? 'cart' : 'orders'}/${n % 3 === 0 ? n : 'popular'}?page=${n % 7}`,
    method: ['GET', 'POST', 'DELETE'][n % 3]!,
    statusCode: [200, 201, 302, 404, 503][n % 5]!,
    responseTimeMs: n,
    ipAddress: '192.0.2.7',
    timestamp: MIDNIGHT - 5 * MINUTE + n * 1000,
  });

  before(() => {
    t = tempDatabase();
    const own = Array.from({ length: 600 }, (_, n) => record(n, SERVICE));
    for (let i = 0; i < 600; i += 100) {
      t.store.insertBatch([...own.slice(i, i + 100), ...Array.from({ length: 20 }, (_, k) => record(i + k * 5, OTHER))]);
    }
    newestFirst.push(...own.reverse());
  });
  after(() => t.close());

  /** Checks a page of SERVICE's log for `filter` against the records, and returns it. */
  const check = (filter: AccessLogFilter, limit = 1000, offset = 0): AccessLogPage => {
    const page = t.accessLogs.listForService(SERVICE, limit, offset, filter);
    const want = expectedPage(newestFirst, filter, limit, offset);
    assert.deepEqual({ ns: ns(page), total: page.total }, want, JSON.stringify(filter));
    assert.equal(page.partial, undefined);
    return page;
  };

  it('without filters: every record of the service, newest first, across both days', () => {
    assert.equal(check({}).total, 600);
    check({}, 10, 295); // across midnight
  });

  it('status class: exact totals per class, pages within a class', () => {
    for (const status of ['2xx', '3xx', '4xx', '5XX']) {
      const page = check(query(`status=${status}`));
      assert.ok(page.logs.every((log) => Math.floor(log.status_code / 100) === Number(status[0])));
    }
    check(query('status=2xx'), 25, 110);
  });

  it('method: any case in the query, matched exactly', () => {
    assert.equal(check(query('method=delete')).total, 200);
    assert.ok(check(query('method=Post'), 7, 90).logs.every((log) => log.method === 'POST'));
    assert.equal(check(query('method=PATCH')).total, 0);
  });

  it('path: a case-sensitive substring of the path with its query', () => {
    assert.equal(check({ pathContains: '/cart/' }).total, 300);
    assert.equal(check({ pathContains: '?page=3' }).total, 86);
    check({ pathContains: 'orders/1' }, 5, 3);
    assert.equal(check({ pathContains: '/popular?page=2' }).total, 57, 'repeated paths match too');
    assert.equal(check({ pathContains: '/CART/' }).total, 0);
  });

  it('user: the subject exactly, never anonymous records or a prefix', () => {
    assert.equal(check({ userId: 'user-1' }).total, 150);
    assert.equal(check({ userId: 'user' }).total, 0);
    assert.equal(check({ userId: 'nobody' }).total, 0);
    for (const offset of [0, 1, 74, 75, 76, 149, 150]) check({ userId: 'user-1' }, 3, offset); // across midnight
    const cut = { userId: 'user-2', from: MIDNIGHT - 3 * MINUTE + 20_500, to: MIDNIGHT + 2 * MINUTE + 7_250 };
    for (const offset of [0, 30, 60]) check(cut, 5, offset);
    check({ userId: 'user-2', statusClass: 2 });
  });

  it('from/to on whole minutes and on midnight', () => {
    assert.equal(check({ from: MIDNIGHT - 2 * MINUTE, to: MIDNIGHT + 3 * MINUTE }).total, 300);
    assert.equal(check({ to: MIDNIGHT }).total, 300);
    assert.equal(check({ from: MIDNIGHT }).total, 300);
    assert.equal(check({ from: MIDNIGHT + 20 * MINUTE }).total, 0);
  });

  it('from/to that cut minutes in the middle: exact totals, alone and with a status class, at any offset', () => {
    const cut = { from: MIDNIGHT - 3 * MINUTE + 20_500, to: MIDNIGHT + 2 * MINUTE + 7_250 };
    assert.equal(check(cut).total, 287);
    for (const statusClass of [2, 3, 4, 5]) check({ ...cut, statusClass });
    for (const offset of [0, 39, 40, 41, 150, 285, 286, 287]) check(cut, 3, offset);
    check({ from: MIDNIGHT - 1, to: MIDNIGHT + 1 }); // one ms either side of midnight
    check({ from: MIDNIGHT + 30_001, to: MIDNIGHT + 30_999 }); // inside one second, no record
  });

  it('filters together', () => {
    const filter = { ...query('status=5xx&method=delete&user=user-3'), pathContains: 'orders', from: MIDNIGHT - 4 * MINUTE + 1, to: MIDNIGHT + 4 * MINUTE - 1 };
    assert.ok(check(filter).total > 0);
    check({ statusClass: 2, method: 'GET', from: MIDNIGHT - 90_000 }, 4, 10);
  });

  it("never mixes in another service's records", () => {
    assert.equal(t.accessLogs.listForService(OTHER, 1000, 0).total, 120);
    assert.ok(t.accessLogs.listForService(OTHER, 1000, 0, { method: 'GET' }).logs.every((log) => log.service_id === OTHER));
  });
});

describe(`the scan window (${RESIDUAL_SCAN_LIMIT.toLocaleString('en')} records) and totals at 200,000 records`, () => {
  // Record i at 30 ms steps: 150,000 before midnight, 50,000 after. POST every 10th, 503 every
  // 25th, user-(i % 7); paths all distinct.
  const COUNT = 200_000;
  const START = MIDNIGHT - 150_000 * 30;
  let t: TempDatabase;
  const at = (i: number) => START + i * 30;

  before(() => {
    t = tempDatabase();
    for (let first = 0; first < COUNT; first += 100_000) {
      t.store.insertBatch(
        Array.from({ length: 100_000 }, (_, k) => {
          const i = first + k;
          return {
            eventId: `big-${i}`,
            serviceId: SERVICE,
            userId: `user-${i % 7}`,
            path: `/big/${i}`,
            method: i % 10 === 0 ? 'POST' : 'GET',
            statusCode: i % 25 === 0 ? 503 : 200,
            responseTimeMs: i,
            ipAddress: '192.0.2.8',
            timestamp: at(i),
          };
        }),
      );
    }
  });
  after(() => t.close());

  /** The record numbers from `i` down to 0 that pass `keep`, newest first. */
  const newest = (keep: (i: number) => boolean, from = COUNT - 1, count = Infinity): number[] => {
    const kept: number[] = [];
    for (let i = from; i >= 0 && kept.length < count; i--) if (keep(i)) kept.push(i);
    return kept;
  };
  const list = (limit: number, offset: number, filter: AccessLogFilter = {}) => t.accessLogs.listForService(SERVICE, limit, offset, filter);

  it('an unfiltered total is every record, as the per-minute counts of the day files say; deep pages are right', () => {
    let counted = 0;
    for (const day of listDays(t.dir)) {
      const file = new BetterSqlite3(dayPath(t.dir, day), { readonly: true });
      counted += file.prepare('SELECT sum(count) FROM minute_counts WHERE service = (SELECT code FROM strings WHERE text = ?)').pluck().get(SERVICE) as number;
      file.close();
    }
    assert.equal(counted, COUNT);
    const page = list(3, 0);
    assert.equal(page.total, COUNT);
    assert.equal(page.partial, undefined);
    assert.deepEqual(ns(page), [199_999, 199_998, 199_997]);
    assert.deepEqual(ns(list(5, 149_998)), [50_001, 50_000, 49_999, 49_998, 49_997]);
    assert.deepEqual(ns(list(10, COUNT - 4)), [3, 2, 1, 0]);
    assert.equal(list(1, 0, { statusClass: 5 }).total, COUNT / 25);
    assert.deepEqual(ns(list(3, 7_000, { statusClass: 5 })), newest((i) => i % 25 === 0).slice(7_000, 7_003));
  });

  it('method over more candidates than the window: partial, and the total counts the window only', () => {
    const window = newest(() => true, COUNT - 1, RESIDUAL_SCAN_LIMIT);
    const posts = window.filter((i) => i % 10 === 0);
    const page = list(4, 0, { method: 'POST' });
    assert.equal(page.partial, true);
    assert.equal(page.total, posts.length);
    assert.ok(page.total < COUNT / 10, 'a lower bound');
    assert.deepEqual(ns(page), posts.slice(0, 4));
    assert.deepEqual(ns(list(4, posts.length - 2, { method: 'POST' })), posts.slice(-2), 'the window ends across midnight');
  });

  it('exactly as many candidates as the window: exact, not partial; one more: partial', () => {
    const from = at(COUNT - RESIDUAL_SCAN_LIMIT);
    const exact = list(2, 0, { method: 'POST', from });
    assert.equal(exact.partial, undefined);
    assert.equal(exact.total, RESIDUAL_SCAN_LIMIT / 10);
    assert.equal(list(2, 0, { method: 'POST', from: from - 30 }).partial, true);
  });

  it('fewer candidates than the window after the status class or user: exact totals, not partial', () => {
    const errors = list(5, 100, { statusClass: 5, method: 'POST' });
    assert.equal(errors.partial, undefined);
    assert.equal(errors.total, COUNT / 50);
    assert.deepEqual(ns(errors), newest((i) => i % 50 === 0).slice(100, 105));

    const user = list(3, 0, { userId: 'user-3', pathContains: '/big/1' });
    assert.equal(user.partial, undefined);
    const want = newest((i) => i % 7 === 3 && `/big/${i}`.includes('/big/1'));
    assert.equal(user.total, want.length);
    assert.deepEqual(ns(user), want.slice(0, 3));
  });
});
