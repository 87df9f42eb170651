import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AccessLogStore } from '../../admin/access-log/access-log-store.js';
import { openDatabase, type Database } from '../../admin/database.js';
import type { AccessLogEntry } from '../../shared/types.js';

const SERVICE = randomUUID();
const OTHER = randomUUID();
const T0 = Date.parse('2025-01-02T03:04:05.678Z');

let dir: string;
let db: Database;
let store: AccessLogStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-access-log-'));
  db = openDatabase(join(dir, 'gateway.db'));
  store = new AccessLogStore(db);
});

afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An access-log entry for request number `n` (distinct path, time and event id). */
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

describe('AccessLogStore', () => {
  it('stores a batch and shows records in the interface.md §2.2 shape with ISO timestamps', () => {
    store.insertBatch([entry(1, { userId: null, method: 'POST', statusCode: 401 })]);
    const { logs, total } = store.listForService(SERVICE, 100, 0);
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
      },
    ]);
    assert.equal(typeof logs[0]!.id, 'number');
  });

  it('lists newest first (by timestamp), across batches', () => {
    store.insertBatch([entry(1), entry(2)]);
    store.insertBatch([entry(3)]);
    assert.deepEqual(store.listForService(SERVICE, 100, 0).logs.map((l) => l.response_time_ms), [3, 2, 1]);
  });

  it('pages with limit and offset while total counts every record of the service', () => {
    store.insertBatch(Array.from({ length: 7 }, (_, i) => entry(i + 1)));
    const page = store.listForService(SERVICE, 3, 2);
    assert.equal(page.total, 7);
    assert.deepEqual(page.logs.map((l) => l.response_time_ms), [5, 4, 3]);
    assert.deepEqual(store.listForService(SERVICE, 3, 6).logs.map((l) => l.response_time_ms), [1]);
    assert.deepEqual(store.listForService(SERVICE, 3, 7), { logs: [], total: 7 });
  });

  it("shows only the service's own records", () => {
    store.insertBatch([entry(1), entry(2, { serviceId: OTHER }), entry(3)]);
    const { logs, total } = store.listForService(SERVICE, 100, 0);
    assert.equal(total, 2);
    assert.ok(logs.every((l) => l.service_id === SERVICE));
    assert.equal(store.listForService(OTHER, 100, 0).total, 1);
    assert.deepEqual(store.listForService(randomUUID(), 100, 0), { logs: [], total: 0 });
  });

  it('inserts nothing twice when a batch is re-delivered, whole or in part', () => {
    const batch = [entry(1), entry(2)];
    store.insertBatch(batch);
    store.insertBatch(batch);
    store.insertBatch([batch[1]!, entry(3)]);
    assert.deepEqual(store.listForService(SERVICE, 100, 0).logs.map((l) => l.response_time_ms), [3, 2, 1]);
  });

  it('accepts an empty batch', () => {
    store.insertBatch([]);
    assert.equal(store.listForService(SERVICE, 100, 0).total, 0);
  });

  it('stores none of a batch when one record breaks the schema', () => {
    const broken = entry(2, { path: null as unknown as string });
    assert.throws(() => store.insertBatch([entry(1), broken, entry(3)]), /NOT NULL/);
    assert.equal(store.listForService(SERVICE, 100, 0).total, 0);
  });

  it('lists by timestamp, not arrival: a late record takes its place in time', () => {
    store.insertBatch([entry(1), entry(3)]);
    store.insertBatch([entry(2)]);
    assert.deepEqual(store.listForService(SERVICE, 100, 0).logs.map((l) => l.response_time_ms), [3, 2, 1]);
  });

  it('reads a page through the (service_id, timestamp) index, without sorting', () => {
    const details = store.explain().page!.join('\n');
    assert.match(details, /access_logs_by_service_time/);
    assert.doesNotMatch(details, /TEMP B-TREE/);
  });
});
