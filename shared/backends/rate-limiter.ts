import { GatewayError } from '../errors.js';
import type { RateLimit } from '../config/durations.js';

/** The outcome of counting one request against a limit. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Time until the window resets, in ms. */
  resetMs: number;
}

/**
 * A fixed-window counter per key (the client IP, design.md §5). The general and the auth limiter are
 * two instances. A limiter whose `limit` is null is off and allows everything.
 */
export interface RateLimiter {
  readonly limit: RateLimit | null;
  /** Counts one request for `key`. Never rejects: a broken backend allows (and the impl says so). */
  consume(key: string): Promise<RateLimitDecision>;
}

/**
 * Response headers for a refused request (design.md §5): `Retry-After` (RFC 9110 §10.2.3, seconds)
 * and `RateLimit-Limit/Remaining/Reset` (draft-ietf-httpapi-ratelimit-headers-07, seconds).
 */
function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const resetSeconds = String(Math.max(1, Math.ceil(decision.resetMs / 1000)));
  return {
    'retry-after': resetSeconds,
    'ratelimit-limit': String(decision.limit),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': resetSeconds,
  };
}

/**
 * A limiter's verdict on a request (design.md §3.3 and §5): nothing when allowed. Callers await
 * the count in their own frame, which keeps the data plane's hot path one promise shorter.
 * @throws {GatewayError} `RATE_LIMITED` (429), with `Retry-After` and `RateLimit-*`, when refused.
 */
export function refuseOverLimit(decision: RateLimitDecision): void {
  if (!decision.allowed) throw overLimit(decision);
}

/** The answer to a refused request: `RATE_LIMITED` (429) with `Retry-After` and `RateLimit-*`. */
export function overLimit(decision: RateLimitDecision): GatewayError {
  return new GatewayError('RATE_LIMITED', { headers: rateLimitHeaders(decision) });
}
