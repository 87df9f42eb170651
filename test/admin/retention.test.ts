import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AccessLogStore } from '../../admin/access-log/access-log-store.js';
import { openDatabase, type Database } from '../../admin/database.js';
import { prune, ROLLUP_RETENTION_DAYS } from '../../admin/access-log/retention.js';
import { ConfigError, loadConfig } from '../../shared/config.js';
import type { AccessLogEntry } from '../../shared/types.js';

/** Retention (README, ACCESS_LOG_RETENTION_DAYS): raw access logs past ACCESS_LOG_RETENTION_DAYS and rollups past 400 days are deleted in batches. */

const DAY = 86_400_000;
const NOW = Date.parse('2025-06-01T00:00:00Z');
const SERVICE = randomUUID();

let dir: string;
let db: Database;
let store: AccessLogStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-retention-'));
  db = openDatabase(join(dir, 'gateway.db'));
  store = new AccessLogStore(db);
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function recordAt(timestamp: number): AccessLogEntry {
  return { eventId: randomUUID(), serviceId: SERVICE, userId: null, path: '/', method: 'GET', statusCode: 200, responseTimeMs: 1, ipAddress: '192.0.2.1', timestamp };
}

const timestamps = () => (db.prepare('SELECT timestamp FROM access_logs ORDER BY id').all() as { timestamp: number }[]).map((r) => r.timestamp);
const rollupCount = () => (db.prepare('SELECT count(*) AS n FROM access_rollups').get() as { n: number }).n;

describe('retention', () => {
  it('deletes raw records older than the retention, in batches, and keeps the rest and the rollups', async () => {
    const old = Array.from({ length: 23 }, (_, i) => recordAt(NOW - 31 * DAY - i * 60_000));
    const recent = Array.from({ length: 5 }, (_, i) => recordAt(NOW - 29 * DAY + i));
    store.insertBatch([...old, ...recent]);
    const rollupsBefore = rollupCount();
    const deleted = await prune(db, { accessLogDays: 30, now: NOW, batchSize: 7 });
    assert.deepEqual(deleted, { accessLogs: 23, rollups: 0 });
    assert.deepEqual(timestamps(), recent.map((r) => r.timestamp));
    assert.equal(rollupCount(), rollupsBefore, 'rollups outlive the raw records');
  });

  it('walks arrival order: a late record with an old timestamp goes once the records before it have expired', async () => {
    const early = recordAt(NOW - 40 * DAY);
    const kept = recordAt(NOW - DAY);
    const late = recordAt(NOW - 35 * DAY);
    store.insertBatch([early, kept, late]);
    assert.equal((await prune(db, { accessLogDays: 30, now: NOW })).accessLogs, 1);
    assert.deepEqual(timestamps(), [kept.timestamp, late.timestamp]);
    assert.equal((await prune(db, { accessLogDays: 30, now: NOW + 30 * DAY })).accessLogs, 2);
    assert.deepEqual(timestamps(), []);
  });

  it(`deletes rollups older than ${ROLLUP_RETENTION_DAYS} days`, async () => {
    store.insertBatch([recordAt(NOW - 401 * DAY), recordAt(NOW - 401 * DAY + 60_000), recordAt(NOW - 399 * DAY)]);
    // Per minute: each record's service row and its all-services row.
    assert.equal(rollupCount(), 6);
    const deleted = await prune(db, { accessLogDays: 30, now: NOW, batchSize: 3 });
    assert.deepEqual(deleted, { accessLogs: 3, rollups: 4 });
    assert.equal(rollupCount(), 2);
  });

  it('stops before the next batch when asked to', async () => {
    store.insertBatch(Array.from({ length: 10 }, (_, i) => recordAt(NOW - 60 * DAY + i)));
    let batches = 0;
    const deleted = await prune(db, { accessLogDays: 30, now: NOW, batchSize: 3, stopped: () => batches++ >= 2 });
    assert.equal(deleted.accessLogs, 6);
  });

  it('ACCESS_LOG_RETENTION_DAYS: default 30, whole days of at least 1', () => {
    assert.equal(loadConfig({}).accessLogRetentionDays, 30);
    assert.equal(loadConfig({ ACCESS_LOG_RETENTION_DAYS: '7' }).accessLogRetentionDays, 7);
    for (const bad of ['0', '1.5', '30d', '-1']) {
      assert.throws(
        () => loadConfig({ ACCESS_LOG_RETENTION_DAYS: bad }),
        (error: unknown) => error instanceof ConfigError && error.problems[0] === 'ACCESS_LOG_RETENTION_DAYS: must be a whole number of days (1 or more)',
        bad,
      );
    }
  });
});
