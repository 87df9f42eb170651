/**
 * The access log's storing side (AccessLogStore) as its reader shows it: records come back in the
 * API's shape, newest first by timestamp however they arrived, paged with `limit`/`offset` and a
 * `total`; a re-delivered batch is stored once; each UTC day has its own file (a batch spanning
 * midnight lands in two and reads back in one order); a path seen once (stored inline) and a
 * repeated one (stored through the day's dictionary) read back alike; deep offsets land on the
 * right record.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { afterEach, beforeEach, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import type { AccessLogRecord } from '../../admin/access-log/reading/access-log-page.js';
import { createDayFile, dayOf, dayPath } from '../../admin/access-log/day-files.js';
import { DAY_SCHEMA } from '../../admin/access-log/day-schema.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { tempDatabase, type TempDatabase } from '../support/temp-database.js';

const SERVICE = randomUUID();
const OTHER = randomUUID();
const T0 = Date.parse('2025-01-02T03:04:05.678Z');
const MIDNIGHT = Date.parse('2025-01-02T00:00:00.000Z');

let t: TempDatabase;

beforeEach(() => {
  t = tempDatabase();
});
afterEach(() => t.close());

/** An access-log entry for request number `n` (distinct path, time and event id; `response_time_ms` = n). */
function entry(n: number, overrides: Partial<AccessLogEntry> = {}): AccessLogEntry {
  return {
    eventId: randomUUID(),
    serviceId: SERVICE,
    userId: 'user-sub',
    path: `/orders/${n}?x=1`,
    method: 'GET',
    statusCode: 200,
    responseTimeMs: n,
    ipAddress: '198.51.100.4',
    timestamp: T0 + n * 1000,
    ...overrides,
  };
}

const list = (limit = 100, offset = 0, service = SERVICE) => t.accessLogs.listForService(service, limit, offset);
/** The `response_time_ms` (= n) of a page's records, in order. */
const ns = (logs: AccessLogRecord[]) => logs.map((log) => log.response_time_ms);
/** The names of the day files. */
const dayFiles = () => readdirSync(t.dir).filter((name) => name.endsWith('.sqlite')).sort();

