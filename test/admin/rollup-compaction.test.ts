/**
 * Traffic rollups (access_rollups, in the gateway's database, counted by the access-log store):
 * per-minute rows older than two days become one row per hour with the same sums.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../admin/database.js';
import { compactRollups, COMPACT_ROLLUPS_AFTER_DAYS } from '../../admin/access-log/rollup-compaction.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { tempDatabase, type TempDatabase } from '../support/temp-database.js';

const HOUR = 3_600_000;
const NOW = Date.parse('2025-06-10T12:34:00Z');
const OLD_HOUR = NOW - (COMPACT_ROLLUPS_AFTER_DAYS * 24 + 5) * HOUR - (NOW % HOUR); // a whole hour, past the cutoff
const RECENT = NOW - 2 * HOUR;
const SERVICE = randomUUID();

let t: TempDatabase;
let db: Database;

beforeEach(() => {
  t = tempDatabase({ now: () => NOW });
  db = t.db;
  const records: AccessLogEntry[] = [];
  for (let minute = 0; minute < 60; minute += 3) {
    for (const [start, statusCode, responseTimeMs] of [[OLD_HOUR, 200, 4], [OLD_HOUR, 503, 900], [RECENT, 404, 12]] as const) {
      records.push({ eventId: randomUUID(), serviceId: SERVICE, userId: null, path: '/', method: 'GET', statusCode, responseTimeMs: responseTimeMs + minute, ipAddress: '192.0.2.1', timestamp: start + minute * 60_000 });
    }
  }
  t.store.insertBatch(records);
});
afterEach(() => t.close());

/** Every column summed over [from, to) ms, per service (the all-services row included), and the row count. */
function totals(from: number, to: number): { rows: number; sums: Record<string, unknown>[] } {
  const columns = (db.prepare('SELECT * FROM access_rollups LIMIT 0').columns() as { name: string }[]).map((c) => c.name).filter((n) => n !== 'service_id' && n !== 'minute');
  const where = 'WHERE minute >= ? AND minute < ?';
  const range = [Math.floor(from / 60_000), Math.floor(to / 60_000)];
  const rows = (db.prepare(`SELECT count(*) AS n FROM access_rollups ${where}`).get(...range) as { n: number }).n;
  const sums = db.prepare(`SELECT service_id, ${columns.map((c) => `sum(${c}) AS ${c}`).join(', ')} FROM access_rollups ${where} GROUP BY service_id ORDER BY service_id`).all(...range) as Record<string, unknown>[];
  return { rows, sums };
}

test('an old hour folds into one row per service with the same counts and latency buckets; recent minutes stay', async () => {
  const oldBefore = totals(OLD_HOUR, OLD_HOUR + HOUR);
  const recentBefore = totals(RECENT, RECENT + HOUR);
  assert.equal(oldBefore.rows, 40, '20 minutes, for the service and for all services');

  const folded = await compactRollups(db, { now: NOW, batchSize: 1 });
  assert.equal(folded, 38, 'all but the first minute of the hour, per service');
  const oldAfter = totals(OLD_HOUR, OLD_HOUR + HOUR);
  assert.equal(oldAfter.rows, 2);
  assert.deepEqual(oldAfter.sums, oldBefore.sums);
  assert.deepEqual(totals(RECENT, RECENT + HOUR), recentBefore);
  const hourRow = db.prepare('SELECT minute FROM access_rollups WHERE service_id = ? AND minute < ?').all(SERVICE, Math.floor(RECENT / 60_000)) as { minute: number }[];
  assert.deepEqual(hourRow, [{ minute: OLD_HOUR / 60_000 }], 'kept at the hour\'s first minute');

  assert.equal(await compactRollups(db, { now: NOW }), 0, 'a second run has nothing to fold');
  assert.equal(t.accessLogs.listForService(SERVICE, 1, 0).total, 60, 'the raw records in the day files are untouched');
});
