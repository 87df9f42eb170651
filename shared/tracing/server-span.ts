import type { ServerResponse } from 'node:http';
import { SpanStatusCode, type Span } from '@opentelemetry/api';

/** What a trusted peer's `X-Request-Id` may be (design.md §3.10): 1–128 visible ASCII characters. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** Whether `value` may serve as a request id as a trusted peer sent it. */
export function isRequestId(value: string | undefined): value is string {
  return value !== undefined && REQUEST_ID.test(value);
}

/** Marks `span` as failed with `error.type` `type` (OpenTelemetry semantic conventions, "Recording errors"). */
export function markFailed(span: Span, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Ends a request's server span when its response `res` closed: the status sent (499 when none was:
 * the client left first), the request id, and a server error's status as `error.type` (HTTP
 * semantic conventions: 5xx are a server span's errors, 4xx the client's).
 */
export function endServerSpan(span: Span, res: ServerResponse, requestId: string): void {
  const status = res.headersSent ? res.statusCode : 499;
  span.setAttributes({ 'http.response.status_code': status, 'gatehouse.request_id': requestId });
  if (status >= 500) markFailed(span, String(status));
  span.end();
}
