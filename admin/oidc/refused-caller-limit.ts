import { refuseOverLimit, type RateLimiter } from '../../shared/backends/rate-limiter.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import { rateLimitKey } from '../../shared/http/client-ip.js';

/**
 * Addresses remembered as over the limit, at most; past it the one remembered longest ago is
 * forgotten (it can be refused again after one more refused call). 10,000 entries of a few
 * dozen bytes each.
 */
const MAX_REMEMBERED_ADDRESSES = 10_000;

/** When an address's window ends (epoch ms) and the limit it is over, for the 429's headers. */
interface OverLimit {
  until: number;
  limit: number;
}

/**
 * A rate limit that counts only refused calls (design.md §4.12's back-channel logout): a caller
 * whose calls keep being refused is limited by RATE_LIMIT_AUTH's limiter, per address as sign-in
 * attempts are (shared/http/client-ip.ts `rateLimitKey`), while calls that are accepted never
 * consume a point, so an identity provider's valid logouts are never limited however many it sends.
 * - {@link admit} before any work: an address seen over the limit gets 429 (`Retry-After`,
 *   `RateLimit-*`) until its window ends, without another point and without its call being read.
 * - {@link refused} after a refusal: consumes one point; the call that goes over gets 429 too.
 * Which addresses are over is remembered by this process (the one admin process, in either mode),
 * from what the shared limiter answered.
 */
export class RefusedCallerLimit {
  readonly #limiter: RateLimiter;
  readonly #over = new ExpiringCache<OverLimit>(MAX_REMEMBERED_ADDRESSES);

  constructor(limiter: RateLimiter) {
    this.#limiter = limiter;
  }

  /**
   * Lets a call from `clientIp` in unless its address is over the limit.
   * @throws {GatewayError} RATE_LIMITED (429) with `Retry-After` and `RateLimit-*` when it is.
   */
  admit(clientIp: string): void {
    const now = Date.now();
    const over = this.#over.get(rateLimitKey(clientIp), now);
    if (over !== undefined) refuseOverLimit({ allowed: false, limit: over.limit, remaining: 0, resetMs: over.until - now });
  }

  /**
   * Counts a refused call from `clientIp` against the limit.
   * @throws {GatewayError} RATE_LIMITED (429) when this call is over it (the address is then
   *   refused by {@link admit} until its window ends).
   */
  async refused(clientIp: string): Promise<void> {
    const key = rateLimitKey(clientIp);
    const decision = await this.#limiter.consume(key);
    if (!decision.allowed) {
      const until = Date.now() + decision.resetMs;
      this.#over.set(key, { until, limit: decision.limit }, until);
    }
    refuseOverLimit(decision);
  }
}
