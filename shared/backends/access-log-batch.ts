import type { AccessLogEntry } from '../types.js';

/**
 * Access-log records on their way to the admin's storage, as the JSON array texts they travel in
 * (the Redis stream's `records` field; design.md §3.9), each holding only valid
 * {@link AccessLogEntry}s. Text, because a string crosses to the admin's writer thread as one copy,
 * where an array of records is serialised and rebuilt field by field (structured clone), the
 * largest per-record cost of the admin's event loop when it was sent that way.
 */
export interface AccessLogBatch {
  /** JSON arrays of records; none of them empty. */
  readonly json: readonly string[];
  /** How many records they hold together. */
  readonly count: number;
}

/** Stores one batch durably, all or nothing (the admin plane's SQLite writer). */
export type StoreAccessLogs = (batch: AccessLogBatch) => void | Promise<void>;

/** `records` as an {@link AccessLogBatch} (they are the data plane's own, hence valid). */
export function batchOf(records: readonly AccessLogEntry[]): AccessLogBatch {
  return { json: records.length > 0 ? [JSON.stringify(records)] : [], count: records.length };
}

/** The records of `batch`, in order. */
export function recordsOf(batch: Pick<AccessLogBatch, 'json'>): AccessLogEntry[] {
  return batch.json.flatMap((text) => JSON.parse(text) as AccessLogEntry[]);
}

/** What one shipped text held: its valid records as JSON (undefined: none), and how many were not valid. */
export interface CheckedRecords {
  json: string | undefined;
  count: number;
  /** Records (or the whole text, counted as 1) that could not be used. */
  invalid: number;
}

/**
 * Checks a shipped text (`undefined`: the field was missing). Anything that is not an array of
 * well-typed records is counted as invalid, never thrown: a malformed text must not stop the
 * pipeline, and a record that would break the table's NOT NULL columns must not make the whole
 * batch's insert fail. A text whose records are all valid is passed on as it came.
 */
export function checkRecords(text: string | undefined): CheckedRecords {
  if (text === undefined) return { json: undefined, count: 0, invalid: 1 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { json: undefined, count: 0, invalid: 1 };
  }
  if (!Array.isArray(parsed)) return { json: undefined, count: 0, invalid: 1 };
  const records = parsed.filter(isAccessLogEntry);
  const invalid = parsed.length - records.length;
  if (records.length === 0) return { json: undefined, count: 0, invalid };
  return { json: invalid === 0 ? text : JSON.stringify(records), count: records.length, invalid };
}

/** Whether `value` has every field of an {@link AccessLogEntry} with the right type. */
function isAccessLogEntry(value: unknown): value is AccessLogEntry {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.eventId === 'string' && r.eventId.length > 0 &&
    typeof r.serviceId === 'string' &&
    (r.userId === null || typeof r.userId === 'string') &&
    typeof r.path === 'string' &&
    typeof r.method === 'string' &&
    Number.isInteger(r.statusCode) &&
    Number.isFinite(r.responseTimeMs) &&
    typeof r.ipAddress === 'string' &&
    Number.isFinite(r.timestamp) &&
    isOptionalText(r.target) &&
    isOptionalText(r.host) &&
    (r.protocol === undefined || r.protocol === 'h2') &&
    (r.count === undefined || (Number.isSafeInteger(r.count) && (r.count as number) >= 1)) &&
    (r.pathTruncated === undefined || typeof r.pathTruncated === 'boolean') &&
    (r.verify === undefined || typeof r.verify === 'boolean') &&
    isOptionalMatch(r.requestId, REQUEST_ID) &&
    isOptionalMatch(r.traceId, TRACE_ID) &&
    isOptionalMatch(r.spanId, SPAN_ID)
  );
}

/** A request id (design.md §3.10): 1 to 128 visible ASCII characters (0x21–0x7e), as the proxy takes a trusted proxy's. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;
/** A trace id (W3C Trace Context §3.2.2.3): 32 lowercase hex characters. */
const TRACE_ID = /^[0-9a-f]{32}$/;
/** A span id (W3C Trace Context §3.2.2.4, parent-id): 16 lowercase hex characters. */
const SPAN_ID = /^[0-9a-f]{16}$/;

/** A field that may be absent, else a string of `shape` (`requestId`, `traceId`, `spanId`). */
function isOptionalMatch(value: unknown, shape: RegExp): boolean {
  return value === undefined || (typeof value === 'string' && shape.test(value));
}

/** A field that may be absent, null or a string (`target`, `host`). */
function isOptionalText(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}
