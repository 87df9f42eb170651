/**
 * The admin plane's access-log writer (openAccessLogWriter): batches are stored into the day files
 * and the rollups by a thread of their own, so storing them never holds up the event loop that
 * serves requests; nothing handed over is lost on close; a malformed batch is rejected and the
 * writer goes on; and at start it moves the records of the old `access_logs` table into day files
 * (readable as before, not counted twice in the rollups) and drops the table.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { AccessLogReader } from '../../admin/access-log/reading/access-log-reader.js';
import { type AccessLogRecord } from '../../admin/access-log/reading/access-log-page.js';
import type { StoreNotice } from '../../admin/access-log/writing/store-options.js';
import { openAccessLogWriter, type AccessLogWriter } from '../../admin/access-log/writing/access-log-writer.js';
import { accessLogDirOf } from '../../admin/access-log/day-files.js';
import { TrafficRollups } from '../../admin/access-log/traffic-rollups.js';
import { openDatabase, type Database } from '../../admin/database.js';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import { eventId } from '../../shared/event-id.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { UNBOUNDED } from '../support/temp-database.js';

const DAY = 86_400_000;

let folder: string;
let databasePath: string;
let dir: string;
let db: Database;
let reader: AccessLogReader;
let writer: AccessLogWriter | undefined;
let noticeListeners: ((notice: StoreNotice) => void)[];

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'gatehouse-writer-'));
  databasePath = join(folder, 'gateway.db');
  dir = accessLogDirOf(databasePath);
  db = openDatabase(databasePath);
  reader = new AccessLogReader(dir);
  noticeListeners = [];
});
afterEach(async () => {
  await writer?.close();
  writer = undefined;
  reader.close();
  db.close();
  rmSync(folder, { recursive: true, force: true });
});

/** Starts the writer thread over the test's database. */
function startWriter(retentionDays = 36_500): AccessLogWriter {
  writer = openAccessLogWriter({ databasePath, dir, retentionDays, budget: UNBOUNDED, export: undefined }, (notice) => {
    for (const listener of noticeListeners) listener(notice);
  });
  return writer;
}

/** The first notice whose message contains `text`. */
function noticeAbout(text: string): Promise<StoreNotice> {
  return new Promise((resolve) => noticeListeners.push((notice) => notice.message.includes(text) && resolve(notice)));
}

/** `count` records of `serviceId`, now. */
function records(count: number, serviceId = 'svc-1'): AccessLogEntry[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    eventId: eventId(now),
    serviceId,
    userId: null,
    path: `/svc/x/${i}`,
    method: 'GET',
    statusCode: 200,
    responseTimeMs: 1,
    ipAddress: '198.51.100.7',
    timestamp: now,
  }));
}

/** How many records of `serviceId` the reader shows. */
const stored = (serviceId = 'svc-1') => reader.listForService(serviceId, 1, 0).total;
const rolledUp = (serviceId: string) =>
  (db.prepare('SELECT sum(count_2xx + count_3xx + count_4xx + count_5xx) AS n FROM access_rollups WHERE service_id = ?').get(serviceId) as { n: number | null }).n ?? 0;

test('a batch is written by another thread: this event loop turns while it is stored, and reads see it once store resolves', async () => {
  const w = startWriter();
  let turned = false;
  setImmediate(() => (turned = true));
  await w.store(batchOf(records(20_000)));
  assert.equal(turned, true, 'an in-thread insert would have finished before the next turn of the loop');
  assert.equal(stored(), 20_000);
  assert.equal(rolledUp('svc-1'), 20_000, 'counted in the rollups');
  assert.equal(w.totals.stored, 20_000);
  assert.ok(w.totals.bytes > 0 && w.totals.days === 1, JSON.stringify(w.totals));
});

test('close waits for every batch already handed over', async () => {
  const w = startWriter();
  const pending = [w.store(batchOf(records(3_000, 'svc-a'))), w.store(batchOf(records(3_000, 'svc-b')))];
  await w.close();
  await Promise.all(pending);
  assert.deepEqual([stored('svc-a'), stored('svc-b')], [3_000, 3_000]);
});

