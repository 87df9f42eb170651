/**
 * `node dist/bench/access-log-insert.js`: how long the admin plane's access-log writer
 * (`AccessLogStore.insertBatch`, one SQLite transaction per batch, rollups included) takes per
 * batch as the table grows, with the data plane's random event ids (UUID v4, as
 * proxy/access-record.ts makes them) and with time-ordered ones (UUID v7, RFC 9562 §5.7).
 *
 * Why: `event_id` is UNIQUE, so every record also goes into that index. Random ids land on random
 * pages of it, so once the index spans many pages each batch dirties, and writes to the WAL at
 * commit, up to one index page per record (a bigger page cache does not help); time-ordered ids
 * append to the same few pages. In embedded mode the writer runs on the gateway's event loop; in
 * split mode in the admin process, on the same cores as the proxies.
 *
 * Settings: ROWS (total records, 800,000), BATCH (records per transaction, 500: the sink's
 * default). Each database is a temporary file, removed afterwards.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessLogStore } from '../admin/access-log/access-log-store.js';
import { openDatabase } from '../admin/database.js';
import type { AccessLogEntry } from '../shared/types.js';

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
  const db = openDatabase(join(dir, 'gateway.db'));
  try {
    const store = new AccessLogStore(db);
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
        process.stdout.write(
          `${label.padEnd(26)} ${(batch * batchSize).toLocaleString('en-US').padStart(9)} rows: ${batchSize} records in ${p50.toFixed(1)} ms (median), max ${max.toFixed(1)} ms, ${((p50 * 1000) / batchSize).toFixed(1)} µs/record\n`,
        );
      }
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = Number(process.env.ROWS ?? 800_000);
const batchSize = Number(process.env.BATCH ?? 500);
measure('random ids (UUID v4)', randomUUID, rows, batchSize);
measure('time-ordered ids (UUID v7)', uuidV7, rows, batchSize);
