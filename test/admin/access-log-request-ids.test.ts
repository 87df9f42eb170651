/**
 * Request ids and traces in the access log's day files (design.md §3.10, §4.11): each kind of id
 * stored compactly (the proxy's 16 hex characters as 8 bytes, a traced request's 32 as 16, any
 * other id as its text) and read back as it was sent; a traced record's trace and span ids in a
 * row of their own, an untraced record with none; a day file made before request ids read as
 * null, then given the column and table by the next write; and the exact `requestId` filter.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { createDayFile, dayOf, dayPath } from '../../admin/access-log/day-files.js';
import { DAY_SCHEMA } from '../../admin/access-log/day-schema.js';
import type { AccessLogFilter } from '../../admin/access-log/reading/access-log-filter.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { tempDatabase, type TempDatabase } from '../support/temp-database.js';

const SERVICE = randomUUID();
const T0 = Date.parse('2025-01-02T03:04:05.678Z');
const MIDNIGHT = Date.parse('2025-01-02T00:00:00.000Z');

const PROXY_ID = '9f86d081884c7d65';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
/** Ids a trusted proxy may send: text, digits only (which an INTEGER column would turn into a number), hex in capitals, 32 hex untraced. */
const TRUSTED_IDS = ['lb-01:Root=1-67891233-abcdef012345678912345678', '12345', '9F86D081884C7D65', 'a3ce929d0e0e47364bf92f3577b34da6'];

let t: TempDatabase;

beforeEach(() => {
  t = tempDatabase();
});
afterEach(() => t.close());

/** Request `n`'s record (its path `/r/<n>`), with `ids`. */
function entry(n: number, ids: Pick<AccessLogEntry, 'requestId' | 'traceId' | 'spanId'> = {}): AccessLogEntry {
  return {
    eventId: randomUUID(),
    serviceId: SERVICE,
    userId: null,
    path: `/r/${n}`,
    method: 'GET',
    statusCode: 200,
    responseTimeMs: n,
    ipAddress: '198.51.100.4',
    timestamp: T0 + n * 1000,
    ...ids,
  };
}

/** `[path, request_id, trace_id, span_id]` of every record that passes `filter`, newest first. */
const ids = (filter: AccessLogFilter = {}) =>
  t.accessLogs.listForService(SERVICE, 100, 0, filter).logs.map((log) => [log.path, log.request_id, log.trace_id, log.span_id]);

/** The day file of T0, read-only, for looking at what is stored. */
function dayFile(): BetterSqlite3.Database {
  return new BetterSqlite3(dayPath(t.dir, dayOf(T0)), { readonly: true });
}

