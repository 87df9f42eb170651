import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit } from '../durations.js';
import { decision } from '../embedded/memory-rate-limiter.js';
import { createLogger, type Logger } from '../logger.js';
import type { RateLimitDecision, RateLimiter } from '../rate-limiter.js';
import { describeError } from './redis-errors.js';
import type { RedisConnections } from './redis-connections.js';

const UNLIMITED: RateLimitDecision = { allowed: true, limit: 0, remaining: 0, resetMs: 0 };

export interface RedisRateLimiterOptions {
  /** Key prefix, distinct per limiter: `gatehouse:rl:general`, `gatehouse:rl:auth` (see redis-keys.ts). */
  keyPrefix: string;
  logger?: Logger;
}

/**
 * Split-mode {@link RateLimiter}: rate-limiter-flexible's `RateLimiterRedis` on the shared command
 * connection (an ioredis client, so no `useRedisPackage`; its fixed-window Lua script keeps the
 * count at `<keyPrefix>:<key>`), so every worker counts against the same window. With
 * `rejectIfRedisNotReady` and an `insuranceLimiter` = `RateLimiterMemory` of the same limit, a
 * request while Redis is away is counted in this process's memory instead (per-worker counts,
 * starting from zero) and Redis takes over again once it is back.
 * Windows are whole seconds in Redis (the library's TTL unit): a limit's duration is rounded up to
 * at least 1 s. A `limit` of null allows everything without touching Redis.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly limit: RateLimit | null;
  readonly #limiter: RateLimiterRedis | undefined;
  readonly #logger: Logger;

  constructor(connections: RedisConnections, limit: RateLimit | null, options: RedisRateLimiterOptions) {
    this.limit = limit;
    this.#logger = options.logger ?? createLogger('silent', 'rate-limiter');
    if (!limit) return;
    const duration = Math.max(1, Math.ceil(limit.durationMs / 1000));
    this.#limiter = new RateLimiterRedis({
      storeClient: connections.command,
      keyPrefix: options.keyPrefix,
      points: limit.points,
      duration,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ points: limit.points, duration }),
    });
  }

  /** Counts one request for `key`. Never rejects: should even the insurance fail, it allows (and logs). */
  async consume(key: string): Promise<RateLimitDecision> {
    if (!this.#limiter || !this.limit) return UNLIMITED;
    try {
      return decision(this.limit, await this.#limiter.consume(key), true);
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return decision(this.limit, refusal, false);
      this.#logger.error({ err: describeError(refusal) }, 'rate limiter failed; allowing the request');
      return { allowed: true, limit: this.limit.points, remaining: this.limit.points, resetMs: 0 };
    }
  }
}
