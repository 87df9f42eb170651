/**
 * The OTLP export's buffer under a flood, in the admin's real access-log writer thread
 * (openAccessLogWriter with ACCESS_LOG_EXPORT's settings) and its real `/metrics` counters
 * (registerAccessLogMetrics): with the collector down, of records with 15 KB paths beyond the
 * buffer's default bound (64 MB, README "Access log export") the oldest are dropped from the
 * export and counted in `gatehouse_access_log_export_dropped_total`, one warning is logged, and
 * when the collector comes back the newest records reach it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Registry } from 'prom-client';
import { registerAccessLogMetrics } from '../../admin/access-log/access-log-metrics.js';
import { accessLogDirOf } from '../../admin/access-log/day-files.js';
import { OTLP_BUFFER_BYTES_DEFAULT } from '../../admin/access-log/otlp/otlp-export.js';
import { recordBytes } from '../../admin/access-log/otlp/record-bytes.js';
import type { StoreNotice } from '../../admin/access-log/writing/store-options.js';
import { openAccessLogWriter, type AccessLogWriter } from '../../admin/access-log/writing/access-log-writer.js';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import { eventId } from '../../shared/event-id.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { Recorder } from '../support/recorder.js';
import { UNBOUNDED } from '../support/temp-database.js';

/** A path as long as Node's header limit lets a client send (the proxy now cuts it; the writer must not rely on that). */
const LONG = 'A'.repeat(15_000);
/** Records per batch handed to the writer, as the stream consumer hands them. */
const BATCH = 100;

let folder: string;
let writer: AccessLogWriter;
let receiver: OtlpReceiver;
const notices = new Recorder<StoreNotice>();

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'gatehouse-otlp-flood-'));
  receiver = await OtlpReceiver.start();
  await receiver.stop(); // the collector is down from the start
  const databasePath = join(folder, 'gateway.db');
  writer = openAccessLogWriter(
    { databasePath, dir: accessLogDirOf(databasePath), retentionDays: 36_500, budget: UNBOUNDED, export: { url: `${receiver.endpoint}/v1/logs`, headers: {} } },
    notices.listener,
  );
});
after(async () => {
  await writer.close();
  await receiver.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The value of a counter in the registry's Prometheus text. */
async function counter(registry: Registry, name: string): Promise<number> {
  const line = (await registry.metrics()).split('\n').find((row) => row.startsWith(`${name} `));
  assert.ok(line, `${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

function flood(count: number): AccessLogEntry[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    eventId: eventId(now),
    serviceId: 'svc-1',
    userId: null,
    path: `/public-echo/${i}-${LONG}`,
    method: 'GET',
    statusCode: 429,
    responseTimeMs: 1,
    ipAddress: '203.0.113.9',
    timestamp: now,
  }));
}

test('the attack: a flood of 15 KB paths with the collector down: the export keeps its bound (oldest dropped, counted in /metrics, one warning), and the newest arrive once it is back', async () => {
  const registry = new Registry();
  registerAccessLogMetrics(registry, () => writer.totals);
  const records = flood(Math.ceil((1.25 * OTLP_BUFFER_BYTES_DEFAULT) / recordBytes(flood(1)[0]!)));
  for (let i = 0; i < records.length; i += BATCH) await writer.store(batchOf(records.slice(i, i + BATCH)));

  const dropped = await counter(registry, 'gatehouse_access_log_export_dropped_total');
  // A quarter of the records offered is beyond the bound: at least that many went, not many more.
  const beyond = records.length - OTLP_BUFFER_BYTES_DEFAULT / recordBytes(records[0]!);
  assert.ok(dropped >= beyond && dropped < 2 * beyond, `${dropped} dropped of ${records.length}, ${Math.round(beyond)} beyond the bound`);
  const warnings = notices.values.filter((notice) => notice.level === 'warn' && /buffer full/.test(notice.message));
  assert.equal(warnings.length, 1, 'one warning for the overflow, not one per record dropped');

  // The retry backoff reaches 30 s at most: the held records arrive within one more wait.
  await receiver.resume();
  await receiver.until('the records held', (r) => r.records.size === records.length - dropped, 40_000);
  assert.ok(receiver.records.has(records.at(-1)!.eventId), 'the newest record arrived');
  // What went is one run: the oldest waiting records, just after the batch the export was retrying.
  const missing = records.flatMap((record, i) => (receiver.records.has(record.eventId) ? [] : [i]));
  assert.equal(missing.length, dropped);
  assert.equal(missing.at(-1)! - missing[0]! + 1, dropped, `one run of dropped records, #${missing[0]} to #${missing.at(-1)}`);
  await notices.next((notice) => /room again/.test(notice.message));
});
