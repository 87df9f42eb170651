/**
 * `node dist/bench/access-log/access-log-ingest.js`: how many access-log records per second one admin process
 * can take from the Redis stream into SQLite, the ceiling on the access-logged traffic of all proxy
 * workers together (split mode). Starts a `redis-server` (test/support/redis.ts), fills
 * `gatehouse:access-log` with RECORDS records (300,000) through the proxies' sink
 * (`RedisAccessLogSink`, batches of 500), then starts the admin's `AccessLogStreamConsumer` storing
 * through the admin's `AccessLogWriter` (its writer thread) into a fresh gateway database (the
 * rollups) and its access log's day files beside it, and times it until the group is drained. Prints records/s and the CPU of this process (both threads) per
 * record. Past that rate the stream grows (bounded by the sink's `MAXLEN ~`) until traffic drops.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAccessLogWriter } from '../../admin/access-log/writing/access-log-writer.js';
import { accessLogDirOf } from '../../admin/access-log/day-files.js';
import { openDatabase } from '../../admin/database.js';
import { eventId } from '../../shared/event-id.js';
import { AccessLogStreamConsumer } from '../../shared/backends/redis/access-log/access-log-stream-consumer.js';
import { RedisAccessLogSink } from '../../shared/backends/redis/access-log/redis-access-log-sink.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { startRedis } from '../../test/support/redis.js';

/** Records shipped between flushes while filling, so the sink's buffer stays small. */
const FLUSH_EVERY = 5_000;

async function main(): Promise<void> {
  const total = Number(process.env.RECORDS ?? 300_000);
  const redis = await startRedis();
  const connections = new RedisConnections(redis.url);
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ingest-'));
  try {
    await connections.ready(5_000);
    await fill(connections, total);
    const path = join(dir, 'gateway.db');
    // Migrated before the writer thread opens it, as the admin process does (admin-storage.ts).
    const db = openDatabase(path);
    const writer = openAccessLogWriter(
      // A budget no run reaches and the default retention (the records are dated now): every record is stored.
      { databasePath: path, dir: accessLogDirOf(path), retentionDays: 30, budget: { maxBytes: 1e12, reserveBytes: 0 }, export: undefined },
      (notice) => notice.level === 'warn' && process.stderr.write(`access-log writer: ${notice.message}\n`),
    );
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const consumer = new AccessLogStreamConsumer(connections, (batch) => writer.store(batch));
    consumer.start();
    await consumer.drained();
    const elapsedMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    await consumer.stop();
    const { stored, bytes } = writer.totals;
    await writer.close();
    db.close();
    if (stored !== consumer.stored) throw new Error(`the writer stored ${stored} records, the consumer handed over ${consumer.stored}`);
    const perSecond = Math.round((consumer.stored / elapsedMs) * 1000);
    const cpuPerRecord = (cpu.user + cpu.system) / consumer.stored;
    process.stdout.write(
      `${consumer.stored.toLocaleString('en-US')} records stored in ${Math.round(elapsedMs)} ms: ` +
        `${perSecond.toLocaleString('en-US')} records/s, ${cpuPerRecord.toFixed(2)} µs of CPU per record (both threads), ` +
        `${(bytes / stored).toFixed(1)} bytes on disk per record\n`,
    );
  } finally {
    await connections.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ships `total` records to the stream as a proxy worker would. */
async function fill(connections: RedisConnections, total: number): Promise<void> {
  const sink = new RedisAccessLogSink(connections, { maxBuffered: FLUSH_EVERY * 2 });
  for (let i = 0; i < total; i++) {
    const now = Date.now();
    sink.write({ eventId: eventId(now), serviceId: 'bench-service', userId: 'bench-user', path: '/protected/bench', method: 'GET', statusCode: 200, responseTimeMs: 2, ipAddress: '127.0.0.1', timestamp: now });
    if ((i + 1) % FLUSH_EVERY === 0) await sink.flush();
  }
  await sink.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`access-log-ingest failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
