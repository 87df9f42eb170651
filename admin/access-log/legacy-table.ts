import type { Database } from 'better-sqlite3';
import type { AccessLogEntry } from '../../shared/types.js';
import type { AccessLogStore } from './writing/access-log-store.js';

/** Rows moved per step; each step is one transaction on each side. */
const CHUNK = 5_000;

type LegacyRow = { id: number; event_id: string; service_id: string; user_id: string | null; path: string; method: string; status_code: number; response_time_ms: number; ip_address: string; timestamp: number };

/**
 * Moves the records of the `access_logs` table that gateways before the day files kept in the
 * gateway's database into the day files, oldest first, in steps of {@link CHUNK} that yield to the
 * thread's other work between them, then drops the table. Runs in the writer thread at start.
 * A step is stored before it is deleted, keyed by its first record's event id, so a step cut by a
 * crash is moved once. The rollups counted these records when they were first stored, so they are
 * not counted again; records past the retention are not kept.
 * @returns how many records were moved (0 when there was no such table).
 */
export async function moveLegacyRecords(db: Database, store: AccessLogStore, stopped: () => boolean): Promise<number> {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'access_logs'").get();
  if (!exists) return 0;
  const read = db.prepare<[number], LegacyRow>(`SELECT * FROM access_logs ORDER BY id LIMIT ?`);
  const remove = db.prepare<[number]>('DELETE FROM access_logs WHERE id <= ?');
  let moved = 0;
  while (!stopped()) {
    const rows = read.all(CHUNK);
    if (rows.length === 0) {
      db.exec('DROP TABLE access_logs');
      break;
    }
    store.storeBatches([rows.map(toEntry)], { countInRollups: false });
    remove.run(rows.at(-1)!.id);
    moved += rows.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return moved;
}

/** A row of the old table as a record: one request each, its path as received (no `count`, no `pathTruncated`: read back as 1 and false). */
function toEntry(row: LegacyRow): AccessLogEntry {
  return {
    eventId: row.event_id,
    serviceId: row.service_id,
    userId: row.user_id,
    path: row.path,
    method: row.method,
    statusCode: row.status_code,
    responseTimeMs: row.response_time_ms,
    ipAddress: row.ip_address,
    timestamp: row.timestamp,
  };
}
