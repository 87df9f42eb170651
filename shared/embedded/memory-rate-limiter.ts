import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../durations.js';
import type { RateLimitDecision, RateLimiter } from '../rate-limiter.js';

const UNLIMITED: RateLimitDecision = { allowed: true, limit: 0, remaining: 0, resetMs: 0 };

/** Embedded {@link RateLimiter}: `RateLimiterMemory` from rate-limiter-flexible, one counter per key. */
export class MemoryRateLimiter implements RateLimiter {
  readonly limit: RateLimit | null;
  readonly #limiter: RateLimiterMemory | undefined;

  constructor(limit: RateLimit | null) {
    this.limit = limit;
    this.#limiter = limit
      ? new RateLimiterMemory({ points: limit.points, duration: limit.durationMs / 1000 })
      : undefined;
  }

  async consume(key: string): Promise<RateLimitDecision> {
    if (!this.#limiter || !this.limit) return UNLIMITED;
    try {
      return decision(this.limit, await this.#limiter.consume(key), true);
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return decision(this.limit, refusal, false);
      throw refusal;
    }
  }
}

/** Maps rate-limiter-flexible's result to a {@link RateLimitDecision}. */
export function decision(limit: RateLimit, result: RateLimiterRes, allowed: boolean): RateLimitDecision {
  return { allowed, limit: limit.points, remaining: result.remainingPoints, resetMs: result.msBeforeNext };
}
