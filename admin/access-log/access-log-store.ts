import type { Database, Statement } from 'better-sqlite3';
import type { AccessLogEntry } from '../../shared/types.js';
import type { AccessLogFilter } from './access-log-filter.js';
import { TrafficRollups } from './traffic-rollups.js';

/** An access-log record as the API shows it (interface.md §2.2); `user_id` is null for anonymous requests. */
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
 * How many records, newest first, the `method` and `path` filters examine after the indexed
 * filters (service, status class, user, time range) have narrowed them: those two cannot use an
 * index, so this bounds the rows a page and its count may visit.
 */
export const RESIDUAL_SCAN_LIMIT = 100_000;

/** A page of a service's access log (interface.md §4.2). */
export interface AccessLogPage {
  logs: AccessLogRecord[];
  /** How many records pass the filters (all of the service's without filters). */
  total: number;
  /**
   * Present (true) when `method` or `path` filtered and more than {@link RESIDUAL_SCAN_LIMIT}
   * records passed the other filters: `logs` and `total` then cover only the newest of those.
   */
  partial?: true;
}

/** The statements of one combination of filters. */
interface FilteredQueries {
  page: Statement<unknown[], Row>;
  count: Statement<unknown[], { total: number }>;
  /** With method or path filters: whether a record lies beyond the scan window. */
  beyond?: Statement<unknown[], unknown>;
}

/**
 * The `access_logs` table: the admin plane's side of the access-log pipeline (design.md §2, §3.9).
 * Rows keep their epoch-ms timestamp; the API shows ISO 8601. Every batch also updates the
 * per-minute {@link TrafficRollups} in the same transaction.
 */
export class AccessLogStore {
  readonly #db: Database;
  readonly #insert: Statement<InsertParams>;
  readonly #insertAll: (records: readonly AccessLogEntry[]) => void;
  readonly #queries = new Map<string, FilteredQueries>();

