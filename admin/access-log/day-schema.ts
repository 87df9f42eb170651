import type { Database } from 'better-sqlite3';
import { openDayFile } from './day-files.js';

/** A traced record's trace (request-ids.ts `storedTrace`), by the record's id; untraced records have no row. */
const TRACES_TABLE = 'CREATE TABLE traces (record INTEGER PRIMARY KEY, trace BLOB NOT NULL)';

/**
 * What one day file of the access log holds (day-files.ts). Records are stored small, 82 to 99
 * bytes each with their indexes and batch keys (bench/README.md measures it):
 * - every repeated string (service id, user, method, client address, target, host, a path seen
 *   twice that day) is stored once in `strings` and referred to by its integer code;
 * - a path seen once is stored as its text in the record (dynamic typing: the `path` column holds
 *   either), so unique paths (ids in query strings) do not pay for a dictionary entry;
 * - times are ms since the day's start (4 bytes), no per-record event id is stored: re-delivered
 *   batches are recognised by `batches` (one key per shipped batch, see day-writer.ts).
 *
 * `minute_counts` counts the stored records per service, status class (`status / 100`) and minute,
 * `service_counts` the whole day's per service and class, `user_counts` per service and signed-in
 * user, in the same transaction as the
 * records: the access-log API's totals and its seek to a deep `offset` read them instead of
 * counting rows (access-log-reader.ts): a few rows per day, and one day's minutes. They count
 * rows, not requests: a summary record (`count`, below) counts once there.
 *
 * `count` is how many requests a record stands for (NULL: one), `path_truncated` is 1 when the
 * path was cut to the proxy's maximum (NULL: it was not): both NULL for almost every record, a
 * byte each in its header (a NULL has no body), and nothing in the records of files made before
 * them (ALTER TABLE rewrites no row). `host` is NULL for a request routed by path alone, the
 * code of a dictionary string otherwise (a byte or two in its body). `request_id` is the request's
 * id (design.md §3.10) as request-ids.ts stores it: the proxy's 16 hex characters as an 8-byte
 * BLOB, a traced request's 32 (its trace id) as 16 bytes, a trusted proxy's other id as TEXT,
 * NULL when the record has none; the column has no declared type, so a TEXT id of digits stays
 * TEXT. A traced record's trace id and server span id are a row of `traces` (24 bytes, keyed by
 * the record's id), not a column: a column NULL in the 99 % of untraced records would still cost
 * each a byte of its header. Measured on a day of the bench's records (design.md §4.11), the id
 * and traces add 9.6 bytes per record at 1 % tracing, where the budget is 10. `http2` is 1 for a
 * request over HTTP/2 and NULL otherwise: either is a byte of the header and none of the body
 * (SQLite stores the integers 0 and 1 in the header alone), so the protocol costs a record one byte;
 * so does `verify`, 1 for the verify endpoint's decision about an ingress's request (design.md §4.19).
 *
 * A summary is one record of a client address's requests to a service within one minute and
 * status class: the proxy's for requests its rate limit refused, the writer's for an address over
 * its share of the day's budget (writing/address-shares.ts); its path, method, user and duration
 * are those of the first request, and so is the request id of the writer's.
 *
 * A record's API id is `day * 2^32 + records.id`: unique across days and, within a day, in the
 * order of arrival.
 */
export const DAY_SCHEMA = `
  CREATE TABLE strings (code INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
  CREATE TABLE records (
    id INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,
    service INTEGER NOT NULL,
    user INTEGER,
    path NOT NULL,
    method INTEGER NOT NULL,
    status INTEGER NOT NULL,
    duration INTEGER NOT NULL,
    ip INTEGER NOT NULL,
    target INTEGER,
    count INTEGER,
    path_truncated INTEGER,
    host INTEGER,
    request_id,
    http2 INTEGER,
    verify INTEGER
  );
  CREATE INDEX records_by_service_time ON records (service, time);
  CREATE INDEX records_by_service_class_time ON records (service, status / 100, time);
  CREATE INDEX records_by_service_user_time ON records (service, user, time);
  CREATE TABLE minute_counts (
    service INTEGER NOT NULL,
    class INTEGER NOT NULL,
    minute INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (service, class, minute)
  ) WITHOUT ROWID;
  CREATE TABLE service_counts (
    service INTEGER NOT NULL,
    class INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (service, class)
  ) WITHOUT ROWID;
  CREATE TABLE user_counts (
    service INTEGER NOT NULL,
    user INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (service, user)
  ) WITHOUT ROWID;
  CREATE TABLE batches (key BLOB PRIMARY KEY) WITHOUT ROWID;
  ${TRACES_TABLE};
`;

