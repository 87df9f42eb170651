/**
 * How an attempt of a request to a target failed, as the retry decision sees it:
 * - `not-sent`: nothing of the request reached the target (connection refused or reset, TLS
 *   failure or timeout on connect: undici had not begun to write it);
 * - `sent`: the request reached the target, and it answered 502, 503 or 504, or reset the
 *   connection before a response head;
 * - `timeout`: no response head within UPSTREAM_TIMEOUT.
 */
export type AttemptFailure = 'not-sent' | 'sent' | 'timeout';

/**
 * What follows a request's head, as the retry decision sees it: nothing; a protocol upgrade (the
 * connection itself is the body); a streamed body none of which has been read from the client
 * yet; or one that has begun to be read (and was not buffered: it cannot be sent again).
 */
export type RequestBody = 'none' | 'upgrade' | 'unread' | 'read';

/**
 * Whether a request whose attempt failed as `failure` may be sent to another target of the pool
 * (the forwarder also keeps to the service's `retries` for `sent` failures, tries each target
 * once, and retries only within UPSTREAM_TIMEOUT and before any of the response reached the
 * client):
 * - `not-sent`: any method, as long as no byte of a body was read from the client;
 * - `sent`: only idempotent methods (RFC 9110 §9.2.2) without a body or upgrade: a POST, or any
 *   request whose body was streamed, may already have had its effect;
 * - `timeout`: never (UPSTREAM_TIMEOUT is the whole request's budget).
 * `method` is the request's method as received (methods are case-sensitive, RFC 9110 §9.1).
 */
export function mayRetry(failure: AttemptFailure, method: string, body: RequestBody): boolean {
  switch (failure) {
    case 'not-sent':
      return body !== 'read';
    case 'sent':
      return body === 'none' && IDEMPOTENT.has(method);
    default:
      return false;
  }
}

/** RFC 9110 §9.2.2: methods whose repetition has the effect of one request. */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** A status that says the target (or what stands behind it) failed: 502, 503, 504 (RFC 9110 §15.6). */
export function isGatewayFailure(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}
