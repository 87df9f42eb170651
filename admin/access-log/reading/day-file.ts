import type { Database, Statement } from 'better-sqlite3';
import type { AccessLogRecord } from './access-log-page.js';
import { ADDED_RECORD_COLUMNS, addedRecordColumns, type AddedRecordColumn } from '../day-schema.js';
import { requestIdOf, traceOf } from '../request-ids.js';

const COLUMNS = `SELECT r.id, r.time, r.status, r.duration,
    (SELECT text FROM strings WHERE code = r.user) AS user,
    CASE typeof(r.path) WHEN 'text' THEN r.path ELSE (SELECT text FROM strings WHERE code = r.path) END AS path,
    (SELECT text FROM strings WHERE code = r.method) AS method,
    (SELECT text FROM strings WHERE code = r.ip) AS ip`;
/** How each column added since the first day files is read: NULL in a file made before it (day-schema.ts). */
const ADDED_COLUMNS: Record<AddedRecordColumn, string> = {
  target: '(SELECT text FROM strings WHERE code = r.target) AS target',
  count: 'r.count AS count',
  path_truncated: 'r.path_truncated AS truncated',
  host: '(SELECT text FROM strings WHERE code = r.host) AS host',
  request_id: 'r.request_id AS request_id',
  trace: '(SELECT trace FROM traces WHERE record = r.id) AS trace',
  http2: 'r.http2 AS http2',
  verify: 'r.verify AS verify',
};
const ADDED_AS_NULL: Record<AddedRecordColumn, string> = {
  target: 'NULL AS target',
  count: 'NULL AS count',
  path_truncated: 'NULL AS truncated',
  host: 'NULL AS host',
  request_id: 'NULL AS request_id',
  trace: 'NULL AS trace',
  http2: 'NULL AS http2',
  verify: 'NULL AS verify',
};

/** A record as {@link DayFile.row} selects it, its `id` and `time` made the API's (day-schema.ts `DAY_ID_FACTOR`, epoch ms). */
export type Row = {
  id: number; time: number; status: number; duration: number; user: string | null; path: string; method: string; ip: string;
  target: string | null; count: number | null; truncated: number | null; host: string | null;
  request_id: Buffer | string | null; trace: Buffer | null; http2: number | null; verify: number | null;
};

/** A day file open for reading, with its statements. */
export class DayFile {
  readonly db: Database;
  readonly #code: Statement<[string], { code: number }>;
  readonly #statements = new Map<string, Statement>();
  /** The added columns its records have; a file made by an older version gets the others when next written. */
  #present: Set<AddedRecordColumn>;
  /** What selects a record's columns, for {@link #present}. */
  #row: string;

  constructor(db: Database) {
    this.db = db;
    this.#code = db.prepare('SELECT code FROM strings WHERE text = ?');
    this.#present = addedRecordColumns(db);
    this.#row = rowOf(this.#present);
  }

  /** What selects a record's columns (a {@link Row}, before `FROM records r`) in this file: NULL for those it lacks. */
  get row(): string {
    if (this.#present.size < ADDED_RECORD_COLUMNS.length) this.#reread();
    return this.#row;
  }

  /** Whether this file's records have `column` (a writer may have added it since the last look). */
  has(column: AddedRecordColumn): boolean {
    if (!this.#present.has(column)) this.#reread();
    return this.#present.has(column);
  }

  /** The dictionary code of `text` in this day, or undefined when the day never saw it. */
  code(text: string): number | undefined {
    return this.#code.get(text)?.code;
  }

  /** The statement for `sql`, prepared once. */
  statement(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) this.#statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  #reread(): void {
    this.#present = addedRecordColumns(this.db);
    this.#row = rowOf(this.#present);
  }
}

/** The selection of a record's columns from records that have the added columns `present`. */
function rowOf(present: Set<AddedRecordColumn>): string {
  const added = ADDED_RECORD_COLUMNS.map((column) => (present.has(column) ? ADDED_COLUMNS : ADDED_AS_NULL)[column]);
  return `${COLUMNS}, ${added.join(', ')}`;
}

/** `row` of `serviceId` as the API shows it (access-log-page.ts). */
export function toRecord(row: Row, serviceId: string): AccessLogRecord {
  return {
    id: row.id,
    service_id: serviceId,
    user_id: row.user,
    path: row.path,
    method: row.method,
    status_code: row.status,
    response_time_ms: row.duration,
    ip_address: row.ip,
    timestamp: new Date(row.time).toISOString(),
    target: row.target,
    host: row.host,
    protocol: row.http2 === 1 ? 'h2' : 'http/1.1',
    count: row.count ?? 1,
    path_truncated: row.truncated === 1,
    request_id: requestIdOf(row.request_id),
    ...traceOf(row.trace),
    ...(row.verify === 1 ? { verify: true as const } : {}),
  };
}
