import type { AccessLogFilter } from './access-log-filter.js';
import { RESIDUAL_SCAN_LIMIT, type AccessLogPage } from './access-log-page.js';
import { DayFile, toRecord, type Row } from './day-file.js';
import { DAY_MS, listDays, MINUTE_MS, openDayFile } from '../day-files.js';
import { DAY_ID_FACTOR } from '../day-schema.js';
import { storedRequestId } from '../request-ids.js';

/** One day file as a query sees it: the day's ms range cut to the filter, in ms since the day's start. */
interface DaySpan {
  day: number;
  file: DayFile;
  service: number;
  /** Inclusive. */
  lo: number;
  /** Exclusive. */
  hi: number;
}

/** Where a page starts in one day: `skip` rows after `hi` (exclusive) going back in time. */
interface Seek {
  span: DaySpan;
  hi: number;
  skip: number;
}

const NEWEST_FIRST = 'ORDER BY time DESC, id DESC';
/** Day files kept open between reads (three file descriptors each: the file, its WAL and shared memory). */
const OPEN_FILES = 64;

/**
 * The access log's reading side (access-log-store.ts writes): pages of a service's records across
 * the day files, newest first, with totals. Every read costs what its page costs, not what the log
 * holds: totals and the seek to `offset` come from the per-minute counts (a few thousand rows per
 * day), rows are read only for the page and for the partial minutes at the ends of a time range,
 * and the row-by-row filters examine at most {@link RESIDUAL_SCAN_LIMIT} records. Synchronous:
 * run it off the event loop that serves traffic (access-log-reads.ts).
 */
export class AccessLogReader {
  readonly #dir: string;
  readonly #files = new Map<number, DayFile>();

  /** Reads the day files in `dir` (day-files.ts). */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * One page of a service's access log, newest first (by timestamp, then id; design.md §5), and
   * its `total` (interface.md §4.3). `limit` and `offset` are row counts.
   */
  listForService(serviceId: string, limit: number, offset: number, filter: AccessLogFilter = {}): AccessLogPage {
    const spans = this.#spans(serviceId, filter);
    const residual = filter.method !== undefined || filter.pathContains !== undefined || filter.host !== undefined || filter.requestId !== undefined;
    const page =
      residual || (filter.userId !== undefined && filter.statusClass !== undefined)
        ? windowedPage(spans, filter, limit, offset)
        : filter.userId !== undefined
          ? userPage(spans, filter.userId, limit, offset)
          : countedPage(spans, filter.statusClass, limit, offset);
    return { ...page, logs: page.logs.map((row) => toRecord(row, serviceId)) };
  }

