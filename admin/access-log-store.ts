import type { Database, Statement } from 'better-sqlite3';
import type { AccessLogEntry } from '../shared/types.js';

/** An access-log record as the API shows it (spec §2.2); `user_id` is null for anonymous requests. */
export interface AccessLogRecord {
  id: number;
  service_id: string;
  user_id: string | null;
  path: string;
  method: string;
  status_code: number;
  response_time_ms: number;
  ip_address: string;
  /** ISO 8601 UTC. */
  timestamp: string;
}

type Row = Omit<AccessLogRecord, 'timestamp'> & { timestamp: number };
type InsertParams = [string, string, string | null, string, string, number, number, string, number];

const COLUMNS = 'id, service_id, user_id, path, method, status_code, response_time_ms, ip_address, timestamp';

/**
 * The `access_logs` table: the admin plane's side of the access-log pipeline (DESIGN §2, §3.9).
 * Rows keep their epoch-ms timestamp; the API shows ISO 8601.
 */
export class AccessLogStore {
  readonly #insert: Statement<InsertParams>;
  readonly #page: Statement<[string, number, number], Row>;
  readonly #count: Statement<[string], { total: number }>;
  readonly #insertAll: (records: readonly AccessLogEntry[]) => void;

  constructor(db: Database) {
    this.#insert = db.prepare(
      // Only a duplicate event_id is skipped; OR IGNORE would also drop rows that break NOT NULL.
      `INSERT INTO access_logs
         (event_id, service_id, user_id, path, method, status_code, response_time_ms, ip_address, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (event_id) DO NOTHING`,
    );
    // Both use the (service_id, id) index: the page walks it backwards, the count only reads it.
    this.#page = db.prepare(`SELECT ${COLUMNS} FROM access_logs WHERE service_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`);
    this.#count = db.prepare('SELECT count(*) AS total FROM access_logs WHERE service_id = ?');
    this.#insertAll = db.transaction((records: readonly AccessLogEntry[]) => {
      for (const r of records) {
        this.#insert.run(r.eventId, r.serviceId, r.userId, r.path, r.method, r.statusCode, r.responseTimeMs, r.ipAddress, r.timestamp);
      }
    });
  }

  /**
   * Stores a batch in one transaction. A record whose `eventId` is already stored is skipped, so a
   * re-delivered batch (at-least-once stream delivery) inserts nothing twice.
   * @throws the SQLite error when a record breaks the schema; then nothing of the batch is stored.
   */
  insertBatch(records: readonly AccessLogEntry[]): void {
    if (records.length > 0) this.#insertAll(records);
  }

  /**
   * One page of a service's access log, newest first (DESIGN §5), and `total`, the count of all
   * of that service's records (spec §4.3). `limit` and `offset` are row counts.
   */
  listForService(serviceId: string, limit: number, offset: number): { logs: AccessLogRecord[]; total: number } {
    const logs = this.#page
      .all(serviceId, limit, offset)
      .map((row) => ({ ...row, timestamp: new Date(row.timestamp).toISOString() }));
    return { logs, total: this.#count.get(serviceId)!.total };
  }
}
