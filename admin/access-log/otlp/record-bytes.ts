/**
 * What one access-log record costs the OTLP export's buffer, in bytes: an estimate cheap enough to
 * take for every record offered, and an upper bound of both forms a record takes there.
 */
import type { AccessLogEntry } from '../../../shared/types.js';

/**
 * Bytes counted per record besides its strings. Measured (Node 20): a parsed record takes about
 * 430 bytes of heap besides its characters (the object, its numbers, the strings' headers). Its
 * OTLP/JSON encoding takes about 640 bytes besides twice its strings (attribute names, time,
 * severity), but a batch's body is counted by its own length once encoded.
 */
export const RECORD_OVERHEAD_BYTES = 512;

/**
 * The bytes `entry` is counted for in the export's buffer: twice the length of its strings (path,
 * event id, service id, user id, method, client address, target, host, request, trace and span
 * ids; in UTF-16 code units) plus {@link RECORD_OVERHEAD_BYTES}. Twice, because V8 stores a string in 1 or 2 bytes a character and
 * the OTLP/JSON body carries the path twice (in the body and `url.path`), at 1 byte a character
 * for ASCII. Never throws.
 */
export function recordBytes(entry: AccessLogEntry): number {
  const strings =
    entry.path.length +
    entry.eventId.length +
    entry.serviceId.length +
    (entry.userId?.length ?? 0) +
    entry.method.length +
    entry.ipAddress.length +
    (entry.target?.length ?? 0) +
    (entry.host?.length ?? 0) +
    (entry.requestId?.length ?? 0) +
    (entry.traceId?.length ?? 0) +
    (entry.spanId?.length ?? 0);
  return 2 * strings + RECORD_OVERHEAD_BYTES;
}
