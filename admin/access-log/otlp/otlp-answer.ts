/**
 * What an OTLP/HTTP collector's answer to one export request means for its batch: accepted (with
 * its partial success), to be sent again, or refused (opentelemetry-proto docs/specification.md
 * "OTLP/HTTP Response").
 */
import { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';

/** The statuses after which a request SHOULD be sent again (specification.md "Retryable Response Codes"); every other 4xx/5xx MUST NOT. */
const RETRYABLE: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** How much of a refusing collector's answer is logged, in bytes: its error message, not a page of HTML. */
const ANSWER_EXCERPT_BYTES = 500;

/** What became of one POST. */
export type Outcome =
  | { kind: 'accepted'; rejected: number; reason: string | undefined }
  | { kind: 'refused'; status: number; answer: string }
  | { kind: 'retry'; reason: string; retryAfterMs: number | undefined };

/**
 * Reads an answer of `status` with its `Retry-After` field and its body: 2xx accepted (with its
 * partial success's rejected count and reason), 429/502/503/504 to be retried (after Retry-After's
 * delay, in ms capped at `maxBackoffMs`, when it gives one), anything else refused (with the
 * answer's first 500 bytes, to log) (specification.md "OTLP/HTTP Response").
 */
export function outcomeOf(status: number, retryAfter: string | string[] | undefined, answer: Uint8Array, maxBackoffMs: number): Outcome {
  if (status >= 200 && status < 300) {
    // `?.`: a body of `null` parses to null. rejectedLogRecords is an int64: a string in proto3 JSON.
    const partialSuccess = JsonLogsSerializer.deserializeResponse(answer)?.partialSuccess;
    const rejected = Number(partialSuccess?.rejectedLogRecords ?? 0);
    return { kind: 'accepted', rejected: Number.isSafeInteger(rejected) && rejected > 0 ? rejected : 0, reason: partialSuccess?.errorMessage || undefined };
  }
  if (RETRYABLE.has(status)) return { kind: 'retry', reason: `HTTP ${status}`, retryAfterMs: retryAfterMs(retryAfter, maxBackoffMs) };
  return { kind: 'refused', status, answer: new TextDecoder().decode(answer.subarray(0, ANSWER_EXCERPT_BYTES)) };
}

/**
 * `Retry-After` as delay-seconds (RFC 9110 §10.2.3), in ms, capped at `maxMs`; undefined when
 * absent or an HTTP-date, and exponential backoff applies (specification.md "OTLP/HTTP Throttling").
 */
function retryAfterMs(value: string | string[] | undefined, maxMs: number): number | undefined {
  if (typeof value !== 'string' || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Math.min(Number(value) * 1_000, maxMs);
}
