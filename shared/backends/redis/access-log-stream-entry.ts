import type { AccessLogEntry } from '../../types.js';

/** The one field of an access-log stream entry: a JSON array of {@link AccessLogEntry}. */
export const RECORDS_FIELD = 'records';

/** A stream entry's fields for XADD: `records` = the batch as JSON. */
export function encodeBatch(batch: readonly AccessLogEntry[]): [string, string] {
  return [RECORDS_FIELD, JSON.stringify(batch)];
}

/** What a stream entry held: its valid records, and how many records were not valid. */
export interface DecodedEntry {
  records: AccessLogEntry[];
  /** Records (or the whole entry, counted as 1) that could not be used. */
  invalid: number;
}

/**
 * Reads an entry's flat field list (`[field, value, …]` as XREADGROUP returns it). Anything that
 * is not an array of well-typed records is counted as invalid, never thrown: a malformed entry
 * must not stop the pipeline, and a record that would break the table's NOT NULL columns must not
 * make the whole batch's insert fail.
 */
export function decodeEntry(fields: readonly string[]): DecodedEntry {
  const index = fields.findIndex((value, i) => i % 2 === 0 && value === RECORDS_FIELD);
  if (index < 0) return { records: [], invalid: 1 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(fields[index + 1] ?? '');
  } catch {
    return { records: [], invalid: 1 };
  }
  if (!Array.isArray(parsed)) return { records: [], invalid: 1 };
  const records = parsed.filter(isAccessLogEntry);
  return { records, invalid: parsed.length - records.length };
}

/** Whether `value` has every field of an {@link AccessLogEntry} with the right type. */
export function isAccessLogEntry(value: unknown): value is AccessLogEntry {
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
    Number.isFinite(r.timestamp)
  );
}
