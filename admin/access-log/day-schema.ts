import type { Database } from 'better-sqlite3';
/**
 * What one day file of the access log holds (day-files.ts). Records are stored small, 82 to 99
 * bytes each with their indexes and batch keys (bench/README.md measures it):
 * - every repeated string (service id, user, method, client address, a path seen twice that day)
 *   is stored once in `strings` and referred to by its integer code;
 * - a path seen once is stored as its text in the record (dynamic typing: the `path` column holds
 *   either), so unique paths (ids in query strings) do not pay for a dictionary entry;
 * - times are ms since the day's start (4 bytes), no per-record event id is stored: re-delivered
 *   batches are recognised by `batches` (one key per shipped batch, see day-writer.ts).
 *
 * `minute_counts` counts the stored records per service, status class (`status / 100`) and minute,
 * `service_counts` the whole day's per service and class, `user_counts` per service and signed-in
 * user, in the same transaction as the
 * records: the access-log API's totals and its seek to a deep `offset` read them instead of
 * counting rows (access-log-reader.ts): a few rows per day, and one day's minutes.
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
    target INTEGER
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
`;

/**
 * Whether a day file's records have the `target` column (the code of the url of the pool's target
 * that answered, NULL when none did). Files made before pools lack it: the writer adds it
 * ({@link addTargetColumn}), and a reader of a file nobody writes reads NULL for it.
 */
export function hasTargetColumn(db: Database): boolean {
  return (db.pragma('table_info(records)') as { name: string }[]).some((column) => column.name === 'target');
}

/** Adds the `target` column to a day file made before pools (a metadata change: no row is rewritten). */
export function addTargetColumn(db: Database): void {
  if (!hasTargetColumn(db)) db.exec('ALTER TABLE records ADD COLUMN target INTEGER');
}

/** Multiplier of a day number in a record's API id (the day's own ids stay below it). */
export const DAY_ID_FACTOR = 2 ** 32;