  constructor(db: Database, rollups: TrafficRollups = new TrafficRollups(db)) {
    this.#db = db;
    this.#insert = db.prepare(
      // Only a duplicate event_id is skipped; OR IGNORE would also drop rows that break NOT NULL.
      `INSERT INTO access_logs
         (event_id, service_id, user_id, path, method, status_code, response_time_ms, ip_address, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (event_id) DO NOTHING`,
    );
    this.#insertAll = db.transaction((records: readonly AccessLogEntry[]) => {
      const inserted: AccessLogEntry[] = [];
      for (const r of records) {
        const { changes } = this.#insert.run(r.eventId, r.serviceId, r.userId, r.path, r.method, r.statusCode, r.responseTimeMs, r.ipAddress, r.timestamp);
        if (changes === 1) inserted.push(r);
      }
      rollups.add(inserted);
    });
  }

  /**
   * Stores a batch in one transaction, with its rollups. A record whose `eventId` is already stored
   * is skipped (and not counted again), so a re-delivered batch (at-least-once stream delivery)
   * inserts and counts nothing twice.
   * @throws the SQLite error when a record breaks the schema; then nothing of the batch is stored.
   */
  insertBatch(records: readonly AccessLogEntry[]): void {
    if (records.length > 0) this.#insertAll(records);
  }

  /**
   * One page of a service's access log, newest first (by timestamp, then id; design.md §5), and
   * `total`, the count of all of that service's records that pass `filter` (interface.md §4.3).
   * `limit` and `offset` are row counts.
   */
  listForService(serviceId: string, limit: number, offset: number, filter: AccessLogFilter = {}): AccessLogPage {
    const { page, count, beyond } = this.#queriesFor(filter);
    const indexed = [serviceId, ...paramsOf(INDEXED, filter)];
    const params = [...indexed, ...paramsOf(RESIDUAL, filter)];
    const logs = page.all(...params, limit, offset).map((row) => ({ ...row, timestamp: new Date(row.timestamp).toISOString() }));
    const result: AccessLogPage = { logs, total: count.get(...params)!.total };
    if (beyond?.get(...indexed) !== undefined) result.partial = true;
    return result;
  }

  /**
   * The statements for this combination of filters. The indexed filters pick one index whose
   * leading columns are equalities (service, then user or status class) and whose last is
   * timestamp, so the time range, the order and LIMIT come from that index walk and nothing is
   * sorted. Method and path are checked on the newest {@link RESIDUAL_SCAN_LIMIT} rows of that
   * walk. {@link explain} shows the plans.
   */
  #queriesFor(filter: AccessLogFilter): FilteredQueries {
    const key = [...INDEXED, ...RESIDUAL].map((name) => (filter[name] === undefined ? '-' : name)).join(',');
    let queries = this.#queries.get(key);
    if (queries) return queries;
    const walk = `FROM access_logs INDEXED BY ${indexFor(filter)} WHERE ${conditionsOf(['service_id = ?'], INDEXED, filter)}`;
    const newestFirst = 'ORDER BY timestamp DESC, id DESC';
    const residual = RESIDUAL.filter((name) => filter[name] !== undefined);
    if (residual.length === 0) {
      queries = {
        page: this.#db.prepare(`SELECT ${COLUMNS} ${walk} ${newestFirst} LIMIT ? OFFSET ?`),
        count: this.#db.prepare(`SELECT count(*) AS total ${walk}`),
      };
    } else {
      const window = `(SELECT ${COLUMNS} ${walk} ${newestFirst} LIMIT ${RESIDUAL_SCAN_LIMIT}) WHERE ${conditionsOf([], RESIDUAL, filter)}`;
      queries = {
        page: this.#db.prepare(`SELECT ${COLUMNS} FROM ${window} ${newestFirst} LIMIT ? OFFSET ?`),
        count: this.#db.prepare(`SELECT count(*) AS total FROM ${window}`),
        beyond: this.#db.prepare(`SELECT 1 ${walk} ${newestFirst} LIMIT 1 OFFSET ${RESIDUAL_SCAN_LIMIT}`),
      };
    }
    this.#queries.set(key, queries);
    return queries;
  }

  /** SQLite's query plans of the statements `filter` uses, one line per step (for tests and diagnosis). */
  explain(filter: AccessLogFilter = {}): Record<string, string[]> {
    const indexed = ['service', ...paramsOf(INDEXED, filter)];
    const all = [...indexed, ...paramsOf(RESIDUAL, filter)];
    const plans: Record<string, string[]> = {};
    for (const [name, statement] of Object.entries(this.#queriesFor(filter))) {
      const params = name === 'page' ? [...all, 1, 0] : name === 'count' ? all : indexed;
      const rows = this.#db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`).all(...params) as { detail: string }[];
      plans[name] = rows.map((row) => row.detail);
    }
    return plans;
  }
}

type FilterKey = keyof AccessLogFilter;
/** Filters an index serves, in the order of their conditions (and parameters). */
const INDEXED: readonly FilterKey[] = ['userId', 'statusClass', 'from', 'to'];
/** Filters checked row by row, within the scan window. */
const RESIDUAL: readonly FilterKey[] = ['method', 'pathContains'];

const CONDITIONS: Record<FilterKey, string> = {
  userId: 'user_id = ?',
  // The same expression as the index's, so SQLite can use access_logs_by_service_class_time.
  statusClass: 'status_code / 100 = ?',
  from: 'timestamp >= ?',
  to: 'timestamp < ?',
  method: 'method = ?',
  pathContains: 'instr(path, ?) > 0',
};

function conditionsOf(leading: string[], keys: readonly FilterKey[], filter: AccessLogFilter): string {
  return [...leading, ...keys.filter((name) => filter[name] !== undefined).map((name) => CONDITIONS[name])].join(' AND ');
}

function paramsOf(keys: readonly FilterKey[], filter: AccessLogFilter): unknown[] {
  return keys.filter((name) => filter[name] !== undefined).map((name) => filter[name]);
}

/** The index for the filter's equalities; each ends in timestamp. A user is usually the narrowest. */
function indexFor(filter: AccessLogFilter): string {
  if (filter.userId !== undefined) return 'access_logs_by_service_user_time';
  if (filter.statusClass !== undefined) return 'access_logs_by_service_class_time';
  return 'access_logs_by_service_time';
}
