/**
 * The admin plane's access-log writer: batches are stored by a thread of their own, so storing
 * them never holds up the event loop that serves requests; nothing handed over is lost on close.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { openAccessLogWriter, type AccessLogWriter } from '../../admin/access-log/access-log-writer.js';
import { openDatabase, type Database } from '../../admin/database.js';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import { eventId } from '../../shared/event-id.js';
import type { AccessLogEntry } from '../../shared/types.js';

let dir: string;
let db: Database;
let writer: AccessLogWriter;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-writer-'));
  const path = join(dir, 'gateway.db');
  db = openDatabase(path);
  writer = openAccessLogWriter(db, path);
});
afterEach(async () => {
  await writer.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function records(count: number, path = '/svc/x'): AccessLogEntry[] {
  const now = Date.now();
  return Array.from({ length: count }, () => ({
    eventId: eventId(now),
    serviceId: 'svc-1',
    userId: null,
    path,
    method: 'GET',
    statusCode: 200,
    responseTimeMs: 1,
    ipAddress: '198.51.100.7',
    timestamp: now,
  }));
}

const stored = (path = '/svc/x') => (db.prepare('SELECT count(*) AS n FROM access_logs WHERE path = ?').get(path) as { n: number }).n;

test('a batch is written by another thread: this event loop turns while it is stored, and reads see it once store resolves', async () => {
  let turned = false;
  setImmediate(() => (turned = true));
  await writer.store(batchOf(records(20_000)));
  assert.equal(turned, true, 'an in-thread insert would have finished before the next turn of the loop');
  assert.equal(stored(), 20_000);
  const rollup = db.prepare("SELECT sum(count_2xx) AS n FROM access_rollups WHERE service_id = 'svc-1'").get() as { n: number };
  assert.equal(rollup.n, 20_000, 'rollups in the same transaction');
});

test('close waits for every batch already handed over', async () => {
  const pending = [writer.store(batchOf(records(3_000, '/a'))), writer.store(batchOf(records(3_000, '/b')))];
  await writer.close();
  await Promise.all(pending);
  assert.deepEqual([stored('/a'), stored('/b')], [3_000, 3_000]);
});

test('a batch that breaks the schema is rejected whole, and the writer goes on with the next', async () => {
  const broken = records(3, '/broken');
  (broken[1] as { statusCode: unknown }).statusCode = null;
  await assert.rejects(writer.store(batchOf(broken)), /NOT NULL/);
  assert.equal(stored('/broken'), 0);
  await writer.store(batchOf(records(2, '/after')));
  assert.equal(stored('/after'), 2);
});