/**
 * The columns of `records` that files made by older versions lack, in the order they were added:
 * `target` (the code of the url of the pool's target that answered, NULL when none did) came with
 * pools, `count` and `path_truncated` with summary records, `host` (the code of the service host
 * the request was routed by, NULL when routed by path alone; design.md §3.2) with services on
 * host names, `request_id` and `trace` (which is the `traces` table, not a column) with request
 * ids and traces, `http2` (1 for a request over HTTP/2, NULL for HTTP/1.x; design.md §4.17) with
 * HTTP/2, `verify` with the verify endpoint (design.md §4.19). The writer adds the missing ones ({@link addRecordColumns}); a reader of a file
 * nobody writes reads NULL for them.
 */
export const ADDED_RECORD_COLUMNS = ['target', 'count', 'path_truncated', 'host', 'request_id', 'trace', 'http2', 'verify'] as const;
export type AddedRecordColumn = (typeof ADDED_RECORD_COLUMNS)[number];

/** What adds each of {@link ADDED_RECORD_COLUMNS} to a file that lacks it (a metadata change: no row is rewritten). */
const ADD_COLUMN: Record<AddedRecordColumn, string> = {
  target: 'ALTER TABLE records ADD COLUMN target INTEGER',
  count: 'ALTER TABLE records ADD COLUMN count INTEGER',
  path_truncated: 'ALTER TABLE records ADD COLUMN path_truncated INTEGER',
  host: 'ALTER TABLE records ADD COLUMN host INTEGER',
  request_id: 'ALTER TABLE records ADD COLUMN request_id',
  trace: TRACES_TABLE,
  http2: 'ALTER TABLE records ADD COLUMN http2 INTEGER',
  verify: 'ALTER TABLE records ADD COLUMN verify INTEGER',
};

/** Which of {@link ADDED_RECORD_COLUMNS} a day file's records have (`trace`: whether it has the `traces` table). */
export function addedRecordColumns(db: Database): Set<AddedRecordColumn> {
  const names = new Set((db.pragma('table_info(records)') as { name: string }[]).map((column) => column.name));
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'traces'").get() !== undefined) names.add('trace');
  return new Set(ADDED_RECORD_COLUMNS.filter((column) => names.has(column)));
}

/** Adds the columns a day file made by an older version lacks (a metadata change: no row is rewritten). */
export function addRecordColumns(db: Database): void {
  const present = addedRecordColumns(db);
  for (const column of ADDED_RECORD_COLUMNS) {
    if (!present.has(column)) db.exec(ADD_COLUMN[column]);
  }
}

/** How many records a day file holds (rows, a summary counting once), from its per-service counts. */
export function storedRecords(db: Database): number {
  return db.prepare('SELECT coalesce(sum(count), 0) FROM service_counts').pluck().get() as number;
}

/**
 * {@link storedRecords} of `day`'s file in `dir`, read through a connection of its own (a
 * writer's committed rows included); -1 when it cannot be read (deleted meanwhile, not a day file).
 */
export function dayRecords(dir: string, day: number): number {
  try {
    const db = openDayFile(dir, day, true);
    try {
      return storedRecords(db);
    } finally {
      db.close();
    }
  } catch {
    return -1;
  }
}

/** Multiplier of a day number in a record's API id (the day's own ids stay below it). */
export const DAY_ID_FACTOR = 2 ** 32;