describe('request ids and traces in the day files', () => {
  it('reads each kind of id back as it was sent, and a traced record its trace and span ids', () => {
    t.store.insertBatch([
      entry(1, { requestId: PROXY_ID }),
      entry(2, { requestId: TRACE_ID, traceId: TRACE_ID, spanId: SPAN_ID }),
      ...TRUSTED_IDS.map((requestId, i) => entry(3 + i, { requestId })),
      entry(7),
    ]);
    assert.deepEqual(ids(), [
      ['/r/7', null, null, null],
      ...TRUSTED_IDS.map((id, i) => [`/r/${3 + i}`, id, null, null]).reverse(),
      ['/r/2', TRACE_ID, TRACE_ID, SPAN_ID],
      ['/r/1', PROXY_ID, null, null],
    ]);
  });

  it('stores an id in 8 or 16 bytes when it is 16 or 32 lowercase hex, any other as its text, and a trace only for a traced record', () => {
    t.store.insertBatch([
      entry(1, { requestId: PROXY_ID }),
      entry(2, { requestId: TRACE_ID, traceId: TRACE_ID, spanId: SPAN_ID }),
      entry(3, { requestId: '12345' }),
      entry(4, { requestId: '9F86D081884C7D65' }),
      entry(5),
    ]);
    const file = dayFile();
    const stored = file
      .prepare('SELECT r.path, typeof(r.request_id) AS type, length(r.request_id) AS bytes, length(t.trace) AS trace FROM records r LEFT JOIN traces t ON t.record = r.id ORDER BY r.id')
      .all();
    file.close();
    assert.deepEqual(stored, [
      { path: '/r/1', type: 'blob', bytes: 8, trace: null },
      { path: '/r/2', type: 'blob', bytes: 16, trace: 24 },
      { path: '/r/3', type: 'text', bytes: 5, trace: null },
      { path: '/r/4', type: 'text', bytes: 16, trace: null },
      { path: '/r/5', type: 'null', bytes: null, trace: null },
    ]);
  });

  it('reads a day file made before request ids as null, and its next write adds the column and the traces table', () => {
    const before = DAY_SCHEMA.replace(',\n    request_id', '').replace(/\n\s*CREATE TABLE traces [^;]*;/, '');
    assert.ok(!before.includes('request_id') && !before.includes('traces'));
    createDayFile(t.dir, dayOf(T0), before);
    // One record written by the version before request ids: its row and the counts the reader pages by.
    const time = T0 - MIDNIGHT;
    const old = new BetterSqlite3(dayPath(t.dir, dayOf(T0)));
    old.prepare('INSERT INTO strings (code, text) VALUES (1, ?), (2, ?), (3, ?)').run(SERVICE, 'GET', '198.51.100.4');
    old.prepare('INSERT INTO records (time, service, path, method, status, duration, ip) VALUES (?, 1, ?, 2, 200, 0, 3)').run(time, '/old');
    old.prepare('INSERT INTO minute_counts VALUES (1, 2, ?, 1)').run(Math.floor(time / 60_000));
    old.exec('INSERT INTO service_counts VALUES (1, 2, 1)');
    old.close();
    assert.deepEqual(ids(), [['/old', null, null, null]], 'a record of a file without them reads null');
    assert.deepEqual(ids({ requestId: PROXY_ID }), [], 'and no request id filter matches it');

    t.store.insertBatch([entry(1, { requestId: PROXY_ID }), entry(2, { requestId: TRACE_ID, traceId: TRACE_ID, spanId: SPAN_ID })]);
    const file = dayFile();
    const columns = (file.pragma('table_info(records)') as { name: string }[]).map((column) => column.name);
    const traces = file.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'traces'").pluck().get();
    file.close();
    assert.ok(columns.includes('request_id'), 'the writer added the column');
    assert.equal(traces, 1, 'and the table');
    assert.deepEqual(ids(), [
      ['/r/2', TRACE_ID, TRACE_ID, SPAN_ID],
      ['/r/1', PROXY_ID, null, null],
      ['/old', null, null, null],
    ]);
  });

  it('filters by request id exactly: each kind of id, nothing by a prefix or in other capitals, combined with other filters', () => {
    t.store.insertBatch([
      entry(1, { requestId: PROXY_ID }),
      entry(2, { requestId: TRACE_ID, traceId: TRACE_ID, spanId: SPAN_ID }),
      ...TRUSTED_IDS.map((requestId, i) => entry(3 + i, { requestId })),
      entry(7),
    ]);
    const paths = (filter: AccessLogFilter) => t.accessLogs.listForService(SERVICE, 100, 0, filter);
    assert.deepEqual(ids({ requestId: PROXY_ID }), [['/r/1', PROXY_ID, null, null]]);
    assert.deepEqual(ids({ requestId: TRACE_ID }), [['/r/2', TRACE_ID, TRACE_ID, SPAN_ID]]);
    TRUSTED_IDS.forEach((id, i) => assert.deepEqual(ids({ requestId: id }), [[`/r/${3 + i}`, id, null, null]], id));
    // 9F86D081884C7D65 (a trusted id) found only itself above; a prefix or other capitals find nothing.
    for (const other of [PROXY_ID.slice(0, 8), TRACE_ID.slice(0, 16), TRACE_ID.toUpperCase(), '1234', 'lb-01']) {
      assert.deepEqual(ids({ requestId: other }), [], other);
    }
    assert.deepEqual([paths({ requestId: PROXY_ID }).total, paths({ requestId: PROXY_ID, method: 'GET' }).total], [1, 1]);
    assert.equal(paths({ requestId: PROXY_ID, method: 'POST' }).total, 0);
    assert.equal(paths({ requestId: PROXY_ID, from: T0 + 2000 }).total, 0, 'outside the time range');
  });
});
