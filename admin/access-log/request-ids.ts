/**
 * How a record's request id and trace are stored in a day file (day-schema.ts), compactly: the
 * access log's budget for them is 10 bytes per record on average (bench/README.md), and an id in
 * hex text would take twice its bytes.
 */

/** The proxy's own id: 8 random bytes as 16 lowercase hex characters (design.md §3.10). */
const HEX_16 = /^[0-9a-f]{16}$/;
/** A traced request's id, its trace id: 16 bytes as 32 lowercase hex characters (W3C Trace Context §3.2.2.3). */
const HEX_32 = /^[0-9a-f]{32}$/;

/** Bytes of a stored trace: the trace id (16) then the server span's id (8). */
const TRACE_BYTES = 24;
const TRACE_ID_BYTES = 16;

/**
 * The `request_id` column's value for `requestId`: 16 or 32 lowercase hex characters as their 8 or
 * 16 bytes (a BLOB), any other id (a trusted proxy's `X-Request-Id`, uppercase hex included) as
 * its text. One-to-one, so an exact filter compares stored values (reading/access-log-reader.ts).
 */
export function storedRequestId(requestId: string): Buffer | string {
  return HEX_16.test(requestId) || HEX_32.test(requestId) ? Buffer.from(requestId, 'hex') : requestId;
}

/** The request id a `request_id` value stands for: hex of a BLOB, a TEXT as it is; null for NULL (no id). */
export function requestIdOf(stored: Buffer | string | null): string | null {
  if (stored === null || typeof stored === 'string') return stored;
  return stored.toString('hex');
}

/** The `traces` row's value of a traced record: `traceId` (32 hex) and `spanId` (16 hex) as 24 bytes. */
export function storedTrace(traceId: string, spanId: string): Buffer {
  return Buffer.from(traceId + spanId, 'hex');
}

/** The trace and span ids (lowercase hex) of a stored trace; both null for none (an untraced record). */
export function traceOf(stored: Buffer | null): { trace_id: string | null; span_id: string | null } {
  if (stored === null || stored.length !== TRACE_BYTES) return { trace_id: null, span_id: null };
  return { trace_id: stored.subarray(0, TRACE_ID_BYTES).toString('hex'), span_id: stored.subarray(TRACE_ID_BYTES).toString('hex') };
}
