import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimit } from './durations.js';
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js';

const UNLIMITED: RateLimitDecision = { allowed: true, limit: 0, remaining: 0, resetMs: 0 };

/**
 * A {@link RateLimiter} over any rate-limiter-flexible limiter (memory or Redis). rate-limiter-flexible
 * resolves an allowed request and rejects a refused one with a `RateLimiterRes`; any other rejection
 * is a broken backend, which is reported to `onFailure` and allows the request (a limiter must
 * never take the gateway down). A `limit` of null allows everything.
 */
export class FlexibleRateLimiter implements RateLimiter {
  readonly limit: RateLimit | null;
  readonly #limiter: RateLimiterAbstract | undefined;
  readonly #onFailure: (error: unknown) => void;

  constructor(limit: RateLimit | null, limiter: RateLimiterAbstract | undefined, onFailure: (error: unknown) => void) {
    this.limit = limit;
    this.#limiter = limiter;
    this.#onFailure = onFailure;
  }

  async consume(key: string): Promise<RateLimitDecision> {
    if (!this.#limiter || !this.limit) return UNLIMITED;
    try {
      return this.#decision(await this.#limiter.consume(key), true);
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return this.#decision(refusal, false);
      this.#onFailure(refusal);
      return { allowed: true, limit: this.limit.points, remaining: this.limit.points, resetMs: 0 };
    }
  }

  #decision(result: RateLimiterRes, allowed: boolean): RateLimitDecision {
    return { allowed, limit: this.limit!.points, remaining: result.remainingPoints, resetMs: result.msBeforeNext };
  }
}