describe('AccessLogStore', () => {
  it('records the target that answered, in a day file made before pools too', () => {
    const before = DAY_SCHEMA.replace(',\n    target INTEGER', '');
    assert.notEqual(before, DAY_SCHEMA);
    createDayFile(t.dir, dayOf(T0), before);
    assert.deepEqual(list().logs, [], 'a file without the column reads');
    t.store.insertBatch([entry(1, { target: 'http://10.0.0.9:8080/base' }), entry(2, { target: null }), entry(3)]);
    assert.deepEqual(list().logs.map((log) => log.target), [null, null, 'http://10.0.0.9:8080/base']);
  });

  it('records the host a request was routed by; a day file made before hosts reads null, then gets the column', () => {
    const before = DAY_SCHEMA.replace(',\n    host INTEGER', '');
    assert.notEqual(before, DAY_SCHEMA);
    createDayFile(t.dir, dayOf(T0), before);
    // One record written by the version before hosts: its row and the counts the reader pages by.
    const time = T0 - MIDNIGHT;
    const old = new BetterSqlite3(dayPath(t.dir, dayOf(T0)));
    old.prepare('INSERT INTO strings (code, text) VALUES (1, ?), (2, ?), (3, ?), (4, ?)').run(SERVICE, 'user-sub', 'GET', '198.51.100.4');
    old.prepare('INSERT INTO records (time, service, user, path, method, status, duration, ip) VALUES (?, 1, 2, ?, 3, 200, 0, 4)').run(time, '/old');
    old.prepare('INSERT INTO minute_counts VALUES (1, 2, ?, 1)').run(Math.floor(time / 60_000));
    old.exec('INSERT INTO service_counts VALUES (1, 2, 1); INSERT INTO user_counts VALUES (1, 2, 1)');
    old.close();
    assert.deepEqual(list().logs.map((log) => [log.path, log.host]), [['/old', null]], 'a record of a file without the column reads null');
    assert.deepEqual(t.accessLogs.listForService(SERVICE, 100, 0, { host: 'app.example.com' }).logs, [], 'and no host filter matches it');

    t.store.insertBatch([entry(1, { host: 'app.example.com' }), entry(2, { host: null }), entry(3), entry(4, { host: 'a.apps.example.com' })]);
    const file = new BetterSqlite3(dayPath(t.dir, dayOf(T0)), { readonly: true });
    const columns = (file.pragma('table_info(records)') as { name: string }[]).map((column) => column.name);
    file.close();
    assert.ok(columns.includes('host'), 'the writer added the column');
    assert.deepEqual(list().logs.map((log) => [log.path, log.host]), [
      ['/orders/4?x=1', 'a.apps.example.com'],
      ['/orders/3?x=1', null],
      ['/orders/2?x=1', null],
      ['/orders/1?x=1', 'app.example.com'],
      ['/old', null],
    ]);
    const byHost = t.accessLogs.listForService(SERVICE, 100, 0, { host: 'app.example.com' });
    assert.deepEqual([byHost.total, byHost.logs.map((log) => log.path)], [1, ['/orders/1?x=1']]);
  });

  it('stores a batch and shows records in the interface.md §2.2 shape with ISO timestamps', () => {
    t.store.insertBatch([entry(1, { userId: null, method: 'POST', statusCode: 401 })]);
    const { logs, total } = list();
    assert.equal(total, 1);
    assert.deepEqual(logs, [
      {
        id: logs[0]!.id,
        service_id: SERVICE,
        user_id: null,
        path: '/orders/1?x=1',
        method: 'POST',
        status_code: 401,
        response_time_ms: 1,
        ip_address: '198.51.100.4',
        timestamp: '2025-01-02T03:04:06.678Z',
        target: null,
        host: null,
        protocol: 'http/1.1',
        count: 1,
        path_truncated: false,
        request_id: null,
        trace_id: null,
        span_id: null,
      },
    ]);
    assert.ok(Number.isSafeInteger(logs[0]!.id));
    assert.equal(t.store.totals.stored, 1);
  });

  it('lists newest first (by timestamp), across batches', () => {
    t.store.insertBatch([entry(1), entry(2)]);
    t.store.insertBatch([entry(3)]);
    assert.deepEqual(ns(list().logs), [3, 2, 1]);
  });

  it('lists by timestamp, not arrival: late records take their place in time, ties newest-arrived first', () => {
    t.store.insertBatch([entry(5), entry(1)]);
    t.store.insertBatch([entry(3), entry(4)]);
    t.store.insertBatch([entry(2), entry(6, { timestamp: T0 + 3000 })]);
    assert.deepEqual(ns(list().logs), [5, 4, 6, 3, 2, 1]);
  });

  it('pages with limit and offset while total counts every record of the service', () => {
    t.store.insertBatch(Array.from({ length: 7 }, (_, i) => entry(i + 1)));
    const page = list(3, 2);
    assert.equal(page.total, 7);
    assert.deepEqual(ns(page.logs), [5, 4, 3]);
    assert.deepEqual(ns(list(3, 6).logs), [1]);
    assert.deepEqual(list(3, 7), { logs: [], total: 7 });
  });

  it("shows only the service's own records", () => {
    t.store.insertBatch([entry(1), entry(2, { serviceId: OTHER }), entry(3)]);
    const { logs, total } = list();
    assert.equal(total, 2);
    assert.deepEqual(ns(logs), [3, 1]);
    assert.ok(logs.every((log) => log.service_id === SERVICE));
    assert.deepEqual(ns(list(100, 0, OTHER).logs), [2]);
    assert.deepEqual(list(100, 0, randomUUID()), { logs: [], total: 0 });
  });

  it('stores a re-delivered batch once, alone or among new batches, and counts the duplicates', () => {
    const batch = [entry(1), entry(2)];
    t.store.insertBatch(batch);
    t.store.insertBatch(batch);
    t.store.storeBatches([[entry(3)], batch]);
    assert.deepEqual(ns(list().logs), [3, 2, 1]);
    assert.equal(list().total, 3);
    assert.deepEqual({ stored: t.store.totals.stored, duplicates: t.store.totals.duplicates }, { stored: 3, duplicates: 4 });
  });

  it('accepts an empty batch', () => {
    t.store.insertBatch([]);
    t.store.storeBatches([[], []]);
    assert.equal(list().total, 0);
    assert.equal(t.store.totals.stored, 0);
  });

  it('stores none of a batch when one record breaks the schema, and stores the next batch', () => {
    const broken = entry(2, { statusCode: null as unknown as number });
    assert.throws(() => t.store.insertBatch([entry(1), broken, entry(3)]), /NOT NULL/);
    assert.equal(list().total, 0);
    t.store.insertBatch([entry(4), entry(5)]);
    assert.deepEqual(ns(list().logs), [5, 4]);
  });

  it('puts the records of a batch that spans midnight UTC in two day files, read back in one order', () => {
    const at = (ms: number, n: number) => entry(n, { timestamp: MIDNIGHT + ms });
    const batch = [at(-2000, 1), at(1000, 4), at(-1, 2), at(0, 3)];
    t.store.insertBatch(batch);
    assert.deepEqual(dayFiles(), ['2025-01-01.sqlite', '2025-01-02.sqlite']);
    const { logs, total } = list();
    assert.equal(total, 4);
    assert.deepEqual(ns(logs), [4, 3, 2, 1]);
    assert.deepEqual(
      logs.map((log) => log.timestamp),
      ['2025-01-02T00:00:01.000Z', '2025-01-02T00:00:00.000Z', '2025-01-01T23:59:59.999Z', '2025-01-01T23:59:58.000Z'],
    );
    assert.deepEqual(ns(list(2, 1).logs), [3, 2], 'a page across the two days');

    t.store.insertBatch(batch);
    assert.equal(list().total, 4, 're-delivered, it is stored in neither day again');
  });

  it('reads a path seen once (stored inline) and repeated paths (stored through the dictionary) back as the same text', () => {
    const paths = ['/once?id=1', '/home', '/home', '/home', '/cart?step=2'];
    t.store.insertBatch(paths.map((path, i) => entry(i + 1, { path })));
    t.store.insertBatch([entry(6, { path: '/cart?step=2' }), entry(7, { path: '/home' })]);

    // Both ways of storing a path were used.
    const file = new BetterSqlite3(dayPath(t.dir, dayOf(T0)), { readonly: true });
    const kinds = file.prepare("SELECT typeof(path) = 'text' AS inline, count(*) AS n FROM records GROUP BY 1 ORDER BY 1").all();
    file.close();
    assert.deepEqual(kinds, [{ inline: 0, n: 4 }, { inline: 1, n: 3 }]);

    const { logs } = list();
    assert.deepEqual(
      logs.map((log) => [log.response_time_ms, log.path]),
      [[7, '/home'], [6, '/cart?step=2'], [5, '/cart?step=2'], [4, '/home'], [3, '/home'], [2, '/home'], [1, '/once?id=1']],
    );
  });

  it('stores a late batch for an older day while two newer days are open', () => {
    const DAY = 86_400_000;
    t.store.insertBatch([entry(3, { timestamp: T0 + 2 * DAY })]);
    t.store.insertBatch([entry(2, { timestamp: T0 + DAY })]);
    t.store.insertBatch([entry(1)]);
    assert.deepEqual(ns(list().logs), [3, 2, 1]);
  });

  it('lands deep offsets on the right record: 5,000 records over several minutes and two days, every page of 1,000', () => {
    // Timestamps from 3 minutes before midnight to 3 minutes after, some shared; stored shuffled.
    const COUNT = 5_000;
    let seed = 42;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const records = Array.from({ length: COUNT }, (_, i) =>
      entry(i, { path: `/deep/${i}`, timestamp: MIDNIGHT - 180_000 + Math.floor(random() * 360_000 / 7) * 7 }),
    );
    for (let i = records.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [records[i], records[j]] = [records[j]!, records[i]!];
    }
    for (let i = 0; i < COUNT; i += 500) t.store.insertBatch(records.slice(i, i + 500));

    // Newest first by timestamp; equal timestamps (always the same day) newest arrival first.
    const arrival = new Map(records.map((record, i) => [record.path, i]));
    const expected = [...records]
      .sort((a, b) => b.timestamp - a.timestamp || arrival.get(b.path)! - arrival.get(a.path)!)
      .map((record) => `${new Date(record.timestamp).toISOString()} ${record.path}`);
    assert.ok(new Set(records.map((r) => r.timestamp)).size < COUNT, 'some timestamps are shared');
    assert.deepEqual(dayFiles(), ['2025-01-01.sqlite', '2025-01-02.sqlite']);

    const seen = new Set<number>();
    for (const [offset, limit] of [[0, 1000], [1000, 1000], [2000, 1000], [3000, 1000], [4000, 1000], [2499, 3], [4998, 10]] as const) {
      const page = list(limit, offset);
      assert.equal(page.total, COUNT);
      assert.deepEqual(page.logs.map((log) => `${log.timestamp} ${log.path}`), expected.slice(offset, offset + limit), `offset ${offset}`);
      for (const log of page.logs) seen.add(log.id);
    }
    assert.equal(seen.size, COUNT, 'every record has its own id');
  });
});
