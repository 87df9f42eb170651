import type { AccessLogEntry } from '../../../types.js';

/** The one field of an access-log stream entry: a JSON array of {@link AccessLogEntry}. */
export const RECORDS_FIELD = 'records';

/** A stream entry's fields for XADD: `records` = the batch as JSON. */
export function encodeBatch(batch: readonly AccessLogEntry[]): [string, string] {
  return [RECORDS_FIELD, JSON.stringify(batch)];
}

/** The `records` field of an entry's flat field list (`[field, value, …]` as XREADGROUP returns it), if any. */
export function recordsField(fields: readonly string[]): string | undefined {
  for (let i = 0; i < fields.length - 1; i += 2) if (fields[i] === RECORDS_FIELD) return fields[i + 1];
  return undefined;
}