  /** Closes every open day file. */
  close(): void {
    for (const file of this.#files.values()) file.db.close();
    this.#files.clear();
  }

  /** The days the filter's time range touches that hold records of the service, newest first. */
  #spans(serviceId: string, filter: AccessLogFilter): DaySpan[] {
    const days = listDays(this.#dir);
    this.#forgetDeleted(new Set(days));
    const spans: DaySpan[] = [];
    for (const day of days) {
      const start = day * DAY_MS;
      const lo = Math.max(0, (filter.from ?? -Infinity) - start);
      const hi = Math.min(DAY_MS, (filter.to ?? Infinity) - start);
      if (lo >= hi) continue;
      const file = this.#file(day);
      const service = file?.code(serviceId);
      if (file && service !== undefined) spans.push({ day, file, service, lo, hi });
    }
    return spans;
  }

  /** `day`'s file, kept open for the next reads; the least recently read beyond {@link OPEN_FILES} are closed. */
  #file(day: number): DayFile | undefined {
    let file = this.#files.get(day);
    if (file) {
      this.#files.delete(day); // re-inserted below: the map's order is the order of use
    } else {
      try {
        file = new DayFile(openDayFile(this.#dir, day, true));
      } catch {
        return undefined; // deleted since the folder was listed
      }
    }
    this.#files.set(day, file);
    for (const [oldest, idle] of this.#files) {
      if (this.#files.size <= OPEN_FILES) break;
      idle.db.close();
      this.#files.delete(oldest);
    }
    return file;
  }

  /** Closes the files of deleted days, so their disk space is freed. */
  #forgetDeleted(days: Set<number>): void {
    for (const [day, file] of this.#files) {
      if (days.has(day)) continue;
      file.db.close();
      this.#files.delete(day);
    }
  }
}

/** The index walk and conditions of the service, status class and time range. */
function indexedConditions(statusClass: number | undefined, userCode?: number): { index: string; where: string; params: (span: DaySpan, lo: number, hi: number) => unknown[] } {
  const byUser = userCode !== undefined;
  const byClass = statusClass !== undefined;
  const index = byUser ? 'records_by_service_user_time' : byClass ? 'records_by_service_class_time' : 'records_by_service_time';
  const where = ['service = ?', byUser ? 'user = ?' : '', byClass ? 'status / 100 = ?' : '', 'time >= ?', 'time < ?'].filter(Boolean).join(' AND ');
  return {
    index,
    where,
    params: (span, lo, hi) => [span.service, ...(byUser ? [userCode] : []), ...(byClass ? [statusClass] : []), lo, hi],
  };
}

/**
 * A page and an exact total for the service, status class and time range: per-minute counts say
 * how many records each minute holds, so the page's first minute is found without reading rows,
 * and rows are read from there.
 */
function countedPage(spans: DaySpan[], statusClass: number | undefined, limit: number, offset: number): { logs: Row[]; total: number } {
  const walk = indexedConditions(statusClass);
  let total = 0;
  let seek: Seek | undefined;
  for (const span of spans) {
    const count = spanCount(span, statusClass, walk);
    if (seek === undefined && offset - total < count) seek = seekIn(span, statusClass, walk, offset - total);
    total += count;
  }
  return { logs: seek === undefined ? [] : pageFrom(spans, seek, limit, () => walk), total };
}

/**
 * A page and an exact total for one user's records (`user` alone, or with a time range): the
 * days' per-user counts, and the user's index for the days a time range cuts.
 */
function userPage(spans: DaySpan[], userId: string, limit: number, offset: number): { logs: Row[]; total: number } {
  const walks = new Map<DaySpan, Walk>();
  let total = 0;
  let seek: Seek | undefined;
  for (const span of spans) {
    const user = span.file.code(userId);
    if (user === undefined) continue;
    const walk = indexedConditions(undefined, user);
    walks.set(span, walk);
    const count =
      span.lo === 0 && span.hi === DAY_MS
        ? ((span.file.statement('SELECT count FROM user_counts WHERE service = ? AND user = ?').pluck().get(span.service, user) as number | undefined) ?? 0)
        : (span.file.statement(`SELECT count(*) FROM records INDEXED BY ${walk.index} WHERE ${walk.where}`).pluck().get(...walk.params(span, span.lo, span.hi)) as number);
    if (seek === undefined && offset - total < count) seek = { span, hi: span.hi, skip: offset - total };
    total += count;
  }
  const days = spans.filter((span) => walks.has(span));
  return { logs: seek === undefined ? [] : pageFrom(days, seek, limit, (span) => walks.get(span)!), total };
}

/** `limit` records newest first from `seek` on, through the older spans after it. */
function pageFrom(spans: DaySpan[], seek: Seek, limit: number, walkOf: (span: DaySpan) => Walk): Row[] {
  const logs: Row[] = [];
  for (const span of spans.slice(spans.indexOf(seek.span))) {
    const first = span === seek.span;
    const walk = walkOf(span);
    const sql = `${span.file.row} FROM records r INDEXED BY ${walk.index} WHERE ${walk.where} ${NEWEST_FIRST} LIMIT ? OFFSET ?`;
    const rows = span.file.statement(sql).all(...walk.params(span, span.lo, first ? seek.hi : span.hi), limit - logs.length, first ? seek.skip : 0) as Row[];
    for (const row of rows) logs.push({ ...row, id: span.day * DAY_ID_FACTOR + row.id, time: span.day * DAY_MS + row.time });
    if (logs.length >= limit) break;
  }
  return logs;
}

/** How many of the span's records pass the filter: the day's count, or its minutes' for a part of a day. */
function spanCount(span: DaySpan, statusClass: number | undefined, walk: Walk): number {
  const byClass = statusClass === undefined ? '' : 'AND class = ?';
  const classParams = statusClass === undefined ? [] : [statusClass];
  if (span.lo === 0 && span.hi === DAY_MS) {
    return span.file.statement(`SELECT coalesce(sum(count), 0) FROM service_counts WHERE service = ? ${byClass}`).pluck().get(span.service, ...classParams) as number;
  }
  return minuteCounts(span, statusClass, walk).reduce((sum, [, count]) => sum + count, 0);
}

/** Where in `span` the record `skip` places after its newest one is: the minute that holds it. */
function seekIn(span: DaySpan, statusClass: number | undefined, walk: Walk, skip: number): Seek {
  for (const [minute, count] of minuteCounts(span, statusClass, walk)) {
    if (skip < count) return { span, hi: Math.min(span.hi, (minute + 1) * MINUTE_MS), skip };
    skip -= count;
  }
  return { span, hi: span.hi, skip }; // the counts said otherwise: read from the top
}

type Walk = ReturnType<typeof indexedConditions>;

/**
 * The span's records per minute that pass the filter, newest minute first: from `minute_counts`,
 * except the minutes the time range cuts, whose rows are counted (at most two minutes' worth).
 */
function minuteCounts(span: DaySpan, statusClass: number | undefined, walk: Walk): [number, number][] {
  const first = Math.floor(span.lo / MINUTE_MS);
  const last = Math.ceil(span.hi / MINUTE_MS) - 1;
  const byClass = statusClass === undefined ? '' : 'AND class = ?';
  const rows = span.file
    .statement(
      `SELECT minute, sum(count) AS n FROM minute_counts WHERE service = ? ${byClass} AND minute >= ? AND minute <= ?
       GROUP BY minute ORDER BY minute DESC`,
    )
    .raw(true)
    .all(span.service, ...(statusClass === undefined ? [] : [statusClass]), first, last) as [number, number][];
  const cut = (minute: number) => (minute === first && span.lo % MINUTE_MS !== 0) || (minute === last && span.hi % MINUTE_MS !== 0);
  const countRows = span.file.statement(`SELECT count(*) FROM records INDEXED BY ${walk.index} WHERE ${walk.where}`).pluck();
  return rows.map(([minute, count]) => {
    if (!cut(minute)) return [minute, count];
    const lo = Math.max(span.lo, minute * MINUTE_MS);
    const hi = Math.min(span.hi, (minute + 1) * MINUTE_MS);
    return [minute, countRows.get(...walk.params(span, lo, hi)) as number];
  });
}

/**
 * A page and total with row-by-row filters: among the newest {@link RESIDUAL_SCAN_LIMIT} records
 * that pass the service, user, status class and time range (an index walk), those that also pass
 * `method`, `path`, `host` and `requestId` (and, with a user, the status class).
 */
function windowedPage(spans: DaySpan[], filter: AccessLogFilter, limit: number, offset: number): Omit<AccessLogPage, 'logs'> & { logs: Row[] } {
  let window = RESIDUAL_SCAN_LIMIT;
  let total = 0;
  let partial = false;
  const matches: { span: DaySpan; window: number; count: number; inner: string; params: unknown[]; residual: unknown[]; where: string }[] = [];
  for (const span of spans) {
    const user = filter.userId === undefined ? undefined : span.file.code(filter.userId);
    if (filter.userId !== undefined && user === undefined) continue;
    const walk = indexedConditions(filter.statusClass, user);
    const params = walk.params(span, span.lo, span.hi);
    const walkOf = (columns: string) => `SELECT ${columns} FROM records INDEXED BY ${walk.index} WHERE ${walk.where} ${NEWEST_FIRST} LIMIT ?`;
    const inner = walkOf('*');
    // Without method or path, counting needs only the index, never the rows.
    const keysOnly = walkOf('id');
    if (window === 0) {
      partial ||= span.file.statement(keysOnly).get(...params, 1) !== undefined;
      continue;
    }
    const { where, values } = residualConditions(span.file, filter);
    const [examined, count] = span.file
      .statement(`SELECT count(*), coalesce(sum(${where}), 0) FROM (${values.length > 0 ? inner : keysOnly})`)
      .raw(true)
      .get(...values, ...params, window) as [number, number];
    if (examined === window) partial ||= span.file.statement(`${keysOnly} OFFSET ?`).get(...params, 1, window) !== undefined;
    matches.push({ span, window, count, inner, params, residual: values, where });
    window -= examined;
    total += count;
  }
  const logs: Row[] = [];
  let skip = offset;
  for (const match of matches) {
    if (logs.length >= limit) break;
    if (skip >= match.count) {
      skip -= match.count;
      continue;
    }
    const sql = `${match.span.file.row} FROM (${match.inner}) r WHERE ${match.where} ${NEWEST_FIRST} LIMIT ? OFFSET ?`;
    const rows = match.span.file.statement(sql).all(...match.params, match.window, ...match.residual, limit - logs.length, skip) as Row[];
    skip = 0;
    for (const row of rows) logs.push({ ...row, id: match.span.day * DAY_ID_FACTOR + row.id, time: match.span.day * DAY_MS + row.time });
  }
  return partial ? { logs, total, partial: true } : { logs, total };
}

/**
 * The `method`, `path`, `host` and `requestId` conditions on one day's rows as an SQL expression
 * that is 1 or 0, with its parameters. A method or host the day never saw matches nothing, and so
 * does a host or request id in a file made before records had one. A request id is compared as it
 * is stored (request-ids.ts), so an exact match costs no conversion per row.
 */
function residualConditions(file: DayFile, filter: AccessLogFilter): { where: string; values: unknown[] } {
  const conditions: string[] = [];
  const values: unknown[] = [];
  if (filter.method !== undefined) {
    conditions.push('method = ?');
    values.push(file.code(filter.method) ?? -1);
  }
  if (filter.host !== undefined && file.has('host')) {
    conditions.push('host = ?');
    values.push(file.code(filter.host) ?? -1);
  } else if (filter.host !== undefined) conditions.push('0');
  if (filter.requestId !== undefined && file.has('request_id')) {
    conditions.push('request_id = ?');
    values.push(storedRequestId(filter.requestId));
  } else if (filter.requestId !== undefined) conditions.push('0');
  if (filter.pathContains !== undefined) {
    conditions.push(`instr(CASE typeof(path) WHEN 'text' THEN path ELSE (SELECT text FROM strings WHERE code = path) END, ?) > 0`);
    values.push(filter.pathContains);
  }
  return { where: conditions.length > 0 ? `(${conditions.join(' AND ')})` : '1', values };
}