test('a batch that breaks the schema is rejected whole, and the writer goes on with the next', async () => {
  const w = startWriter();
  const broken = records(3, 'svc-broken');
  (broken[1] as { statusCode: unknown }).statusCode = null;
  await assert.rejects(w.store(batchOf(broken)), /NOT NULL/);
  assert.equal(stored('svc-broken'), 0);
  assert.equal(rolledUp('svc-broken'), 0);
  await w.store(batchOf(records(2, 'svc-after')));
  assert.equal(stored('svc-after'), 2);
  assert.equal(w.totals.stored, 2);
});

test('at start, moves the old access_logs table into day files, without counting its records twice, and drops it', async () => {
  // The table as the gateway kept it before day files (openDatabase still creates it), with the
  // rollups it counted then: 12,000 records over two days (a few late, some sharing a
  // timestamp), and one past the retention.
  const start = Math.floor((Date.now() - 36 * 3_600_000) / 1000) * 1000;
  const legacy: AccessLogEntry[] = Array.from({ length: 12_000 }, (_, i) => ({
    eventId: randomUUID(),
    serviceId: i % 5 === 0 ? 'svc-other' : 'svc-old',
    userId: i % 3 === 0 ? null : `user-${i % 3}`,
    path: `/old/${i}?q=${i}`,
    method: ['GET', 'POST'][i % 2]!,
    statusCode: [200, 404, 503][i % 3]!,
    responseTimeMs: i % 900,
    ipAddress: `192.0.2.${i % 200}`,
    timestamp: start + (i % 100 === 99 ? i - 50 : i - (i % 4 === 1 ? 1 : 0)) * 10_000,
  }));
  legacy.push({ ...legacy[1]!, eventId: randomUUID(), path: '/expired', timestamp: Date.now() - 40 * DAY });
  const insert = db.prepare(
    `INSERT INTO access_logs (event_id, service_id, user_id, path, method, status_code, response_time_ms, ip_address, timestamp)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const rollups = new TrafficRollups(db);
  db.transaction(() => {
    for (const r of legacy) insert.run(r.eventId, r.serviceId, r.userId, r.path, r.method, r.statusCode, r.responseTimeMs, r.ipAddress, r.timestamp);
    rollups.add(legacy);
  })();
  const rolledUpBefore = [rolledUp('svc-old'), rolledUp('svc-other')];

  const moved = noticeAbout('access_logs');
  const w = startWriter(30);
  await w.store(batchOf(records(1, 'svc-new'))); // live traffic meanwhile
  const notice = await moved;
  assert.deepEqual({ level: notice.level, fields: notice.fields }, { level: 'info', fields: { moved: 12_001 } });

  assert.equal(db.prepare("SELECT name FROM sqlite_master WHERE name = 'access_logs'").get(), undefined, 'the table is dropped');
  const shown = (serviceId: string): AccessLogRecord[] => {
    const logs: AccessLogRecord[] = [];
    for (let page; (page = reader.listForService(serviceId, 1000, logs.length).logs).length > 0; ) logs.push(...page);
    return logs;
  };
  for (const serviceId of ['svc-old', 'svc-other']) {
    // Newest first by timestamp, then by the order the old table held them (its ids).
    const expected = legacy
      .map((r, id) => ({ ...r, id }))
      .filter((r) => r.serviceId === serviceId && r.path !== '/expired')
      .sort((a, b) => b.timestamp - a.timestamp || b.id - a.id)
      .map((r) => ({
        service_id: r.serviceId,
        user_id: r.userId,
        path: r.path,
        method: r.method,
        status_code: r.statusCode,
        response_time_ms: r.responseTimeMs,
        ip_address: r.ipAddress,
        timestamp: new Date(r.timestamp).toISOString(),
        target: null,
        host: null,
        protocol: 'http/1.1',
        count: 1,
        path_truncated: false,
        request_id: null,
        trace_id: null,
        span_id: null,
      }));
    const logs = shown(serviceId);
    assert.deepEqual(logs.map(({ id: _id, ...fields }) => fields), expected, serviceId);
    assert.equal(new Set(logs.map((log) => log.id)).size, logs.length, 'each record has its own id');
  }
  assert.deepEqual([rolledUp('svc-old'), rolledUp('svc-other')], rolledUpBefore, 'not counted again');
  assert.equal(rolledUp('svc-new'), 1);

  await w.store(batchOf(records(1, 'svc-new')));
  assert.equal(w.totals.expired, 1, 'the record past the retention is not kept');
  assert.equal(stored('svc-new'), 2);
});
