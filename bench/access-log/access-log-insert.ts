/**
 * `node dist/bench/access-log/access-log-insert.js`: how long the admin plane's access-log store
 * (`AccessLogStore.insertBatch`: one transaction in the day's file, admin/access-log/day-files.ts,
 * plus one in the gateway database for the rollups) takes per batch as the day's file grows, with
 * the data plane's random event ids (UUID v4, as proxy/pipeline/access-record.ts makes them) and with
 * time-ordered ones (UUID v7, RFC 9562 §5.7). Run on this thread, as the writer thread runs it.
 *
 * Why both: when every record's `event_id` was a UNIQUE column, random ids landed on random pages
 * of its index, so once it spanned many pages each batch dirtied, and wrote to the WAL at commit,
 * up to one index page per record; time-ordered ids appended to the same few pages. The day files
 * keep one key per shipped batch instead (its first record's event id, day-schema.ts `batches`),
 * so both lines should now cost the same at any size; a gap between them would mean a per-record
 * index on random keys is back. Each report line also gives the day file's bytes per record.
 *
 * Settings: ROWS (total records, 800,000), BATCH (records per transaction, 500: the sink's
 * default). Each database and its day files are in a temporary folder, removed afterwards.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessLogStore } from '../../admin/access-log/writing/access-log-store.js';
import { addressShareBytes } from '../../admin/access-log/writing/address-shares.js';
import { accessLogDirOf } from '../../admin/access-log/day-files.js';
import { openDatabase } from '../../admin/database.js';
import type { AccessLogEntry } from '../../shared/types.js';

/** Batches summarised per report line. */
const REPORT_EVERY = 400;

/** A UUID v7: 48-bit Unix time in ms, version 7, 74 random bits (RFC 9562 §5.7). */
function uuidV7(): string {
  const bytes = randomBytes(16);
  const now = Date.now();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function measure(label: string, eventId: () => string, rows: number, batchSize: number): void {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-insert-'));
  const path = join(dir, 'gateway.db');
  const db = openDatabase(path);
  // A budget no run reaches, and the default retention (the records are dated now): every record is
  // stored, its address's share tallied as the writer thread does (3 GB: never reached here).
  const budget = { maxBytes: 1e12, reserveBytes: 0 };
  const store = new AccessLogStore(db, { dir: accessLogDirOf(path), retentionDays: 30, budget, addressShareBytes: addressShareBytes(budget, 30) });
  try {
    const serviceId = randomUUID();
    const times: number[] = [];
    for (let batch = 1; batch * batchSize <= rows; batch++) {
      const records: AccessLogEntry[] = Array.from({ length: batchSize }, () => ({
        eventId: eventId(),
        serviceId,
        userId: 'bench-user',
        path: '/protected/bench',
        method: 'GET',
        statusCode: 200,
        responseTimeMs: 2,
        ipAddress: '127.0.0.1',
        timestamp: Date.now(),
      }));
      const started = performance.now();
      store.insertBatch(records);
      times.push(performance.now() - started);
      if (batch % REPORT_EVERY === 0) {
        const recent = times.splice(0);
        const p50 = [...recent].sort((a, b) => a - b)[Math.floor(recent.length / 2)]!;
        const max = Math.max(...recent);
        const { stored, bytes } = store.totals;
        process.stdout.write(
          `${label.padEnd(26)} ${(batch * batchSize).toLocaleString('en-US').padStart(9)} rows: ${batchSize} records in ${p50.toFixed(1)} ms (median), max ${max.toFixed(1)} ms, ${((p50 * 1000) / batchSize).toFixed(1)} µs/record, ${(bytes / stored).toFixed(1)} bytes/record on disk (WAL included)\n`,
        );
      }
    }
    if (store.totals.stored !== Math.floor(rows / batchSize) * batchSize) throw new Error(`${label}: stored ${store.totals.stored} records`);
  } finally {
    store.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = Number(process.env.ROWS ?? 800_000);
const batchSize = Number(process.env.BATCH ?? 500);
measure('random ids (UUID v4)', randomUUID, rows, batchSize);
measure('time-ordered ids (UUID v7)', uuidV7, rows, batchSize);
