import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { RateLimit } from '../../config/durations.js';
import { FlexibleRateLimiter } from '../flexible-rate-limiter.js';

/** Embedded rate limiter: `RateLimiterMemory` from rate-limiter-flexible, one counter per key, per process. */
export class MemoryRateLimiter extends FlexibleRateLimiter {
  constructor(limit: RateLimit | null) {
    const limiter = limit ? new RateLimiterMemory({ points: limit.points, duration: limit.durationMs / 1000 }) : undefined;
    super(limit, limiter, (error) => {
      throw error;
    });
  }
}
