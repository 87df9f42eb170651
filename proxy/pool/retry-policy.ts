import type { IncomingMessage } from 'node:http';
import type { ForwardMode } from '../forward/upstream-forwarder.js';

/**
 * What a failed attempt of a request to a service's target may be retried on another target for
 * (the forwarder retries, each target once, within UPSTREAM_TIMEOUT):
 * - `not-sent`: nothing of the request reached the target (connection refused or reset, TLS
 *   failure or timeout on connect: undici had not begun to write it). Any method, any number of
 *   times, as long as no byte of a body was read from the client: a request body is never
 *   buffered for a retry.
 * - `sent`: the request reached the target and it answered 502, 503 or 504, or reset the
 *   connection before a response head. Only idempotent methods (RFC 9110 §9.2.2) without a body,
 *   at most the service's `retries` times: a POST, or any request whose body was streamed, may
 *   already have had its effect.
 * Never a timeout (UPSTREAM_TIMEOUT is the whole request's budget), and never once any of the
 * response has reached the client.
 */
export function mayRetry(reached: 'sent' | 'not-sent', req: IncomingMessage, mode: ForwardMode): boolean {
  if (reached === 'not-sent') return mode !== 'body' || !req.readableDidRead;
  return mode === 'no-body' && IDEMPOTENT.has(req.method ?? '');
}

/** RFC 9110 §9.2.2: methods whose repetition has the effect of one request. */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** A status that says the target (or what stands behind it) failed: 502, 503, 504 (RFC 9110 §15.6). */
export function isGatewayFailure(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}
